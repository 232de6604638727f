"""The one write path: every change to a vault file goes through `apply`.

A change is a list of typed `Write`s and, usually, the `Commit` that records
them. `apply` takes the vault lock, checks every write's precondition before
touching anything (compare-and-swap against what the caller read), writes
each file atomically with fsync, commits exactly those paths, puts every file
back if any step fails, and then brings the caches up to date. Like `pass`,
one operation is one commit; unlike a bare `git commit`, a failure leaves the
vault as it was.

Standard library only at import time: the session-start hook counts sessions
through here, and GitPython and the YAML parser are loaded only when a commit
is made or a belief's cache entry must be refreshed.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import Iterable, Literal, NamedTuple

from ..core.errors import Conflict, StorageError
from .files import ConcurrentEdit, VaultLock, atomic_write, contained, lock_path, stat_key

Mode = Literal["create", "replace", "upsert"]


class Write(NamedTuple):  # not a dataclass: `dataclasses` costs the hook ~5 ms to import
    """One file's new text and what must hold for it to be written.

    - `create`: the file must not exist (a new belief never overwrites one);
    - `replace`: the file must still be as the caller read it (`expect` is its
      (mtime_ns, size), or None for "did not exist"), so a hand edit saved
      while epimem computed is never overwritten;
    - `upsert`: write whatever is there (caches of state the caller owns).
    """

    path: str  # relative to the vault
    text: str
    mode: Mode = "replace"
    expect: tuple[int, int] | None = None


def create(path: str, text: str) -> Write:
    return Write(path, text, "create")


def replace(path: str, text: str, expect: tuple[int, int] | None) -> Write:
    return Write(path, text, "replace", expect)


def upsert(path: str, text: str) -> Write:
    return Write(path, text, "upsert")


class Commit(NamedTuple):
    """The commit that records a change: a subject a person reads, trailers a program reads."""

    subject: str
    op: str
    beliefs: tuple[str, ...] = ()
    session: str | None = None
    body: str = ""
    extra: tuple[tuple[str, str], ...] = ()
    # Extra paths committed with the change but not written by it (a session
    # count the hook left uncommitted rides along).
    also: tuple[str, ...] = ()
    when: date | None = None  # a replayed clock (EPIMEM_TODAY): commit dates follow it


class Result(NamedTuple):
    commit: str | None
    written: tuple[str, ...] = ()
    changed_beliefs: tuple[str, ...] = ()


def _check(root: Path, w: Write) -> Path:
    p = contained(root, w.path)
    if w.mode == "create" and p.exists():
        raise Conflict(f"{w.path} already exists; epimem will not overwrite it", path=w.path)
    if w.mode == "replace" and stat_key(p) != w.expect:
        raise ConcurrentEdit(f"{Path(w.path).name} changed on disk while epimem was updating it; "
                             "nothing was written — run the command again")
    return p


def apply(root: str | os.PathLike, writes: Iterable[Write], commit: Commit | None = None, *,
          lock: VaultLock | None = None, on_written=None) -> Result:
    """Write and commit as one all-or-nothing change; returns the new commit's sha.

    `commit=None` writes without committing (the hook's session count, which
    rides along with the next commit). `on_written(paths)` runs after the
    commit, outside the rollback: a cache that cannot be updated never undoes
    a change that landed.
    """
    root = Path(root).absolute()
    writes = list(writes)
    lock = lock or VaultLock(lock_path(root))
    with lock:
        targets = [(w, _check(root, w)) for w in writes]  # every precondition before any write
        done: list[tuple[Path, bytes | None]] = []
        sha = None
        try:
            for w, p in targets:
                old = p.read_bytes() if p.exists() else None
                atomic_write(p, w.text, expect=stat_key(p) if w.mode != "upsert" else None)
                done.append((p, old))
            if commit is not None:
                from . import git

                paths = [w.path for w in writes] + list(commit.also)
                try:
                    sha = git.commit(root, paths, commit.subject, op=commit.op, beliefs=commit.beliefs,
                                     session=commit.session, body=commit.body, extra=dict(commit.extra),
                                     when=commit.when)
                except BaseException:
                    git.unstage(root, paths)
                    raise
        except BaseException as e:
            for p, old in reversed(done):
                if old is None:
                    p.unlink(missing_ok=True)
                else:
                    atomic_write(p, old)
            if isinstance(e, (ConcurrentEdit, Conflict)) or not isinstance(e, (OSError, StorageError)):
                raise
            raise StorageError(f"could not record the change: {e}; nothing was written") from None
        written = tuple(w.path for w in writes)
        if on_written is not None:
            on_written(written)
    return Result(sha, written, tuple(p for p in written if p.startswith("beliefs/") and p.endswith(".md")))
