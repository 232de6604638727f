"""What every journal's recovery shares: where HEAD stands, a directory made durable, git's lock files.

Three journals make a change whole or absent after a kill: the intent journal (`store/journal`),
a sync's merge (`store/sync_journal`) and a purge's history (`store/rewrite`). Each decides its
own way back; what they need of git and the caches while doing it lives here, below all three, so
that `journal.recover_if_needed`, which calls the other two, is imported by neither.

Standard library only at import time (the session-start hook recovers too).
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def head(root: Path) -> str | None:
    """The commit HEAD names (None before the first), as the runner reads it: the files
    backend's refs without a process, anything else (reftable) from git."""
    from .gitrun import head_sha

    return head_sha(root)


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _git_locks(root: Path) -> list[Path]:
    from .gitrun import lock_files

    return lock_files(root)


# Killing epimem does not kill the git it started: an orphaned `git commit` may
# still land the commit after epimem died. Deciding before it has finished would
# roll back files that git then commits, so recovery waits while git's locks
# are held (a commit takes well under a second; a lock still there after this
# is stale).
GIT_WAIT_S = 5.0


def wait_for_git(root: Path) -> None:
    deadline = time.monotonic() + GIT_WAIT_S
    while any(p.exists() for p in _git_locks(root)) and time.monotonic() < deadline:
        time.sleep(0.02)


def clear_git_locks(root: Path, started: float) -> None:
    """git's lock files that the interrupted change's own git left behind.

    Only locks created after the change began, while that process held the
    vault lock, are ours to remove: an older one belongs to someone else (the
    user's own git), and is left for git to report."""
    for p in _git_locks(root):
        try:
            if os.stat(p).st_mtime >= started - 1:
                os.unlink(p)
        except OSError:
            continue


def refresh_caches(root: Path) -> None:
    # The change landed but its cache update did not run; the context cache is
    # rebuilt so the next session sees it.
    try:
        from .context_cache import refresh_context

        refresh_context(root, None, changed=None)
    except Exception as e:  # a cache must never stop recovery; it is rebuilt at the next write
        import logging

        logging.getLogger("epimem").warning("epimem: the context cache could not be rebuilt (%s)", e)
