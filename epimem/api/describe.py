"""What a vault holds, in one answer: the first call of an assistant's session.

The live vocabulary (the kinds, tags and scopes in use, with counts) is what
keeps a client from inventing `decision-style` beside `decision-making`; the
rules' parameters in brief tell it what an observation will do; the session
count and a due review tell it whether to suggest `/mirror`.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ..core import rules
from ..core import vocabulary as vocab

if TYPE_CHECKING:
    from .memory import Memory


def _counted(c: Counter) -> list[dict[str, Any]]:
    return [{"name": k, "count": n} for k, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))]


def describe(mem: Memory) -> dict[str, Any]:
    from .listing import shown

    today, params = mem.today, mem.params
    beliefs, problems, refused = shown(mem)
    tensions, tproblems = mem.vault.load_tensions()
    sessions, sproblems = mem.vault.read_sessions_checked()
    active = [b for b in beliefs if b.status == "active"]
    kinds: Counter = Counter(b.kind for b in active)
    tags: Counter = Counter(t for b in active for t in b.tags)
    scopes: Counter = Counter(b.scope for b in active)
    tiers: Counter = Counter(rules.tier(rules.effective_confidence(b, today, params), b.basis, params) for b in active)
    due = rules.review_due(sessions, today, params)
    return {
        "vault": str(mem.root),
        "today": vocab.iso(today),
        "beliefs": {"total": len(beliefs), "active": len(active),
                    "by_status": dict(Counter(b.status for b in beliefs)),
                    "by_tier": {name: tiers.get(name, 0) for name, _ in params.tiers},
                    "by_permanence": dict(Counter(b.permanence for b in active)),
                    "by_basis": dict(Counter(b.basis for b in active))},
        "vocabulary": {
            "kinds": _counted(kinds),
            # Kinds epistemology.md lists but nobody uses yet are still the ones to pick from.
            "kinds_listed": list(params.kinds),
            "tags": _counted(tags),
            "scopes": _counted(scopes),
        },
        "tensions": dict(Counter(t.status for t in tensions)),
        "sessions": {"count": sessions.count, "last_session": vocab.iso(sessions.last_session),
                     "last_review": vocab.iso(sessions.last_review), "next_review_at": sessions.next_review_at},
        **vocab.review(due),
        **vocab.dormancy(rules.dormancy(sessions, today, params)),
        "rules": {
            "observations_per_session": params.observations_per_session,
            "start": dict(params.start),
            "caps": dict(params.caps),
            "confirm_step": params.confirm_step,
            "challenge_step": params.challenge_step,
            "free_challenges": params.free_challenges,
            "rejection_step": params.rejection_step,
            "decay_per_day": dict(params.decay),
            "decay_floor": params.decay_floor,
            "tiers": {name: low for name, low in params.tiers},
        },
        "problems": vocab.problems(problems + tproblems + sproblems),
        "refused": vocab.refused(refused),
    }
