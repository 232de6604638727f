"""Kill -9 at random moments of `epimem sync` and of the hook's background commit (issue 15).

The same harness as `python bench/crash.py --git-trials N` (its checks are in the module's
docstring), with the count bounded for CI: 30 trials, or as many as 150 s allow on a loaded
machine (at least 12). With tests/store/test_crash.py's 100 they make the crash suite's CI
count. Marked soak.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import crash  # noqa: E402


@pytest.mark.soak
def test_random_kills_of_sync_and_the_hook_commit_leave_every_vault_consistent():
    results = crash.run_git_trials(int(os.environ.get("EPIMEM_CRASH_GIT_TRIALS", "30")), seed=23, budget_s=150)
    s = crash.summary(results)
    assert len(results) >= 12, s
    assert s["broken"] == [], s["broken"]
    ops = {t.op.split(" ")[0] for t in results}
    assert ops == {"sync", "hook-commit"}, s
    # The kills must land inside the commands, not only before or after them.
    assert sum(1 for t in results if t.outcome in ("rolled-back", "finished", "whole")) > 0, s
