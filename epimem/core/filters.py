"""Which beliefs may come back: the one `Filters` of a listing and of recall.

`belief list`, MCP `list`, `Memory.beliefs` and `recall` take the same filters, read the same
way: several values of one filter mean "any of them", a scope is a project (its beliefs plus
global ones, `kernel.scope_matches`), `min_confidence` is on effective (decayed) confidence,
`since`/`until` on the last date of the belief (first, confirmed, challenged). A value that
names nothing (a status or permanence not in the vocabulary, a confidence outside 0–1, a day
that is not a day) is refused with the field it was given for, never read as "no match".

Pure: a frozen value and predicates over a belief's fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from . import kernel
from . import vocabulary as vocab
from .errors import InputError
from .model import PERMANENCES, STATUSES, Belief

ALL = "all"  # the status filter's word for every status


class QueryError(InputError):
    """A query or filter the user must fix; the message says how."""


def _tuple(v, name: str = "") -> tuple[str, ...]:
    if v is None:
        return ()
    if isinstance(v, str):
        return (v,) if v.strip() else ()
    if not isinstance(v, Iterable):
        raise QueryError(f"'{name}' must be text or a list of text, not {v!r}", field=name or None)
    return tuple(str(x) for x in v if str(x).strip())


def _closed(name: str, values: tuple[str, ...], allowed: tuple[str, ...]) -> tuple[str, ...]:
    for v in values:
        if v not in allowed:
            raise QueryError(f"'{name}' must be one of {', '.join(allowed)}, not {v!r}", field=name)
    return values


def _day(v, name: str) -> date | None:
    try:
        return vocab.date_of(v, name)
    except ValueError as e:
        raise QueryError(str(e), field=name) from None


@dataclass(frozen=True)
class Filters:
    """What may come back. Build one with `Filters.make`, which checks every value."""

    kinds: tuple[str, ...] = ()
    permanences: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    scope: str | None = None             # a project: its beliefs plus global ones; None: every scope
    min_confidence: float | None = None  # on effective confidence
    since: date | None = None            # on the last date of the belief (`updated`)
    until: date | None = None
    statuses: tuple[str, ...] = ("active",)  # (): every status
    include_observations: bool = False   # recall only: rank observations too

    @classmethod
    def make(cls, *, kind=None, permanence=None, tag=None, scope=None, min_confidence=None, since=None,
             until=None, status: str | Iterable[str] | None = "active", include_observations=False,
             include_inactive=False) -> Filters:
        """`kind`, `permanence`, `tag`, `status`: a value or a list of them; `status` "all" (or None)
        is every status, as is `include_inactive` (recall's name for it)."""
        if min_confidence is not None:
            if isinstance(min_confidence, bool):
                raise QueryError(f"min_confidence must be a number 0–1, not {min_confidence!r}",
                                 field="min_confidence")
            try:
                min_confidence = float(min_confidence)
            except (TypeError, ValueError):
                raise QueryError(f"min_confidence must be a number 0–1, not {min_confidence!r}",
                                 field="min_confidence") from None
            if not 0.0 <= min_confidence <= 1.0:
                raise QueryError(f"min_confidence must be between 0 and 1, not {min_confidence}",
                                 field="min_confidence")
        statuses = _tuple(status, "status")
        if ALL in statuses or include_inactive:
            statuses = ()
        f = cls(kinds=_tuple(kind, "kind"),
                permanences=_closed("permanence", _tuple(permanence, "permanence"), PERMANENCES),
                tags=_tuple(tag, "tag"),
                scope=(scope.strip() or None) if isinstance(scope, str) else scope,
                min_confidence=min_confidence, since=_day(since, "since"), until=_day(until, "until"),
                statuses=_closed("status", statuses, STATUSES + (ALL,)),
                include_observations=bool(include_observations))
        if f.since and f.until and f.since > f.until:
            raise QueryError(f"since ({f.since}) is after until ({f.until})", field="since")
        return f

    @property
    def include_inactive(self) -> bool:
        """Whether a belief that is not active may come back."""
        return self.statuses != ("active",)

    @property
    def belief_level(self) -> bool:
        """Filters that an observation inherits from the belief it connects."""
        return bool(self.kinds or self.permanences or self.tags or self.min_confidence)

    def status_ok(self, status: str) -> bool:
        return not self.statuses or status in self.statuses

    def dated_ok(self, updated: date | None) -> bool:
        """The date range, on the last date of an item (None: it has none)."""
        if self.since and (updated is None or updated < self.since):
            return False
        return not (self.until and (updated is None or updated > self.until))

    def admits(self, kind: str, permanence: str, tags: Iterable[str], scope: str | None, effective: float) -> bool:
        """The belief-level filters, on a belief's fields (a recall item has the same ones)."""
        return ((not self.kinds or kind in self.kinds)
                and (not self.permanences or permanence in self.permanences)
                and (not self.tags or any(t in tags for t in self.tags))
                and kernel.scope_matches(scope, self.scope)
                and (self.min_confidence is None or effective >= self.min_confidence - 1e-9))

    def match(self, b: Belief, effective: float) -> bool:
        """Whether belief `b`, at `effective` confidence today, may come back."""
        return (self.status_ok(b.status) and self.admits(b.kind, b.permanence, b.tags, b.scope, effective)
                and (not (self.since or self.until) or self.dated_ok(updated(b))))


def updated(b: Belief) -> date | None:
    """The last thing that happened to a belief: the date the date-range filters look at."""
    ds = [d for d in (b.first, b.confirmed, b.challenged) if d is not None]
    return max(ds) if ds else None
