"""Beliefs that rest on beliefs (SPEC §14): what counts as a change of a belief that
others depend on, who depends on it, and what the vault's dependencies look like.

A belief names what it rests on in `depends_on`. When one of those is superseded,
retired or falls a tier, each dependant is flagged — a tension "rests on a belief
that changed" — and never lowered: the dependant may well still hold (the person
moved city and still works remotely for the same team), so only the user decides.

Pure: the services pass the beliefs before and after a write and the vault's
beliefs; `api/dependencies.py` turns what this finds into tension files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from . import kernel
from .model import Belief
from .params import DEFAULTS, Params


@dataclass(frozen=True)
class BaseChange:
    """A belief others may rest on changed in a way its dependants must hear about."""

    belief: str       # the id of the belief that changed
    title: str
    what: str         # "superseded" | "retired" | "fell"
    detail: str       # one line: "superseded by lives-in-munich", "fell from established to developing"
    successor: str = ""  # for "superseded": the belief that replaced it, when known


def _tier(b: Belief, today: date, params: Params) -> str:
    eff = kernel.effective_at(b.confidence, b.permanence, kernel.anchor(b.first, b.confirmed), b.pinned, today,
                              params.decay, params.decay_floor)
    # A non-fact at its cap is "established", never "factual" (SPEC §2): the kernel's tier says so.
    return kernel.tier(eff, params.tiers, b.basis)


def _rank(name: str, params: Params) -> int:
    names = [n for n, _ in params.tiers]
    return len(names) - names.index(name) if name in names else 0


def successor_of(b: Belief) -> str:
    """The belief that superseded `b`, from its last `superseded` evidence line ("" when unknown)."""
    for e in reversed(b.evidence):
        if e.kind == "superseded" and e.link.startswith("beliefs/"):
            return e.link[len("beliefs/"):]
    return ""


def base_change(before: Belief | None, after: Belief, today: date, params: Params = DEFAULTS) -> BaseChange | None:
    """What a write did to `before` that its dependants must be told, or None.

    A fall is a fall of the tier a person is shown (of the effective confidence on the day
    of the write): a challenge taking 0.70 to 0.60 is one; decay alone is not a change in
    the person, and the audit's drift already shows it."""
    if before is None or before.status != "active":
        return None
    if after.status == "superseded":
        by = successor_of(after)
        return BaseChange(after.id, after.title, "superseded", f"superseded by {by}" if by else "superseded", by)
    if after.status == "retired":
        return BaseChange(after.id, after.title, "retired", "retired")
    if after.status != "active":
        return None
    t0, t1 = _tier(before, today, params), _tier(after, today, params)
    if _rank(t1, params) < _rank(t0, params):
        return BaseChange(after.id, after.title, "fell", f"fell from {t0} to {t1}")
    return None


def dependants(beliefs: Iterable[Belief], base: str) -> list[Belief]:
    """The active beliefs that name `base` in `depends_on`, by id."""
    return sorted((b for b in beliefs if b.status == "active" and base in b.depends_on), key=lambda b: b.id)


def edges(beliefs: Iterable[Belief]) -> list[tuple[str, str]]:
    """(dependant, base) for every dependency the vault's beliefs name, sorted."""
    return sorted((b.id, d) for b in beliefs for d in b.depends_on)


def cycles(beliefs: Iterable[Belief]) -> list[tuple[str, ...]]:
    """Each loop of dependencies once (a rests on b rests on a), as the ids along it,
    starting from its smallest id. A loop flags itself forever, so validate reports it."""
    graph = {b.id: tuple(b.depends_on) for b in beliefs}
    seen: set[tuple[str, ...]] = set()
    out: list[tuple[str, ...]] = []
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        path.append(node)
        for nxt in graph.get(node, ()):
            if state.get(nxt) == 1:
                loop = path[path.index(nxt):]
                i = loop.index(min(loop))
                key = tuple(loop[i:] + loop[:i])
                if key not in seen:
                    seen.add(key)
                    out.append(key)
            elif nxt in graph and state.get(nxt) is None:
                visit(nxt, path)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if state.get(node) is None:
            visit(node, [])
    return out


def flag_text(base: BaseChange, dependant: Belief) -> tuple[str, str, str]:
    """(title, what happened, what this suggests) of the tension that flags a dependant."""
    title = f"Rests on a belief that changed: “{base.title}”"
    what = f"“{base.title}” was {base.detail}."
    suggests = (f"Check whether “{dependant.title}” still holds without it; it was not lowered "
                "(only evidence or the user's word moves it).")
    return title, what, suggests
