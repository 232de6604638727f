"""A sync killed mid-merge is rolled back or finished by the next command (issue 15).

Found by the kill -9 trials of `epimem sync` (bench/crash.py): a sync killed between git's
merge and its commit left `MERGE_HEAD` and half-merged files, and every later epimem command
refused the vault until the user ran `git merge --abort` by hand. Each test kills a real
`epimem sync` at a chosen point and checks what the next command and the next sync do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import crash  # noqa: E402  (bench/crash.py: the seeds and checks the random trials use)

pytestmark = pytest.mark.soak  # kill -9 trials of a real sync: the crash suites run after the default set

# Runs `epimem --vault V sync` with one step replaced by a SIGKILL of the process itself.
KILLER = r"""
import os, signal, sys
from pathlib import Path
from epimem.api import sync
from epimem.store import sync_journal
point, vault = sys.argv[1], sys.argv[2]
def die():
    os.kill(os.getpid(), signal.SIGKILL)
if point == "before-merge-commit":  # git merged into the work tree; its commit not made
    real = sync._Git.run
    def run(self, *args, **kw):
        if args[:1] == ("commit",):
            (Path(vault) / ".git" / "index.lock").write_text("")  # as a git killed with epimem leaves it
            (Path(vault) / ".merge_file_a1B2c3").write_text("ours")  # and its merge driver's temp file
            die()
        return real(self, *args, **kw)
    sync._Git.run = run
elif point == "mid-fast-forward":  # git killed halfway through a fast-forward's checkout
    real = sync._Git.run
    def run(self, *args, **kw):
        if args[:1] == ("merge",) and "--ff-only" in args:
            theirs = args[-1]
            changed = real(self, "diff", "--name-only", "HEAD", theirs).stdout.split()
            # Half of the files already theirs, HEAD not yet moved, and git's lock left behind.
            real(self, "checkout", theirs, "--", *changed[: max(1, len(changed) // 2)])
            (Path(vault) / ".git" / "index.lock").write_text("")
            die()
        return real(self, *args, **kw)
    sync._Git.run = run
elif point == "after-merge-commit":  # the merge committed, the record not yet dropped
    sync_journal.end = lambda root: die()
from epimem.__main__ import main
sys.exit(main(["--vault", vault, "sync"]))
"""


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    return crash.seed_sync(tmp_path_factory.mktemp("sync-crash"))


@pytest.fixture
def pair(seeds, tmp_path):
    a, r = seeds
    v, rr = tmp_path / "v", tmp_path / "remote.git"
    shutil.copytree(a, v, symlinks=True)
    shutil.copytree(r, rr, symlinks=True)
    crash.git(v, "remote", "set-url", "origin", str(rr))
    expected = set(crash.obs_ids(v) + crash.obs_ids(rr, "refs/heads/main"))
    return v, rr, expected


def _killed(v: Path, point: str) -> int:
    return subprocess.run([sys.executable, "-c", KILLER, point, str(v)], env=crash._env(), capture_output=True,
                          text=True, timeout=120).returncode


def test_a_sync_killed_before_its_merge_commit_is_rolled_back_and_the_next_sync_converges(pair):
    v, r, expected = pair
    before = crash.head(v)
    assert _killed(v, "before-merge-commit") == -9
    assert (v / ".git" / "MERGE_HEAD").exists() and (v / ".git" / "index.lock").exists()
    records, problems = crash._open(v)  # the next command, whatever it is
    assert problems == []
    assert any("was rolled back" in r and "epimem sync" in r for r in records), records
    assert not (v / ".git" / "MERGE_HEAD").exists() and not (v / ".git" / "index.lock").exists()
    assert not (v / ".merge_file_a1B2c3").exists()  # found by the random trials: an untracked file left
    assert crash.head(v) == before and crash.git(v, "status", "--porcelain", "--untracked-files=all") == ""
    assert crash.check_sync(v, r, before, expected)[0] == "absent"  # the next sync merges, pushes, loses nothing


def test_a_sync_killed_inside_a_fast_forward_is_rolled_back_and_the_next_sync_converges(pair):
    """The random trials reach this point only by chance: here git dies with half of the
    fast-forward's files checked out and HEAD where it was."""
    v, r, _ = pair
    base = crash.git(v, "merge-base", "HEAD", "origin/main").strip()
    crash.git(v, "reset", "-q", "--hard", base)  # only the remote moved since: the sync fast-forwards
    expected = set(crash.obs_ids(v) + crash.obs_ids(r, "refs/heads/main"))
    before = crash.head(v)
    assert _killed(v, "mid-fast-forward") == -9
    assert (v / ".git" / "index.lock").exists() and crash.git(v, "status", "--porcelain") != ""
    assert crash.head(v) == before
    records, problems = crash._open(v)  # the next command, whatever it is
    assert problems == []
    assert any("rolled back" in x for x in records), records
    assert not (v / ".git" / "index.lock").exists()
    assert crash.head(v) == before and crash.git(v, "status", "--porcelain", "--untracked-files=all") == ""
    state, why = crash.check_sync(v, r, before, expected)  # the next sync fast-forwards, loses nothing
    assert state != "broken", why
    assert crash.head(v) == crash.git(r, "rev-parse", "refs/heads/main")


def test_a_sync_killed_after_its_merge_commit_is_finished(pair):
    v, r, expected = pair
    before = crash.head(v)
    assert _killed(v, "after-merge-commit") == -9
    assert (v / ".epimem" / "sync-merge.json").exists()
    records, problems = crash._open(v)
    assert problems == [] and any("had been committed; finished it" in r for r in records), records
    assert not (v / ".epimem" / "sync-merge.json").exists()
    assert crash.head(v) != before
    assert crash.check_sync(v, r, before, expected)[0] == "whole"


def test_a_failed_merge_leaves_no_record(pair, monkeypatch):
    """Only a killed sync leaves the record: a merge git refuses is aborted, and says so."""
    from epimem.api import sync as sync_api
    from epimem.api.memory import Memory
    from epimem.core.errors import EpimemError

    v, _, _ = pair
    real = sync_api._Git.run

    def run(self, *args, **kw):
        if args[:1] == ("commit",):
            raise sync_api.StorageError("git commit failed: no space left")
        return real(self, *args, **kw)

    monkeypatch.setattr(sync_api._Git, "run", run)
    monkeypatch.setenv("EPIMEM_TODAY", crash.TODAY)
    for k, val in crash._env().items():
        if k.startswith("GIT_"):
            monkeypatch.setenv(k, val)
    with pytest.raises(EpimemError):
        sync_api.sync(Memory(v, today=crash.TODAY), index=False)
    assert not (v / ".epimem" / "sync-merge.json").exists()
    assert not (v / ".git" / "MERGE_HEAD").exists()
    assert crash.git(v, "status", "--porcelain", "--untracked-files=all") == ""


def test_the_session_start_hook_does_not_count_into_a_half_merged_vault_and_the_next_command_recovers(pair):
    v, _, _ = pair
    assert _killed(v, "before-merge-commit") == -9
    env = {**crash._env(), "CLAUDE_PROJECT_DIR": str(v)}
    p = subprocess.run([sys.executable, "-m", "epimem", "--vault", str(v), "hook", "session-start"], env=env,
                       input='{"source": "startup"}', capture_output=True, text=True, timeout=60)
    assert p.returncode == 0
    assert "unfinished" in p.stdout  # told, not counted into half-merged files
    records, problems = crash._open(v)
    assert problems == [] and any("rolled back" in r for r in records)
    assert os.path.exists(v / "state" / "sessions.json")
