"""Today's date, replaceable: `EPIMEM_TODAY=YYYY-MM-DD` (or `--today`) makes
decay, dormancy and reviews testable and replayable."""

from __future__ import annotations

import os
from datetime import date

from ..core.errors import InputError


class ClockError(InputError):
    """An override of today's date that is not a date."""


def today(override: str | None = None) -> date:
    value = override or os.environ.get("EPIMEM_TODAY")
    if not value:
        return date.today()
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        source = "--today" if override else "EPIMEM_TODAY"
        raise ClockError(f"{source} must be a date YYYY-MM-DD, not {value!r}") from None
