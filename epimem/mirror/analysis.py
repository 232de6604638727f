"""The mirror's analyses: pure functions from (Snapshot, Params, today) to
frozen values.

Every figure the mirror shows is computed here and nowhere else, so the
markdown, the JSON and the LLM brief always agree, and each number can be
checked against a hand-built Snapshot. The rules themselves (decay, tiers,
permanence suggestions, soften/raise, session counting) come from
`epimem.core.rules`; this module only selects, groups and ranks.

Conventions (documented in docs/mirror.md):
- Only `active` beliefs are analysed; retired and superseded ones are counted.
- "Effective" is the decayed confidence as of `today`, rounded to three
  decimals; its tier is the tier of that rounded figure.
- A tension is "open" unless its status is `resolved` (`watching` is open).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, fields, is_dataclass, replace
from datetime import date
from typing import Any

from ..core import rules
from ..core.model import PERMANENCES, TENSION_STATUSES, Belief, Snapshot
from ..core.params import DEFAULTS, Params
from . import text as tx
from .phrase import CERTAINTY_WORDS, say, sentence

TOP_N = 5
GUT_N = 3
# SPEC §5 dormancy flag "situational unconfirmed 6+ weeks". Not (yet) an
# epistemology.md parameter; a vault may still set it and we will honour it.
SITUATIONAL_DORMANT_DAYS = 42
CANDIDATE_MIN = 3          # "the same pattern three or more times"
INTERVIEW_MIN, INTERVIEW_MAX = 8, 12
THEMES_MIN, THEMES_MAX = 4, 6


# What each kind of belief is *about*, in words a person would use.
AREAS = {
    "identity": "who you are and what you do", "trait": "your temperament", "value": "what you value",
    "motivation": "what moves you", "preference": "what you like and dislike",
    "convention": "the conventions you keep", "workflow": "how you work day to day",
    "fact": "the facts of your situation", "decision": "the decisions you've made",
    "antipattern": "what you've learned to avoid", "solution": "the fixes that work for you",
}
# The order in which gaps matter for a character study: motives before facts.
BLIND_PRIORITY = ("value", "motivation", "identity", "trait", "workflow", "preference",
                  "convention", "decision", "antipattern", "solution", "fact")
CORE_KINDS = ("value", "motivation", "identity", "trait")

BLIND_QUESTIONS = {
    "identity": "How would you describe what you do, and who you are at work, to someone you respect?",
    "trait": "What would a close colleague say is most characteristic of how you go about things?",
    "value": "What do you care about in your work that you rarely say out loud?",
    "motivation": "What makes a piece of work feel worth doing to you, and what drains you?",
    "preference": "What do you want more of, and less of, from an assistant like me?",
    "convention": "Which conventions do you hold to even when nobody checks?",
    "workflow": "Walk me through how a typical piece of work goes for you, from first idea to done.",
    "fact": "What facts about your situation (role, team, tools, constraints) should I simply know?",
    "decision": "What is a recent decision you would make the same way again, and why?",
    "antipattern": "What have you learned, the hard way, to stop doing?",
    "solution": "What approach or fix do you keep reusing because it works?",
}

KIND_GROUPS = (
    ("character", "Character", ("identity", "trait")),
    ("drive", "What drives you", ("value", "motivation")),
    ("work", "How you work", ("workflow", "convention", "preference")),
    ("lessons", "Choices and lessons", ("decision", "solution", "antipattern")),
    ("facts", "The facts of your situation", ("fact",)),
)

WARM_UP = ("What has had most of your attention lately, at work or outside it? "
           "Start wherever you like.")
CLOSING = "Anything else I should know: something this profile gets wrong, or leaves out entirely?"
GENERIC_QUESTIONS = (
    "What is something you changed your mind about recently?",
    "When does working with an assistant go best for you, and when does it go wrong?",
    "What are you trying to get better at right now?",
    "What would surprise someone who only knew you through your work?",
)


# --- the values the analyses return ------------------------------------------

@dataclass(frozen=True)
class BeliefView:
    """One belief as the mirror shows it."""

    id: str
    title: str
    kind: str
    basis: str
    permanence: str
    stored: float
    effective: float
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
class Totals:
    beliefs: int             # active
    retired: int
    superseded: int
    observations: int
    tensions: int
    skipped_files: int


@dataclass(frozen=True)
class SessionFigures:
    count: int
    last_session: date | None
    last_review: date | None
    next_review_at: int
    created: date | None
    days_since_init: int | None
    days_since_last_session: int | None
    days_since_last_review: int | None
    sessions_since_last_review: int
    review_due: str | None   # why a review is due (rule 10), or None
    dormant_days: int | None  # rule 8: gap when returning from dormancy


@dataclass(frozen=True)
class Flagged:
    id: str
    title: str
    permanence: str
    stored: float
    effective: float
    days: int                # days since confirmed (or first); for unknown: days since first


@dataclass(frozen=True)
class Dormancy:
    decayed: tuple[Flagged, ...]              # effective more than dormancy_drop below stored
    never_confirmed: tuple[Flagged, ...]
    unknown_too_long: tuple[Flagged, ...]     # permanence unknown for unknown_days+
    situational_unconfirmed: tuple[Flagged, ...]  # situational, unconfirmed 6+ weeks

    @property
    def total(self) -> int:
        return len({f.id for group in (self.decayed, self.never_confirmed, self.unknown_too_long,
                                       self.situational_unconfirmed) for f in group})


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


@dataclass(frozen=True)
class Tensions:
    by_status: dict[str, int]
    unresolved: tuple[TensionView, ...]
    watching: tuple[TensionView, ...]

    @property
    def open(self) -> tuple[TensionView, ...]:
        return self.unresolved + self.watching


@dataclass(frozen=True)
class ChallengedItem:
    id: str
    title: str
    stored: float
    challenged: date
    challenges: int          # contradicting/diverging evidence lines
    confirmed_since: bool    # confirmed after the last challenge


@dataclass(frozen=True)
class StaleItem:
    id: str
    title: str
    permanence: str
    stored: float
    effective: float
    days: int                # since confirmed (or first, when never confirmed)
    limit: int               # the class's stale threshold in days


@dataclass(frozen=True)
class Drift:
    challenged_not_lowered: tuple[ChallengedItem, ...]
    stale: tuple[StaleItem, ...]


@dataclass(frozen=True)
class Coherence:
    too_neat: bool
    sessions: int
    open_tensions: int
    threshold: int


@dataclass(frozen=True)
class PermanenceItem:
    id: str
    title: str
    current: str
    suggested: str           # "" for a flag without a proposal
    reason: str


@dataclass(frozen=True)
class Proposal:
    id: str
    title: str
    action: str              # "soften" | "raise"
    stored: float
    effective: float
    reason: str


@dataclass(frozen=True)
class ObservationView:
    id: str
    date: date
    evidence: str
    suggests: str
    strength: str
    connects: str
    reason: str              # "new" or "missing belief '<id>'"


@dataclass(frozen=True)
class Candidate:
    observations: tuple[str, ...]
    words: tuple[str, ...]
    example: str


@dataclass(frozen=True)
class Audit:
    today: date
    totals: Totals
    by_permanence: dict[str, int]
    by_tier: dict[str, int]
    by_kind: dict[str, int]
    sessions: SessionFigures
    top: tuple[BeliefView, ...]
    bottom: tuple[BeliefView, ...]
    dormancy: Dormancy
    tensions: Tensions
    drift: Drift
    coherence: Coherence
    permanence: tuple[PermanenceItem, ...]
    proposals: tuple[Proposal, ...]
    unconnected: tuple[ObservationView, ...]
    candidates: tuple[Candidate, ...]
    problems: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return self.totals.beliefs == 0 and self.totals.observations == 0


@dataclass(frozen=True)
class GutItem:
    belief: BeliefView
    question: str            # "Still true?" | "Still uncertain?"
    text: str                # the belief in plain words, certainty included


@dataclass(frozen=True)
class GutCheck:
    today: date
    high: tuple[GutItem, ...]
    low: tuple[GutItem, ...]
    pool: str                # "interpretive", or "interpretive+" when widened
    interpretive: int        # active interpretive beliefs
    problems: tuple[str, ...]

    @property
    def beliefs(self) -> tuple[str, ...]:
        return tuple(i.belief.id for i in self.high + self.low)


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
    problems: tuple[str, ...]


@dataclass(frozen=True)
class Theme:
    key: str                 # "tag:x", "word:x" or "kind:<group>"
    label: str
    source: str              # tag | words | kind
    certainty: str
    size: int
    beliefs: tuple[BeliefView, ...]   # strongest first, at most 5
    members: tuple[str, ...]          # every belief id in the theme


@dataclass(frozen=True)
class BlindSpot:
    kind: str
    area: str
    reason: str              # "none" | "guesses only"
    beliefs: int


@dataclass(frozen=True)
class Hunger:
    question: str
    why: str
    belief: str = ""
    kind: str = ""
    tension: str = ""


@dataclass(frozen=True)
class PortraitBrief:
    today: date
    empty: bool
    person: tuple[BeliefView, ...]
    themes: tuple[Theme, ...]
    blind_spots: tuple[BlindSpot, ...]
    contradictions: tuple[TensionView, ...]
    hungriest: Hunger
    beliefs: int
    observations: int
    certainty_words: dict[str, str]   # tier -> words
    problems: tuple[str, ...]


# --- shared building blocks -------------------------------------------------------

def active(snapshot: Snapshot) -> list[Belief]:
    return [b for b in snapshot.beliefs if b.status == "active"]


def certainty_words(params: Params = DEFAULTS) -> dict[str, str]:
    names = [n for n, _ in params.tiers]
    last = len(CERTAINTY_WORDS) - 1
    if len(names) == 1:
        return {names[0]: CERTAINTY_WORDS[1]}
    return {n: CERTAINTY_WORDS[round(i * last / (len(names) - 1))] for i, n in enumerate(names)}


def _challenges(b: Belief) -> int:
    return sum(1 for e in b.evidence if e.kind in ("contradicting", "diverging"))


def _why(b: Belief) -> str:
    n_conf = rules.confirmations(b)
    n_chal = _challenges(b)
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
    latest = next((tx.strip_change(e.note) for e in reversed(b.evidence) if e.note.strip()), "")
    tail = latest or _distinct(b.statement, b.title)
    return tx.one_line(f"{head}: {tx.first_sentence(tail, 200)}" if tail else head, 110)


def view(b: Belief, today: date, params: Params = DEFAULTS,
         words: dict[str, str] | None = None, detail: bool = True) -> BeliefView:
    """`detail=False` leaves `statement` and `why` empty: ranking 10,000
    beliefs needs only numbers; the few shown get their words via `_detailed`."""
    eff = round(rules.effective_confidence(b, today, params), 3)
    t = rules.tier(eff, params)
    words = words or certainty_words(params)
    return BeliefView(
        id=b.id, title=b.title, kind=b.kind, basis=b.basis, permanence=b.permanence,
        stored=round(b.confidence, 2), effective=eff, tier=t, certainty=words.get(t, ""),
        first=b.first, confirmed=b.confirmed, challenged=b.challenged, pinned=b.pinned,
        confirmations=rules.confirmations(b), challenges=_challenges(b),
        statement=tx.first_sentence(b.statement or b.title) if detail else "",
        why=_why(b) if detail else "", tags=b.tags)


def _views(snapshot: Snapshot, today: date, params: Params) -> list[BeliefView]:
    words = certainty_words(params)
    return [view(b, today, params, words, detail=False) for b in active(snapshot)]


def _detailed(views, beliefs: dict[str, Belief]) -> tuple[BeliefView, ...]:
    return tuple(v if v.why else replace(
        v, statement=tx.first_sentence(beliefs[v.id].statement or v.title), why=_why(beliefs[v.id]))
        for v in views)


def _strongest(views: list[BeliefView]) -> list[BeliefView]:
    return sorted(views, key=lambda v: (-v.effective, -v.stored, v.id))


def _weakest(views: list[BeliefView]) -> list[BeliefView]:
    return sorted(views, key=lambda v: (v.effective, v.stored, v.id))


def top_and_bottom(views: list[BeliefView], n: int) -> tuple[tuple[BeliefView, ...],
                                                              tuple[BeliefView, ...]]:
    """The n strongest and the n weakest. With fewer than 2n beliefs they are
    split in two halves (the top takes the odd one), so no belief is listed
    twice and a young vault still shows both ends."""
    ranked = _strongest(views)
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


def _days_since(d: date | None, today: date) -> int | None:
    return None if d is None else (today - d).days


def session_figures(snapshot: Snapshot, today: date, params: Params = DEFAULTS) -> SessionFigures:
    s = snapshot.sessions
    since_review = (rules.sessions_since(s, s.last_review) if s.last_review else s.count)
    return SessionFigures(
        count=s.count, last_session=s.last_session, last_review=s.last_review,
        next_review_at=s.next_review_at, created=s.created,
        days_since_init=_days_since(s.created, today),
        days_since_last_session=_days_since(s.last_session, today),
        days_since_last_review=_days_since(s.last_review, today),
        sessions_since_last_review=since_review,
        review_due=rules.review_due(s, today, params),
        dormant_days=rules.dormancy(s, today, params))


def tension_views(snapshot: Snapshot, today: date) -> Tensions:
    titles = {b.id: b.title for b in snapshot.beliefs}
    by_status = {s: 0 for s in TENSION_STATUSES}
    unresolved, watching = [], []
    for t in snapshot.tensions:
        by_status[t.status] = by_status.get(t.status, 0) + 1
        if t.status == "resolved":
            continue
        v = TensionView(id=t.id, title=t.title or t.id, status=t.status, belief=t.belief,
                        belief_title=titles.get(t.belief, ""), date=t.date,
                        days_open=max(0, (today - t.date).days),
                        what_happened=tx.one_line(t.what_happened, 400),
                        suggests=tx.one_line(t.suggests, 400))
        (unresolved if t.status == "unresolved" else watching).append(v)
    order = lambda v: (v.date, v.id)  # noqa: E731 - oldest first: they have waited longest
    return Tensions(by_status, tuple(sorted(unresolved, key=order)),
                    tuple(sorted(watching, key=order)))


# --- audit ----------------------------------------------------------------------

def dormancy_flags(beliefs: list[Belief], views: dict[str, BeliefView], today: date,
                   params: Params = DEFAULTS) -> Dormancy:
    sit_days = getattr(params, "situational_dormant_days", SITUATIONAL_DORMANT_DAYS)
    decayed, never, unknown, situational = [], [], [], []
    for b in beliefs:
        v = views[b.id]
        days = rules.days_since_confirmed(b, today)

        def flag(d: int = days) -> Flagged:
            return Flagged(b.id, b.title, b.permanence, v.stored, v.effective, d)

        drop = round(v.stored - v.effective, 3)
        if drop > params.dormancy_drop + 1e-9:
            decayed.append(flag())
        if b.confirmed is None:
            never.append(flag())
        if b.permanence == "unknown":
            age = max(0, (today - b.first).days)
            if age >= params.unknown_days:
                unknown.append(flag(age))
        if b.permanence == "situational" and days >= sit_days:
            situational.append(flag())
    return Dormancy(
        decayed=tuple(sorted(decayed, key=lambda f: (-(f.stored - f.effective), f.id))),
        never_confirmed=tuple(sorted(never, key=lambda f: (-f.days, f.id))),
        unknown_too_long=tuple(sorted(unknown, key=lambda f: (-f.days, f.id))),
        situational_unconfirmed=tuple(sorted(situational, key=lambda f: (-f.days, f.id))))


def _lowered_since(b: Belief, since: date) -> bool:
    """Whether any evidence on or after `since` records a drop in confidence."""
    for e in b.evidence:
        if e.date is not None and e.date < since:
            continue
        if e.kind in ("rejected",) or any(after < before for before, after in tx.changes(e.note)):
            return True
    return False


def drift(beliefs: list[Belief], views: dict[str, BeliefView], today: date,
          params: Params = DEFAULTS) -> Drift:
    challenged, stale = [], []
    for b in beliefs:
        v = views[b.id]
        if b.challenged is not None:
            # "Never lowered": no drop recorded since challenges began. The
            # first recorded challenge anchors it; without dated evidence the
            # `challenged` date does.
            dates = [e.date for e in b.evidence
                     if e.kind in ("contradicting", "diverging", "complicating") and e.date]
            since = min(dates) if dates else b.challenged
            if not _lowered_since(b, since):
                challenged.append(ChallengedItem(
                    b.id, b.title, v.stored, b.challenged, _challenges(b),
                    confirmed_since=bool(b.confirmed and b.confirmed > b.challenged)))
        limit = params.stale_days.get(b.permanence)
        if limit is not None and not b.pinned:
            days = rules.days_since_confirmed(b, today)
            if days >= limit:
                stale.append(StaleItem(b.id, b.title, b.permanence, v.stored, v.effective,
                                       days, limit))
    return Drift(
        tuple(sorted(challenged, key=lambda c: (-c.stored, c.id))),
        tuple(sorted(stale, key=lambda s: (-(s.days - s.limit), s.id))))


def _linked_observations(snapshot: Snapshot) -> set[str]:
    out = set()
    for b in snapshot.beliefs:
        for e in b.evidence:
            if "#" in e.link:
                out.add(e.link.rsplit("#", 1)[1].strip())
    return out


def unconnected_observations(snapshot: Snapshot) -> tuple[ObservationView, ...]:
    linked = _linked_observations(snapshot)
    ids = {b.id for b in snapshot.beliefs}
    out = []
    for o in snapshot.observations:
        if o.id in linked or (o.connects != "new" and o.connects in ids):
            continue
        reason = "new" if o.connects == "new" else f"missing belief '{o.connects}'"
        out.append(ObservationView(o.id, o.date, tx.one_line(o.evidence, 200),
                                   tx.one_line(o.suggests, 200), o.strength, o.connects, reason))
    return tuple(sorted(out, key=lambda o: (o.date, o.id)))


def belief_candidates(unconnected: tuple[ObservationView, ...], min_size: int = CANDIDATE_MIN,
                      ) -> tuple[Candidate, ...]:
    """Groups of `new` observations that describe the same pattern.

    Two observations are alike when they share at least two content words and
    their word sets overlap by a quarter (Jaccard). Grouping is leader-based:
    in date order, each observation joins the group whose first observation it
    is most alike, or starts a new one. Unlike chaining (A~B, B~C), a group
    cannot drift from its first observation into an unrelated pattern."""
    items = sorted((o for o in unconnected if o.reason == "new"), key=lambda o: (o.date, o.id))
    pairs = [tx.words(f"{o.suggests} {o.evidence}") for o in items]
    toks = [frozenset(s for s, _ in ws) for ws in pairs]
    leaders: list[int] = []                 # item index of each group's first observation
    members: list[list[int]] = []
    index: dict[str, list[int]] = defaultdict(list)   # word -> groups whose leader has it
    for i, t in enumerate(toks):
        best, best_j = -1, 0.0
        near: set[int] = set()
        for w in t:
            near.update(index.get(w, ()))
        for g in sorted(near):
            lt = toks[leaders[g]]
            inter = len(t & lt)
            if inter < 2:
                continue
            j = inter / (len(t) + len(lt) - inter)
            if j >= 0.25 and j > best_j + 1e-12:
                best, best_j = g, j
        if best >= 0:
            members[best].append(i)
            continue
        leaders.append(i)
        members.append([i])
        for w in t:
            index[w].append(len(leaders) - 1)
    out = []
    for group in members:
        if len(group) < min_size:
            continue
        seen: dict[str, Counter] = {}
        for i in group:
            for st, w in pairs[i]:
                seen.setdefault(st, Counter())[w] += 1
        labels = {st: sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
                  for st, c in seen.items()}
        counts = Counter(w for i in group for w in toks[i])
        shared = [w for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if c >= 2]
        out.append(Candidate(
            observations=tuple(items[i].id for i in group),
            words=tuple(labels.get(w, w) for w in shared[:4]),
            example=items[group[-1]].suggests or items[group[-1]].evidence))
    return tuple(sorted(out, key=lambda c: (-len(c.observations), c.observations[0])))


def audit(snapshot: Snapshot, params: Params = DEFAULTS, today: date | None = None) -> Audit:
    today = today or snapshot.today or date.today()
    beliefs = active(snapshot)
    views = _views(snapshot, today, params)
    by_id = {v.id: v for v in views}

    by_perm = {p: 0 for p in PERMANENCES}
    by_tier = {name: 0 for name, _ in params.tiers}
    by_kind: dict[str, int] = {}
    for v in views:
        by_perm[v.permanence] = by_perm.get(v.permanence, 0) + 1
        by_tier[v.tier] = by_tier.get(v.tier, 0) + 1
        by_kind[v.kind] = by_kind.get(v.kind, 0) + 1
    by_kind = dict(sorted(by_kind.items(), key=lambda kv: (-kv[1], kv[0])))

    status = Counter(b.status for b in snapshot.beliefs)
    totals = Totals(beliefs=len(beliefs), retired=status.get("retired", 0),
                    superseded=status.get("superseded", 0),
                    observations=len(snapshot.observations), tensions=len(snapshot.tensions),
                    skipped_files=len({p.path for p in snapshot.problems}))
    top, bottom = top_and_bottom(views, TOP_N)
    bmap = {b.id: b for b in beliefs}
    top, bottom = _detailed(top, bmap), _detailed(bottom, bmap)
    tensions = tension_views(snapshot, today)
    sessions = snapshot.sessions
    coherence = Coherence(
        too_neat=sessions.count >= params.coherence_sessions and not tensions.open,
        sessions=sessions.count, open_tensions=len(tensions.open),
        threshold=params.coherence_sessions)

    perm = []
    for b in beliefs:
        s = rules.permanence_suggestion(b, sessions, today, params)
        if s is not None:
            perm.append(PermanenceItem(b.id, b.title, s.current, s.suggested, s.reason))
    perm.sort(key=lambda p: (p.suggested == "", p.id))

    proposals = []
    for b in beliefs:
        v = by_id[b.id]
        if rules.should_soften(b, sessions, params):
            n = rules.sessions_since_confirmed(b, sessions)
            proposals.append(Proposal(b.id, b.title, "soften", v.stored, v.effective,
                                      f"above {params.soften_above:.2f}, not confirmed in {n} sessions"))
        if rules.should_raise(b, params):
            proposals.append(Proposal(b.id, b.title, "raise", v.stored, v.effective,
                                      f"below {params.raise_below:.2f}, confirmed "
                                      f"{rules.confirmations(b)} times"))
    proposals.sort(key=lambda p: (p.action, -p.stored, p.id))

    unconnected = unconnected_observations(snapshot)
    return Audit(
        today=today, totals=totals, by_permanence=by_perm, by_tier=by_tier, by_kind=by_kind,
        sessions=session_figures(snapshot, today, params), top=top, bottom=bottom,
        dormancy=dormancy_flags(beliefs, by_id, today, params), tensions=tensions,
        drift=drift(beliefs, by_id, today, params), coherence=coherence,
        permanence=tuple(perm), proposals=tuple(proposals), unconnected=unconnected,
        candidates=belief_candidates(unconnected),
        problems=tuple(str(p) for p in snapshot.problems))


# --- gut-check ---------------------------------------------------------------------

def _quote(v: BeliefView) -> str:
    return f"“{v.title}”"


def gut_check(snapshot: Snapshot, params: Params = DEFAULTS, today: date | None = None) -> GutCheck:
    """The 3 strongest and 3 weakest interpretive beliefs (effective confidence).

    With fewer than six interpretive beliefs the pool widens to the other
    non-fact beliefs (behavioral, self-report), so a young vault still gets a
    full gut-check; `pool` says when that happened."""
    today = today or snapshot.today or date.today()
    views = _views(snapshot, today, params)
    interp = [v for v in views if v.basis == "interpretive"]
    pool, name = interp, "interpretive"
    if len(interp) < 2 * GUT_N:
        pool = [v for v in views if v.basis != "fact"]
        if len(pool) > len(interp):
            name = "interpretive+"
    high, low = top_and_bottom(pool, GUT_N)
    bmap = {b.id: b for b in active(snapshot)}
    high, low = _detailed(high, bmap), _detailed(low, bmap)
    return GutCheck(
        today=today,
        high=tuple(GutItem(v, "Still true?", say(v.title, v.certainty)) for v in high),
        low=tuple(GutItem(v, "Still uncertain?", say(v.title, v.certainty)) for v in low),
        pool=name, interpretive=len(interp),
        problems=tuple(str(p) for p in snapshot.problems))


# --- blind spots, shared by interview and portrait ---------------------------------

def blind_spots(views: list[BeliefView], params: Params = DEFAULTS) -> tuple[BlindSpot, ...]:
    """Kinds with no active belief, or only speculative ones."""
    lowest = params.tiers[-1][0]
    by_kind: dict[str, list[BeliefView]] = defaultdict(list)
    for v in views:
        by_kind[v.kind].append(v)
    order = [k for k in BLIND_PRIORITY if k in params.kinds] + \
            [k for k in params.kinds if k not in BLIND_PRIORITY]
    out = []
    for k in order:
        vs = by_kind.get(k, [])
        if not vs:
            out.append(BlindSpot(k, AREAS.get(k, f"your {k}"), "none", 0))
        elif all(v.tier == lowest for v in vs):
            out.append(BlindSpot(k, AREAS.get(k, f"your {k}"), "guesses only", len(vs)))
    return tuple(out)


def _blind_question(kind: str) -> str:
    return BLIND_QUESTIONS.get(kind, f"I know almost nothing about your {kind}s. What should I know?")


def _stale_views(beliefs: list[Belief], views: dict[str, BeliefView], today: date,
                 params: Params) -> list[BeliefView]:
    d = drift(beliefs, views, today, params)
    stale = {s.id for s in d.stale}
    decayed = {f.id for f in dormancy_flags(beliefs, views, today, params).decayed}
    chosen = [views[i] for i in stale | decayed]
    return sorted(chosen, key=lambda v: (-(v.stored - v.effective), -v.stored, v.id))


# --- interview -----------------------------------------------------------------------

_PROBES = (
    "The profile says {q}. Does that still land? Tell me where it doesn't.",
    "I lean on {q} more than on most of what I believe about you. When is it not true?",
    "Of what I believe about you, {q} is among the firmest. What would make you disagree?",
)


def interview(snapshot: Snapshot, params: Params = DEFAULTS, today: date | None = None) -> Interview:
    """A plan of 8–12 open questions, each tied to what prompted it, in the
    order warm-up → blind spots → stale → probes → tensions → anything else."""
    today = today or snapshot.today or date.today()
    beliefs = active(snapshot)
    vs = _views(snapshot, today, params)
    by_id = {v.id: v for v in vs}
    used: set[str] = set()

    blind = list(blind_spots(vs, params))
    blind_q = [Question(0, "blind-spot", _blind_question(b.kind),
                        f"no beliefs about {b.area}" if b.reason == "none"
                        else f"only guesses about {b.area}", kind=b.kind)
               for b in blind]

    stale_q = []
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

    probe_q = []
    for v in _strongest([v for v in vs if v.basis != "fact" and v.id not in used]):
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
    return Interview(today, numbered, tuple(str(p) for p in snapshot.problems))


# --- portrait ---------------------------------------------------------------------------

def _kind_group(kind: str) -> tuple[str, str]:
    for key, label, kinds in KIND_GROUPS:
        if kind in kinds:
            return key, label
    return "other", "Other things I've noticed"


def _humanize(tag: str) -> str:
    s = " ".join(tag.replace("_", " ").replace("-", " ").replace("/", " / ").split())
    return s[:1].upper() + s[1:]


def themes(views: list[BeliefView], params: Params = DEFAULTS) -> tuple[Theme, ...]:
    """4–6 themes by greedy cover: tags first, then shared words, then kinds.

    Each round picks the candidate whose not-yet-covered beliefs weigh most
    (effective confidence, scaled by how telling the source is: a tag beats a
    word shared by three or more titles, and both beat a bare kind group,
    which must cover over three times as much to win, since "How you work"
    says less than "Testing"). A theme needs two new beliefs, except kind
    themes when the vault is small."""
    if not views:
        return ()
    words = certainty_words(params)
    cands: dict[str, tuple[str, str, float, list[str]]] = {}

    tag_members: dict[str, list[str]] = defaultdict(list)
    for v in views:
        for t in dict.fromkeys(t.strip().lower() for t in v.tags if t.strip()):
            tag_members[t].append(v.id)
    for t, ids in tag_members.items():
        if len(ids) >= 2:
            cands[f"tag:{t}"] = (_humanize(t), "tag", 1.0, ids)

    # Shared words come from titles only: a word repeated across titles names
    # a theme; one repeated across long statements is usually filler.
    toks = {v.id: tx.tokens(v.title) for v in views}
    df: dict[str, list[str]] = defaultdict(list)
    for v in views:
        for w in toks[v.id]:
            df[w].append(v.id)
    labels = tx.surfaces([v.title for v in views])
    tag_stems = {tx.stem(t) for t in tag_members}
    limit = max(3, len(views) // 2)
    for w, ids in df.items():
        if 3 <= len(ids) <= limit and w not in tag_stems:
            cands[f"word:{w}"] = (_humanize(labels.get(w, w)), "words", 0.8, ids)

    groups: dict[str, list[str]] = defaultdict(list)
    glabel: dict[str, str] = {}
    for v in views:
        key, label = _kind_group(v.kind)
        groups[key].append(v.id)
        glabel[key] = label
    for key, ids in groups.items():
        cands[f"kind:{key}"] = (glabel[key], "kind", 0.3, ids)

    weight = {v.id: max(v.effective, 0.01) for v in views}
    by_id = {v.id: v for v in views}
    covered: set[str] = set()
    chosen: list[tuple[str, str, str, list[str]]] = []
    small = len(views) < 12
    while len(chosen) < THEMES_MAX:
        best, best_score, best_new = None, 0.0, []
        for key in sorted(cands):
            label, source, bonus, ids = cands[key]
            new = [i for i in ids if i not in covered]
            need = 1 if (source == "kind" and small) else 2
            if len(new) < need:
                continue
            score = bonus * sum(weight[i] for i in new)
            if score > best_score + 1e-12:
                best, best_score, best_new = key, score, new
        if best is None:
            break
        chosen.append((best, cands[best][0], cands[best][1], best_new))
        covered.update(best_new)
        del cands[best]

    out = []
    for key, label, source, ids in chosen:
        members = _strongest([by_id[i] for i in ids])
        top3 = members[:3]
        mean = sum(v.effective for v in top3) / len(top3)
        out.append(Theme(key=key, label=label, source=source,
                         certainty=words.get(rules.tier(round(mean, 3), params), ""),
                         size=len(members), beliefs=tuple(members[:5]),
                         members=tuple(v.id for v in members)))
    return tuple(out)


def _person(views: list[BeliefView]) -> tuple[BeliefView, ...]:
    """Up to three beliefs for the opening paragraph: the strongest about who
    the person is and what drives them (one per kind), topped up to two from
    the strongest of any kind, so the paragraph is a sketch, not a list."""
    strongest = _strongest(views)
    picked: list[BeliefView] = []
    for v in strongest:
        if len(picked) == 3:
            break
        if v.kind in CORE_KINDS and v.kind not in {p.kind for p in picked}:
            picked.append(v)
    for v in strongest:
        if len(picked) >= 2:
            break
        if v not in picked:
            picked.append(v)
    return tuple(picked)


def hungriest(views: list[BeliefView], spots: tuple[BlindSpot, ...],
              open_tensions: tuple[TensionView, ...], params: Params = DEFAULTS) -> Hunger:
    """The one question whose answer would teach the model most."""
    by_id = {v.id: v for v in views}
    strong_tiers = {n for n, _ in params.tiers[:2]}
    for t in sorted(open_tensions, key=lambda t: (-(by_id[t.belief].effective
                                                     if t.belief in by_id else 0), t.id)):
        if t.belief in by_id and by_id[t.belief].tier in strong_tiers:
            return Hunger(f"I hold “{by_id[t.belief].title}” firmly, yet: "
                          f"{sentence(t.title)} Which one is really you?",
                          "a strong belief is contradicted by what happened",
                          belief=t.belief, tension=t.id)
    if views:
        for s in spots:
            if s.kind in CORE_KINDS and s.reason == "none":
                return Hunger(_blind_question(s.kind), f"I see nothing of {s.area}", kind=s.kind)
    if open_tensions:
        t = open_tensions[0]
        return Hunger(f"{sentence(t.title)} How do you see it?", "an open contradiction",
                      belief=t.belief, tension=t.id)
    unsure = [v for v in views if v.tier in {n for n, _ in params.tiers[-2:]}]
    if unsure:
        v = sorted(unsure, key=lambda v: (-(v.confirmations + v.challenges), -v.effective, v.id))[0]
        return Hunger(f"I keep half-seeing this: “{v.title}”. Is it you?",
                      "a belief I hold only as a hint or a guess", belief=v.id)
    if spots and views:
        s = spots[0]
        return Hunger(_blind_question(s.kind), f"I see nothing of {s.area}", kind=s.kind)
    if not views:
        return Hunger("What would you most want an assistant to understand about you?",
                      "nothing is known yet")
    return Hunger("What is true about you that nothing here would lead me to guess?",
                  "the profile has no obvious gap, which is itself suspicious")


def portrait_brief(snapshot: Snapshot, params: Params = DEFAULTS,
                   today: date | None = None) -> PortraitBrief:
    today = today or snapshot.today or date.today()
    vs = _views(snapshot, today, params)
    spots = blind_spots(vs, params)
    tv = tension_views(snapshot, today)
    bmap = {b.id: b for b in active(snapshot)}
    return PortraitBrief(
        today=today, empty=not vs, person=_detailed(_person(vs), bmap),
        themes=tuple(replace(t, beliefs=_detailed(t.beliefs, bmap)) for t in themes(vs, params)),
        blind_spots=spots, contradictions=tv.open, hungriest=hungriest(vs, spots, tv.open, params),
        beliefs=len(vs), observations=len(snapshot.observations),
        certainty_words=certainty_words(params),
        problems=tuple(str(p) for p in snapshot.problems))


# --- JSON ---------------------------------------------------------------------------

_SHAPES: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _shape(cls: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if cls not in _SHAPES:
        extras = tuple(n for n in ("empty", "total")
                       if isinstance(getattr(cls, n, None), property))
        _SHAPES[cls] = (tuple(f.name for f in fields(cls)), extras)
    return _SHAPES[cls]


_PLAIN = frozenset((str, int, bool, type(None)))


def as_data(obj: Any) -> Any:
    """Plain JSON-able data: dates as ISO strings, floats to three decimals,
    and the properties that carry figures (`empty`, `total`) included.
    (Exact type tests, not isinstance: a 10,000-belief audit has 100,000 values.)"""
    t = type(obj)
    if t in _PLAIN:
        return obj
    if t is float:
        return round(obj, 3) if math.isfinite(obj) else None
    if t is tuple or t is list:
        return [v if type(v) in _PLAIN else as_data(v) for v in obj]
    if t is date:
        return obj.isoformat()
    if t is dict:
        return {str(k): as_data(v) for k, v in obj.items()}
    if is_dataclass(obj) and not isinstance(obj, type):
        names, extras = _shape(t)
        out = {}
        for n in names:
            v = getattr(obj, n)
            out[n] = v if type(v) in _PLAIN else as_data(v)
        for n in extras:
            out[n] = as_data(getattr(obj, n))
        return out
    if isinstance(obj, float):
        return round(obj, 3) if math.isfinite(obj) else None
    if isinstance(obj, date):
        return obj.isoformat()
    return obj
