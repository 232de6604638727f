"""What every API service shares: checking inputs, reading a belief for a change, preparing it
(`attempts`) and handing it to the one write path (`commit`, `lock`: kept in `api/write`, which
the format's migration uses too, and named here for every service)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import InputError, NotFound, VaultError
from ..core.ids import check_id
from ..core.model import Belief
from ..core.notes import key_lines
from ..store import transaction

# named here for every service (`common.commit`, `common.lock`); defined in `api/write`
from .write import caches as caches
from .write import commit as commit
from .write import lock as lock
from .write import not_a_repo as not_a_repo
from .write import require_repo as require_repo

if TYPE_CHECKING:
    from .service import Service

# What an assistant may write in one text (an observation's field, a proposal's wording). An
# observation says what was seen in a few sentences; without a bound, one call of a model (or an
# agent over MCP, or the memory tool) could put a whole document into the log, every belief's
# Evidence section and the recall index, and rule 9's three-a-session would bound nothing.
TEXT_MAX = 4000


def check_id_input(value: str, field: str = "belief_id") -> str:
    return check_id(value, field=field)


def check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise InputError(f"'{name}' must be one of {', '.join(allowed)}, not {value!r}", field=name)


# Preparations that meet another writer's change are prepared again this many times before the
# last one is prepared under the vault lock, where nothing else can land: under 8 writers on
# 2 cores an observe of a shared belief meets one about every other time (docs/decisions.md).
OPTIMISTIC_ATTEMPTS = 4


class Attempt:
    """One preparation of a change (`attempts`). Outside the lock it swallows a race
    (`transaction.RACES`: what it read changed before the commit), so the loop prepares
    again; the last one holds the vault lock from its first read, and lets a race
    through, saying how often the change was prepared."""

    def __init__(self, mem: Service, n: int, last: bool):
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


def attempts(mem: Service, tries: int = OPTIMISTIC_ATTEMPTS):
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


def writable(mem: Service) -> None:
    """What every change needs first: a vault that is its own repository, in this epimem's format
    (an older vault is migrated in one commit of its own, `api.upgrade`; a newer one refused)."""
    require_repo(mem)
    from . import upgrade

    upgrade.upgrade(mem)


def read(mem: Service, belief_id: str) -> tuple[str, Belief, tuple[int, int]]:
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
