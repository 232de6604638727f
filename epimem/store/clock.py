"""Today's date, replaceable: `EPIMEM_TODAY=YYYY-MM-DD` (or `--today`) makes
decay, dormancy and reviews testable and replayable.

Replaceable for what is *shown* only. What is *written* is dated by the machine's
clock (rule 20): a replayed day after the real one is refused on a write
(`write_day`), so no evidence is dated in the future and no belief is frozen
against decay. Tests replay writes in the future through one switch,
`EPIMEM_TEST_CLOCK=1`, which only the test suite sets (no installer, skill or hook
writes it: tests/architecture holds that line).
"""

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


# The test-only switch: with it, a replayed day dates writes too, whatever the machine's
# date, and nothing is "after the machine's date" (tests replay years in a second).
TEST_CLOCK = "EPIMEM_TEST_CLOCK"


def machine_day() -> date | None:
    """The machine's date, which no written date may pass; None under the test switch."""
    if os.environ.get(TEST_CLOCK) == "1":
        return None
    return date.today()


def write_day(override: date | str | None = None) -> date:
    """The date a write gives its evidence: today (replayed or not), refused when it is
    after the machine's date (rule 20). A replayed day in the past stays: the user's word."""
    d = today(override)
    real = machine_day()
    if real is not None and d > real:
        raise ClockError(f"'today' is {d.isoformat()}, after the machine's date ({real.isoformat()}): "
                         "epimem never dates evidence in the future (rule 20); nothing was written",
                         field="today")
    return d


def lenient_write_day(override: date | str | None = None) -> date:
    """`write_day` for the hook, which must never fail: a day after the machine's is the machine's."""
    d = lenient_today(override)
    real = machine_day()
    return d if real is None else min(d, real)


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
