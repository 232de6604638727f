"""The intent journal: a change to several files is whole or absent, even after kill -9.

Before the first file of a change is written, `.epimem/journal.json` records
what every file held before (its bytes, or that it did not exist), the commit
the change means to make and where HEAD stood. It is fsynced and renamed into
place, so it exists whole or not at all, and it is removed once the change is
committed. A journal found later means a process died in the middle:

- HEAD moved past the recorded commit: the commit landed and only the clean-up
  was lost; the journal is dropped (the change is *finished*);
- otherwise every file is put back as it was and the paths are taken out of the
  index (the change is *rolled back*), and git's lock files that the dead
  process left are removed.

Either way the next command says so on stderr. Checking costs one `stat`, so
every command can do it, the session-start hook included; the work of recovery
(and GitPython) is paid only when there is something to recover.

Standard library only at import time.
"""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path

from .files import (
    INTERNAL_DIR,
    JOURNAL_NAME,
    VaultLock,
    atomic_write,
    is_temp,
    journal_pending,
    lock_path,
    tmp_dir,
)
from .recovery import clear_git_locks, drop_record, head, refresh_caches, set_aside, wait_for_git, write_record

NAME = JOURNAL_NAME


def journal_path(root: str | os.PathLike) -> str:
    return os.path.join(root, INTERNAL_DIR, NAME)



pending = journal_pending


def begin(root: Path, files: list[tuple[str, bytes | None]], *, subject: str | None, commit: bool) -> None:
    """Record the change about to be made (fsynced) before any file of it is written."""
    sweep(root)
    doc = {
        "version": 1,
        "pid": os.getpid(),
        "started": time.time(),
        "subject": subject,
        "commit": commit,
        "head": head(root) if commit else None,
        "files": [{"path": rel, "old": None if old is None else base64.b64encode(old).decode("ascii")}
                  for rel, old in files],
    }
    write_record(root, NAME, doc)


def end(root: Path) -> None:
    """The change is recorded: drop the journal (and with it any way back)."""
    drop_record(root, NAME)


def sweep(root: Path) -> None:
    """Remove temp files a killed transaction left (only ever called under the vault lock)."""
    try:
        with os.scandir(tmp_dir(root)) as it:
            for e in it:
                if is_temp(e.name):
                    try:
                        os.unlink(e.path)
                    except OSError:
                        pass
    except (FileNotFoundError, NotADirectoryError):
        pass


def recover_if_needed(root: str | os.PathLike, lock: VaultLock | None = None) -> str | None:
    """Finish or roll back an interrupted change; one stat when there is none.
    Returns what was done (and logs it), or None."""
    from . import sync_journal
    from .files import purge_pending

    note = recover(Path(root).absolute(), lock) if pending(root) else None
    if sync_journal.pending(root):  # a sync killed mid-merge (one more stat)
        note = sync_journal.recover(Path(root).absolute(), lock) or note
    if purge_pending(root):  # a purge killed while its history moved (one more stat)
        from . import rewrite

        note = rewrite.recover(Path(root).absolute(), lock) or note
    return note


def recover(root: Path, lock: VaultLock | None = None) -> str | None:
    import logging

    lock = lock or VaultLock(lock_path(root))
    with lock:
        # A live writer holds the lock while its journal exists: having the lock,
        # whatever journal is left belongs to a process that is gone.
        try:
            with open(journal_path(root), encoding="utf-8") as fh:
                doc = json.load(fh)
            files = [(str(f["path"]), None if f["old"] is None else base64.b64decode(f["old"]))
                     for f in doc["files"]]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as e:
            return set_aside(journal_path(root), "an interrupted change's journal", e)
        subject = doc.get("subject") or "a change"
        if doc.get("commit"):
            wait_for_git(root, float(doc.get("started") or 0))
        if doc.get("commit") and head(root) != doc.get("head"):
            note = f"an interrupted change ({subject}) had been committed; finished it"
            end(root)
            sweep(root)
            refresh_caches(root)
        else:
            clear_git_locks(root, float(doc.get("started") or 0))
            for rel, old in reversed(files):
                p = root / rel
                if old is None:
                    try:
                        p.unlink()
                    except (FileNotFoundError, IsADirectoryError):
                        pass
                else:
                    atomic_write(p, old, tmpdir=tmp_dir(root))
            if doc.get("commit"):
                from . import git

                git.unstage(root, [rel for rel, _ in files])
            end(root)
            sweep(root)
            note = f"an interrupted change ({subject}) was rolled back; nothing of it was kept"
        logging.getLogger("epimem").warning("epimem: %s", note)
        return note
