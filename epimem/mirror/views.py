"""What every mode of the mirror shares: a belief and a tension as the mirror shows them.

The analyses are pure functions from (Snapshot, Params, today) to frozen
values, one module per mode (`audit`, `gutcheck`, `interview`, `portrait`).
Every figure the mirror shows is computed there and nowhere else, so the
markdown, the JSON and the LLM brief always agree, and each number can be
checked against a hand-built Snapshot. The rules themselves (decay, tiers,
permanence suggestions, soften/raise, session counting) come from
`epimem.core.rules`; the mirror only selects, groups and ranks.

Conventions (documented in docs/mirror.md):
- Only `active` beliefs are analysed; retired and superseded ones are counted.
- "Effective" is the decayed confidence as of `today`, rounded to three
  decimals; its tier is the tier of that rounded figure.
- A tension is "open" unless its status is `resolved` (`watching` is open).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

from ..core import rules
from ..core.model import TENSION_STATUSES, Belief, Snapshot
from ..core.params import DEFAULTS, Params
from . import text as tx
from .phrase import CERTAINTY_WORDS


@dataclass(frozen=True)
class BeliefView:
    """One belief as the mirror shows it."""

    id: str
    title: str
    kind: str
    basis: str
    permanence: str
    confidence: float            # as stored in the file
    effective_confidence: float  # decayed to today (SPEC §2.7)
    tier: str
    certainty: str           # the tier in words
    first: date
    confirmed: date | None
    challenged: date | None
    pinned: bool
    confirmations: int
    challenges: int
    statement: str           # first sentence, one line
    why: str                 # one line: what the belief rests on
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class TensionView:
    id: str
    title: str
    status: str
    belief: str
    belief_title: str        # "" when the belief is missing
    date: date
    days_open: int
    what_happened: str
    suggests: str
    successor: str = ""      # SPEC §14: the belief proposed in place of `belief`
    rests_on: str = ""       # SPEC §14: for a flag, the belief that changed under `belief`


@dataclass(frozen=True)
class Tensions:
    by_status: dict[str, int]
    unresolved: tuple[TensionView, ...]
    watching: tuple[TensionView, ...]

    @property
    def open(self) -> tuple[TensionView, ...]:
        return self.unresolved + self.watching


def active(snapshot: Snapshot) -> list[Belief]:
    return [b for b in snapshot.beliefs if b.status == "active"]


def certainty_words(params: Params = DEFAULTS) -> dict[str, str]:
    names = [n for n, _ in params.tiers]
    last = len(CERTAINTY_WORDS) - 1
    if len(names) == 1:
        return {names[0]: CERTAINTY_WORDS[1]}
    return {n: CERTAINTY_WORDS[round(i * last / (len(names) - 1))] for i, n in enumerate(names)}


def challenge_count(b: Belief) -> int:
    return sum(1 for e in b.evidence if e.kind in ("contradicting", "diverging"))


_AGAINST = {"complicating": "lately complicated", "contradicting": "lately contradicted",
            "diverging": "lately contradicted by what was done"}


def _why(b: Belief) -> str:
    n_conf = rules.confirmations(b)
    n_chal = challenge_count(b)
    if b.basis == "fact":
        head = "a verified fact"
    elif n_conf == 0:
        head = {"self-report": "from what you said", "interpretive": "an interpretation"}.get(
            b.basis, "not yet confirmed")
    else:
        head = "confirmed once" if n_conf == 1 else f"confirmed {n_conf} times"
    if n_chal:
        head += ", challenged once" if n_chal == 1 else f", challenged {n_chal} times"
    if b.pinned:
        head += ", pinned"
    last = next((e for e in reversed(b.evidence) if e.note.strip()), None)
    latest = tx.strip_change(last.note) if last else ""
    if last is not None and latest and last.kind in _AGAINST:
        # Never quote what complicates a belief as if it were what it rests on.
        latest = f"{_AGAINST[last.kind]}: {latest}"
    tail = latest or _distinct(b.statement, b.title)
    return tx.one_line(f"{head}: {tx.first_sentence(tail, 200)}" if tail else head, 110)


def view(b: Belief, today: date, params: Params = DEFAULTS,
         words: dict[str, str] | None = None, detail: bool = True) -> BeliefView:
    """`detail=False` leaves `statement` and `why` empty: ranking 10,000
    beliefs needs only numbers; the few shown get their words via `_detailed`."""
    eff = round(rules.effective_confidence(b, today, params), 3)
    t = rules.tier(eff, b.basis, params)
    words = words or certainty_words(params)
    return BeliefView(
        id=b.id, title=b.title, kind=b.kind, basis=b.basis, permanence=b.permanence,
        confidence=round(b.confidence, 2), effective_confidence=eff, tier=t, certainty=words.get(t, ""),
        first=b.first, confirmed=b.confirmed, challenged=b.challenged, pinned=b.pinned,
        confirmations=rules.confirmations(b), challenges=challenge_count(b),
        statement=tx.first_sentence(b.statement or b.title) if detail else "",
        why=_why(b) if detail else "", tags=b.tags)


def active_views(snapshot: Snapshot, today: date, params: Params) -> list[BeliefView]:
    words = certainty_words(params)
    return [view(b, today, params, words, detail=False) for b in active(snapshot)]


def detailed(views, beliefs: dict[str, Belief]) -> tuple[BeliefView, ...]:
    return tuple(v if v.why else replace(
        v, statement=tx.first_sentence(beliefs[v.id].statement or v.title), why=_why(beliefs[v.id]))
        for v in views)


def strongest(views: list[BeliefView]) -> list[BeliefView]:
    return sorted(views, key=lambda v: (-v.effective_confidence, -v.confidence, v.id))


def top_and_bottom(views: list[BeliefView], n: int) -> tuple[tuple[BeliefView, ...],
                                                              tuple[BeliefView, ...]]:
    """The n strongest and the n weakest. With fewer than 2n beliefs they are
    split in two halves (the top takes the odd one), so no belief is listed
    twice and a young vault still shows both ends."""
    ranked = strongest(views)
    k = n if len(ranked) >= 2 * n else (len(ranked) + 1) // 2
    top = ranked[:k]
    rest = ranked[k:]
    bottom = list(reversed(rest))[:n]
    return tuple(top), tuple(bottom)


def _distinct(statement: str, title: str) -> str:
    """The statement when it adds something to the title, else ""."""
    if not statement:
        return ""
    same = [w for _, w in tx.words(statement)] == [w for _, w in tx.words(title)]
    return "" if same else statement


def tension_views(snapshot: Snapshot, today: date) -> Tensions:
    titles = {b.id: b.title for b in snapshot.beliefs}
    by_status = {s: 0 for s in TENSION_STATUSES}
    unresolved: list[TensionView] = []
    watching: list[TensionView] = []
    for t in snapshot.tensions:
        by_status[t.status] = by_status.get(t.status, 0) + 1
        if t.status == "resolved":
            continue
        v = TensionView(id=t.id, title=t.title or t.id, status=t.status, belief=t.belief,
                        belief_title=titles.get(t.belief, ""), date=t.date,
                        days_open=max(0, (today - t.date).days),
                        what_happened=tx.one_line(t.what_happened, 400),
                        suggests=tx.one_line(t.suggests, 400), successor=t.successor, rests_on=t.rests_on)
        (unresolved if t.status == "unresolved" else watching).append(v)
    order = lambda v: (v.date, v.id)  # noqa: E731 - oldest first: they have waited longest
    return Tensions(by_status, tuple(sorted(unresolved, key=order)),
                    tuple(sorted(watching, key=order)))
