"""The audit: the dashboard a periodic review starts from (SPEC §2.10, §5)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from datetime import date

from ..core import calibration as cal
from ..core import rules
from ..core.calibration import Calibration
from ..core.model import PERMANENCES, Belief, Problem, Snapshot
from ..core.params import DEFAULTS, Params
from . import text as tx
from .views import BeliefView, Tensions, active, active_views, challenge_count, detailed, tension_views, top_and_bottom

TOP_N = 5
# SPEC §5 dormancy flag "situational unconfirmed 6+ weeks". Not (yet) an
# epistemology.md parameter; a vault may still set it and we will honour it.
SITUATIONAL_DORMANT_DAYS = 42
CANDIDATE_MIN = 3          # "the same pattern three or more times"


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
    review_due: bool         # rule 10
    review_reason: str | None  # why it is due, when it is
    dormant: bool            # rule 8
    dormant_days: int | None  # the gap when returning from dormancy


@dataclass(frozen=True)
class Flagged:
    id: str
    title: str
    permanence: str
    confidence: float
    effective_confidence: float
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
class UsedItem:
    id: str
    title: str
    confidence: float
    effective_confidence: float
    cited: int               # sessions that cited it (an observation without a session is one)
    last_cited: date


@dataclass(frozen=True)
class ChallengedItem:
    id: str
    title: str
    confidence: float
    challenged: date
    challenges: int          # contradicting/diverging evidence lines
    confirmed_since: bool    # confirmed after the last challenge


@dataclass(frozen=True)
class StaleItem:
    id: str
    title: str
    permanence: str
    confidence: float
    effective_confidence: float
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
    confidence: float
    effective_confidence: float
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
    problems: tuple[Problem, ...]  # JSON: [{path, line, message}], as every command
    # What a merge of two machines kept in both versions for the user to settle (SPEC §11):
    # found in the files' text by api/validate.merge_leftovers, passed in by the caller.
    merge_leftovers: tuple[Problem, ...] = ()
    # Beliefs the assistant cited ([id]) in sessions but that behaviour never confirmed:
    # relied on, never checked.
    used_unconfirmed: tuple[UsedItem, ...] = ()
    # SPEC §14: the user's verdicts against the confidences they were asked at, per band.
    calibration: Calibration | None = None

    @property
    def empty(self) -> bool:
        return self.totals.beliefs == 0 and self.totals.observations == 0


def _days_since(d: date | None, today: date) -> int | None:
    return None if d is None else (today - d).days


def session_figures(snapshot: Snapshot, today: date, params: Params = DEFAULTS) -> SessionFigures:
    s = snapshot.sessions
    since_review = (rules.sessions_since(s, s.last_review) if s.last_review else s.count)
    reason = rules.review_due(s, today, params)
    gap = rules.dormancy(s, today, params)
    return SessionFigures(
        count=s.count, last_session=s.last_session, last_review=s.last_review,
        next_review_at=s.next_review_at, created=s.created,
        days_since_init=_days_since(s.created, today),
        days_since_last_session=_days_since(s.last_session, today),
        days_since_last_review=_days_since(s.last_review, today),
        sessions_since_last_review=since_review,
        review_due=reason is not None, review_reason=reason,
        dormant=gap is not None, dormant_days=gap)


def dormancy_flags(beliefs: list[Belief], views: dict[str, BeliefView], today: date,
                   params: Params = DEFAULTS) -> Dormancy:
    sit_days = getattr(params, "situational_dormant_days", SITUATIONAL_DORMANT_DAYS)
    decayed, never, unknown, situational = [], [], [], []
    for b in beliefs:
        v = views[b.id]
        days = rules.days_since_confirmed(b, today)
        flagged = Flagged(b.id, b.title, b.permanence, v.confidence, v.effective_confidence, days)
        drop = round(v.confidence - v.effective_confidence, 3)
        if drop > params.dormancy_drop + 1e-9:
            decayed.append(flagged)
        if b.confirmed is None and b.basis != "fact" and not b.pinned:
            # A verified fact or a pinned belief is not waiting for behaviour to confirm it.
            never.append(flagged)
        if b.permanence == "unknown":
            age = max(0, (today - b.first).days)
            if age >= params.unknown_days:
                unknown.append(replace(flagged, days=age))
        if b.permanence == "situational" and days >= sit_days:
            situational.append(flagged)
    return Dormancy(
        decayed=tuple(sorted(decayed, key=lambda f: (-(f.confidence - f.effective_confidence), f.id))),
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
                    b.id, b.title, v.confidence, b.challenged, challenge_count(b),
                    confirmed_since=bool(b.confirmed and b.confirmed > b.challenged)))
        limit = params.stale_days.get(b.permanence)
        if limit is not None and not b.pinned:
            days = rules.days_since_confirmed(b, today)
            if days >= limit:
                stale.append(StaleItem(b.id, b.title, b.permanence, v.confidence, v.effective_confidence,
                                       days, limit))
    return Drift(
        tuple(sorted(challenged, key=lambda c: (-c.confidence, c.id))),
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


def used_unconfirmed(snapshot: Snapshot, beliefs: list[Belief], views: dict[str, BeliefView]) -> tuple[UsedItem, ...]:
    """Active beliefs cited in some session (an observation's `cited`) and never confirmed —
    a verified fact or a pinned belief is not waiting for behaviour to confirm it. Counted by
    session: each observation of a session carries what the session cited."""
    cited: dict[str, dict[str, date]] = {}
    for o in snapshot.observations:
        for c in o.cited:
            by_session = cited.setdefault(c, {})
            key = o.session or o.id
            by_session[key] = max(o.date, by_session.get(key, o.date))
    out = [UsedItem(b.id, b.title, views[b.id].confidence, views[b.id].effective_confidence,
                    len(cited[b.id]), max(cited[b.id].values()))
           for b in beliefs
           if b.id in cited and b.confirmed is None and b.basis != "fact" and not b.pinned]
    return tuple(sorted(out, key=lambda u: (-u.cited, u.id)))


def count_totals(snapshot: Snapshot) -> Totals:
    status = Counter(b.status for b in snapshot.beliefs)
    return Totals(beliefs=status.get("active", 0), retired=status.get("retired", 0),
                  superseded=status.get("superseded", 0),
                  observations=len(snapshot.observations), tensions=len(snapshot.tensions),
                  skipped_files=len({p.path for p in snapshot.problems}))


def audit(snapshot: Snapshot, params: Params = DEFAULTS, today: date | None = None,
          merge_leftovers: tuple[Problem, ...] = (), calibrated: dict[str, date] | None = None) -> Audit:
    """The dashboard. `calibrated`: when accepted proposals last changed each parameter
    (`api.epistemology.calibrated_since`), so the calibration judges it on later verdicts."""
    today = today or snapshot.today or date.today()
    beliefs = active(snapshot)
    views = active_views(snapshot, today, params)
    by_id = {v.id: v for v in views}

    by_perm = {p: 0 for p in PERMANENCES}
    by_tier = {name: 0 for name, _ in params.tiers}
    by_kind: dict[str, int] = {}
    for v in views:
        by_perm[v.permanence] = by_perm.get(v.permanence, 0) + 1
        by_tier[v.tier] = by_tier.get(v.tier, 0) + 1
        by_kind[v.kind] = by_kind.get(v.kind, 0) + 1
    by_kind = dict(sorted(by_kind.items(), key=lambda kv: (-kv[1], kv[0])))

    totals = count_totals(snapshot)
    top, bottom = top_and_bottom(views, TOP_N)
    bmap = {b.id: b for b in beliefs}
    top, bottom = detailed(top, bmap), detailed(bottom, bmap)
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
            proposals.append(Proposal(b.id, b.title, "soften", v.confidence, v.effective_confidence,
                                      f"above {params.soften_above:.2f}, not confirmed in {n} sessions"))
        if rules.should_raise(b, params):
            proposals.append(Proposal(b.id, b.title, "raise", v.confidence, v.effective_confidence,
                                      f"below {params.raise_below:.2f}, confirmed "
                                      f"{rules.confirmations(b)} times"))
    proposals.sort(key=lambda p: (p.action, -p.confidence, p.id))

    unconnected = unconnected_observations(snapshot)
    return Audit(
        today=today, totals=totals, by_permanence=by_perm, by_tier=by_tier, by_kind=by_kind,
        sessions=session_figures(snapshot, today, params), top=top, bottom=bottom,
        dormancy=dormancy_flags(beliefs, by_id, today, params), tensions=tensions,
        drift=drift(beliefs, by_id, today, params), coherence=coherence,
        permanence=tuple(perm), proposals=tuple(proposals), unconnected=unconnected,
        candidates=belief_candidates(unconnected),
        problems=snapshot.problems, merge_leftovers=tuple(merge_leftovers),
        calibration=cal.calibrate(cal.verdicts(snapshot.beliefs), params, calibrated),
        used_unconfirmed=used_unconfirmed(snapshot, beliefs, by_id))
