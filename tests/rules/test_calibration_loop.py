"""SPEC §14, issue 26 item 3 end to end: every verdict of the user is recorded with the
confidence the belief had when asked; `epimem mirror calibration` says what they add up to;
with enough of them the audit proposes a parameter change and `audit --apply` commits it to
epistemology.md citing the numbers."""

from __future__ import annotations

import subprocess

from epimem.core import calibration as cal
from epimem.mirror.gutcheck import answer


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _add(mem, title, conf=0.6, perm="durable"):
    return mem.add_belief(title=title, statement=f"{title}.", kind="trait", basis="behavioral", permanence=perm,
                          confidence=conf).id


def test_every_kind_of_verdict_is_counted_with_the_confidence_asked(vault, cli):
    ids = [_add(vault, f"Habit {c}") for c in "abcdefg"]
    answer(vault, ids[0], "true")                                  # a gut-check answer
    answer(vault, ids[1], "false", source="answer")                # MCP's answer
    vault.reject(ids[2], note="not any more")                      # rejection
    vault.retire(ids[3], note="never was")                         # retirement
    vault.supersede([ids[4]], by=ids[5], note="this one instead")  # supersession
    vault.observe([{"connects": ids[6], "strength": "confirming", "basis": "self-report",
                    "evidence": "Said: yes, still do that.", "session": "i1"}], source="mirror-interview")
    vault.observe([{"connects": ids[5], "strength": "contradicting", "basis": "self-report",
                    "evidence": "Said: not really.", "session": "i1"}], source="mirror-interview")
    # An observation that is not an answer is not a verdict, whatever it says.
    vault.observe([{"connects": ids[6], "strength": "confirming", "evidence": "Did it again.", "session": "o1"}])
    vs = cal.verdicts(vault.snapshot().beliefs)
    got = sorted((v.belief, v.source, v.outcome) for v in vs)
    assert got == sorted([(ids[0], "gut-check", "true"), (ids[1], "answer", "false"),
                          (ids[2], "rejection", "false"), (ids[3], "retirement", "false"),
                          (ids[4], "supersession", "false"), (ids[6], "interview", "true"),
                          (ids[5], "interview", "false")])
    assert all(v.confidence == 0.60 and v.stored == 0.60 for v in vs)


def test_a_note_that_carries_its_verdict_is_not_tagged_twice(vault):
    bid = _add(vault, "Habit z")
    answer(vault, bid, "false", retire=True)
    note = vault.belief(bid).evidence[-1].note
    assert note.count("verdict false at") == 1


def test_mirror_calibration_end_to_end(vault, cli):
    for i in range(12):
        bid = _add(vault, f"Firm habit {i}", conf=0.8)
        answer(vault, bid, "false" if i < 9 else "true", retire=i < 9)
    r = cli("--vault", vault.root, "mirror", "calibration", "--json")
    assert r.code == 0, r.err
    d = r.json()
    est = next(b for b in d["figures"]["bands"] if b["name"] == "established")
    assert (est["n"], est["still_true"], est["judgement"]) == (12, 3, "over-confident")
    assert d["figures"]["verdicts"] == 12 and d["figures"]["brier"] > 0.4
    assert "| established (0.70–0.90) | 12 | 25 % | 80 % |" in d["markdown"]
    md = cli("--vault", vault.root, "mirror", "calibration").out
    assert md.startswith("# Calibration") and "over-confident" in md
    audit = cli("--vault", vault.root, "mirror", "audit").out
    assert "## Calibration" in audit and "over-confident" in audit


def _slow_decay_vault(vault):
    """Forty durable beliefs stored at 0.80, last confirmed 150 days ago, nearly all still true."""
    from epimem.api.memory import Memory

    old = Memory(vault.root, today="2026-07-03")
    ids = [_add(old, f"Durable habit {i}", conf=0.8) for i in range(cal.PROPOSE_MIN + 6)]
    for i, bid in enumerate(ids):
        answer(vault, bid, "true" if i % 12 else "false")
    return ids


def test_audit_apply_commits_the_parameter_change_citing_the_numbers(vault, cli):
    _slow_decay_vault(vault)
    d = cli("--vault", vault.root, "mirror", "audit", "--json").json()
    props = {p["key"]: p for p in d["calibration"]["proposals"]}
    assert "decay.durable" in props and props["decay.durable"]["proposed"] < 0.005
    n = len(_git(vault.root, "log", "--format=%H").split())
    r = cli("--vault", vault.root, "mirror", "audit", "--apply-only", "decay.durable")
    assert r.code == 0, r.err
    assert len(_git(vault.root, "log", "--format=%H").split()) == n + 1
    msg = _git(vault.root, "log", "-1", "--format=%B")
    assert msg.startswith("epistemology: decay.durable changed by the user's verdicts")
    assert "Brier" in msg and f"over {cal.PROPOSE_MIN + 6} verdicts" in msg
    assert _git(vault.root, "show", "--stat", "--format=", "HEAD").split()[0] == "epistemology.md"
    from epimem.api.memory import Memory

    p = Memory(vault.root).params
    assert p.decay["durable"] == props["decay.durable"]["proposed"] and p.decay["stable"] == 0.001
    assert Memory(vault.root).validate() == []
    # The new rate is judged on the verdicts given under it: none yet, so nothing is proposed for
    # it again (the old verdicts, read as if under the new rate, would swing it further).
    from epimem.api.epistemology import calibrated_since

    assert calibrated_since(Memory(vault.root)) == {"decay.durable": Memory(vault.root).today}
    d = cli("--vault", vault.root, "mirror", "audit", "--json").json()
    assert "decay.durable" not in {p["key"] for p in d["calibration"]["proposals"]}


def test_the_gut_check_stops_sampling_a_band_once_it_has_enough_verdicts(vault):
    from epimem.mirror.gutcheck import gut_check

    for i in range(12):
        _add(vault, f"Middling {i}", conf=0.55)
    mem = vault
    g = gut_check(mem.snapshot(), mem.params, mem.today)
    assert g.calibrate  # nothing answered yet: the middle is thin
    for b in [x for x in mem.snapshot().beliefs][:cal.BAND_MIN]:
        answer(mem, b.id, "true")
    g = gut_check(mem.snapshot(), mem.params, mem.today)
    figures = cal.calibrate(cal.verdicts(mem.snapshot().beliefs), mem.params)
    full = {b.name for b in figures.bands if b.n >= cal.BAND_MIN}
    assert "developing" in full
    assert all(cal.band_of(i.belief.effective_confidence) not in full for i in g.calibrate)
