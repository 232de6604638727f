"""The JSON vocabulary: the fields several shapes share, spelled and typed once.

Every front end's JSON (the CLI's `--json`, recall's results, the mirror, later
the MCP server) builds these fields here, so `belief show`, `recall` and
`mirror audit` cannot drift apart again (they once said `confidence` and
`stored`, and `review_due` was a bool in one command and a string in another).
The table of names is in docs/cli.md.

Pure and standard-library only: the hook's path may import it.
"""

from __future__ import annotations

from datetime import date, datetime

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hook's path must not import typing (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

# Stored confidences are written with two decimals; the decayed value keeps a
# third so that two beliefs a day apart in decay still sort as they do in memory.
CONFIDENCE_DECIMALS = 2
EFFECTIVE_DECIMALS = 3


def confidence(value: float | None) -> float | None:
    """`confidence`: the stored value (the file's `confidence:`)."""
    return None if value is None else round(value, CONFIDENCE_DECIMALS)


def effective_confidence(value: float | None) -> float | None:
    """`effective_confidence`: the stored value decayed to today (SPEC §2.7)."""
    return None if value is None else round(value, EFFECTIVE_DECIMALS)


def iso(value: date | datetime | None) -> str | None:
    """Dates as `YYYY-MM-DD`, instants as ISO 8601 with their offset; null when absent."""
    return None if value is None else value.isoformat()


def date_of(value: object, what: str) -> date | None:
    """`iso`'s inverse for a day, wherever one is read (frontmatter, the session
    counter, recall's filters): None or "" is absent, a date is itself (YAML's
    datetime its day), text must be YYYY-MM-DD; ValueError names `what`."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value).strip())
    except ValueError:
        raise ValueError(f"{what} must be a date YYYY-MM-DD, not {value!r}") from None


def confidence_change(before: float | None, after: float | None) -> dict[str, float | None]:
    """What an action did to a belief's stored confidence."""
    return {"confidence_before": confidence(before), "confidence_after": confidence(after)}


def review(reason: str | None) -> dict[str, Any]:
    """`review_due` is always a bool; why it is due is `review_reason` (a sentence, or null)."""
    return {"review_due": reason is not None, "review_reason": reason}


def dormancy(days: int | None) -> dict[str, Any]:
    """`dormant` is a bool; `dormant_days` the gap that made it so (SPEC §2.8), or null."""
    return {"dormant": days is not None, "dormant_days": days}


def problem(p: Any) -> dict[str, Any]:
    """A file that could not be read: its vault-relative `path`, `line` and `message`."""
    return {"path": p.path, "line": p.line, "message": p.message}


def problems(ps: Iterable[Any]) -> list[dict[str, Any]]:
    return [problem(p) for p in ps]


def refused(rs: Iterable[Any]) -> list[dict[str, Any]]:
    """Hand edits no reader shows (SPEC rule 21): the file's `path`, `why`, and the one `message`
    every front end says (the file is shown as it was last committed)."""
    return [{"path": r.path, "why": r.why, "message": str(r)} for r in rs]
