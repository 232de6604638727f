"""The sample vault in `vault/` is documentation people read and demos run on:
it must parse without a single problem, cover every kind of value the format
has, and every number in it must be explainable by the rules (SPEC §2)."""

from __future__ import annotations

import re
from collections import Counter
from datetime import date
from pathlib import Path

import pytest
from vaults import seed_params

from epimem.core import notes
from epimem.core.ids import SLUG, TENSION_ID
from epimem.core.model import BASES, PERMANENCES
from epimem.core.params import DEFAULT_KINDS, DEFAULTS

VAULT = Path(__file__).resolve().parents[2] / "vault"
START, END = date(2026, 6, 1), date(2026, 11, 28)
OBS_LINK = re.compile(r"^observations/(\d{4}-\d{2})#(obs-\d{8}-[0-9a-f]{4})$")
ARROW = re.compile(r"\((\d\.\d\d) → (\d\.\d\d)\)\s*$")

# The sample vault's own rules (its epistemology.md), which its histories were made under.
SAMPLE_RULES = seed_params()


@pytest.fixture(scope="module")
def beliefs():
    out = {}
    for p in sorted((VAULT / "beliefs").glob("*.md")):
        out[p.stem] = notes.parse_belief(p.read_text(encoding="utf-8"), p.stem, f"beliefs/{p.name}")
    return out


@pytest.fixture(scope="module")
def observations():
    out = {}
    for p in sorted((VAULT / "observations").glob("*.md")):
        parsed, bad = notes.parse_observations(p.read_text(encoding="utf-8"), f"observations/{p.name}")
        assert bad == [], f"{p.name}: {bad}"
        for o in parsed:
            assert o.id not in out, f"duplicate observation id {o.id}"
            out[o.id] = o
    return out


@pytest.fixture(scope="module")
def tensions():
    out = {}
    for p in sorted((VAULT / "tensions").glob("*.md")):
        out[p.stem] = notes.parse_tension(p.read_text(encoding="utf-8"), p.stem, f"tensions/{p.name}")
    return out


@pytest.fixture(scope="module")
def sessions():
    from epimem.store import sessions as sessions_file  # the counter's one reader (days from count_at_day_start)

    raw = sessions_file.loads((VAULT / "state" / "sessions.json").read_text(encoding="utf-8"))
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in raw.items()}


def test_layout():
    for sub in ("beliefs", "observations", "tensions", "reviews", "state"):
        assert (VAULT / sub).is_dir(), sub
    assert ".epimem/" in (VAULT / ".gitignore").read_text(encoding="utf-8").split()


def test_belief_counts_and_coverage(beliefs):
    assert 20 <= len(beliefs) <= 30
    bs = list(beliefs.values())
    assert all(SLUG.match(b.id) for b in bs)
    assert {b.kind for b in bs} >= set(DEFAULT_KINDS)
    assert {b.basis for b in bs} == set(BASES)
    assert {b.permanence for b in bs} == set(PERMANENCES)
    assert {DEFAULTS.tier(b.confidence, b.basis) for b in bs} == {name for name, _ in DEFAULTS.tiers}
    assert sum(b.pinned for b in bs) == 1
    assert Counter(b.status for b in bs) == Counter(
        {"active": len(bs) - 2, "retired": 1, "superseded": 1})
    assert len([b for b in bs if b.scope != "global"]) >= 2
    assert any(b.confirmed is None for b in bs if b.status == "active")
    assert any(b.challenged is not None for b in bs)


def test_supersession_is_consistent(beliefs):
    old = next(b for b in beliefs.values() if b.status == "superseded")
    new = [b for b in beliefs.values() if old.id in b.supersedes]
    assert len(new) == 1 and new[0].status == "active"
    assert any(e.kind == "superseded" and e.link == f"beliefs/{new[0].id}" for e in old.evidence)


def test_confidence_respects_caps_and_tiers(beliefs):
    for b in beliefs.values():
        if b.basis != "fact":
            assert b.confidence <= 0.90, b.id
        if DEFAULTS.tier(b.confidence, "fact") == "factual":
            assert b.basis == "fact", b.id


def test_dates_in_range(beliefs, observations, tensions):
    for b in beliefs.values():
        for d in (b.first, b.confirmed, b.challenged, *(e.date for e in b.evidence)):
            assert d is None or START <= d <= END, (b.id, d)
        assert b.confirmed is None or b.confirmed >= b.first
    for o in observations.values():
        assert START <= o.date <= END, o.id
    for t in tensions.values():
        assert START <= t.date <= END, t.id


