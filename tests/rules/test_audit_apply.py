"""Issue 9 point 8: the audit's proposals can be applied, each as the user's action with evidence."""

import subprocess

import pytest
from vaults import count_sessions

from epimem.mirror import apply as audit_apply
from epimem.mirror.audit import audit


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _vault_with_proposals(vault):
    # strong but unconfirmed for 12 sessions: soften; low but confirmed 3 times: raise
    vault.add_belief(title="Strong guess", statement="Held firmly.", kind="trait", basis="behavioral",
                     permanence="durable", confidence=0.85)
    vault.add_belief(title="Weak but seen", statement="Seen often.", kind="trait", basis="behavioral",
                     permanence="situational", confidence=0.20)
    count_sessions(vault, "w0", "w1", "w2")
    for i in range(3):
        vault.observe([{"connects": "weak-but-seen", "strength": "confirming", "evidence": f"seen {i}",
                        "session": f"w{i}"}])
    from epimem.api.memory import Memory

    for d in range(1, 13):
        Memory(vault.root, today=f"2026-12-{d:02d}").session_start()
    return Memory(vault.root, today="2026-12-20")


@pytest.mark.seed_rules
def test_api_plan_and_apply_in_one_commit(vault):
    mem = _vault_with_proposals(vault)
    a = audit(mem.snapshot(), mem.params, mem.today)
    assert {(p.id, p.action) for p in a.proposals} == {("strong-guess", "soften"), ("weak-but-seen", "raise")}
    n = len(_git(mem.root, "log", "--format=%H").split())
    sha, planned = audit_apply.apply(mem, a)
    assert len(_git(mem.root, "log", "--format=%H").split()) == n + 1
    assert mem.belief("strong-guess").confidence == 0.75
    w = mem.belief("weak-but-seen")
    assert w.confidence == 0.40 and w.evidence[-1].kind == "reviewed"
    note = w.evidence[-1].note
    assert note.startswith("audit: raised (below 0.40, confirmed 3 times)") and "confidence 0.35 → 0.40" in note
    assert "re-classed" in note and w.permanence == "durable"  # two proposals, one change, one line
    assert _git(mem.root, "log", "-1", "--format=%s").strip() == "review: audit proposals applied to 2 beliefs"


@pytest.mark.seed_rules
def test_cli_apply_only_one(cli, vault):
    mem = _vault_with_proposals(vault)
    r = cli("--vault", mem.root, "--today", "2026-12-20", "mirror", "audit", "--apply-only", "strong-guess", "--json")
    assert r.code == 0, r.err
    d = r.json()["applied"]
    assert [c["belief"] for c in d["changes"]] == ["strong-guess"] and d["commit"]
    assert mem.belief("strong-guess").confidence == 0.75 and mem.belief("weak-but-seen").confidence == 0.35
    bad = cli("--vault", mem.root, "--today", "2026-12-20", "mirror", "audit", "--apply-only", "nope")
    assert bad.code == 1 and "proposes nothing for nope" in bad.err


def test_cli_apply_reclasses_the_sample_vault(cli, sample_vault):
    r = cli("--vault", sample_vault, "mirror", "audit", "--apply")
    assert r.code == 0, r.err
    assert "deep-work-mornings: audit: re-classed (unchanged across" in r.out
    d = cli("--vault", sample_vault, "belief", "show", "deep-work-mornings", "--json").json()
    assert d["permanence"] == "durable" and d["evidence"][-1]["kind"] == "reviewed"
