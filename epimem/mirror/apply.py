"""Applying what an audit proposes (`epimem mirror audit --apply`): soften, raise, re-class.

The audit (pure, `mirror.audit`) proposes; the user decides. Accepting turns each
proposal into a change by the user's hand with a `reviewed` evidence line naming the
proposal's reason, all in one commit (`api.beliefs.apply_review`). How far a number
moves is decided here, in one place (docs/decisions.md):

- soften: down by `challenge_step` (0.10), never below `soften_above` (0.70): the
  review says the belief is held more firmly than recent sessions support, not that
  it is wrong;
- raise: up to `raise_below` (0.40), never above the basis's cap: confirmed several
  times, it has left the speculative range, no further by the review alone;
- re-class: the permanence rule 11 suggests.

Accepting is not a confirmation: decay still counts from the last confirmation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core import rules
from ..core.errors import InputError
from ..core.params import Params
from .audit import Audit


@dataclass(frozen=True)
class Planned:
    belief: str
    action: str  # soften | raise | reclass
    fields: dict[str, Any]
    why: str


def plan(a: Audit, beliefs: dict, params: Params, only: tuple[str, ...] = ()) -> list[Planned]:
    """The changes the audit's proposals amount to (pure). `only`: these beliefs' proposals."""
    out = []
    for p in a.proposals:
        b = beliefs.get(p.id)
        if b is None:
            continue
        if p.action == "soften":
            new = max(params.soften_above, round(b.confidence - params.challenge_step + 1e-9, 2))
            if new < b.confidence:
                out.append(Planned(p.id, "soften", {"confidence": new}, f"audit: softened ({p.reason})"))
        elif p.action == "raise":
            new = min(rules.cap(b.basis, params), params.raise_below)
            if new > b.confidence:
                out.append(Planned(p.id, "raise", {"confidence": new}, f"audit: raised ({p.reason})"))
    for s in a.permanence:
        if s.suggested and s.id in beliefs:
            out.append(Planned(s.id, "reclass", {"permanence": s.suggested}, f"audit: re-classed ({s.reason})"))
    if only:
        unknown = sorted(set(only) - {x.belief for x in out})
        if unknown:
            raise InputError(f"the audit proposes nothing for {', '.join(unknown)}", field="only")
        out = [x for x in out if x.belief in only]
    # one change per belief: a softening and a re-class of the same belief travel together
    merged: dict[str, Planned] = {}
    for x in out:
        if x.belief in merged:
            m = merged[x.belief]
            merged[x.belief] = Planned(x.belief, f"{m.action}+{x.action}", {**m.fields, **x.fields},
                                       f"{m.why}; {x.why.removeprefix('audit: ')}")
        else:
            merged[x.belief] = x
    return list(merged.values())


def apply(mem, a: Audit, only: tuple[str, ...] = ()) -> tuple[str, list[Planned]]:
    """Accept the audit's proposals (`only`: these beliefs' and these parameter keys'): the
    beliefs' in one commit, the parameters the user's verdicts support in another, of
    `epistemology.md`, citing the numbers (SPEC §14). Returns (the last commit, what was done)."""
    from ..api import beliefs as beliefs_api
    from ..api import listing
    from ..api.epistemology import apply_calibration

    offered = a.calibration.proposals if a.calibration is not None else ()
    keys = {p.key for p in offered}
    only_beliefs = tuple(x for x in only if x not in keys)
    params = [p for p in offered if not only or p.key in only]
    beliefs = {b.id: b for b in listing.beliefs(mem, listing.filters(None, {}))}
    planned = plan(a, beliefs, mem.params, only_beliefs) if (not only or only_beliefs) else []
    sha = ""
    if planned or not params:
        n = len(planned)
        sha, _ = beliefs_api.apply_review(mem, [(p.belief, p.fields, p.why) for p in planned],
                                        f"review: audit proposals applied to {n} belief{'s' if n != 1 else ''}")
    if params:
        sha = apply_calibration(mem, params)
        planned += [Planned(p.key, "parameter", {p.key: p.proposed}, f"audit: {p.reason}") for p in params]
    return sha, planned
