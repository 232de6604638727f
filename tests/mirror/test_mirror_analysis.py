"""The mirror's analyses over a hand-built Snapshot: every figure the JSON
carries is checked against a value computed here by hand from SPEC §2 and §5
(decay: stored × e^(−λ·d), floored at 0.20; tiers; flags; drift...)."""

from __future__ import annotations

import json
import math
from datetime import date

import pytest

from epimem.core.model import Belief, Evidence, Observation, Problem, Sessions, Snapshot, Tension
from epimem.core.params import DEFAULTS
from epimem.mirror.audit import audit as make_audit
from epimem.mirror.data import as_data
from epimem.mirror.gutcheck import gut_check
from epimem.mirror.interview import interview
from epimem.mirror.portrait import BLIND_QUESTIONS, portrait_brief
from epimem.mirror.portrait import themes as find_themes
from epimem.mirror.views import top_and_bottom, view

T = date(2026, 11, 30)
E = Evidence


def eff(stored: float, lam: float, days: int) -> float:
    """SPEC §2.7 by hand."""
    return round(max(stored * math.exp(-lam * days), min(stored, 0.20)), 3)


def B(id, title, kind, basis, conf, perm, first, **kw):  # noqa: N802 - reads like a table row
    return Belief(id=id, title=title, kind=kind, basis=basis, confidence=conf, permanence=perm,
                  first=first, **kw)


BELIEFS = (
    # A: interpretive trait, confirmed 30 days ago, challenged before that (never lowered).
    B("thinks-aloud", "Thinks out loud before deciding", "trait", "interpretive", 0.75, "durable",
      date(2026, 9, 1), confirmed=date(2026, 10, 31), challenged=date(2026, 10, 10),
      tags=("decision-making",), statement="Talks through options at length before choosing.",
      evidence=(E(date(2026, 9, 1), "single", "observations/2026-09#obs-a", "compared designs aloud"),
                E(date(2026, 10, 10), "contradicting", "observations/2026-10#obs-c", "decided in a minute"),
                E(date(2026, 10, 31), "confirming", "observations/2026-10#obs-d",
                  "drafted two plans (0.70 → 0.75)"))),
    # B: pinned verified fact: no decay, never confirmed, exempt from "stale".
    B("conventional-commits", "Commit messages follow Conventional Commits", "convention", "fact",
      0.95, "stable", date(2026, 1, 1), pinned=True),
    # C: stable preference, challenged twice and lowered, unconfirmed for 213 days.
    B("small-prs", "Prefers small pull requests", "preference", "behavioral", 0.80, "stable",
      date(2026, 3, 1), confirmed=date(2026, 5, 1), challenged=date(2026, 8, 1),
      evidence=(E(date(2026, 7, 1), "contradicting", "", "a 2,000-line PR"),
                E(date(2026, 8, 1), "contradicting", "", "another big one (0.90 → 0.80)"))),
    # D: situational self-report, never confirmed, diverging behaviour, never lowered.
    B("tests-first", "Writes the failing test first", "workflow", "self-report", 0.45, "situational",
      date(2026, 8, 1), challenged=date(2026, 9, 15),
      evidence=(E(date(2026, 8, 1), "added", "", "said so (0.45)"),
                E(date(2026, 9, 15), "diverging", "", "built a feature before its tests"))),
    # E: permanence unknown for 60 days; stored above the floor, decays onto it.
    B("night-owl", "Is a night owl", "trait", "interpretive", 0.25, "unknown", date(2026, 10, 1)),
    # F: a young value, never confirmed.
    B("values-craft", "Values craftsmanship over speed", "value", "interpretive", 0.55, "durable",
      date(2026, 11, 20)),
    # G: low but confirmed three times: a candidate for raising.
    B("idempotency-table", "Idempotency keys live in a table", "solution", "behavioral", 0.35,
      "durable", date(2026, 10, 1), confirmed=date(2026, 11, 25),
      evidence=tuple(E(date(2026, 11, d), "confirming", "", "reused it") for d in (5, 15, 25))),
    B("old-retired", "Avoids frontend work", "trait", "interpretive", 0.05, "unknown",
      date(2026, 6, 1), status="retired"),
    B("old-superseded", "Mocks the database", "convention", "behavioral", 0.30, "durable",
      date(2026, 6, 1), status="superseded"),
)

