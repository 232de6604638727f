"""The rules the session-start hook needs, written once: decay (rule 7), tiers,
dormancy (rule 8), session counting and review-due (rule 10), and what a scope
matches.

Standard library only (math, datetime) and no dataclasses, so the hook can
import it in well under a millisecond; `core.params` takes its defaults from
here, `core.rules` delegates to it, and the context cache, the hook and
recall's vectorised table all call the same functions.

A session counter here is a plain dict — `count`, `last_session`,
`last_review`, `next_review_at`, `created` (dates or None) and `days` (ISO date
→ sessions started that day) — the shape `store.sessions` reads from
`state/sessions.json`; `core.model.Sessions` is its frozen twin.
"""

from __future__ import annotations

import math
from datetime import date

# --- the defaults of the parameters (epistemology.md overrides them) -----------------

# Rule 7: decay rate per day, by permanence; `unknown` is also the rate of a
# permanence the table does not name.
DECAY: dict[str, float] = {"stable": 0.001, "durable": 0.005, "situational": 0.015, "unknown": 0.010}
DECAY_FLOOR = 0.20
# The lower bound of each confidence tier, highest first.
TIERS: tuple[tuple[str, float], ...] = (
    ("factual", 0.90), ("established", 0.70), ("developing", 0.50),
    ("tentative", 0.30), ("speculative", 0.00),
)
DORMANCY_DAYS = 30           # rule 8
REVIEW_EVERY_SESSIONS = 10   # rule 10
REVIEW_EVERY_DAYS = 30       # rule 10: the time fallback
COUNTED_SOURCE = "startup"   # resumes, clears and compactions continue a session


def hook_params(decay: dict[str, float] = DECAY, decay_floor: float = DECAY_FLOOR,
                dormancy_days: int = DORMANCY_DAYS, review_every_days: int = REVIEW_EVERY_DAYS,
                tiers=TIERS) -> dict:
    """The parameters the hook needs, as plain JSON (`params` in `.epimem/context.json`);
    the defaults when there is no cache yet."""
    return {"decay": dict(decay), "decay_floor": decay_floor, "dormancy_days": dormancy_days,
            "review_every_days": review_every_days, "tiers": [[n, low] for n, low in tiers]}


# --- rule 7: decay as a view -------------------------------------------------------------

def decay_rate(permanence: str, decay: dict[str, float]) -> float:
    return decay.get(permanence, decay.get("unknown", DECAY["unknown"]))


def _where(cond, a, b):
    return a if cond else b


def effective(stored, rate, days, pinned, floor: float, *, exp=math.exp, maximum=max, minimum=min,
              where=_where):
    """stored × e^(−λ·d), floored at `floor`; never above stored, never written back.

    One belief with the defaults (math); recall's table passes numpy's
    `exp`/`maximum`/`minimum`/`where` and arrays, so the formula exists once.
    """
    decayed = stored * exp(-rate * maximum(days, 0))
    # A belief stored below the floor shows its stored value: decay must not
    # *raise* anything.
    return where(pinned, stored, maximum(decayed, minimum(stored, floor)))


def anchor(first, confirmed):
    """The day a belief's decay counts from: its last confirmation, else when it was
    first seen (dates or their ISO strings, as the caller holds them)."""
    return confirmed or first


def effective_at(stored: float, permanence: str, anchor: date, pinned: bool, today: date,
                 decay: dict[str, float], floor: float) -> float:
    """Rule 7 for one belief last confirmed (or first seen) on `anchor`."""
    if pinned:
        return stored
    return effective(stored, decay_rate(permanence, decay), (today - anchor).days, False, floor)


def tier(confidence: float, tiers=TIERS) -> str:
    """The name of the highest tier whose lower bound `confidence` reaches."""
    for name, low in tiers:
        if confidence >= low - 1e-9:
            return name
    return tiers[-1][0]


# --- the vault's format (SPEC §1.4) ---------------------------------------------------------
# Here because the hook checks it before it counts a session; `core.formats` brings an older
# vault up to it, `store.vault_format` reads it.

VAULT_FORMAT = 2                     # the format this epimem writes (core.formats.MIGRATIONS ends here)
FORMAT_FILE = "state/vault.json"     # absent: format 1, every vault made before formats were recorded


def vault_format(text: str | None) -> int:
    """The format a `state/vault.json` text records (1 for no file); ValueError for a text that
    records none, so that a damaged file is said, never read as some format."""
    if text is None:
        return 1
    import json

    try:
        raw = json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError("not JSON") from None
    v = raw.get("format") if isinstance(raw, dict) else None
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"'format' must be a whole number from 1, not {v!r}")
    return v


