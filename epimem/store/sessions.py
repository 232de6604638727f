"""`state/sessions.json`, the session counter: parsed and written here only.

Standard library only: the session-start hook reads and writes it before
every session. The values are the kernel's plain counter (`core.kernel`);
`from_raw`/`to_json` convert to and from `core.model.Sessions`, the frozen
value the rules take (imported only then, to keep the hook's start cheap).
"""

from __future__ import annotations

import json
from datetime import date

from ..core import kernel
from ..core import vocabulary as vocab

TYPE_CHECKING = False  # not `typing`'s: the hook would import it for nothing
if TYPE_CHECKING:
    from ..core.model import Sessions

PATH = "state/sessions.json"


def _date(v, key: str) -> date | None:
    if v is not None and not isinstance(v, str):  # JSON: a number is not a day, even 20261130
        raise ValueError(f"'{key}' must be a date YYYY-MM-DD, not {v!r}")
    return vocab.date_of(v, f"'{key}'")


# A counter beyond this is not a count of sessions but a damaged file (1e400,
# 99999999999999999999): refused, so no later arithmetic meets an infinity.
MAX_COUNT = 10**9


def _count(v, key: str, default: int = 0) -> int:
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise ValueError(f"'{key}' must be a whole number, not {v!r}")
    if not 0 <= v <= MAX_COUNT:
        raise ValueError(f"'{key}' must be between 0 and {MAX_COUNT}, not {v!r}")
    return int(v)


# On disk the per-day tally is written as the count when each day's first session began
# (`count_at_day_start`): a line is added on a day's first session and never changes after,
# so a later session that day changes only `count` in the diff. In memory (the kernel's
# counter, the merge, the rules) it is `days`, sessions per day; files written before keep
# `days` until the counter is next written.
STARTS = "count_at_day_start"


def _days_from_starts(starts, count: int) -> dict[str, int]:
    if not isinstance(starts, dict):
        raise ValueError(f"'{STARTS}' must be an object of date → count")
    marks = sorted((str(k), _count(v, f"{STARTS}.{k}")) for k, v in starts.items())
    days: dict[str, int] = {}
    for i, (d, at) in enumerate(marks):
        end = marks[i + 1][1] if i + 1 < len(marks) else count
        if end < at:
            raise ValueError(f"'{STARTS}.{d}' is {at}, more than the count after it ({end})")
        if end > at:
            days[d] = end - at
    return days


def _starts(count: int, days: dict) -> dict[str, int]:
    """Newest day first: a new day is then one added line, and no line before it gains a comma."""
    at = max(0, count - sum(days.values()))  # sessions counted before the tally began
    out = []
    for d, n in sorted(days.items()):
        out.append((d, at))
        at += n
    return dict(reversed(out))


# A machine id: what `machine_id` writes (hex), or the shared entry of an older file.
_MACHINE = frozenset("0123456789abcdefghijklmnopqrstuvwxyz-")
_SESSION_ID_MAX = 120


def _machines(raw, count_key) -> dict[str, int]:
    if not isinstance(raw, dict):
        raise ValueError("'machines' must be an object of machine id → sessions counted")
    out = {}
    for k, v in raw.items():
        if not isinstance(k, str) or not k or len(k) > 64 or not set(k) <= _MACHINE:
            raise ValueError(f"'machines' holds {k!r}, which is not a machine id")
        out[k] = _count(v, f"machines.{k}")
    return out


def _counted(raw) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise ValueError("'counted' must be an object of session id → date")
    out = {}
    for k, v in raw.items():
        if not isinstance(k, str) or not k or len(k) > _SESSION_ID_MAX:
            raise ValueError(f"'counted' holds {k!r}, which is not a session id")
        d = _date(v, f"counted.{k}")
        if d is None:
            raise ValueError(f"'counted.{k}' must be a date YYYY-MM-DD")
        out[k] = d.isoformat()
    return out


def load(raw) -> dict:
    """The parsed JSON as a counter; ValueError (or TypeError) when it is not one.

    A file written before the counter kept machines has its count as the shared
    `kernel.EARLIER` entry; the next write gives it the map (its migration)."""
    if not isinstance(raw, dict):
        raise ValueError("expected a JSON object")
    count = _count(raw.get("count"), "count")
    if "machines" in raw:
        machines = _machines(raw["machines"], "machines")
        rest = count - sum(machines.values())
        if rest < 0:
            raise ValueError(f"'count' is {count}, but the sessions of 'machines' add up to "
                             f"{sum(machines.values())}")
        if rest:  # a count raised by hand: the sessions of no machine in particular
            machines[kernel.EARLIER] = machines.get(kernel.EARLIER, 0) + rest
    else:
        machines = {kernel.EARLIER: count} if count else {}
    if STARTS in raw:
        days = _days_from_starts(raw[STARTS] or {}, count)
    else:
        days = raw.get("days") or {}
        if not isinstance(days, dict):
            raise ValueError("'days' must be an object of date → count")
    return {
        "count": count,
        "last_session": _date(raw.get("last_session"), "last_session"),
        "last_review": _date(raw.get("last_review"), "last_review"),
        "next_review_at": _count(raw.get("next_review_at"), "next_review_at", kernel.REVIEW_EVERY_SESSIONS),
        "created": _date(raw.get("created"), "created"),
        "days": {str(k): _count(v, f"days.{k}") for k, v in sorted(days.items())},
        "machines": dict(sorted(machines.items())),
        "counted": dict(reversed(list(_counted(raw.get("counted") or {}).items()))),
    }


