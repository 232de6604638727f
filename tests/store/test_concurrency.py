"""Two assistant sessions observing at the same moment: both land, nothing corrupts."""

import json
import subprocess
import sys

import pytest
from vaults import count_sessions

from epimem.core.notes import parse_belief, parse_observations


@pytest.mark.seed_rules
def test_two_observe_processes_at_once_both_land(vault):
    vault.add_belief(title="Prefers small PRs", statement="Splits work into small PRs.", kind="preference",
                     basis="behavioral", permanence="durable")
    count_sessions(vault, "sess-0", "sess-1")
    procs = []
    for i in range(2):
        batch = json.dumps([{"connects": "prefers-small-prs", "strength": "confirming",
                             "evidence": f"session {i} split the work", "session": f"sess-{i}"}])
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "epimem", "--vault", str(vault.root), "observe", "--input", "-"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        procs[-1].stdin.write(batch)
    for p in procs:
        p.stdin.close()
    outs = [(p.wait(timeout=60), p.stdout.read(), p.stderr.read()) for p in procs]
    assert all(code == 0 for code, _, _ in outs), outs
    log = subprocess.run(["git", "log", "--format=%s"], cwd=vault.root, capture_output=True, text=True).stdout
    assert log.count("observe: confirming → prefers-small-prs") == 2
    b = parse_belief((vault.root / "beliefs/prefers-small-prs.md").read_text(), "prefers-small-prs")
    assert b.confidence == 0.40 and [e.kind for e in b.evidence].count("confirming") == 2
    obs, bad = parse_observations((vault.root / "observations/2026-11.md").read_text())
    assert len(obs) == 2 and not bad
    status = subprocess.run(["git", "status", "--porcelain"], cwd=vault.root, capture_output=True, text=True).stdout
    assert status.strip() == ""
