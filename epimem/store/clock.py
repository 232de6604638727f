"""Today's date, replaceable: `EPIMEM_TODAY=YYYY-MM-DD` (or `--today`) makes
decay, dormancy and reviews testable and replayable."""

from __future__ import annotations

import os
from datetime import date

from ..core.errors import InputError

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hook imports this module and must stay lean
if TYPE_CHECKING:
    from collections.abc import Callable


class ClockError(InputError):
    """An override of today's date that is not a date."""


def today(override: date | str | None = None) -> date:
    """A date passed in (`Memory(today=...)`, a caller's known today) is today; a
    string is parsed; nothing means `EPIMEM_TODAY`, else the real date."""
    if isinstance(override, date):
        return override
    value = override or os.environ.get("EPIMEM_TODAY")
    if not value:
        return date.today()
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        if override:
            raise ClockError(f"'today' must be a date YYYY-MM-DD, not {value!r}", field="today") from None
        raise ClockError(f"EPIMEM_TODAY must be a date YYYY-MM-DD, not {value!r}") from None


def lenient_today(override: date | str | None = None,
                  warn: Callable[[ClockError], None] | None = None) -> date:
    """`today`, except that a bad override falls back to the real date (told to `warn`):
    for the hook and the caches, which have no command to fail and must not stop a session."""
    try:
        return today(override)
    except ClockError as e:
        if warn is not None:
            warn(e)
        return date.today()
