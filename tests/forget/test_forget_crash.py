"""A purge killed at any point leaves the old history or the new one, never a broken repository.

Each test runs a real `epimem forget --purge` with one step replaced by a SIGKILL of the process
itself (as tests/sync/test_sync_crash.py does for a sync), then runs the next command a user
would run and checks the vault: `git fsck`, a clean work tree, every ref on one side, and — once
the purge's record of its refs was written — nothing of what was forgotten anywhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from forgetting import SECRET, all_objects, assert_no_trace, git, rich_vault

pytestmark = pytest.mark.soak  # kill -9 trials of a real purge: the crash suites run after the default set

ROOT = Path(__file__).resolve().parents[2]

KILLER = r"""
import os, signal, subprocess, sys
from pathlib import Path
from epimem.store import rewrite
from epimem.api import forget
point, vault = sys.argv[1], sys.argv[2]
def die():
    os.kill(os.getpid(), signal.SIGKILL)
real_git = rewrite._git
if point == "mid-import":  # fast-import has half of the stream when epimem dies
    def _git(root, *args, stdin=None, env=None, check=True):
        if args and args[0] == "fast-import":
            p = subprocess.Popen(["git", *args], cwd=root, stdin=subprocess.PIPE)
            p.stdin.write(stdin[: len(stdin) // 2]); p.stdin.flush()
            die()
        return real_git(root, *args, stdin=stdin, env=env, check=check)
    rewrite._git = _git
elif point == "after-import":  # the new history imported aside, nothing moved yet
    real_commit = rewrite.commit_file
    def commit_file(*a, **k):
        real_commit(*a, **k)
        die()
    rewrite.commit_file = commit_file
elif point == "before-refs":  # the record of every ref's old and new value written, no ref moved
    rewrite._finish = lambda root, doc: die()
elif point == "half-refs":  # update-ref moved one ref of two
    def _git(root, *args, stdin=None, env=None, check=True):
        if args[:2] == ("update-ref", "--stdin") and stdin and stdin.count(b"\n") > 1:
            first = stdin.split(b"\n")[0] + b"\n"
            real_git(root, *args, stdin=first, env=env, check=check)
            die()
        return real_git(root, *args, stdin=stdin, env=env, check=check)
    rewrite._git = _git
elif point == "before-work-tree":  # every ref moved, the index and work tree not yet
    real_ok = rewrite.ok
    def ok(root, *args):
        if args and args[0] == "read-tree":
            die()
        return real_ok(root, *args)
    rewrite.ok = ok
elif point == "before-gc":  # reflogs expired, the old objects not yet pruned
    def _git(root, *args, stdin=None, env=None, check=True):
        if "gc" in args:
            die()
        return real_git(root, *args, stdin=stdin, env=env, check=check)
    rewrite._git = _git
elif point == "before-caches":  # the history is new, recall's index and the journal not yet done
    forget._recall_afresh = lambda mem, rep: die()
from epimem.__main__ import main
sys.exit(main(["--vault", vault, "forget", "prefers-tabs", "--purge", "--yes"]))
"""

OLD_SIDE = ("mid-import", "after-import")
NEW_SIDE = ("before-refs", "half-refs", "before-work-tree", "before-gc", "before-caches")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _refs(root: Path) -> dict[str, str]:
    out = git(root, "for-each-ref", "--format=%(refname) %(objectname)").stdout.decode()
    return dict(line.split(" ", 1) for line in out.splitlines())


@pytest.mark.parametrize("point", OLD_SIDE + NEW_SIDE)
def test_a_purge_killed_leaves_the_old_history_or_the_new_one(vault, point, cli):
    v = rich_vault(vault).root
    git(v, "branch", "before-the-edit", "HEAD~2")  # a second ref: a purge moves several at once
    assert cli("--vault", v, "forget", "prefers-tabs", "--yes").code == 0  # the work tree first: its own commit
    before = _refs(v)
    old = set(git(v, "rev-list", "--all").stdout.decode().split())
    p = subprocess.run([sys.executable, "-c", KILLER, point, str(v)], env=_env(), capture_output=True, timeout=300)
    assert p.returncode == -9, p.stderr.decode()
    journal = v / ".epimem" / "purge.json"
    if journal.exists():
        assert SECRET not in journal.read_text() and "Reformatted" not in journal.read_text()
    # the next command, whatever it is, finishes or rolls back
    r = subprocess.run([sys.executable, "-m", "epimem", "--vault", str(v), "belief", "list"], env=_env(),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "interrupted purge" in r.stderr
    assert not journal.exists()
    git(v, "fsck", "--full", "--strict")
    assert git(v, "status", "--porcelain", "--untracked-files=all").stdout == b""
    now = _refs(v)
    assert not [n for n in now if "epimem-purge" in n]
    if point in OLD_SIDE:
        assert now == before  # every ref where it was: the old history, whole
        assert SECRET.encode() in all_objects(v)
        again = cli("--vault", v, "forget", "prefers-tabs", "--purge", "--yes")  # and the purge can be run again
        assert again.code == 0, again.err
    else:
        assert set(now) == set(before)
        for name in now:  # every ref on the new side, none left on the old one
            assert now[name] != before[name], name
        assert git(v, "merge-base", "--is-ancestor", now["refs/heads/before-the-edit"], now["refs/heads/main"],
                   check=False).returncode == 0
        assert_no_trace(v, SECRET, old_commits=old)
    records = sorted((v / "state" / "purges").glob("*.json")) if (v / "state" / "purges").is_dir() else []
    assert len(records) == 1 and SECRET not in records[0].read_text()
    assert json.loads(records[0].read_text())["beliefs"] == ["prefers-tabs"]