def test_evidence_kinds_used(beliefs):
    used = {e.kind for b in beliefs.values() for e in b.evidence}
    assert used >= {"single", "confirming", "reinforcing", "complicating", "contradicting", "diverging",
                    "added", "edited", "rejected", "retired", "superseded"}


def test_evidence_links_resolve(beliefs, observations):
    # Rule 12: a number moved by an observation points at that observation.
    strength_of = {"single": "single", "confirming": "confirming", "reinforcing": "confirming",
                   "complicating": "complicating", "contradicting": "contradicting",
                   "diverging": "contradicting"}
    for b in beliefs.values():
        for e in b.evidence:
            if e.kind in strength_of:
                m = OBS_LINK.match(e.link)
                assert m, f"{b.id}: {e.kind} evidence without an observation link: {e.link!r}"
                o = observations.get(m.group(2))
                assert o is not None, f"{b.id}: {e.link} does not exist"
                assert o.path == f"observations/{m.group(1)}.md", f"{b.id}: {e.link} is in {o.path}"
                assert o.date == e.date, (b.id, e.link)
                assert o.connects == b.id, (b.id, e.link)
                assert o.strength == strength_of[e.kind], (b.id, e.link)
                assert e.note.startswith(o.evidence), (b.id, e.link)
            elif e.link:
                assert e.link.startswith("beliefs/") and e.link[8:] in beliefs, (b.id, e.link)


def test_every_connected_observation_is_cited(beliefs, observations):
    cited = {e.link.split("#")[1] for b in beliefs.values() for e in b.evidence if "#" in e.link}
    for o in observations.values():
        if o.connects != "new":
            assert o.connects in beliefs, o.id
            assert o.id in cited, f"{o.id} connects {o.connects} but is not in its evidence"


def test_observations(observations, beliefs):
    assert 35 <= len(observations) <= 50
    new = [o for o in observations.values() if o.connects == "new"]
    assert 3 <= len(new) <= 4
    for o in observations.values():
        assert re.fullmatch(r"obs-\d{8}-[0-9a-f]{4}", o.id), o.id
        assert o.id[4:12] == f"{o.date:%Y%m%d}", o.id
        assert o.path == f"observations/{o.date:%Y-%m}.md", o.id
        assert o.source == "claude-code" and re.fullmatch(r"[0-9a-f]{6}", o.session), o.id
        assert o.evidence and o.suggests and o.therefore, o.id
    # Rule 9: at most three observations per session.
    per_session = Counter(o.session for o in observations.values())
    assert max(per_session.values()) <= DEFAULTS.observations_per_session
    # A session happens on one day.
    days = {}
    for o in observations.values():
        assert days.setdefault(o.session, o.date) == o.date, o.session


def test_the_sample_vault_pins_the_seeds_rules():
    """The sample vault was made under SPEC §2's first numbers and keeps them in its own
    epistemology.md, as every vault made before the defaults moved does (issue 26)."""
    assert SAMPLE_RULES.start["behavioral"] == 0.30
    assert (SAMPLE_RULES.confirm_step, SAMPLE_RULES.challenge_step) == (0.05, 0.10)
    assert SAMPLE_RULES != DEFAULTS