def format_text(fmt: int) -> str:
    return f'{{"format": {int(fmt)}}}\n'


def too_new(fmt: int) -> str | None:
    """What to say of a vault a newer epimem wrote (None when this one reads it)."""
    if fmt <= VAULT_FORMAT:
        return None
    return (f"this vault is in format {fmt}, written by a newer epimem; this epimem knows formats up to "
            f"{VAULT_FORMAT} and reads or changes nothing rather than misread it: install the newer epimem "
            "(pipx: `pipx upgrade epimem-cli`, or `pipx install --force` from a newer checkout)")


# --- rules 8 and 10: sessions --------------------------------------------------------------

def empty_sessions() -> dict:
    return {"count": 0, "last_session": None, "last_review": None, "next_review_at": REVIEW_EVERY_SESSIONS,
            "created": None, "days": {}}


def dormancy(last_session: date | None, today: date, dormancy_days: int = DORMANCY_DAYS) -> int | None:
    """Rule 8: the gap in days since the last session when it is `dormancy_days` or more, else None."""
    if last_session is None:
        return None
    gap = (today - last_session).days
    return gap if gap >= dormancy_days else None


def review_due(s: dict, today: date, review_every_days: int = REVIEW_EVERY_DAYS) -> str | None:
    """Rule 10: why a review is due, or None."""
    if s["count"] >= s["next_review_at"]:
        return f"{s['count']} sessions counted; a review was due at {s['next_review_at']}"
    anchor = s["last_review"] or s["created"]
    if anchor is not None and (today - anchor).days >= review_every_days:
        what = "the last review" if s["last_review"] else "the vault was created"
        return f"{(today - anchor).days} days since {what}"
    return None


def start_session(s: dict, source: str | None, today: date, dormancy_days: int = DORMANCY_DAYS,
                  review_every_days: int = REVIEW_EVERY_DAYS) -> tuple[dict, bool, int | None, str | None]:
    """(counter, counted, dormant days, review due). Only `startup` counts."""
    dormant = dormancy(s["last_session"], today, dormancy_days)
    if source != COUNTED_SOURCE:
        return s, False, dormant, review_due(s, today, review_every_days)
    days = dict(s["days"])
    key = today.isoformat()
    days[key] = days.get(key, 0) + 1
    new = dict(s, count=s["count"] + 1, last_session=today, created=s["created"] or today,
               days=dict(sorted(days.items())))
    return new, True, dormant, review_due(new, today, review_every_days)


def record_review(s: dict, today: date, review_every_sessions: int = REVIEW_EVERY_SESSIONS) -> dict:
    """A review was recorded: the next is due `review_every_sessions` sessions from now."""
    return dict(s, last_review=today, next_review_at=s["count"] + review_every_sessions)


# --- scope ---------------------------------------------------------------------------------

def is_global(scope: str | None) -> bool:
    return not scope or not scope.strip() or scope.strip() == "global"


def _norm_scope(s: str, home: str | None) -> str:
    s = s.strip().replace("\\", "/")
    if s == "~" or s.startswith("~/"):
        if home is None:
            import os.path  # only a scope written with `~` needs the environment

            home = os.path.expanduser("~")
        s = home.replace("\\", "/").rstrip("/") + s[1:]
    return s.rstrip("/") or s


def scope_matches(scope: str | None, project: str | None, *, home: str | None = None) -> bool:
    """Whether a belief scoped `scope` belongs to the project `project`.

    The one scope rule, used by `belief list --scope`, `recall --scope` and
    the session-start hook:
    - no project (None) asks for everything; a global (or empty) scope
      belongs to every project;
    - a scope and a project are each a name (`billing`) or a path
      (`/home/me/code/billing`, `~/code/billing`; `~` is `home`, by default
      the user's home directory);
    - two paths match when the project is the scope's folder or inside it
      (a session started in `billing/src` is in the `billing` project);
    - otherwise the names compare, case-insensitively, with a path's last
      component as its name: `billing` matches `/home/me/code/billing`.
    Two different paths with the same last component do not match.
    """
    if project is None or scope is None or is_global(scope):
        return True
    a, b = _norm_scope(scope, home), _norm_scope(project, home)
    if a == b:
        return True
    if "/" in a and "/" in b:
        return b.startswith(a + "/") if a != "/" else True
    return a.rsplit("/", 1)[-1].lower() == b.rsplit("/", 1)[-1].lower()
