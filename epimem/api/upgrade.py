"""Bringing an older vault up to this epimem's format in one commit (SPEC §1.4).

The plan is `core.formats.plan` (pure); this reads the files it names, hands the new texts to
the one write path and commits them as one change named for what changed
(`migrate: vault format 1 → 2 (confirmed_session dropped from 9 beliefs; …)`).

It runs before the first change a newer epimem makes to an older vault (`common.attempts`, and
each writer that does not prepare through it), and from `epimem init` on an existing vault; a
command that only reads changes nothing. A file with an edit not yet committed is left as it is
(its old form stays readable, `epimem commit` takes the edit through rule 18), and the commit
says so. Undo never walks back through a migration (`timeline.NOT_UNDONE`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import formats, kernel
from ..core.errors import VaultError
from ..store import drivers, git, vault_format
from ..store import sessions as sessions_file
from ..store import transaction as tx
from ..store.files import read_text, stat_key
from ..store.paths import note_entries
from . import write

if TYPE_CHECKING:
    from .service import Service

CODECS = formats.Codecs(load_sessions=sessions_file.loads, dump_sessions=sessions_file.dump,
                           with_attributes=drivers.with_attributes)


def needed(mem: Service) -> bool:
    """Whether the vault is in an older format than this epimem writes (VaultError for a newer one)."""
    return vault_format.require_known(mem.root) < kernel.VAULT_FORMAT


def upgrade(mem: Service) -> str | None:
    """Migrate the vault when it is older than this epimem; the commit, or None when it is current."""
    if not needed(mem):  # one small read on every change: the common case
        return None
    write.require_repo(mem)
    with write.lock(mem):
        recorded = vault_format.require_known(mem.root)  # under the lock: another process may have done it
        plan, keys, left = _plan(mem, recorded)
        if plan is None:
            return None
        writes = [tx.replace(p, text, keys[p]) if keys.get(p) is not None else tx.create(p, text)
                  for p, text in plan.texts.items()]
        body = ""
        if left:
            body = (f"Left as they are, with edits not yet committed: {', '.join(left[:20])}"
                    + (f" and {len(left) - 20} more" if len(left) > 20 else "")
                    + ". They are read as they are; `epimem commit` records the edits.")
        return write.commit(mem, writes, plan.subject, op="migrate", body=body,
                             beliefs=[p[len("beliefs/"):-3] for p in plan.texts if p.startswith("beliefs/")][:200])


def _plan(mem: Service, recorded: int):
    """(the plan, the stat key of each file read, the files left out for their uncommitted edits)."""
    root = mem.root
    dirty = {p for _, p in git.dirty_paths(root)} if git.has_commits(root) else set()
    files: dict[str, str | None] = {}
    keys: dict[str, tuple[int, int] | None] = {}
    left: list[str] = []

    def take(rel: str) -> None:
        if rel in files:
            return
        if rel in dirty:
            left.append(rel)
            return
        p = root / rel
        key = stat_key(p)
        try:
            files[rel] = read_text(p, rel) if key is not None else None
        except VaultError:
            return  # not UTF-8: `validate` names it; it is not rewritten
        keys[rel] = key

    for pattern in formats.patterns(recorded):
        if formats.is_pattern(pattern):
            folder, _, glob = pattern.rpartition("/")
            from fnmatch import fnmatchcase

            for e in sorted(note_entries(root / folder), key=lambda e: e.name):
                if fnmatchcase(e.name, glob):
                    take(f"{folder}/{e.name}")
        else:
            take(pattern)
    take(kernel.FORMAT_FILE)
    plan = formats.plan(recorded, {p: t for p, t in files.items() if p != kernel.FORMAT_FILE}, CODECS)
    return plan, keys, sorted(left)