OBSERVATIONS = (
    Observation("obs-a", date(2026, 9, 1), "Compared three designs aloud", "single", "behavioral", "new"),
    Observation("obs-b", date(2026, 10, 2), "Talked it through", "confirming", "behavioral", "thinks-aloud"),
    Observation("obs-s1", date(2026, 11, 2), "Asked for a short summary of the long design thread",
                "single", "behavioral", "new", suggests="Wants short summaries after long discussions"),
    Observation("obs-s2", date(2026, 11, 5), "Asked again for a short summary of the discussion",
                "single", "behavioral", "new", suggests="Wants short summaries"),
    Observation("obs-s3", date(2026, 11, 9), "Requested a one-line summary of the review discussion",
                "single", "behavioral", "new", suggests="Wants short summaries of long discussions"),
    Observation("obs-n", date(2026, 11, 12), "Renamed every variable in the billing module",
                "single", "behavioral", "new", suggests="Cares about naming"),
    Observation("obs-x", date(2026, 11, 14), "Kept a ghost alive", "confirming", "behavioral",
                "ghost-belief"),
)

TENSIONS = (
    Tension("2026-11-01-thinks-aloud", date(2026, 11, 1), "thinks-aloud", "unresolved",
            "Said I decide fast, then explored for an hour",
            what_happened="Stated a preference for quick decisions.", suggests="Both are kept."),
    Tension("2026-09-15-tests-first", date(2026, 9, 15), "tests-first", "watching",
            "Said test-first, built the feature first"),
    Tension("2026-07-01-small-prs", date(2026, 7, 1), "small-prs", "resolved", "Big PR", resolution="ok"),
)

SESSIONS = Sessions(count=12, last_session=date(2026, 11, 28), last_review=date(2026, 10, 15),
                    next_review_at=20, created=date(2026, 1, 1),
                    days=(("2026-05-10", 2), ("2026-09-20", 3), ("2026-10-20", 4), ("2026-11-28", 3)))

SNAP = Snapshot(BELIEFS, OBSERVATIONS, TENSIONS, SESSIONS,
                (Problem("beliefs/bad.md", 3, "invalid YAML in frontmatter"),), T)

# Effective confidences by hand (days since confirmed, or since first).
EFF = {
    "thinks-aloud": eff(0.75, 0.005, 30),          # 0.646, the SPEC's own example
    "conventional-commits": 0.95,                   # pinned
    "small-prs": eff(0.80, 0.001, 213),             # 0.647
    "tests-first": eff(0.45, 0.015, 121),           # 0.073 → floored to 0.20
    "night-owl": eff(0.25, 0.010, 60),              # 0.137 → floored to 0.20
    "values-craft": eff(0.55, 0.005, 10),           # 0.523
    "idempotency-table": eff(0.35, 0.005, 5),       # 0.341
}


@pytest.fixture(scope="module")
def audit():
    return make_audit(SNAP, DEFAULTS, T)


@pytest.fixture(scope="module")
def data(audit):
    # Through JSON and back: the test reads what `--json` prints.
    return json.loads(json.dumps(as_data(audit)))


def test_hand_computed_effective_values():
    assert EFF == {"thinks-aloud": 0.646, "conventional-commits": 0.95, "small-prs": 0.647,
                   "tests-first": 0.2, "night-owl": 0.2, "values-craft": 0.523,
                   "idempotency-table": 0.341}


