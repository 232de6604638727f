"""Listing beliefs: the one service behind `belief list`, MCP `list`, `Memory.beliefs` and `describe`.

A listing shows what every reader shows (`store/vault.Vault.shown_beliefs`: redacted, a file
whose hand edit breaks a rule as it was last committed), keeps what passes the `Filters`
(`core/filters`, recall's too), and orders it strongest first: effective confidence today,
then id. A front end renders the result; it never filters or sorts beliefs itself
(`tests/architecture/test_readers.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from ..core import rules
from ..core.errors import InputError, NotFound, VaultError
from ..core.filters import Filters
from ..core.model import Belief, Problem, Refused

if TYPE_CHECKING:
    from .service import Service


@dataclass(frozen=True)
class Listing:
    rows: tuple[tuple[float, Belief], ...]  # (effective confidence today, belief), strongest first
    total: int                               # how many matched, before `offset` and `limit`
    shown: int                               # how many the vault shows in all (0: it has none yet)
    problems: tuple[Problem, ...]            # files not shown
    refused: tuple[Refused, ...]             # files shown as last committed

    @property
    def beliefs(self) -> list[Belief]:
        return [b for _, b in self.rows]


@cache
def _keywords() -> tuple[str, ...]:
    import inspect

    return tuple(inspect.signature(Filters.make).parameters)


def filters(given: Filters | None, kw: dict[str, Any]) -> Filters:
    """A `Filters` given, or one made from keyword filters (`kind="trait"`, `status="all"`, …)."""
    if given is not None and kw:
        raise InputError("pass either a Filters or keyword filters, not both", field=sorted(kw)[0])
    unknown = sorted(set(kw) - set(_keywords())) if kw else []
    if unknown:
        raise InputError(f"unknown filter '{unknown[0]}'; known: {', '.join(_keywords())}", field=unknown[0])
    return given or Filters.make(**kw)


def shown(mem: Service) -> tuple[list[Belief], list[Problem], list[Refused]]:
    """Every belief as readers show it today: (beliefs in id order, files not shown, edits refused)."""
    mem.vault.require()
    try:
        return mem.vault.shown_beliefs(mem.today)
    except OSError as e:  # an unreadable folder (permissions, a vault on a lost mount)
        raise VaultError(f"cannot read the beliefs in {mem.root}: {e.strerror or e}", path="beliefs") from None


def matching(mem: Service, f: Filters) -> tuple[list[tuple[float, Belief]], list[Belief], list[Problem],
                                               list[Refused]]:
    """(every (effective, belief) that passes `f`, in id order; and `shown`'s three lists)."""
    beliefs, problems, refused = shown(mem)
    today, params = mem.today, mem.params
    rows = []
    for b in beliefs:
        eff = rules.effective_confidence(b, today, params)
        if f.match(b, eff):
            rows.append((eff, b))
    return rows, beliefs, problems, refused


def beliefs(mem: Service, f: Filters) -> list[Belief]:
    """The beliefs that pass `f`, in id order, as every reader shows them (`Memory.beliefs`)."""
    return [b for _, b in matching(mem, f)[0]]


def strongest(rows: list[tuple[float, Belief]]) -> list[tuple[float, Belief]]:
    """(effective, belief) rows in a listing's order: strongest first, then by id."""
    return sorted(rows, key=lambda r: (-r[0], r[1].id))


def ranked(beliefs, today, params) -> list[tuple[float, Belief]]:
    """Beliefs already read (a snapshot's, an import's) with their effective confidence today, strongest first."""
    return strongest([(rules.effective_confidence(b, today, params), b) for b in beliefs])


def listing(mem: Service, f: Filters, *, limit: int | None = None, offset: int = 0) -> Listing:
    """The beliefs that pass `f`, strongest first; `offset`/`limit` page them."""
    rows, beliefs, problems, refused = matching(mem, f)
    rows = strongest(rows)
    page = rows[offset:] if limit is None else rows[offset:offset + limit]
    return Listing(tuple(page), len(rows), len(beliefs), tuple(problems), tuple(refused))


def get(mem: Service, belief_id: str) -> tuple[Belief, Refused | None]:
    """One belief as readers show it, and the hand edit refused on it (None: none)."""
    _, b, refused = get_file(mem, belief_id)
    return b, refused


def get_file(mem: Service, belief_id: str) -> tuple[str, Belief, Refused | None]:
    """One belief's file as readers show it (MCP's `epimem://belief/…`): its text, the belief,
    the hand edit refused on it."""
    from . import common

    common.check_id_input(belief_id)
    mem.vault.require()
    rel = f"beliefs/{belief_id}.md"
    if not mem.vault.belief_path(belief_id).exists():
        raise NotFound(f"no belief '{belief_id}' ({rel} does not exist)", path=rel)
    try:
        return mem.vault.shown_file(belief_id, mem.today)
    except VaultError as e:
        raise VaultError(str(e), path=rel, line=e.line) from None
