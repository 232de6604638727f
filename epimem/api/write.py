"""The services' entry to the one write path: the vault lock for a change, a vault that is its
own repository, one commit through `epimem.store.transaction` with its dependants flagged.

`api/common` names these for every service (`common.commit`, `common.lock`); they live here so
that `api/upgrade`, which `common.writable` runs before every change, uses them without
importing `common` back."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import VaultError
from ..store import git, transaction

if TYPE_CHECKING:
    from .service import Service

__all__ = ["caches", "commit", "lock", "not_a_repo", "require_repo"]


def lock(mem: Service):
    """The vault lock for a change, once the vault is known to exist: taking it
    creates `.epimem/`, which must not appear at a mistyped vault path."""
    mem.vault.require()
    return mem.vault.lock()


def require_repo(mem: Service) -> None:
    mem.vault.require()
    if not git.is_repo_root(mem.root):
        raise VaultError(not_a_repo(mem.root), path=str(mem.root))


def not_a_repo(root: Path) -> str:
    """What to say of a vault folder that is not its own git repository (copied without `.git`,
    or the sample vault inside epimem's checkout): the fix, and what it does."""
    outer = next((p for p in Path(root).parents if (p / ".git").exists()), None)
    inside = (f"; it lies inside the repository at {outer}: to try it without touching that one, copy it out "
              f"first (`cp -r {root} /tmp/{Path(root).name} && epimem init /tmp/{Path(root).name}`)") if outer else ""
    return (f"{root} is not a git repository of its own, and every change is a commit: "
            f"`epimem init {root}` makes it one (its files become the first commit){inside}; nothing was written")


def commit(mem: Service, writes: list[transaction.Write], subject: str, *, op: str,
           beliefs: Iterable[str] = (), session: str | None = None, body: str = "",
           extra: dict[str, str] | None = None,
           reads: Iterable[tuple[str, tuple[int, int] | None]] = (),
           check: Callable[[], None] | None = None) -> str:
    """Write and commit through the one write path (all or nothing; caches follow).
    `reads` and `check`: see `transaction.apply`. A change that supersedes, retires or
    drops a tier of a belief others rest on flags them in the same commit (SPEC §14)."""
    if not git.is_repo_root(mem.root):  # one stat: a writer that did not go through `attempts`
        raise VaultError(not_a_repo(mem.root), path=str(mem.root))
    from . import dependencies

    flags, lines = dependencies.flag_writes(mem, writes)
    if flags:
        writes = [*writes, *flags]
        body = (body + "\n" if body else "") + "\n".join(f"- {ln}" for ln in lines)
    c = transaction.Commit(subject, op, beliefs=tuple(beliefs), session=session, body=body,
                           extra=tuple((extra or {}).items()), when=mem.replayed)
    res = transaction.apply(mem.root, writes, c, lock=mem.vault.lock(), caches=caches(mem), reads=reads,
                            check=check)
    assert res.commit is not None
    return res.commit


def caches(mem: Service) -> transaction.Caches:
    return transaction.Caches(today=mem.today, params=mem.params)