def test_totals_and_counts(data):
    assert data["today"] == "2026-11-30"
    assert data["totals"] == {"beliefs": 7, "retired": 1, "superseded": 1, "observations": 7,
                              "tensions": 3, "skipped_files": 1}
    assert data["by_permanence"] == {"stable": 2, "durable": 3, "situational": 1, "unknown": 1}
    # factual: conventional-commits; developing: 0.646, 0.647, 0.523; tentative: 0.341.
    assert data["by_tier"] == {"factual": 1, "established": 0, "developing": 3, "tentative": 1,
                               "speculative": 2}
    assert list(data["by_kind"].items()) == [("trait", 2), ("convention", 1), ("preference", 1),
                                             ("solution", 1), ("value", 1), ("workflow", 1)]
    assert data["empty"] is False
    # the same shape as every command's problems (was the string "path:line: message")
    assert data["problems"] == [{"path": "beliefs/bad.md", "line": 3, "message": "invalid YAML in frontmatter"}]


def test_session_figures(data):
    assert data["sessions"] == {
        "count": 12, "last_session": "2026-11-28", "last_review": "2026-10-15",
        "next_review_at": 20, "created": "2026-01-01",
        "days_since_init": 333, "days_since_last_session": 2, "days_since_last_review": 46,
        "sessions_since_last_review": 7,          # 4 on 10-20 + 3 on 11-28
        "review_due": True, "review_reason": "46 days since the last review",  # 12 < 20, but 46 >= 30 days
        "dormant": False, "dormant_days": None}


def test_top_and_bottom_split_a_small_vault(data):
    # 7 beliefs (< 10): the top takes 4, the bottom the other 3, weakest first.
    assert [v["id"] for v in data["top"]] == ["conventional-commits", "small-prs", "thinks-aloud",
                                              "values-craft"]
    assert [v["id"] for v in data["bottom"]] == ["night-owl", "tests-first", "idempotency-table"]
    for v in data["top"] + data["bottom"]:
        assert v["effective_confidence"] == EFF[v["id"]], v["id"]
    first = data["top"][1]
    assert (first["confidence"], first["permanence"], first["confirmed"]) == (0.8, "stable", "2026-05-01")
    assert first["confirmations"] == 0 and first["challenges"] == 2
    # the latest evidence is a contradiction: said so, never quoted as what the belief rests on
    assert first["why"] == "not yet confirmed, challenged 2 times: lately contradicted: another big one"
    assert data["top"][0]["why"] == "a verified fact, pinned"
    assert data["top"][2]["why"] == "confirmed once, challenged once: drafted two plans"
    assert data["top"][2]["tier"] == "developing" and data["top"][2]["certainty"] == "it seems"


def test_top_and_bottom_in_a_large_vault():
    views = [view(B(f"b{i:02d}", f"Belief {i}", "trait", "behavioral", i / 100, "stable", T), T)
             for i in range(20, 40)]
    top, bottom = top_and_bottom(views, 5)
    assert [v.id for v in top] == ["b39", "b38", "b37", "b36", "b35"]
    assert [v.id for v in bottom] == ["b20", "b21", "b22", "b23", "b24"]


def test_dormancy_flags(data):
    d = data["dormancy"]
    # Drops: tests-first 0.25, small-prs 0.153, thinks-aloud 0.104 (> 0.10); night-owl only 0.05.
    assert [f["id"] for f in d["decayed"]] == ["tests-first", "small-prs", "thinks-aloud"]
    assert [(f["confidence"], f["effective_confidence"], f["days"]) for f in d["decayed"]] == [
        (0.45, 0.2, 121), (0.8, 0.647, 213), (0.75, 0.646, 30)]
    # a pinned fact is not waiting to be confirmed by behaviour (issue 9)
    assert [(f["id"], f["days"]) for f in d["never_confirmed"]] == [
        ("tests-first", 121), ("night-owl", 60), ("values-craft", 10)]
    assert [(f["id"], f["days"]) for f in d["unknown_too_long"]] == [("night-owl", 60)]
    assert [(f["id"], f["days"]) for f in d["situational_unconfirmed"]] == [("tests-first", 121)]
    assert d["total"] == 5


