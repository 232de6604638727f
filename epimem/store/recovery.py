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


def write_record(root: str | os.PathLike, name: str, doc: dict) -> None:
    """A journal's record in `.epimem/`, before the change it records begins: renamed into place
    (whole or absent) and its folder fsynced (there after a power cut)."""
    import json

    from .files import INTERNAL_DIR, atomic_write, private_dir, tmp_dir

    internal = private_dir(Path(root) / INTERNAL_DIR)
    atomic_write(internal / name, json.dumps(doc), tmpdir=tmp_dir(root))
    fsync_dir(internal)


def drop_record(root: str | os.PathLike, name: str) -> None:
    """The change is done: drop its record (and with it any way back)."""
    from .files import INTERNAL_DIR

    try:
        os.unlink(os.path.join(root, INTERNAL_DIR, name))
    except FileNotFoundError:
        pass


def set_aside(path: str, what: str, error: Exception) -> str:
    """A record that cannot be read cannot be acted on, and keeping it in place would block nothing
    (only its recovery reads it): it is renamed `….unreadable` for a person. What was done, logged."""
    import logging

    bad = path + ".unreadable"
    os.replace(path, bad)
    note = f"{what} could not be read ({error}); it was kept as {bad}"
    logging.getLogger("epimem").warning("epimem: %s", note)
    return note


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


# Killing epimem does not kill the git it started: an orphaned `git add` may still
# write the index, an orphaned `git commit` may still land the commit, after epimem
# died. Deciding before it has finished would roll back files that git then commits
# (or leave a rolled-back new file staged), so recovery waits while git's locks are
# held and, where the system can tell (Linux's /proc), while a git started since the
# change began still works in the vault: a git just spawned holds no lock yet. A
# commit takes well under a second; a lock or a git still there after this is not ours.
GIT_WAIT_S = 5.0


def wait_for_git(root: Path, since: float | None = None) -> None:
    """Until git's locks in the vault are free and no git started at or after `since` (the
    interrupted change's start, epoch seconds) has the vault as its working directory."""
    deadline = time.monotonic() + GIT_WAIT_S
    while time.monotonic() < deadline:
        if not any(p.exists() for p in _git_locks(root)) and not (since and git_working_in(root, since)):
            return
        time.sleep(0.02)


def git_working_in(root: Path, since: float) -> bool:
    """A git process started at or after `since` whose working directory is `root` (every
    git epimem starts runs there: `gitrun._spawn`). Linux only: elsewhere, False."""
    try:
        pids = [int(e) for e in os.listdir("/proc") if e.isdigit()]
        # The boot instant from the uptime (to a hundredth), not /proc/stat's `btime`: that one is
        # whole seconds, rounded down, so a git started just now could read as up to a second
        # older than it is, and the one-second margin below missed it on a machine booted at
        # x.99 s (recovery rolled back under a git that then staged the file: `AD`).
        with open("/proc/uptime", encoding="ascii") as fh:
            boot = time.time() - float(fh.read().split()[0])
        tick = float(os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return False
    target = os.path.realpath(root)
    for pid in pids:
        try:
            if os.readlink(f"/proc/{pid}/cwd") != target:
                continue
            with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue  # gone meanwhile, or not ours to read
        # `pid (comm) state ppid …`: comm may hold spaces and parentheses, so split at the last ')'.
        comm, rest = stat[stat.find("(") + 1:stat.rfind(")")], stat[stat.rfind(")") + 2:].split()
        if not comm.startswith("git") or rest[0] == "Z":
            continue
        if boot + int(rest[19]) / tick >= since - 1:
            return True
    return False


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
