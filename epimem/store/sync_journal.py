"""A sync's merge is whole or absent, even after kill -9 (the journal's rule, for git's merge).

`epimem sync` lets git merge the remote's commits into the work tree and then commits the
merge. Killed in between (the merge half checked out, `MERGE_HEAD` left, git's own
`index.lock` left by a git killed with it), the vault would stay half merged: every epimem
command refuses such a vault, and a session may not record into it. So, before git touches
the work tree, sync records where HEAD stood, what it merges and the paths the merge may
change in `.epimem/sync-merge.json`, and removes the record once the merge is committed.

A record found later by a process that holds the vault lock (sync holds it throughout, so
its owner is gone) means the sync died mid-merge:

- HEAD moved: the merge (or fast-forward) was committed and only the clean-up was lost;
  the record is dropped (*finished*; the next `epimem sync` sends it);
- otherwise the merge is given up: git's lock files and merge-driver temp files the dead git
  left are removed, the merge state is aborted and every path the merge could change is put back as HEAD has it
  (*rolled back*). Nothing of the vault is lost: sync commits pending edits before merging,
  and the remote still holds what was being merged.

Either way the next command says so on stderr. Checking costs one `stat`.
Standard library only at import time.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .files import INTERNAL_DIR, VaultLock, contained, lock_path

NAME = "sync-merge.json"


def path(root: str | os.PathLike) -> str:
    return os.path.join(root, INTERNAL_DIR, NAME)


def pending(root: str | os.PathLike) -> bool:
    return os.path.exists(path(root))


def begin(root: Path, head: str, theirs: str, paths: list[str]) -> None:
    """Record the merge about to be made (fsynced) before git changes a file of it."""
    from .recovery import write_record

    write_record(root, NAME, {"version": 1, "pid": os.getpid(), "started": time.time(), "head": head,
                              "theirs": theirs, "paths": sorted(set(paths))})


def end(root: Path) -> None:
    from .recovery import drop_record

    drop_record(root, NAME)


def recover(root: Path, lock: VaultLock | None = None) -> str | None:
    """Finish or roll back a merge a killed sync left; what was done (logged), or None."""
    import logging

    from . import recovery

    lock = lock or VaultLock(lock_path(root))
    with lock:
        try:
            with open(path(root), encoding="utf-8") as fh:
                doc = json.load(fh)
            head, theirs = str(doc["head"]), str(doc.get("theirs") or "the remote")
            paths = [str(p) for p in doc.get("paths") or []]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as e:
            return recovery.set_aside(path(root), "an interrupted sync's record", e)
        recovery.wait_for_git(root, float(doc.get("started") or 0))  # killing epimem does not kill its git
        if recovery.head(root) != head:
            end(root)
            recovery.refresh_caches(root)
            note = (f"an interrupted sync (merging {theirs}) had been committed; finished it — "
                    "`epimem sync` sends it")
        else:
            started = float(doc.get("started") or 0)
            recovery.clear_git_locks(root, started)
            _clear_merge_temps(root, started)
            _roll_back(root, paths)
            end(root)
            note = (f"an interrupted sync (merging {theirs}) was rolled back; nothing of the merge was kept — "
                    "`epimem sync` merges again")
        logging.getLogger("epimem").warning("epimem: %s", note)
        return note


def _clear_merge_temps(root: Path, started: float) -> None:
    """The `.merge_file_XXXXXX` files a git killed while its merge driver ran leaves at the top of
    the work tree (the driver's %O %A %B). Only those made during the dead sync are removed."""
    try:
        with os.scandir(root) as it:
            for e in it:
                if e.name.startswith(".merge_file_") and e.is_file(follow_symlinks=False):
                    try:
                        if e.stat(follow_symlinks=False).st_mtime >= started - 1:
                            os.unlink(e.path)
                    except OSError:
                        continue
    except OSError:
        pass


def _roll_back(root: Path, paths: list[str]) -> None:
    from . import git

    gitdir = root / ".git"
    if (gitdir / "MERGE_HEAD").exists():
        try:
            git.run(root, "merge", "--abort", retries=1)
        except git.HistoryError:
            for name in ("MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE"):
                try:
                    os.unlink(gitdir / name)
                except FileNotFoundError:
                    pass
    if not paths:
        return
    tracked = set(git.run(root, "ls-tree", "-r", "--name-only", "-z", "HEAD").split("\0"))
    back = [p for p in paths if p in tracked]
    for p in paths:  # what the merge brought in that HEAD does not have
        if p not in tracked:
            try:
                os.unlink(contained(root, p))
            except (FileNotFoundError, IsADirectoryError):
                pass
    with git.pathspec_file(root, paths) as spec:
        git.run(root, "reset", "--quiet", *spec, retries=1, env=git.LITERAL)
    if back:
        with git.pathspec_file(root, back) as spec:
            git.run(root, "checkout", "HEAD", *spec, retries=1, env=git.LITERAL)