def test_tensions(data):
    t = data["tensions"]
    assert t["by_status"] == {"unresolved": 1, "watching": 1, "resolved": 1}
    assert [(x["id"], x["days_open"], x["belief_title"]) for x in t["unresolved"]] == [
        ("2026-11-01-thinks-aloud", 29, "Thinks out loud before deciding")]
    assert [(x["id"], x["days_open"]) for x in t["watching"]] == [("2026-09-15-tests-first", 76)]


def test_drift(data):
    d = data["drift"]
    # small-prs was challenged too, but its evidence records a drop (0.90 → 0.80).
    assert d["challenged_not_lowered"] == [
        {"id": "thinks-aloud", "title": "Thinks out loud before deciding", "confidence": 0.75,
         "challenged": "2026-10-10", "challenges": 1, "confirmed_since": True},
        {"id": "tests-first", "title": "Writes the failing test first", "confidence": 0.45,
         "challenged": "2026-09-15", "challenges": 1, "confirmed_since": False}]
    # Stale: situational 121 >= 21, stable 213 >= 182; the pinned fact (333 days) is exempt.
    assert [(s["id"], s["days"], s["limit"]) for s in d["stale"]] == [
        ("tests-first", 121, 21), ("small-prs", 213, 182)]


def test_coherence(data):
    assert data["coherence"] == {"too_neat": False, "sessions": 12, "open_tensions": 2,
                                 "threshold": 10}


def test_too_neat_after_ten_sessions_without_open_tension():
    snap = Snapshot(BELIEFS, (), (TENSIONS[2],), Sessions(count=10), (), T)
    c = make_audit(snap, DEFAULTS, T).coherence
    assert (c.too_neat, c.open_tensions, c.sessions) == (True, 0, 10)
    young = Snapshot(BELIEFS, (), (), Sessions(count=9), (), T)
    assert make_audit(young, DEFAULTS, T).coherence.too_neat is False


def test_permanence_suggestions_and_proposals(data):
    assert [(p["id"], p["current"], p["suggested"], p["reason"]) for p in data["permanence"]] == [
        ("small-prs", "stable", "durable", "challenged 2 times"),
        # last change 09-15 (challenged): 3 + 4 + 3 sessions since.
        ("tests-first", "situational", "durable", "unchanged across 10 sessions"),
        ("night-owl", "unknown", "", "permanence unknown for 60 days: decide how long it holds")]
    assert [(p["id"], p["action"], p["confidence"], p["effective_confidence"], p["reason"])
            for p in data["proposals"]] == [
        ("idempotency-table", "raise", 0.35, 0.341, "below 0.40, confirmed 3 times"),
        # confirmed 05-01: 2 + 3 + 4 + 3 = 12 sessions since.
        ("small-prs", "soften", 0.8, 0.647, "above 0.70, not confirmed in 12 sessions")]


def test_unconnected_observations_and_candidates(data):
    # obs-a is cited by a belief's evidence; obs-b connects to a belief.
    assert [(o["id"], o["reason"]) for o in data["unconnected"]] == [
        ("obs-s1", "new"), ("obs-s2", "new"), ("obs-s3", "new"), ("obs-n", "new"),
        ("obs-x", "missing belief 'ghost-belief'")]
    assert len(data["candidates"]) == 1
    c = data["candidates"][0]
    assert c["observations"] == ["obs-s1", "obs-s2", "obs-s3"]
    # Shared words, most shared first (3 each, then "ask" twice), as written most often.
    assert c["words"] == ["discussion", "short", "summaries", "asked"]
    assert c["example"] == "Wants short summaries of long discussions"


