"""What every API service shares: checking inputs, reading a belief for a change,
and handing the change to the one write path (`epimem.store.transaction`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import InputError, NotFound, VaultError
from ..core.ids import check_id
from ..core.model import Belief
from ..core.notes import key_lines
from ..store import git, transaction

if TYPE_CHECKING:
    from .memory import Memory


def check_id_input(value: str, field: str = "belief_id") -> str:
    return check_id(value, field=field)


def check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise InputError(f"'{name}' must be one of {', '.join(allowed)}, not {value!r}", field=name)


def lock(mem: Memory):
    """The vault lock for a change, once the vault is known to exist: taking it
    creates `.epimem/`, which must not appear at a mistyped vault path."""
    mem.vault.require()
    return mem.vault.lock()


# Preparations that meet another writer's change are prepared again this many times before the
# last one is prepared under the vault lock, where nothing else can land: under 8 writers on
# 2 cores an observe of a shared belief meets one about every other time (docs/decisions.md).
OPTIMISTIC_ATTEMPTS = 4


class Attempt:
    """One preparation of a change (`attempts`). Outside the lock it swallows a race
    (`transaction.RACES`: what it read changed before the commit), so the loop prepares
    again; the last one holds the vault lock from its first read, and lets a race
    through, saying how often the change was prepared."""

    def __init__(self, mem: Memory, n: int, last: bool):
        self.mem, self.n, self.last = mem, n, last
        self.done = False
        self._lock = lock(mem) if last else None

    def __enter__(self) -> Attempt:
        if self._lock is not None:
            self._lock.acquire()
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        if self._lock is not None:
            self._lock.release()
        if exc is None:
            self.done = True
            return False
        if isinstance(exc, transaction.RACES) and not self.last:
            return True
        if isinstance(exc, transaction.Stale) and self.n > 1:
            exc.message = f"{exc.message} (prepared {self.n} times; each time another change landed first)"
            exc.args = (exc.message,)
        return False


def attempts(mem: Memory, tries: int = OPTIMISTIC_ATTEMPTS):
    """Prepare a change outside the vault lock, retrying when another writer got there first:

        for attempt in common.attempts(mem):
            with attempt:
                ... read, apply the rules, build the writes ...
                common.commit(mem, writes, ...)

    Each pass reads the vault afresh and hands compare-and-swap writes to
    `transaction.apply`, which takes the lock only to check, write and commit. A pass
    that met another change is thrown away (nothing was written) and the next one
    prepares again; after `tries` passes the last one is prepared under the lock
    itself, so a change under heavy contention still lands. A refusal (a rule, a
    conflict the user must settle) is raised from the pass that found it.
    """
    writable(mem)
    held = mem.vault.lock().held  # a caller's outer change: preparing again cannot help
    for n in range(1, tries + 2):
        a = Attempt(mem, n, last=held or n > tries)
        yield a
        if a.done or a.last:
            return


def writable(mem: Memory) -> None:
    """What every change needs first: a vault that is its own repository, in this epimem's format
    (an older vault is migrated in one commit of its own, `api.upgrade`; a newer one refused)."""
    require_repo(mem)
    from . import upgrade

    upgrade.upgrade(mem)


def require_repo(mem: Memory) -> None:
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


def read(mem: Memory, belief_id: str) -> tuple[str, Belief, tuple[int, int]]:
    """(text, belief, stat key) of a belief about to be changed."""
    check_id_input(belief_id)
    mem.vault.require()
    rel = f"beliefs/{belief_id}.md"
    if not mem.vault.belief_path(belief_id).exists():
        raise NotFound(f"no belief '{belief_id}' ({rel} does not exist)", path=rel)
    try:
        return mem.vault.read_belief(belief_id)
    except VaultError as e:
        raise VaultError(str(e), path=rel, line=e.line) from None


def commit(mem: Memory, writes: list[transaction.Write], subject: str, *, op: str,
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


def caches(mem: Memory) -> transaction.Caches:
    return transaction.Caches(today=mem.today, params=mem.params)


def clean_tags(tags: Iterable[str]) -> tuple[str, ...]:
    # `--tag ""` clears the tags; an empty tag would be written as `[""]`.
    return tuple(t.strip() for t in tags if t.strip())


def line_of(path: Path, needle: str) -> int:
    try:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if needle in line:
                return i
    except (OSError, UnicodeDecodeError):
        pass
    return 1


def key_line(path: Path, key: str) -> int:
    """The line of a frontmatter key, as `core.notes` counts it for a parse error; 1 when absent."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return 1
    return key_lines(text).get(key, 1)
