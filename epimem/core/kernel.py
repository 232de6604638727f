"""The rules the session-start hook needs, written once: decay (rule 7), tiers,
dormancy (rule 8), session counting and review-due (rule 10), and what a scope
matches.

Standard library only (math, datetime) and no dataclasses, so the hook can
import it in well under a millisecond; `core.params` takes its defaults from
here, `core.rules` delegates to it, and the context cache, the hook and
recall's vectorised table all call the same functions.

A session counter here is a plain dict — `count`, `last_session`,
`last_review`, `next_review_at`, `created` (dates or None), `days` (ISO date
→ sessions started that day), `machines` (machine id → sessions it counted: a
grow-only counter whose sum is `count`, SPEC §1.4) and `counted` (session id →
the ISO day it was counted: rule 19's sessions the vault knows) — the shape
`store.sessions` reads from `state/sessions.json`; `core.model.Sessions` is its
frozen twin.
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
    """Rule 7 for one belief last confirmed (or first seen) on `anchor`, counted from the earlier
    of that day and today (rule 20): a date after today never holds a number above its decay."""
    if pinned:
        return stored
    return effective(stored, decay_rate(permanence, decay), (today - min(anchor, today)).days, False, floor)


FACT = "fact"


def tier(confidence: float, tiers, basis: str) -> str:
    """The tier of a belief: the highest whose lower bound `confidence` reaches, except that
    the top tier ("factual") is for basis `fact` alone. Every other basis is capped at that
    tier's floor (0.90), so a behavioural belief at its cap is "established", never
    "factual" (SPEC §2) — the one place a tier is named, so no reader can say otherwise."""
    for i, (name, low) in enumerate(tiers):
        if confidence >= low - 1e-9:
            if i == 0 and basis != FACT and len(tiers) > 1:
                return tiers[1][0]
            return name
    return tiers[-1][0]


# --- the vault's format (SPEC §1.4) ---------------------------------------------------------
# Here because the hook checks it before it counts a session; `core.formats` brings an older
# vault up to it, `store.vault_format` reads it.

VAULT_FORMAT = 3                     # the format this epimem writes (core.formats.MIGRATIONS ends here)
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
    # The file named: a hand edit (or a bad merge) of it reads exactly like a newer epimem's vault.
    return (f"this vault is in format {fmt} ({FORMAT_FILE}), written by a newer epimem; this epimem knows "
            f"formats up to {VAULT_FORMAT} and reads or changes nothing rather than misread it: install the newer "
            "epimem (pipx: `pipx upgrade epimem-cli`, or `pipx install --force` from a newer checkout); if "
            f"{FORMAT_FILE} was edited by hand, `git checkout -- {FORMAT_FILE}` restores the committed one")


# --- rules 8 and 10: sessions --------------------------------------------------------------

# Rule 19: a counted session is known by its id this many days after it was counted (a
# session spans a few days at most), and the counter keeps at most this many ids.
KNOWN_DAYS = 7
KNOWN_MAX = 200
# The sessions counted before the counter kept machines (an older file) are this entry
# of the map: every machine that migrates the same old file writes the same entry, so
# the per-machine maximum of a merge counts them once.
EARLIER = "earlier"


_SESSION_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-")


def is_session_id(s: str) -> bool:
    """A plain session id (letters, digits, - _ . :; at most 80): what an observation, the
    hook and the counter accept (no `re` here: the hook imports this module)."""
    return 0 < len(s) <= 80 and set(s) <= _SESSION_CHARS


def empty_sessions() -> dict:
    return {"count": 0, "last_session": None, "last_review": None, "next_review_at": REVIEW_EVERY_SESSIONS,
            "created": None, "days": {}, "machines": {}, "counted": {}}


def known_sessions(counted: dict, today: date) -> dict:
    """The counted session ids still known on `today` (rule 19), in the order they were
    counted (oldest first), at most KNOWN_MAX."""
    keep = [(sid, d) for sid, d in counted.items() if 0 <= (today - date.fromisoformat(d)).days < KNOWN_DAYS]
    return dict(keep[-KNOWN_MAX:])


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
                  review_every_days: int = REVIEW_EVERY_DAYS, *, machine: str = EARLIER,
                  session_id: str | None = None) -> tuple[dict, bool, int | None, str | None]:
    """(counter, counted, dormant days, review due). Only `startup` counts: on `machine`'s
    own entry of the map, and `session_id` (the hook's) becomes a session the vault knows."""
    dormant = dormancy(s["last_session"], today, dormancy_days)
    if source != COUNTED_SOURCE:
        return s, False, dormant, review_due(s, today, review_every_days)
    days = dict(s["days"])
    key = today.isoformat()
    days[key] = days.get(key, 0) + 1
    machines = dict(s.get("machines") or {})
    machines[machine] = machines.get(machine, 0) + 1
    counted = dict(s.get("counted") or {})
    if session_id:
        counted.pop(session_id, None)
        counted[session_id] = key
    new = dict(s, count=s["count"] + 1, last_session=today, created=s["created"] or today,
               days=dict(sorted(days.items())), machines=dict(sorted(machines.items())),
               counted=known_sessions(counted, today))
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