def test_two_alike_observations_are_not_a_candidate():
    obs = OBSERVATIONS[2:4] + OBSERVATIONS[5:6]
    snap = Snapshot((), obs, (), Sessions(), (), T)
    assert make_audit(snap, DEFAULTS, T).candidates == ()


def test_decay_uses_the_vaults_parameters():
    from dataclasses import replace
    fast = replace(DEFAULTS, decay={**DEFAULTS.decay, "durable": 0.05})
    a = make_audit(SNAP, fast, T)
    views = {v.id: v.effective_confidence for v in a.top + a.bottom}
    assert views["thinks-aloud"] == eff(0.75, 0.05, 30) == 0.2   # 0.167, floored
    assert views["values-craft"] == eff(0.55, 0.05, 10) == 0.334


# --- gut-check -------------------------------------------------------------------------

def test_gut_check_widens_a_thin_interpretive_pool():
    g = json.loads(json.dumps(as_data(gut_check(SNAP, DEFAULTS, T))))
    # 3 interpretive beliefs < 6: the pool takes every non-fact belief (6 of them).
    assert (g["pool"], g["interpretive"]) == ("interpretive+", 3)
    assert [i["belief"]["id"] for i in g["high"]] == ["small-prs", "thinks-aloud", "values-craft"]
    assert [i["belief"]["id"] for i in g["low"]] == ["night-owl", "tests-first", "idempotency-table"]
    assert [i["belief"]["effective_confidence"] for i in g["high"]] == [0.647, 0.646, 0.523]
    assert g["high"][0]["question"] == "Still true?" and g["low"][0]["question"] == "Still uncertain?"
    assert g["high"][1]["text"] == "It seems you think out loud before deciding."
    assert g["low"][0]["text"] == "I'm guessing you are a night owl."


def test_gut_check_uses_interpretive_beliefs_only_when_there_are_enough():
    bs = tuple(B(f"i{n}", f"Interpretation {n}", "trait", "interpretive", n / 10, "stable", T)
               for n in range(1, 9)) + (BELIEFS[2],)
    g = gut_check(Snapshot(bs, (), (), Sessions(), (), T), DEFAULTS, T)
    assert g.pool == "interpretive"
    assert [i.belief.id for i in g.high] == ["i8", "i7", "i6"]
    assert [i.belief.id for i in g.low] == ["i1", "i2", "i3"]
    # With no verdict yet every band is thin (SPEC §14): one belief from each of the two middle
    # bands the ends left out is asked too.
    assert [i.belief.id for i in g.calibrate] == ["i5", "i4"]
    assert g.beliefs == ("i8", "i7", "i6", "i1", "i2", "i3", "i5", "i4")


# --- interview ---------------------------------------------------------------------------

def test_interview_plan_order_and_ties():
    iv = interview(SNAP, DEFAULTS, T)
    sections = [q.section for q in iv.questions]
    assert sections == ["warm-up", "blind-spot", "blind-spot", "blind-spot", "stale", "stale",
                        "probe", "probe", "probe", "tension", "tension", "closing"]
    assert [q.n for q in iv.questions] == list(range(1, 13))
    q = iv.questions
    # Blind spots by priority: motivation and identity have no belief, workflow only a guess.
    assert [(x.kind, x.prompted_by) for x in q[1:4]] == [
        ("motivation", "no beliefs about what moves you"),
        ("identity", "no beliefs about who you are and what you do"),
        ("workflow", "only guesses about how you work day to day")]
    # Stale: the largest drops first (0.25, then 0.153).
    assert [(x.belief, x.connects) for x in q[4:6]] == [("tests-first", "tests-first"),
                                                      ("small-prs", "small-prs")]
    assert q[4].prompted_by == "situational belief, recorded 121 days ago and never confirmed"
    assert q[5].prompted_by == "stable belief, last confirmed 213 days ago"
    # Probes: the strongest non-fact beliefs not already asked about.
    assert [x.belief for x in q[6:9]] == ["thinks-aloud", "values-craft", "idempotency-table"]
    assert [x.tension for x in q[9:11]] == ["2026-11-01-thinks-aloud", "2026-09-15-tests-first"]
    assert all(x.basis == "self-report" for x in q)
    assert "“Thinks out loud before deciding”" in q[6].text and "?" in q[6].text
    assert q[-1].text.startswith("Anything else I should know")


