"""What changed between two versions of a vault, said in words.

Used by `epimem diff` (two git revisions), by `epimem commit` and `watch
--commit` (HEAD against the working tree) to name what a hand edit changed.
Pure: it compares parsed values.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import Belief, Tension

# Frontmatter fields worth naming, in the order a person cares about them.
_FIELDS = ("confidence", "status", "permanence", "basis", "kind", "title", "scope",
           "pinned", "tags", "confirmed", "challenged", "supersedes", "depends_on")


@dataclass(frozen=True)
class Change:
    what: str      # "belief", "tension", "observations", "review", "file"
    ident: str
    action: str    # "added", "changed", "removed", "recorded"
    details: tuple[str, ...] = ()

    def sentence(self) -> str:
        if self.action == "changed":
            return f"{self.ident}: " + "; ".join(self.details)
        extra = f" ({'; '.join(self.details)})" if self.details else ""
        return f"{self.what} {self.ident} {self.action}{extra}"


def _fmt(field: str, v) -> str:
    if v is None or v == () or v == "":
        return "—"
    if field == "confidence":
        return f"{v:.2f}"
    if isinstance(v, tuple):
        return "[" + ", ".join(v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def belief_field_changes(old: Belief, new: Belief) -> list[str]:
    out = []
    for f in _FIELDS:
        a, b = getattr(old, f), getattr(new, f)
        if a != b:
            out.append(f"{f} {_fmt(f, a)} → {_fmt(f, b)}")
    if old.statement != new.statement:
        out.append("statement reworded")
    added = len(new.evidence) - len(old.evidence)
    if added > 0 and new.evidence[:len(old.evidence)] == old.evidence:
        out.append(f"{added} evidence line{'s' if added > 1 else ''} added")
    elif new.evidence != old.evidence:
        out.append("evidence edited")
    return out


def belief_change(ident: str, old: Belief | None, new: Belief | None) -> Change | None:
    if old is None and new is None:
        return None
    if old is None:
        assert new is not None
        return Change("belief", ident, "added",
                      (f"{new.title}", f"{new.confidence:.2f}", new.basis, new.permanence))
    if new is None:
        return Change("belief", ident, "removed", (old.title,))
    details = belief_field_changes(old, new)
    return Change("belief", ident, "changed", tuple(details)) if details else None


def tension_change(ident: str, old: Tension | None, new: Tension | None) -> Change | None:
    if old is None and new is None:
        return None  # unreadable before and after (a `!!python/…` tag, bad bytes): nothing to name
    if old is None and new is not None:
        return Change("tension", ident, "added", (f"on {new.belief}", new.status))
    if new is None and old is not None:
        return Change("tension", ident, "removed", ())
    assert old is not None and new is not None
    if old.status != new.status:
        return Change("tension", ident, "changed", (f"status {old.status} → {new.status}",))
    if old != new:
        return Change("tension", ident, "changed", ("text edited",))
    return None


def headline(changes: list[Change], limit: int = 3) -> str:
    """A commit subject naming what changed (`edit: a confidence 0.55 → 0.70`)."""
    if not changes:
        return "no change"
    parts = []
    for c in changes[:limit]:
        if c.what in ("belief", "file") and c.action == "changed" and c.details:
            parts.append(f"{c.ident} " + ", ".join(c.details[:2]))
        else:
            parts.append(f"{c.what} {c.ident} {c.action}")
    more = len(changes) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _plain(v) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_plain(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_plain(x) for x in v) + "]"
    return "—" if v is None else str(v)


def mapping_changes(old: dict, new: dict, *, skip: frozenset[str] = frozenset(), limit: int = 80) -> list[str]:
    """Keys added, removed or changed between two mappings, old → new, in words.

    A value too long to read in a line (the redaction patterns) is named, not quoted."""
    out = []
    for k in list(old) + [k for k in new if k not in old]:
        if k in skip:
            continue
        if k not in new:
            out.append(f"{k} removed")
        elif k not in old:
            text = _plain(new[k])
            out.append(f"{k} added" + (f" ({text})" if len(text) <= limit else ""))
        elif old[k] != new[k]:
            if isinstance(old[k], dict) and isinstance(new[k], dict):
                out.extend(f"{k}.{d}" for d in mapping_changes(old[k], new[k], limit=limit))
                continue
            a, b = _plain(old[k]), _plain(new[k])
            out.append(f"{k} {a} → {b}" if len(a) + len(b) <= limit else f"{k} changed")
    return out


# The counter's keys a person reads; the per-day tally rule 10 counts from is `days`
# (sessions per day, as written before) or `count_at_day_start` (store/sessions.py).
_TALLY = frozenset({"days", "count_at_day_start"})
# The per-machine map and the known session ids change with every count: the count says it.
_BOOKKEEPING = frozenset({"machines", "counted"})


def sessions_changes(old: dict, new: dict) -> list[str]:
    out = [d for d in mapping_changes(old, new, skip=_TALLY | _BOOKKEEPING)]
    oc, nc = old.get("count"), new.get("count")
    added = nc - oc if isinstance(oc, int) and isinstance(nc, int) else 0
    if added > 0:
        out.append(f"{added} session{'s' if added > 1 else ''} counted")
    elif "days" in old and "count_at_day_start" in new:
        out.append("the per-day tally written as count_at_day_start")
    elif any(old.get(k) != new.get(k) for k in _TALLY):
        out.append("days changed")
    return out
