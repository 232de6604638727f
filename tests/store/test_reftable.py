"""A vault whose refs are not files: reftable (git 2.45+), and a layout where they are elsewhere.

The commit path reads HEAD from `.git` without a process (it runs under the vault lock). On a
reftable repository `.git/HEAD` names a placeholder and the refs are binary tables: read as
files, HEAD looked unborn after every commit, and epimem said "git made no commit" (issue 27).
The runner reads the files only on the files backend and asks git otherwise.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from git_tools import reftable_git


def _git(root: Path, *args: str, env=None) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True,
                          env=env).stdout.strip()


def _use_as_a_user(cli, root: Path) -> None:
    """What a user does on the vault: add, observe, commit a hand edit; each must commit."""
    r = cli("--vault", root, "belief", "add", "--title", "Likes tabs", "--statement", "Indents with tabs.",
            "--kind", "preference", "--basis", "self-report", "--permanence", "stable")
    assert r.code == 0, r.err
    r = cli("--vault", root, "observe", "--connects", "likes-tabs", "--strength", "confirming",
            "--evidence", "tabs again", "--session", "s1")
    assert r.code == 0, r.err
    p = root / "beliefs" / "likes-tabs.md"
    p.write_text(p.read_text(encoding="utf-8").replace("Indents with tabs.", "Indents with tabs, always."),
                 encoding="utf-8")
    r = cli("--vault", root, "commit")
    assert r.code == 0 and "git made no commit" not in r.err, r.err


def test_a_reftable_vault_commits_and_says_so(tmp_path, cli, monkeypatch):
    from epimem.store import gitrun

    bindir = reftable_git()
    monkeypatch.setenv("PATH", f"{bindir}:{__import__('os').environ['PATH']}")
    monkeypatch.setattr(gitrun, "_exe", [])  # the runner finds the newer git on PATH
    root = tmp_path / "v"
    subprocess.run(["git", "init", "-q", "--ref-format=reftable", "-b", "main", str(root)], check=True)
    assert (root / ".git" / "reftable").is_dir() and _git(root, "rev-parse", "--show-ref-format") == "reftable"
    assert cli("--vault", root, "init").code == 0
    _use_as_a_user(cli, root)
    assert gitrun.head_sha(root) == _git(root, "rev-parse", "HEAD")
    subjects = _git(root, "log", "--format=%s").splitlines()
    assert len(subjects) >= 4 and subjects[0].startswith("edit: likes-tabs"), subjects
    assert _git(root, "status", "--porcelain") == ""
    r = cli("--vault", root, "history", "likes-tabs", "--json")
    assert r.code == 0 and len(r.json()["history"]) >= 3, r.out


def _refs_elsewhere(vault: Path, store: Path) -> None:
    """Make `vault` look to a reader of `.git` as a reftable repository does — no loose refs, no
    packed-refs, `extensions.refStorage = reftable` — while git 2.39 still finds its refs: they
    move to a common directory that `.git/commondir` names (the layout of a linked worktree),
    and `.git/config`, which git does not read there, carries the extension."""
    git_dir = vault / ".git"
    git_dir.rename(store)
    git_dir.mkdir()
    for per_worktree in ("HEAD", "index"):
        (store / per_worktree).rename(git_dir / per_worktree)
    (git_dir / "commondir").write_text(str(store) + "\n", encoding="utf-8")
    (git_dir / "config").write_text("[core]\n\trepositoryformatversion = 1\n[extensions]\n\trefStorage = reftable\n",
                                    encoding="utf-8")
    assert not list((git_dir).glob("refs/**/*")) and not (git_dir / "packed-refs").exists()


def test_refs_a_reader_of_dot_git_cannot_see_are_asked_of_git(tmp_path, cli):
    # Runs with any git: the runner's fallback path, on a layout that looks like reftable.
    from epimem.store import gitrun

    root = tmp_path / "v"
    assert cli("--vault", root, "init").code == 0
    _refs_elsewhere(root, tmp_path / "store.git")
    want = _git(root, "rev-parse", "HEAD")
    assert gitrun.head_sha(root) == want
    _use_as_a_user(cli, root)
    assert gitrun.head_sha(root) == _git(root, "rev-parse", "HEAD") != want
    assert _git(root, "log", "-1", "--format=%s").startswith("edit: likes-tabs")


@pytest.mark.parametrize("config, files", [
    ("[extensions]\n\trefStorage = reftable\n", False),
    ("[extensions]\n\trefstorage=reftable\n", False),
    ("[extensions]\n\trefStorage = files\n", True),
    ("[core]\n\tbare = false\n", True),
])
def test_the_ref_backend_is_read_from_the_config(tmp_path, config, files):
    from epimem.store.gitrun import _files_backend

    (tmp_path / "config").write_text(config, encoding="utf-8")
    assert _files_backend(tmp_path) is files
