"""The session counter's own commit: the one writer of `state/sessions.json` that commits.

`store/sessions` is the file's format (read, written, this clone's machine id); committing it goes
through the one write path (`transaction.adopt`), which reads the vault, so it lives here, above
both, and the format's module imports nothing that writes."""

from __future__ import annotations

from pathlib import Path

from ..core import kernel
from . import git, sessions, transaction


def commit_counted(root, session: str = "", lock=None) -> str | None:
    """Commit an uncommitted session count on its own, at most once a day (SPEC §4).

    A session start is not a commit of its own: the count rides along with the
    next epimem commit (`transaction`). Only the first session of a day that finds
    the count still uncommitted commits it, so a day's sessions never make more
    than one commit, and a vault used without any other change still records them.
    Returns the new commit's sha, or None.
    """
    root = Path(root)

    def prepare():
        # Under the lock: another commit may already have taken this change along.
        if not git.status(root, (sessions.PATH,)):
            return None
        now = sessions.loads((root / sessions.PATH).read_text(encoding="utf-8"))
        committed = git.show_many(root, [f"HEAD:{sessions.PATH}"])[0] if git.has_commits(root) else None
        try:
            before = sessions.loads(committed) if committed else kernel.empty_sessions()
        except (ValueError, TypeError):
            before = kernel.empty_sessions()
        if before["last_session"] is not None and before["last_session"] == now["last_session"]:
            return None
        first, last = before["count"] + 1, now["count"]
        what = f"#{last} counted" if first >= last else f"#{first}–#{last} counted"
        return transaction.Staged(transaction.Commit(f"session: {what}", op="session",
                                                     body=git.uncommitted_sessions(root) or "",
                                                     session=session or None), paths=(sessions.PATH,))

    return transaction.adopt(root, prepare, lock=lock).commit