def test_interview_on_an_empty_vault_still_has_eight_questions():
    iv = interview(Snapshot(today=T), DEFAULTS, T)
    assert len(iv.questions) == 8
    assert iv.questions[0].section == "warm-up" and iv.questions[-1].section == "closing"
    assert {q.section for q in iv.questions[1:-1]} == {"blind-spot"}


def test_interview_never_exceeds_twelve():
    many = BELIEFS + tuple(B(f"x{i}", f"Extra belief {i}", "trait", "behavioral", 0.6, "durable",
                             date(2026, 1, 1)) for i in range(30))
    tens = TENSIONS + tuple(Tension(f"2026-11-0{i}-x{i}", date(2026, 11, i), f"x{i}", "unresolved",
                                    f"T{i}") for i in range(1, 6))
    iv = interview(Snapshot(many, (), tens, SESSIONS, (), T), DEFAULTS, T)
    assert 8 <= len(iv.questions) <= 12


def test_interview_seeds_a_tension_when_none_is_open():
    snap = Snapshot(BELIEFS, (), (), Sessions(count=15), (), T)
    iv = interview(snap, DEFAULTS, T)
    qs = [q for q in iv.questions if q.section == "tension"]
    # Both challenged-but-not-lowered beliefs are already asked about (stale, probe),
    # so the seed is the coherence question.
    asked = {q.belief for q in iv.questions if q.section in ("stale", "probe")}
    assert {"tests-first", "thinks-aloud"} <= asked
    assert len(qs) == 1 and qs[0].belief == ""
    assert qs[0].prompted_by == "no open tension after 15 sessions: the profile may be too neat"


# --- portrait ------------------------------------------------------------------------------

def test_portrait_brief():
    p = portrait_brief(SNAP, DEFAULTS, T)
    assert p.empty is False and p.beliefs == 7 and p.observations == 7
    # The strongest beliefs about character and drive: a trait and a value.
    assert [v.id for v in p.person] == ["thinks-aloud", "values-craft"]
    assert [v.effective_confidence for v in p.person] == [EFF["thinks-aloud"], EFF["values-craft"]]
    assert p.person[0].why == "confirmed once, challenged once: drafted two plans"
    # workflow: one belief, and it is speculative (tests-first, 0.20).
    # The verified convention (basis fact) is a fact of the situation: "fact" is not blind (issue 9).
    assert [s.beliefs for s in p.blind_spots] == [0, 0, 1, 0, 0]
    assert [(s.kind, s.reason) for s in p.blind_spots] == [
        ("motivation", "none"), ("identity", "none"), ("workflow", "guesses only"),
        ("decision", "none"), ("antipattern", "none")]
    assert [t.id for t in p.contradictions] == ["2026-11-01-thinks-aloud", "2026-09-15-tests-first"]
    # No open tension on an established belief, so the first missing core kind.
    assert (p.hungriest.kind, p.hungriest.question) == ("motivation", BLIND_QUESTIONS["motivation"])
    assert p.certainty_words == {"factual": "certainly", "established": "clearly",
                                 "developing": "it seems", "tentative": "I've seen hints",
                                 "speculative": "I'm guessing"}
    covered = [m for t in p.themes for m in t.members]
    assert len(covered) == len(set(covered))
    assert all(t.size == len(t.members) for t in p.themes)
    for t in p.themes:
        assert [v.effective_confidence for v in t.beliefs] == sorted((EFF[m] for m in t.members), reverse=True)[:5]


