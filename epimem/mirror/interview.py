"""The interview: 8–12 open questions, each tied to what prompted it (SPEC §5)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import date

from ..core.model import Belief, Problem, Snapshot
from ..core.params import DEFAULTS, Params
from . import text as tx
from .audit import dormancy_flags, drift
from .phrase import sentence
from .portrait import blind_question, blind_spots
from .views import BeliefView, active, active_views, strongest, tension_views

INTERVIEW_MIN, INTERVIEW_MAX = 8, 12

WARM_UP = ("What has had most of your attention lately, at work or outside it? "
           "Start wherever you like.")
CLOSING = "Anything else I should know: something this profile gets wrong, or leaves out entirely?"
GENERIC_QUESTIONS = (
    "What is something you changed your mind about recently?",
    "When does working with an assistant go best for you, and when does it go wrong?",
    "What are you trying to get better at right now?",
    "What would surprise someone who only knew you through your work?",
)


@dataclass(frozen=True)
class Question:
    n: int
    section: str             # warm-up | blind-spot | stale | probe | tension | closing | open
    text: str
    prompted_by: str         # one line: why this question is asked
    belief: str = ""
    kind: str = ""
    tension: str = ""
    connects: str = "new"    # what the answer's observation connects to
    basis: str = "self-report"


@dataclass(frozen=True)
class Interview:
    today: date
    questions: tuple[Question, ...]
    problems: tuple[Problem, ...]  # JSON: [{path, line, message}], as every command


_PROBES = (
    "The profile says {q}. Does that still land? Tell me where it doesn't.",
    "I lean on {q} more than on most of what I believe about you. When is it not true?",
    "Of what I believe about you, {q} is among the firmest. What would make you disagree?",
)


def _quote(v: BeliefView) -> str:
    return f"“{v.title}”"


def _stale_views(beliefs: list[Belief], views: dict[str, BeliefView], today: date,
                 params: Params) -> list[BeliefView]:
    d = drift(beliefs, views, today, params)
    stale = {s.id for s in d.stale}
    decayed = {f.id for f in dormancy_flags(beliefs, views, today, params).decayed}
    chosen = [views[i] for i in stale | decayed]
    return sorted(chosen, key=lambda v: (-(v.confidence - v.effective_confidence), -v.confidence, v.id))


def interview(snapshot: Snapshot, params: Params = DEFAULTS, today: date | None = None) -> Interview:
    """A plan of 8–12 open questions, each tied to what prompted it, in the
    order warm-up → blind spots → stale → probes → tensions → anything else."""
    today = today or snapshot.today or date.today()
    beliefs = active(snapshot)
    vs = active_views(snapshot, today, params)
    by_id = {v.id: v for v in vs}
    used: set[str] = set()

    blind = list(blind_spots(vs, params))
    blind_q = [Question(0, "blind-spot", blind_question(b.kind),
                        f"no beliefs about {b.area}" if b.reason == "none"
                        else f"only guesses about {b.area}", kind=b.kind)
               for b in blind]

    stale_q: list[Question] = []
    for v in _stale_views(beliefs, by_id, today, params):
        if len(stale_q) == 2:
            break
        when = (f"last confirmed {(today - v.confirmed).days} days ago" if v.confirmed
                else f"recorded {(today - v.first).days} days ago and never confirmed")
        stale_q.append(Question(
            0, "stale",
            f"The profile says {_quote(v)}, but I haven't seen it confirmed in a while. "
            "Does that still land, or has it shifted?",
            (f"{v.permanence} belief, {when}" if v.permanence != "unknown"
             else f"belief of unknown permanence, {when}"), belief=v.id, connects=v.id))
        used.add(v.id)

    probe_q: list[Question] = []
    for v in strongest([v for v in vs if v.basis != "fact" and v.id not in used]):
        tmpl = _PROBES[len(probe_q) % len(_PROBES)]
        probe_q.append(Question(
            0, "probe", tmpl.format(q=_quote(v)),
            f"one of the strongest non-factual beliefs ({v.tier})", belief=v.id, connects=v.id))
        used.add(v.id)
        if len(probe_q) == 5:   # spares, used only to reach the minimum
            break

    tension_q = []
    tv = tension_views(snapshot, today)
    for t in tv.open[:2]:
        about = f" around “{t.belief_title}”" if t.belief_title else ""
        detail = sentence(tx.one_line(t.what_happened, 180) or t.title)
        tension_q.append(Question(0, "tension",
                                  f"Something doesn't fit{about}: {detail} How do you see it?",
                                  f"open tension ({t.status}) since {t.date.isoformat()}",
                                  belief=t.belief, tension=t.id,
                                  connects=t.belief if t.belief in by_id else "new"))
    if not tension_q:
        for c in drift(beliefs, by_id, today, params).challenged_not_lowered:
            if c.id not in used:
                tension_q.append(Question(
                    0, "tension",
                    f"“{c.title}” was contradicted, yet it still stands in the profile. Was that a "
                    "one-off, or is something changing?",
                    f"challenged on {c.challenged.isoformat()}, confidence never lowered",
                    belief=c.id, connects=c.id))
                break
        if vs:
            neat = snapshot.sessions.count >= params.coherence_sessions
            tension_q.append(Question(
                0, "tension",
                "Nothing in the profile contradicts anything else, which real people rarely "
                "manage. Where are you of two minds?",
                f"no open tension after {snapshot.sessions.count} sessions: the profile may be "
                "too neat" if neat else "no open tension on record yet"))

    # Quotas first, then spares until the minimum is reached.
    plan = {"blind-spot": blind_q[:3], "stale": stale_q, "probe": probe_q[:3],
            "tension": tension_q[:2]}
    spares = [("blind-spot", q) for q in blind_q[3:]] + [("probe", q) for q in probe_q[3:]]
    n = lambda: 2 + sum(len(v) for v in plan.values())  # noqa: E731
    for section, q in spares:
        if n() >= INTERVIEW_MIN:
            break
        plan[section].append(q)
    extra = [Question(0, "open", g, "open space: the profile is thin here") for g in GENERIC_QUESTIONS]
    while n() < INTERVIEW_MIN and extra:
        plan.setdefault("open", []).append(extra.pop(0))

    ordered = ([Question(0, "warm-up", WARM_UP, "opening: open space before anything specific")]
               + plan["blind-spot"] + plan["stale"] + plan["probe"] + plan["tension"]
               + plan.get("open", [])
               + [Question(0, "closing", CLOSING, "closing: room for what no question reached")])
    ordered = ordered[:INTERVIEW_MAX - 1] + [ordered[-1]] if len(ordered) > INTERVIEW_MAX else ordered
    numbered = tuple(Question(i + 1, *(getattr(q, f.name) for f in fields(Question)[1:]))
                     for i, q in enumerate(ordered))
    return Interview(today, numbered, snapshot.problems)
