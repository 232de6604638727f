"""The epistemic engine (SPEC §2) as pure functions over frozen values.

Nothing here reads a file or a clock: the caller passes today's date and the
parameters read from `epistemology.md`. Every function is deterministic, so a
rule can be tested with plain values and replayed on an old vault.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, replace
from datetime import date
from functools import lru_cache
from itertools import accumulate

from . import kernel
from .errors import InputError
from .model import Belief, Evidence, Observation, Sessions
from .params import DEFAULTS, Params

# What a belief's scope belongs to (`belief list --scope`, `recall --scope`, the hook): one rule.
scope_matches = kernel.scope_matches


class RuleError(InputError):
    """An input the rules refuse, with a message meant for the user."""


def _round(x: float) -> float:
    return round(x + 1e-9, 2)


# --- rules 1 and 2: start values and caps ---------------------------------

def start_confidence(basis: str, params: Params = DEFAULTS) -> float:
    """Rule 1: where a belief made from one observation (or report) starts."""
    try:
        return params.start[basis]
    except KeyError:
        raise RuleError(f"unknown basis '{basis}'") from None


def cap(basis: str, params: Params = DEFAULTS) -> float:
    """Rule 2: only `fact` may exceed 0.90."""
    return params.caps.get(basis, 0.90)


def check_confidence(confidence: float, basis: str, params: Params = DEFAULTS) -> None:
    if not 0.0 <= confidence <= 1.0:
        raise RuleError(f"confidence {confidence} is outside 0.00–1.00")
    limit = cap(basis, params)
    if confidence > limit + 1e-9:
        raise RuleError(
            f"confidence {confidence:.2f} is above the cap for basis '{basis}' ({limit:.2f}); "
            "only a verified fact may exceed 0.90 (rule 2)")


# --- rule 14: facts come from the user ---------------------------------------

OBSERVATION_BASES = ("behavioral", "self-report", "interpretive")


def check_observation_basis(basis: str) -> None:
    """Rule 14: an observation never claims `fact`. A fact starts at 0.95 (rule 1)
    and is exempt from softening: only the user may make one (adding or editing a
    belief, a gut-check answer, an import), never an assistant from what it saw."""
    if basis == "fact":
        raise RuleError("an observation cannot claim basis 'fact': only the user records a fact "
                        "(by adding or editing the belief), an assistant cannot mint a 0.95 belief "
                        "from what it saw (rule 14); use behavioral, self-report or interpretive")


# The mirror skill's own form for an interview answer (`--evidence 'Said: …'`), and the ways of
# writing it a model reaches for: what the user said, quoted as theirs.
_SAID = ("said:", "the user said", "user said", "they said", "the user told", "told me")


def words_as_behaviour(basis: str, source: str, evidence: str) -> str | None:
    """Rules 3 and 6: what the user *said* is self-report, never behaviour. An interview's answer
    (its source says so) or an evidence line that opens with what the user said, sent with basis
    `behavioral` (the command's default: a careless model drops `--basis self-report`), would
    confirm a belief from words: +0.05 and decay's clock reset. Why it is refused, or None."""
    from .calibration import INTERVIEW_SOURCES

    if basis != "behavioral":
        return None
    if source in INTERVIEW_SOURCES:
        return (f"an answer of the interview (source '{source}') is what the user said: record it with basis "
                "self-report, which reinforces and moves no number (rules 3 and 6)")
    if evidence.lower().lstrip("\"'“ ").startswith(_SAID):
        return ("the evidence is what the user said, and words are not behaviour: record it with basis self-report "
                "(rules 3 and 6), or say what they did")
    return None


def check_held(belief: Belief) -> None:
    """An observation bears on a belief the vault still holds. A retired or superseded belief is
    the user's decision (rule 5, SPEC §14): evidence that seems to fit it again does not move its
    number or open a tension on it — that would raise (or revive) what the user put down. Such
    evidence goes to the belief that holds instead, or proposes a new one; the user alone brings
    one back (`belief edit --status active`)."""
    if belief.status == "active":
        return
    from .dependencies import successor_of

    successor = successor_of(belief)
    instead = f"connect it to {successor}, which replaced it, or" if successor else ""
    raise RuleError(f"{belief.id} is {belief.status}: the user decided it no longer holds, so an observation does "
                    f"not bear on it; {instead} propose a new belief (`connects: new`) if it fits again — only the "
                    "user brings a belief back", field="connects", path=belief.path)


# --- rule 7: decay as a view ------------------------------------------------

def days_since_confirmed(belief: Belief, today: date) -> int:
    return max(0, (today - kernel.anchor(belief.first, belief.confirmed)).days)


def effective_confidence(belief: Belief, today: date, params: Params = DEFAULTS) -> float:
    """stored × e^(−λ·d), floored at 0.20; never above stored, never written back (kernel.effective)."""
    return kernel.effective_at(belief.confidence, belief.permanence, kernel.anchor(belief.first, belief.confirmed),
                               belief.pinned, today, params.decay, params.decay_floor)


def tier(confidence: float, basis: str, params: Params = DEFAULTS) -> str:
    return kernel.tier(confidence, params.tiers, basis)


# --- rules 3–6: what one observation does to one belief --------------------

@dataclass(frozen=True)
class Effect:
    """The result of applying one observation to one belief."""

    before: Belief
    after: Belief
    evidence: Evidence
    open_tension: bool = False
    divergence: bool = False  # rule 6: self-report and behaviour disagree
    alert: bool = False       # a belief at >= 0.70 was contradicted: tell the user
    reason: str = ""          # one line, for the report and the commit


def pseudo_session(obs: Observation) -> str:
    """A session id for an observation that came without one: one per day,
    so manual entries cannot confirm a belief twice on the same day."""
    return obs.session or f"day-{obs.date.isoformat()}"


def session_start_bound(today: date) -> date:
    """Rule 9's reach: a session spans a few days, so its observations are dated this month or
    last month (the logs rule 9 counts them in); the first day it may be dated."""
    return date(today.year - (today.month == 1), 12 if today.month == 1 else today.month - 1, 1)


def session_date_problem(session: str, d: date, today: date) -> str | None:
    """Why an observation of `session` may not be dated `d`, or None. An entry dated months back
    goes to that month's log: a session dating each of its observations in another month had all
    of them past rule 9's count, which reads the logs a session can be in."""
    first = session_start_bound(today)
    if not session or d >= first:
        return None
    return (f"'date' {d.isoformat()} is before {first.isoformat()}: a session spans a few days, and rule 9 "
            "counts a session's observations in this month's log and the last; record an older observation "
            "without a session")


# --- rule 19: sessions are counted, not named -------------------------------------

def uncounted_source(session: str) -> str:
    """Where an observation of a session the vault never counted came from: an MCP
    connection (its ids are `mcp-…`) or anything else (a name given on the command line)."""
    return "mcp" if session.startswith("mcp-") else "named"


def counts_for(obs: Observation, counted, today: date) -> str | None:
    """Rule 19: whose step an observation's move of a number would be.

    A session the vault counted (the hook's session id, `counted`) is itself: it moves a
    belief once (rule 3). Any other name — made up, or an MCP connection, which a client
    can open as often as it likes — is its source's step of the day it is written: all of
    them together move one belief one step a day per source. One dated another day is
    another day's step, so it moves nothing (else twelve back-dated entries were twelve
    days). None: recorded, no number moves."""
    if obs.date != today and not (obs.session and obs.session in counted):
        return None
    return session_key(obs.session, today, counted)


def bound_session(obs: Observation, counted) -> str:
    """Whose an observation on record is: a session in `counted` is itself; every other name —
    made up, none at all — is its source's day (`uncounted_source`), the day it is dated.

    Rule 19's step a logged observation took (`counts_for` on its own day), with `counted` the
    sessions the vault counted; and rule 9's session, with `counted` those and the connection the
    front end itself vouches for (`observe.apply(own=…)`: an MCP connection, the memory tool's
    conversation, which the model cannot mint). A name is free: bounded per name, one real session
    naming a second session recorded a second three, and one MCP call of fifty items, each naming
    its own, fifty. They share one session's bound a day per source, as they share one step a day."""
    return session_key(obs.session, obs.date, counted)


def session_key(session: str, day: date, counted) -> str:
    """`bound_session` of an observation of `session` dated `day`."""
    if session and session in counted:
        return session
    return f"uncounted:{uncounted_source(session)}:{day.isoformat()}"


def spends(obs: Observation, step: str | None) -> str | None:
    """The step an observation uses up on its belief: a behavioural confirmation its
    session's (or source's day's), a contradiction its uncounted source's day (rule 4 lets
    a counted session challenge as rule 9 allows)."""
    if step is None:
        return None
    if obs.strength == "confirming" and obs.basis == "behavioral":
        return step
    if obs.strength == "contradicting" and step.startswith("uncounted:"):
        return step
    return None


def challenges_since_confirmation(belief: Belief) -> int:
    """Counted challenges after the last counted confirmation (Evidence order)."""
    n = 0
    for ev in belief.evidence:
        if ev.kind == "confirming":
            n = 0
        elif ev.kind in CHALLENGES:
            n += 1
    return n


# Evidence kinds that count as a challenge (rule 4). A divergence (rule 6) is a
# challenge too: rule 15 says no basis is exempt, so a self-report contradicted by
# behaviour again and again goes down as it would go up.
CHALLENGES = frozenset({"contradicting", "diverging"})


def _self_vs_behaviour(belief: Belief, obs: Observation) -> bool:
    pair = {belief.basis, obs.basis}
    return pair == {"self-report", "behavioral"} or (
        obs.basis == "self-report" and belief.basis == "interpretive")


def _later(d: date | None, new: date) -> date:
    """`confirmed` and `challenged` are the *last* such day: an observation dated before the one on
    record (a back-dated entry) leaves it (rule 7 counts decay from it; rule 11 and the audit read it)."""
    return new if d is None or new > d else d


_SESSION = object()  # `step` not given: the observation's own session (or day) is its step


def apply_observation(belief: Belief, obs: Observation, params: Params = DEFAULTS, *,
                      step=_SESSION, spent: frozenset[str] = frozenset()) -> Effect:
    """What one observation does to one belief (rules 3–6, 15, 19).

    `step` is whose move of the number this would be (`counts_for`: a counted session, an
    uncounted source's day, or None when it may move nothing), `spent` the steps that
    already confirmed (or challenged) this belief: each moves it once."""
    link = observation_link(obs)
    key = pseudo_session(obs) if step is _SESSION else step
    conf = belief.confidence
    note = obs.evidence

    def done(kind: str, after: Belief, reason: str, **kw) -> Effect:
        text = note
        if after.confidence != conf:
            text = f"{note} ({conf:.2f} → {after.confidence:.2f})"
        return Effect(belief, after, Evidence(obs.date, kind, link, text), reason=reason, **kw)

    if obs.strength == "confirming":
        session = key
        if obs.basis != "behavioral":
            return done("reinforcing", belief,
                        f"reinforcement ({obs.basis}): recorded, no change (rule 3)")
        if session is None:
            return done("reinforcing", belief, "from a session the vault did not count, dated another day: "
                                               "recorded, no change (rule 19)")
        if session == belief.confirmed_session:
            return done("reinforcing", belief,
                        "same session as the last confirmation: recorded, no change (rule 3)")
        if session in spent:
            why = ("sessions the vault did not count have moved this belief today already: recorded, no change "
                   "(rule 19)" if session.startswith("uncounted:") else
                   "this session has confirmed this belief already: recorded, no change (rule 3)")
            return done("reinforcing", belief, why)
        new = conf if conf >= cap(belief.basis, params) else min(
            cap(belief.basis, params), _round(conf + params.confirm_step))
        after = replace(belief, confidence=new, confirmed=_later(belief.confirmed, obs.date), confirmed_session=session)
        return done("confirming", after, f"confirmed ({conf:.2f} → {new:.2f})")

    if obs.strength == "contradicting":
        alert = conf >= 0.70
        # Rule 15: a divergence (rule 6) opens its tension and is counted like any
        # other challenge (rule 4); it never exempts a basis from being lowered.
        diverging = _self_vs_behaviour(belief, obs)
        prior = challenges_since_confirmation(belief)
        new = conf
        # Rule 19 holds going down too: uncounted names lower a belief one step a day per source.
        held = key is None or (isinstance(key, str) and key.startswith("uncounted:") and key in spent)
        if prior >= params.free_challenges and not held:
            new = max(params.confidence_floor, _round(conf - params.challenge_step))
            new = min(new, conf)  # a hand-set value below the floor is not raised
        after = replace(belief, confidence=new, challenged=_later(belief.challenged, obs.date))
        if diverging:
            why = "self-report and behaviour diverge: both kept, as a tension (rule 6)"
            if new != conf:
                why += f"; challenged again with no confirmation between ({conf:.2f} → {new:.2f}, rule 15)"
            return done("diverging", after, why, open_tension=True, divergence=True, alert=alert)
        why = (f"challenged again with no confirmation between ({conf:.2f} → {new:.2f})"
               if new != conf else "challenged: on record as a tension, confidence unchanged (rule 4)")
        return done("contradicting", after, why, open_tension=True, alert=alert)

    if obs.strength == "complicating":
        after = replace(belief, challenged=_later(belief.challenged, obs.date))
        return done("complicating", after, "nuance recorded, no change (rule 4)")

    if obs.strength == "single":
        return done("single", belief, "another first sighting: recorded, no change")

    raise RuleError(f"unknown strength '{obs.strength}'")


def observation_link(obs: Observation) -> str:
    return f"observations/{obs.date:%Y-%m}#{obs.id}"


def new_belief_from_observation(obs: Observation, belief_id: str, *, title: str, kind: str,
                                basis: str, permanence: str, params: Params = DEFAULTS,
                                tags: tuple[str, ...] = (), scope: str = "global") -> Belief:
    """Rule 1: a belief born of one observation starts at its basis's start value."""
    conf = start_confidence(basis, params)
    return Belief(
        id=belief_id, title=title, kind=kind, basis=basis, confidence=conf,
        permanence=permanence, first=obs.date, tags=tags, scope=scope,
        statement=obs.suggests or obs.evidence,
        evidence=(Evidence(obs.date, obs.strength, observation_link(obs), obs.evidence),),
        path=f"beliefs/{belief_id}.md",
    )


# --- rule 5: explicit rejection ----------------------------------------------

def reject(belief: Belief, today: date, params: Params = DEFAULTS, *, retire: bool = False,
           note: str = "") -> Belief:
    if retire:
        ev = Evidence(today, "retired", "", note or "the user said this is no longer true")
        return replace(belief, status="retired", evidence=belief.evidence + (ev,))
    new = max(params.confidence_floor, _round(belief.confidence - params.rejection_step))
    new = min(new, belief.confidence)
    text = (note or "the user said this is no longer true") + f" ({belief.confidence:.2f} → {new:.2f})"
    ev = Evidence(today, "rejected", "", text)
    return replace(belief, confidence=new, challenged=today, evidence=belief.evidence + (ev,))


# --- rule 16: the user's word resets the clock ----------------------------------

# What a user's edit must change to count as their word on the belief: a retitle or
# a new tag says nothing about whether it still holds.
WORD_FIELDS = frozenset({"confidence", "statement", "basis"})


def user_word(belief: Belief, today: date) -> Belief:
    """Rule 16: the user set the confidence, confirmed the belief in a gut-check or
    edited it by hand: decay counts from today, as from a confirmation.

    Only the date moves (the anchor of rule 7); `confirmed_session` stays, so the
    next behavioural confirmation in another session is still a confirmation (rule 3).
    """
    if belief.confirmed is not None and belief.confirmed >= today:
        return belief
    return replace(belief, confirmed=today)


# What only the user decides about a belief (rules 14, 16 and 22): how sure it is and on what
# basis (a fact), what it claims (each resets decay), whether it still holds, fades, or replaced
# another, its dates, and its evidence (where their verdicts are, SPEC §14; epimem writes the rest).
USER_DECIDES = WORD_FIELDS | frozenset({"status", "pinned", "supersedes", "first", "confirmed", "challenged",
                                        "evidence"})


def users_decisions(old: Belief | None, new: Belief) -> tuple[str, ...]:
    """What a hand edit from `old` (None: a file not committed before) to `new` decides that only
    the user may: the fields of `USER_DECIDES` it changes, or the whole belief when it is new. A
    command a model runs by itself commits none of it (`hand_edits.settle`): it would pass a
    model's own edit off as the user's word."""
    if old is None:
        return ("the whole belief (a file not committed before)",)
    return tuple(sorted(f for f in USER_DECIDES if getattr(old, f) != getattr(new, f)))


# --- rule 18: hand edits obey the rules too --------------------------------------

def future_dates(belief: Belief, today: date) -> list[tuple[str, date]]:
    """(field, date) of each date of a belief after `today` (the machine's day, rule 20)."""
    out = [(f, d) for f, d in (("first", belief.first), ("confirmed", belief.confirmed),
                               ("challenged", belief.challenged)) if d is not None and d > today]
    out += [("evidence", e.date) for e in belief.evidence if e.date is not None and e.date > today]
    return out


def counter_future_dates(sessions: Sessions, today: date) -> list[tuple[str, date]]:
    """(key, date) of each day of the session counter after `today` (rule 20). Not evidence, but
    what rules 8 and 10 count from: a `last_review` ahead keeps the review's time fallback from
    ever falling due, a `last_session` ahead keeps dormancy from ever being said."""
    out = [(k, d) for k, d in (("last_session", sessions.last_session), ("last_review", sessions.last_review),
                               ("created", sessions.created)) if d is not None and d > today]
    for key, days in (("days", (d for d, _ in sessions.days)), ("counted", (d for _, d in sessions.counted))):
        for iso in days:
            try:
                d = date.fromisoformat(iso)
            except ValueError:
                continue  # the counter's reader says what is not a day
            if d > today:
                out.append((key, d))
    return out


def review_ahead(rel: str, today: date) -> date | None:
    """The day of the review `reviews/YYYY-MM-DD.md` when it is after `today` (rule 20: rule 10's
    fallback counts from the last review, so one dated ahead keeps it from ever falling due)."""
    try:
        d = date.fromisoformat(rel.rsplit("/", 1)[-1].removesuffix(".md"))
    except ValueError:
        return None  # not a review's name: the vault's reader says what it is
    return d if d > today else None


def future_date_message(what: str, d: date, today: date) -> str:
    return (f"{what} {d.isoformat()} is after today ({today.isoformat()}): evidence is never dated in the "
            "future, and a future date would stop decay (rule 20)")


def rule_problems(belief: Belief, params: Params = DEFAULTS, *, today: date | None) -> list[tuple[str, str]]:
    """(field, message) for each rule a belief's file breaks, whoever wrote it.

    A file that does not parse is the parser's to report (an unknown status is
    one); these are the rules a well-formed file can still break. `validate`
    reports them and `epimem commit` leaves such a file out (rule 18). `today`
    is the machine's day (rule 20: no date after it); None skips that check, for
    a caller that is not judging against a day (a merge's arithmetic).
    """
    out = []
    if today is not None:
        out += [(f, future_date_message(f"'{f}'", d, today)) for f, d in future_dates(belief, today)]
    try:
        check_confidence(belief.confidence, belief.basis, params)
    except RuleError as e:
        out.append(("confidence", str(e)))
    if belief.id in belief.supersedes:
        out.append(("supersedes", "a belief cannot supersede itself"))
    if belief.id in belief.depends_on:
        out.append(("depends_on", "a belief cannot depend on itself"))
    return out


def admit(belief: Belief, params: Params, today: date) -> tuple[Belief | None, str]:
    """Rule 18 for what an importer brings: (the belief as it may enter the vault, or None
    when it may not; what was done to it, in a sentence, or "").

    A confidence above its basis's cap is lowered to the cap, with an evidence line that
    says so (the import keeps the belief, not a number it has not earned); a date after
    today, or any other broken rule, refuses the belief."""
    c = belief.confidence
    if not 0.0 <= c <= 1.0:
        return None, f"confidence {c} is outside 0.00–1.00: not imported"
    broken = [m for f, m in rule_problems(belief, params, today=today) if f != "confidence"]
    if broken:
        return None, "; ".join(broken) + ": not imported"
    limit = cap(belief.basis, params)
    if c > limit + 1e-9:
        why = (f"imported at {c:.2f}, above the {limit:.2f} cap of basis '{belief.basis}': lowered to the cap "
               "(rule 2)")
        return replace(belief, confidence=limit, evidence=belief.evidence + (Evidence(today, "lowered", "", why),)), why
    return belief, ""


def hand_edit_evidence(details: tuple[str, ...], today: date, added: bool = False) -> Evidence:
    """Rule 12 for a hand edit: the evidence line naming what the user changed."""
    if added:
        return Evidence(today, "added", "", "added by hand")
    return Evidence(today, "edited", "", "edited by hand: " + "; ".join(details))


# --- rules 8 and 10: sessions, dormancy, reviews ----------------------------

@dataclass(frozen=True)
class SessionStart:
    sessions: Sessions
    counted: bool
    dormant_days: int | None  # days since the previous session, when dormant
    review_due: str | None


@lru_cache(maxsize=8)
def _running_totals(days: tuple[tuple[str, int], ...]) -> tuple[list[str], list[int]]:
    return [d for d, _ in days], list(accumulate(n for _, n in days))


def sessions_since(sessions: Sessions, since: date | None) -> int:
    """Sessions started strictly after `since` (all of them when None).

    An audit asks this for every belief; running totals and a bisection keep
    it logarithmic in the number of days with sessions.
    """
    days, totals = _running_totals(sessions.days)
    if not totals:
        return 0
    if since is None:
        return totals[-1]
    i = bisect_right(days, since.isoformat())
    return totals[-1] - (totals[i - 1] if i else 0)


def _counter(s: Sessions) -> dict:
    """The kernel's plain counter for a `Sessions` value."""
    return {"count": s.count, "last_session": s.last_session, "last_review": s.last_review,
            "next_review_at": s.next_review_at, "created": s.created, "days": dict(s.days),
            "machines": dict(s.machines), "counted": dict(s.counted)}


def _sessions(c: dict) -> Sessions:
    return Sessions(count=c["count"], last_session=c["last_session"], last_review=c["last_review"],
                    next_review_at=c["next_review_at"], created=c["created"],
                    days=tuple(sorted(c["days"].items())), machines=tuple(sorted((c.get("machines") or {}).items())),
                    counted=tuple((c.get("counted") or {}).items()))


def dormancy(sessions: Sessions, today: date, params: Params = DEFAULTS) -> int | None:
    """Rule 8: the gap in days when it is `dormancy_days` or more, else None."""
    return kernel.dormancy(sessions.last_session, today, params.dormancy_days)


def review_due(sessions: Sessions, today: date, params: Params = DEFAULTS) -> str | None:
    """Rule 10: why a review is due, or None."""
    return kernel.review_due(_counter(sessions), today, params.review_every_days)


def start_session(sessions: Sessions, source: str, today: date,
                  params: Params = DEFAULTS, *, machine: str = kernel.EARLIER,
                  session_id: str | None = None) -> SessionStart:
    """Count a session (only `startup`: resumes and compactions are the same session)."""
    c, counted, dormant, due = kernel.start_session(_counter(sessions), source, today, params.dormancy_days,
                                                    params.review_every_days, machine=machine,
                                                    session_id=session_id)
    return SessionStart(_sessions(c) if counted else sessions, counted, dormant, due)


def record_review(sessions: Sessions, today: date, params: Params = DEFAULTS) -> Sessions:
    return _sessions(kernel.record_review(_counter(sessions), today, params.review_every_sessions))


# --- rule 11: permanence is revisited ---------------------------------------

@dataclass(frozen=True)
class Suggestion:
    belief: str
    current: str
    suggested: str  # a permanence, or "" for a flag without a proposal
    reason: str


def permanence_suggestion(belief: Belief, sessions: Sessions, today: date,
                          params: Params = DEFAULTS) -> Suggestion | None:
    if belief.status != "active":
        return None
    if belief.permanence == "stable":
        n = sum(1 for e in belief.evidence if e.kind in CHALLENGES)
        if n >= params.stable_challenges:
            return Suggestion(belief.id, "stable", "durable", f"challenged {n} times")
    if belief.permanence == "situational":
        last_change = max(d for d in (belief.first, belief.confirmed, belief.challenged) if d)
        n = sessions_since(sessions, last_change)
        if n >= params.situational_sessions:
            return Suggestion(belief.id, "situational", "durable",
                              f"unchanged across {n} sessions")
    if belief.permanence == "unknown":
        age = (today - belief.first).days
        if age >= params.unknown_days:
            return Suggestion(belief.id, "unknown", "",
                              f"permanence unknown for {age} days: decide how long it holds")
    return None


# --- rule 10: what a review proposes ------------------------------------------

def sessions_since_confirmed(belief: Belief, sessions: Sessions) -> int:
    return sessions_since(sessions, kernel.anchor(belief.first, belief.confirmed))


def should_soften(belief: Belief, sessions: Sessions, params: Params = DEFAULTS) -> bool:
    # A verified fact does not soften with time; only hypotheses do.
    return (belief.status == "active" and not belief.pinned and belief.basis != "fact"
            and belief.confidence > params.soften_above
            and sessions_since_confirmed(belief, sessions) >= params.soften_after_sessions)


def confirmations(belief: Belief) -> int:
    return sum(1 for e in belief.evidence if e.kind == "confirming")


def should_raise(belief: Belief, params: Params = DEFAULTS) -> bool:
    return (belief.status == "active" and belief.confidence < params.raise_below
            and confirmations(belief) >= params.raise_after_confirmations)