def test_themes_prefer_tags_then_shared_words_then_kinds():
    def b(i, title, kind, tags=()):
        return B(f"t{i}", title, kind, "behavioral", 0.6, "durable", T, tags=tags)

    bs = (b(1, "Runs the suite before pushing", "workflow", ("testing",)),
          b(2, "Writes property tests for parsers", "workflow", ("testing",)),
          b(3, "Keeps fixtures tiny", "convention", ("testing",)),
          b(4, "Answers in short paragraphs", "preference", ("communication",)),
          b(5, "Dislikes emoji in replies", "preference", ("communication",)),
          b(6, "Wants bad news first", "preference", ("communication",)),
          b(7, "Uses Postgres advisory locks", "convention"),
          b(8, "Tunes Postgres autovacuum", "solution"),
          b(9, "Reads Postgres release notes", "workflow"),
          b(10, "Values calm over speed", "value"),
          b(11, "Values honesty in reviews", "value"),
          b(12, "Motivated by users' thanks", "motivation"),
          b(13, "Senior engineer", "identity"))
    themes = find_themes([view(x, T) for x in bs])
    assert [(t.label, t.source, t.size) for t in themes] == [
        ("Communication", "tag", 3), ("Testing", "tag", 3), ("Postgres", "words", 3),
        ("What drives you", "kind", 3)]
    assert themes[0].members == ("t4", "t5", "t6")
    assert all(t.certainty == "it seems" for t in themes)  # 0.6 → developing


def test_empty_vault_brief_is_honest():
    p = portrait_brief(Snapshot(today=T), DEFAULTS, T)
    assert p.empty and p.person == () and p.themes == () and p.contradictions == ()
    assert p.hungriest.why == "nothing is known yet"
    a = make_audit(Snapshot(today=T), DEFAULTS, T)
    assert a.empty and a.top == () and a.candidates == ()


def test_analysis_is_pure():
    """The analysis imports no I/O library and changes nothing it is given."""
    import ast
    from pathlib import Path

    import epimem.mirror.views as mod
    # gutcheck.py holds the gut-check's analysis beside the recording of its answers, so it is not listed.
    for name in ("views.py", "audit.py", "interview.py", "portrait.py", "data.py", "text.py", "phrase.py",
                 "render.py"):
        tree = ast.parse((Path(mod.__file__).parent / name).read_text())
        names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                 for a in n.names}
        names |= {(n.module or "").split(".")[0] for n in ast.walk(tree)
                  if isinstance(n, ast.ImportFrom) and not n.level}
        assert not names & {"os", "pathlib", "subprocess", "git", "chromadb", "typer", "anthropic",
                            "httpx", "io", "shutil"}, name
    before = repr(SNAP)
    make_audit(SNAP, DEFAULTS, T), portrait_brief(SNAP, DEFAULTS, T)
    assert repr(SNAP) == before


def _keys(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _keys(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _keys(v)


def test_one_json_vocabulary_with_belief_show():
    """The mirror's JSON names a belief's numbers as `belief show --json` does, with the same values,
    and `review_due` is a bool in every command (its reason beside it)."""
    from epimem.cli.common import belief_json

    results = (make_audit(SNAP, DEFAULTS, T), gut_check(SNAP, DEFAULTS, T), interview(SNAP, DEFAULTS, T),
               portrait_brief(SNAP, DEFAULTS, T))
    for r in results:
        assert not set(_keys(as_data(r))) & {"stored", "effective"}, type(r).__name__
    a = as_data(results[0])
    shown = {b.id: belief_json(b, T, DEFAULTS) for b in BELIEFS}
    for v in a["top"] + a["bottom"]:
        assert (v["confidence"], v["effective_confidence"]) == (
            shown[v["id"]]["confidence"], shown[v["id"]]["effective_confidence"]), v["id"]
    assert a["sessions"]["review_due"] is True
    fresh = as_data(make_audit(Snapshot(today=T), DEFAULTS, T))["sessions"]
    assert fresh["review_due"] is False and fresh["review_reason"] is None
