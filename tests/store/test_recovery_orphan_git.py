"""Killing epimem does not kill the git it started. An orphaned git that holds no lock yet
(just spawned) and writes the index after recovery has rolled the change back left a new file
staged with no file on disk (`AD` in `git status`: found by tests/store/test_crash.py under
load). Recovery now waits for a git started since the change began that still works in the
vault (Linux's /proc), then decides."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from epimem.store import journal
from epimem.store.recovery import git_working_in

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux only)")


def _git(root, *args):
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout.strip()


def test_recovery_waits_for_a_git_the_dead_writer_started(vault):
    root = vault.root
    rel = "beliefs/orphan-new.md"
    journal.begin(root, [(rel, None)], subject="observe: one new belief", commit=True)
    (root / rel).write_text("---\ntitle: New\n---\nS.\n", encoding="utf-8")
    blob = _git(root, "hash-object", "-w", rel)
    # The dead writer's `git add`: it has read the file and writes the index a moment later,
    # holding no lock until then (a git alias: a git process whose shell does the late write).
    late = subprocess.Popen(
        ["git", "-c", f"alias.late=!sleep 0.4; git update-index --add --cacheinfo 100644,{blob},{rel}", "late"],
        cwd=root)
    try:
        time.sleep(0.1)
        assert git_working_in(root, time.time() - 5)
        note = journal.recover(root)
    finally:
        late.wait(10)
    assert note and "rolled back" in note
    assert not (root / rel).exists()
    assert _git(root, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_git_older_than_the_change_is_not_waited_for(vault):
    root = vault.root
    old = subprocess.Popen(["git", "-c", "alias.slow=!sleep 3", "slow"], cwd=root)
    try:
        time.sleep(0.1)
        later = time.time() + 2  # the change began after this git started
        assert not git_working_in(root, later)
        assert git_working_in(root, later - 4)
    finally:
        old.kill()
        old.wait(10)


def test_a_git_started_just_after_the_change_began_is_seen_at_once(vault):
    """A git's start time from /proc is exact to the clock tick; /proc/stat's whole-second boot
    time made it read up to a second early, past the margin, on a machine booted at x.99 s."""
    root = vault.root
    for _ in range(5):
        since = time.time()
        git = subprocess.Popen(["git", "-c", "alias.slow=!sleep 2", "slow"], cwd=root)
        try:
            time.sleep(0.05)
            assert git_working_in(root, since)
        finally:
            git.kill()
            git.wait(10)