def loads(text: str) -> dict:
    """ValueError for anything that is not a counter (JSON nested too deeply included)."""
    try:
        raw = json.loads(text)
    except RecursionError:
        raise ValueError("invalid JSON: nested too deeply") from None
    return load(raw)


def dump(s: dict) -> str:
    """The file's text: a counter (or anything with the same keys) as indented JSON."""
    iso = lambda d: d.isoformat() if d else None  # noqa: E731
    machines = dict(s.get("machines") or {})
    # A caller that set `count` itself (an import, a migration) leaves the difference to
    # the shared entry, so the map always adds up to the count.
    rest = s["count"] - sum(machines.values())
    if rest < 0:
        raise ValueError(f"'count' {s['count']} is below the sessions the machines counted")
    if rest:
        machines[kernel.EARLIER] = machines.get(kernel.EARLIER, 0) + rest
    counted = s.get("counted") or {}
    raw = {
        "count": s["count"],
        "machines": dict(sorted(machines.items())),
        "last_session": iso(s["last_session"]),
        "last_review": iso(s["last_review"]),
        "next_review_at": s["next_review_at"],
        "created": iso(s["created"]),
        STARTS: _starts(s["count"], dict(s["days"])),
    }
    if counted:
        # Newest first, like the tally: a session counted is one line added at the top.
        raw["counted"] = dict(reversed(list(counted.items())))
    return json.dumps(raw, indent=2) + "\n"


def from_raw(raw) -> Sessions:
    """`state/sessions.json`'s parsed JSON as a `core.model.Sessions`."""
    from ..core.model import Sessions

    c = load(raw)
    return Sessions(count=c["count"], last_session=c["last_session"], last_review=c["last_review"],
                    next_review_at=c["next_review_at"], created=c["created"], days=tuple(c["days"].items()),
                    machines=tuple(c["machines"].items()), counted=tuple(c["counted"].items()))


def to_json(s: Sessions) -> str:
    """The file's text for a `core.model.Sessions`."""
    return dump({"count": s.count, "last_session": s.last_session, "last_review": s.last_review,
                 "next_review_at": s.next_review_at, "created": s.created, "days": dict(s.days),
                 "machines": dict(s.machines), "counted": dict(s.counted)})


MACHINE_FILE = ".epimem/machine"


def machine_id(root) -> str:
    """This clone's id in the counter's map (SPEC §1.4), made on first use.

    It lives in the sidecar, which is never synced: each clone counts on its own
    entry, so two machines that count a session the same day never write the same
    bytes. A sidecar deleted and rebuilt gets a new id; the old entry keeps its
    sessions (the map only grows), so the sum stays right."""
    import os
    import secrets

    path = os.path.join(root, MACHINE_FILE)
    try:
        with open(path, encoding="ascii") as fh:
            mid = fh.read().strip()
        if mid and len(mid) <= 64 and set(mid) <= _MACHINE:
            return mid
    except (OSError, UnicodeDecodeError):
        pass
    mid = secrets.token_hex(6)
    from .files import atomic_write

    try:
        atomic_write(path, mid + "\n")
    except OSError:
        return mid  # counted on an entry of its own this once; never a failure of the count
    return mid


def commit_counted(root, session: str = "", lock=None) -> str | None:
    """Commit an uncommitted session count on its own, at most once a day (SPEC §4).

    A session start is not a commit of its own: the count rides along with the
    next epimem commit (`transaction`). Only the first session of a day that finds
    the count still uncommitted commits it, so a day's sessions never make more
    than one commit, and a vault used without any other change still records them.
    Returns the new commit's sha, or None.
    """
    from pathlib import Path

    from . import git, transaction

    root = Path(root)

    def prepare():
        # Under the lock: another commit may already have taken this change along.
        if not git.status(root, (PATH,)):
            return None
        now = loads((root / PATH).read_text(encoding="utf-8"))
        committed = git.show_many(root, [f"HEAD:{PATH}"])[0] if git.has_commits(root) else None
        try:
            before = loads(committed) if committed else kernel.empty_sessions()
        except (ValueError, TypeError):
            before = kernel.empty_sessions()
        if before["last_session"] is not None and before["last_session"] == now["last_session"]:
            return None
        first, last = before["count"] + 1, now["count"]
        what = f"#{last} counted" if first >= last else f"#{first}–#{last} counted"
        return transaction.Staged(transaction.Commit(f"session: {what}", op="session",
                                                     body=git.uncommitted_sessions(root) or "",
                                                     session=session or None), paths=(PATH,))

    return transaction.adopt(root, prepare, lock=lock).commit