def test_confidence_replays_from_evidence(beliefs, observations):
    """Every stored confidence is the start value moved only by the rules the vault pins or a
    named user action: +0.05 per behavioural confirmation from a new session,
    no drop at the first challenge, −0.10 from the second with no confirmation
    between, −0.20 on rejection, any value on an explicit user edit."""
    for b in beliefs.values():
        ev = b.evidence
        assert ev, b.id
        first = ev[0]
        assert first.date == b.first, b.id
        if first.kind == "added":
            conf = float(re.search(r"\((\d\.\d\d)\)\s*$", first.note).group(1))
        else:
            assert first.kind == "single", b.id
            conf = SAMPLE_RULES.start[b.basis]
        last_session, challenges, last_confirmed = "", 0, None
        for e in ev[1:]:
            # Observations and rejections end with "(a → b)"; a user edit lists "confidence a → b".
            m = ARROW.search(e.note) or re.search(r"confidence (\d\.\d\d) → (\d\.\d\d)", e.note)
            before, after = (float(m.group(1)), float(m.group(2))) if m else (conf, conf)
            assert before == pytest.approx(conf), (b.id, e)
            if e.kind == "confirming":
                o = observations[e.link.split("#")[1]]
                assert o.basis == "behavioral" and o.session != last_session, (b.id, e)
                top = 0.90 if b.basis != "fact" else 1.0
                assert after == pytest.approx(min(top, conf + SAMPLE_RULES.confirm_step)), (b.id, e)
                last_session, challenges, last_confirmed = o.session, 0, e.date
            elif e.kind in ("contradicting", "diverging"):  # rule 15: a divergence is a challenge too
                expected = conf if challenges == 0 else max(0.05, round(conf - SAMPLE_RULES.challenge_step, 2))
                assert after == pytest.approx(expected), (b.id, e)
                challenges += 1
            elif e.kind == "rejected":
                assert after == pytest.approx(max(0.05, round(conf - 0.20, 2))), (b.id, e)
            elif e.kind == "edited":
                # the user may set any value; the line records it, and decay counts from it (rule 16)
                if m:
                    last_confirmed = e.date
            else:
                assert after == pytest.approx(conf), (b.id, e)
            conf = after
        assert b.confidence == pytest.approx(conf), b.id
        assert b.confirmed == last_confirmed, b.id
        # Format 2: the session that last confirmed is read from the last confirming line's
        # observation (api/observe.last_confirmed_in), not from a frontmatter line.
        assert b.confirmed_session == "", b.id


def test_tensions(tensions, beliefs, observations):
    assert len(tensions) == 3
    assert sorted(t.status for t in tensions.values()) == ["resolved", "unresolved", "watching"]
    for t in tensions.values():
        assert TENSION_ID.match(t.id) and t.id.startswith(t.date.isoformat()), t.id
        assert t.belief in beliefs, t.id
        assert t.title and t.what_happened and t.suggests, t.id
        assert t.evidence, t.id
        for link in t.evidence:
            m = OBS_LINK.match(link)
            assert m and m.group(2) in observations, (t.id, link)
    resolved = next(t for t in tensions.values() if t.status == "resolved")
    assert re.match(r"\d{4}-\d{2}-\d{2} — \S", resolved.resolution)
    # One tension is a self-report vs behaviour divergence (rule 6), citing both sides.
    diverging = [t for t in tensions.values()
                 if any(e.kind == "diverging" and e.link in t.evidence for e in beliefs[t.belief].evidence)]
    assert len(diverging) == 1
    bases = {observations[link.split("#")[1]].basis for link in diverging[0].evidence}
    assert bases == {"self-report", "behavioral"}


def test_candidate_pattern_among_unconnected(observations):
    # Three unconnected observations share a pattern (a rollback/revert path
    # before a risky change): the mirror audit's "candidate belief".
    new = [o for o in observations.values() if o.connects == "new"]
    alike = [o for o in new if re.search(r"rollback|revert|down-migration", o.evidence, re.I)]
    assert len(alike) == 3
    assert len({o.session for o in alike}) == 3


def test_sessions_json(sessions, observations):
    assert sessions["count"] == 41
    assert sum(sessions["days"].values()) == sessions["count"]
    days = sorted(sessions["days"])
    assert sessions["created"] == days[0] == "2026-06-01"
    assert sessions["last_session"] == days[-1] == "2026-11-28"
    assert all(START <= date.fromisoformat(d) <= END and n >= 1 for d, n in sessions["days"].items())
    # The audit reset the counter: next_review_at = sessions counted by then + 10.
    by_review = sum(n for d, n in sessions["days"].items() if d <= sessions["last_review"])
    assert sessions["next_review_at"] == by_review + DEFAULTS.review_every_sessions
    # Every observing session was counted on its day.
    distinct = Counter(d for d in {o.session: o.date.isoformat() for o in observations.values()}.values())
    for d, n in distinct.items():
        assert sessions["days"].get(d, 0) >= n, d


def test_review_record(sessions):
    p = VAULT / "reviews" / f"{sessions['last_review']}.md"
    note = notes.parse_note(p.read_text(encoding="utf-8"))
    assert str(note.meta["date"]) == sessions["last_review"]
    assert note.meta["kind"] == "audit"
    assert len(note.body.split()) > 50
