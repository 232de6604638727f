"""Simulated people, observers and users for the belief-tracking benchmark (bench/bench_tracking.py).

A person has traits that hold, change abruptly or slowly, depend on each other, or were
never there (a pattern an observer thought it saw). Each session the person behaves; an
observer of some quality records 0–3 observations; at session start the assistant reads
the session context and, when it shows an open question, asks the user, who answers
(with some error); when a review is due the user may do a gut-check. Everything goes
through a *backend*:

- `ApiBackend` — the product: `epimem.api.Memory` on a vault in a temporary folder
  (observe, session start, the user's answers through `mirror.gutcheck.answer`, the audit
  and `audit --apply`'s parameter commit), the session context rendered by the hook's own
  `render_context` from the context cache the writes keep, the gut-check chosen by
  `mirror.gutcheck.gut_check` over `Memory.snapshot()`. Every number is a file and a commit.
- `CoreBackend` — the fast path for sweeps: the same pure functions the product's
  services call (`core.rules.apply_observation`, `new_belief_from_observation`, `reject`,
  `user_word`, `start_session`, `record_review`; `core.dependencies.base_change` and
  `dependants`; `core.calibration` for the verdict tags, figures and proposals;
  `store.context_cache.build_context_cache`, `tension_row` and `questions_from`, and
  `api.context.render_context` for the session context; `mirror.gutcheck.gut_check` for
  the gut-check) over beliefs and tensions kept in memory. What it does itself is the
  bookkeeping the services do around those functions (which tension a contradiction
  extends, a status set to superseded or retired, a tension resolved); a test
  (tests/bench/test_tracking.py) holds the two backends to the same session contexts and
  confidences on a scenario.
"""

from __future__ import annotations

import inspect
import math
import random
import re
import tempfile
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from epimem.core import calibration as cal
from epimem.core import dependencies as deps
from epimem.core import kernel, rules
from epimem.core.model import Belief, Evidence, Observation, Sessions, Snapshot, Tension
from epimem.core.params import DEFAULTS, Params

START = date(2026, 1, 5)
CWD = "/nonexistent/project"
# The world (docs/benchmarks.md): a real trait shows in about one session in three; a
# pattern that is not there (a one-off read as a habit) in one in twenty-five, each of SPURIOUS.
VISIBLE = 0.3
VISIBLE_SPURIOUS = 0.04
SPURIOUS = 12
LATE = 274  # the last quarter of the year: where following the proposals shows


# --- people --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Trait:
    key: str              # "p0-t3"
    pattern: str          # holds | abrupt | slow | spurious | dependent
    permanence: str
    change: int | None = None    # day the person changes (abrupt, slow, a dependent that follows)
    ramp: int = 0                # slow: days the change takes
    base: str = ""               # dependent: the trait it rests on
    follows: bool = False        # dependent: changes with its base
    strength: float = 0.9        # how reliably the behaviour shows while the trait holds

    def fit(self, form: str, day: int) -> float:
        """Probability that one session's behaviour fits the belief in `form` (A: the first
        state, B: what the person changed to): how often the belief is right when relied on."""
        hi, lo = self.strength, 1.0 - self.strength
        if self.pattern == "spurious":
            p = self.strength
        elif self.change is None or (self.pattern == "dependent" and not self.follows):
            p = hi
        elif self.pattern == "slow":
            x = min(1.0, max(0.0, (day - self.change) / max(1, self.ramp)))
            p = hi - (hi - lo) * x
        else:
            p = hi if day < self.change else lo
        return p if form == "A" else 1.0 - p

    def true(self, form: str, day: int) -> bool:
        return self.fit(form, day) >= 0.5

    @property
    def changes(self) -> bool:
        return self.change is not None and (self.pattern != "dependent" or self.follows)

    def changed_at(self) -> int | None:
        """The day form A stops being true."""
        if not self.changes:
            return None
        assert self.change is not None
        return self.change + (self.ramp // 2 if self.pattern == "slow" else 0)


@dataclass(frozen=True)
class Person:
    name: str
    traits: tuple[Trait, ...]
    session_days: tuple[int, ...]

    def trait(self, key: str) -> Trait:
        return next(t for t in self.traits if t.key == key)


def make_person(rng: random.Random, n: int, days: int = 365, spurious: int = SPURIOUS) -> Person:
    name = f"p{n}"
    perms = ("stable", "durable", "durable", "situational", "unknown")
    traits: list[Trait] = []

    def k(i: int) -> str:
        return f"{name}-t{i}"

    def h() -> float:
        # Some habits show nearly always, some are tendencies (an over-general reading of one).
        return round(rng.uniform(0.6, 0.95), 2)

    i = 0
    for _ in range(4):
        traits.append(Trait(k(i), "holds", rng.choice(perms), strength=h()))
        i += 1
    traits.append(Trait(k(i), "abrupt", rng.choice(perms[:3]), change=rng.randint(60, days - 80), strength=h()))
    base_key = k(i)
    i += 1
    traits.append(Trait(k(i), "slow", rng.choice(perms), change=rng.randint(40, days - 140),
                        ramp=rng.randint(30, 90), strength=h()))
    i += 1
    for _ in range(spurious):
        traits.append(Trait(k(i), "spurious", "unknown", strength=round(rng.uniform(0.05, 0.3), 2)))
        i += 1
    base = next(t for t in traits if t.key == base_key)
    assert base.change is not None
    for follows in (True, False):
        traits.append(Trait(k(i), "dependent", rng.choice(perms[:3]), change=base.change + rng.randint(0, 10),
                            base=base.key, follows=follows, strength=h()))
        i += 1
    # About five sessions a week, and one dormancy of five weeks.
    gap = rng.randint(90, days - 60)
    sessions = tuple(d for d in range(days) if rng.random() < 0.72 and not gap <= d < gap + 35)
    return Person(name, tuple(traits), sessions)


# --- observers -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Quality:
    """How an observer and its user behave. The middle one is the documented middle observer."""

    name: str
    record: float          # records a fitting session (zero is a good answer too)
    false_confirm: float   # records 'confirming' when the behaviour did not fit
    miss: float            # records nothing when the behaviour did not fit
    successor: float       # a contradiction of a changed belief proposes what holds instead
    self_report: float     # an observation is the person's own words (reinforcement, no number)
    self_report_wrong: float  # ...and their words disagree with what they do
    form: float            # a first sighting becomes a belief
    answer_error: float    # the user answers a question or a gut-check wrongly
    ask: float             # the assistant asks the open question it was shown
    review: float          # the user does a gut-check when a review is due


QUALITIES = {
    "good": Quality("good", record=0.7, false_confirm=0.03, miss=0.15, successor=0.8, self_report=0.15,
                    self_report_wrong=0.05, form=0.6, answer_error=0.02, ask=0.8, review=0.7),
    "middle": Quality("middle", record=0.6, false_confirm=0.10, miss=0.30, successor=0.5, self_report=0.15,
                      self_report_wrong=0.15, form=0.5, answer_error=0.05, ask=0.6, review=0.5),
    "poor": Quality("poor", record=0.5, false_confirm=0.25, miss=0.50, successor=0.2, self_report=0.20,
                    self_report_wrong=0.30, form=0.5, answer_error=0.12, ask=0.4, review=0.3),
}


# --- backends --------------------------------------------------------------------------------

def title_of(trait: str, form: str) -> str:
    # Distinct words per trait and form: the benchmark is not about rule 17's embedder.
    return f"Pattern {trait.replace('-', ' ')} form {form}"


def day_of(d: int) -> date:
    return START + timedelta(days=d)


class CoreBackend:
    """The rules' pure functions over beliefs and tensions kept in memory (see the module's docstring)."""

    name = "core"

    def __init__(self, params: Params = DEFAULTS, questions: bool = True):
        self.params = params
        self.questions = questions  # False: the context as it was before SPEC §14 (no open questions)
        self.beliefs: dict[str, Belief] = {}
        self.tensions: dict[str, Tension] = {}
        self.sessions = Sessions()
        self.today = START
        self._obs = 0
        self.applied: list[cal.Proposal] = []
        self.since: dict[str, date] = {}

    # state
    def set_day(self, d: date) -> None:
        self.today = d

    def active(self) -> list[Belief]:
        return [b for b in self.beliefs.values() if b.status == "active"]

    def all_beliefs(self) -> list[Belief]:
        return list(self.beliefs.values())

    def snapshot(self) -> Snapshot:
        return Snapshot(tuple(self.beliefs.values()), (), tuple(self.tensions.values()), self.sessions, (),
                        self.today)

    def close(self) -> None:
        pass

    # sessions
    def session_start(self, sid: str) -> dict:
        res = rules.start_session(self.sessions, "startup", self.today, self.params)
        self.sessions = res.sessions
        return {"count": res.sessions.count, "counted": res.counted, "dormant": res.dormant_days,
                "due": res.review_due}

    def context(self, info: dict) -> str:
        from epimem.api import context as hook  # the session context's one rendering
        from epimem.store import context_cache as cc

        cache = cc.build_context_cache(self.active(), self.params, self.today)
        if not self.questions:
            return hook.render_context(cache, info, cwd=CWD, today=self.today)
        rows = [r for t in self.tensions.values() if (r := cc.tension_row(t))]
        cache["questions"] = cc.questions_from(
            rows, lambda bid: cc.belief_brief(self.beliefs[bid]) if bid in self.beliefs else None)
        return hook.render_context(cache, info, cwd=CWD, today=self.today)

    # writes
    def _tid(self, belief: str) -> str:
        base = f"{self.today.isoformat()}-{belief}"
        tid, n = base, 2
        while tid in self.tensions:
            tid, n = f"{base}-{n}", n + 1
        return tid

    def _flag(self, before: dict[str, Belief]) -> None:
        for bid, old in before.items():
            c = deps.base_change(old, self.beliefs[bid], self.today, self.params)
            if c is None:
                continue
            for d in deps.dependants(self.beliefs.values(), c.belief):
                open_ = next((t for t in self.tensions.values() if t.belief == d.id and t.rests_on == c.belief
                              and t.status != "resolved"), None)
                if open_ is not None:
                    continue
                title, what, suggests = deps.flag_text(c, d)
                tid = self._tid(d.id)
                self.tensions[tid] = Tension(tid, self.today, d.id, "unresolved", title, what,
                                             (f"beliefs/{c.belief}",), suggests, rests_on=c.belief)

    def observe(self, items: list[dict], sid: str) -> list[dict]:
        out = []
        before: dict[str, Belief] = {}
        for item in items:
            self._obs += 1
            obs = Observation(id=f"obs-{self._obs}", date=self.today, evidence=item["evidence"],
                              strength=item["strength"], basis=item.get("basis", "behavioral"),
                              connects=item["connects"], suggests=item.get("suggests", ""), session=sid)
            if obs.connects == "new":
                bid = _slug(item["title"], self.beliefs)
                b = rules.new_belief_from_observation(replace(obs, connects=bid), bid, title=item["title"],
                                                      kind="trait", basis=obs.basis,
                                                      permanence=item.get("permanence", "unknown"),
                                                      params=self.params)
                self.beliefs[bid] = replace(b, depends_on=tuple(item.get("depends_on", ())))
                out.append({"belief": bid, "created": True})
                continue
            cur = self.beliefs[obs.connects]
            before.setdefault(cur.id, cur)
            eff = rules.apply_observation(cur, obs, self.params)
            self.beliefs[cur.id] = replace(eff.after, evidence=eff.after.evidence + (eff.evidence,))
            succ = None
            if eff.open_tension and item.get("successor"):
                succ = self._successor(obs, item["successor"], cur, before)
            if eff.open_tension:
                t = next((t for t in self.tensions.values() if t.belief == cur.id and t.status != "resolved"
                          and not t.rests_on), None)
                if t is None:
                    tid = self._tid(cur.id)
                    self.tensions[tid] = Tension(tid, self.today, cur.id, "watching",
                                                 "Said and did differ" if eff.divergence else "Contradicts",
                                                 obs.evidence, (), "", successor=succ or "")
                elif succ and succ != t.successor:
                    self.tensions[t.id] = replace(t, successor=succ)
            out.append({"belief": cur.id, "before": eff.before.confidence, "after": eff.after.confidence,
                        "successor": succ})
        self._flag(before)
        return out

    def _successor(self, obs: Observation, value: str, old: Belief, before: dict[str, Belief]) -> str:
        if value in self.beliefs:
            sid = value
        else:
            proposed = next((t.successor for t in self.tensions.values() if t.belief == old.id
                             and t.status != "resolved" and t.successor and not t.rests_on), "")
            if proposed and self.beliefs[proposed].status == "active" and self.beliefs[proposed].title == value:
                sid = proposed
            else:
                sid = _slug(value, self.beliefs)
                self.beliefs[sid] = rules.new_belief_from_observation(
                    replace(obs, connects=sid, strength="single"), sid, title=value, kind=old.kind,
                    basis=obs.basis, permanence=old.permanence, params=self.params)
                return sid
        cur = self.beliefs[sid]
        before.setdefault(sid, cur)
        eff = rules.apply_observation(cur, replace(obs, connects=sid, strength="confirming"), self.params)
        self.beliefs[sid] = replace(eff.after, evidence=eff.after.evidence + (eff.evidence,))
        return sid

    def _open_on(self, bid: str) -> list[Tension]:
        return [t for t in self.tensions.values() if t.status != "resolved" and bid in (t.belief, t.successor)]

    def _resolve(self, pick) -> None:
        for t in list(self.tensions.values()):
            if t.status != "resolved" and pick(t):
                self.tensions[t.id] = replace(t, status="resolved")

    def _ev(self, bid: str, kind: str, note: str, link: str = "") -> None:
        b = self.beliefs[bid]
        self.beliefs[bid] = replace(b, evidence=b.evidence + (Evidence(self.today, kind, link, note),))

    def _supersede(self, old: str, new: str, tags: dict[str, str]) -> None:
        before = {old: self.beliefs[old], new: self.beliefs[new]}
        n = self.beliefs[new]
        self.beliefs[new] = rules.user_word(replace(n, supersedes=tuple(dict.fromkeys(n.supersedes + (old,)))),
                                            self.today)
        self._ev(new, "reinforcing", f"the user said this replaces {old} {tags.get(new, '')}".strip())
        self.beliefs[old] = replace(self.beliefs[old], status="superseded")
        self._ev(old, "superseded", f"replaced by {n.title} {tags.get(old, '')}".strip(), f"beliefs/{new}")
        self._resolve(lambda t: t.belief == old)
        self._flag(before)

    def _retire(self, bid: str, note: str) -> None:
        b = self.beliefs[bid]
        if b.status == "active":
            self.beliefs[bid] = rules.reject(b, self.today, self.params, retire=True, note=note)

    def answer(self, bid: str, verdict: str, now: str = "", retire: bool = False) -> str:
        """`mirror.gutcheck.answer`'s routing, with the rules' functions for every number."""
        b = self.beliefs[bid]
        tag = cal.tag(b, verdict, "answer", self.today, self.params)
        before = {k: v for k, v in self.beliefs.items()}
        qs = self._open_on(bid)
        as_old = next((t for t in qs if t.successor and not t.rests_on and t.belief == bid), None)
        as_new = next((t for t in qs if t.successor and not t.rests_on and t.successor == bid), None)
        asked = any(t.belief == bid and not t.successor for t in qs)
        if verdict == "false" and (now or (as_old is not None and not retire)):
            if now:
                target = (as_old.successor if as_old is not None and self.beliefs[as_old.successor].title == now
                          else "")
                if not target:
                    target = _slug(now, self.beliefs)
                    conf = rules.start_confidence("self-report", self.params)
                    self.beliefs[target] = Belief(target, now, b.kind, "self-report", conf, b.permanence,
                                                  self.today, confirmed=self.today, supersedes=(), statement=now,
                                                  evidence=(Evidence(self.today, "added", "", f"({conf:.2f})"),))
            else:
                assert as_old is not None
                target = as_old.successor
            self._supersede(bid, target, {bid: tag})
            return "superseded"
        if verdict == "true" and as_new is not None:
            self._supersede(as_new.belief, bid, {bid: tag})
            return "superseded-old"
        if verdict == "true" and as_old is not None:
            self.beliefs[bid] = rules.user_word(b, self.today)
            self._ev(bid, "reinforcing", f"kept {tag}")
            self._retire(as_old.successor, f"the user said {bid} still holds")
            self._resolve(lambda t: t.belief == bid and t.successor == as_old.successor)
            self._flag({as_old.successor: before[as_old.successor]})
            return "kept"
        if verdict == "false" and as_new is not None:
            self._retire(bid, f"declined {tag}")
            self._resolve(lambda t: t.belief == as_new.belief and t.successor == bid)
            self._flag({bid: before[bid]})
            return "declined"
        if verdict == "true":
            self.beliefs[bid] = rules.user_word(b, self.today)
            self._ev(bid, "reinforcing", tag)
            if asked:
                self._resolve(lambda t: t.belief == bid and not t.successor)
            return "true"
        if verdict == "false":
            self.beliefs[bid] = rules.reject(b, self.today, self.params, retire=retire, note=tag)
            if retire:
                self._resolve(lambda t: t.belief == bid)
            self._flag({bid: b})
            return "false"
        self._ev(bid, "unsure", tag)
        return "unsure"

    def gut_check(self) -> list[str]:
        from epimem.mirror.gutcheck import gut_check

        return list(gut_check(self.snapshot(), self.params, self.today).beliefs)

    def record_review(self) -> None:
        self.sessions = rules.record_review(self.sessions, self.today, self.params)

    def proposals(self) -> list[cal.Proposal]:
        return list(cal.calibrate(cal.verdicts(self.beliefs.values()), self.params, self.since).proposals)

    def apply_proposals(self, props: list[cal.Proposal]) -> None:
        changes = cal.apply_to_meta({"decay": dict(self.params.decay), "start": dict(self.params.start)}, props)
        self.params = replace(self.params, **changes)  # type: ignore[arg-type]
        self.applied += props
        self.since.update({p.key: self.today for p in props})  # what `api.epistemology.calibrated_since` reads


def _slug(title: str, taken) -> str:
    from epimem.core.ids import slugify, unique_id

    return unique_id(slugify(title), set(taken))


class ApiBackend:
    """The product itself, on a vault in a temporary folder (see the module's docstring)."""

    name = "api"

    def __init__(self, params: Params = DEFAULTS, root: Path | None = None):
        from epimem.api.memory import Memory

        self._tmp = None
        if root is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="epimem-tracking-")
            root = Path(self._tmp.name) / "vault"
        self.root = root
        self.today = START
        Memory.init(root, today=START.isoformat())
        if params != DEFAULTS:
            self._write_params(params)
        self._counted_with_id = "session" in inspect.signature(Memory.session_start).parameters
        self.applied: list[cal.Proposal] = []

    def _write_params(self, params: Params) -> None:
        from epimem.api.epistemology import _flow
        from epimem.core.notes import Raw, edit_frontmatter

        p = self.root / "epistemology.md"
        text = p.read_text(encoding="utf-8")
        changes = {}
        for f in ("start", "caps", "decay"):
            if getattr(params, f) != getattr(DEFAULTS, f):
                changes[f] = Raw(_flow(getattr(params, f)))
        for f in ("confirm_step", "challenge_step", "free_challenges", "rejection_step", "decay_floor"):
            if getattr(params, f) != getattr(DEFAULTS, f):
                changes[f] = Raw(_flow(getattr(params, f)))
        p.write_text(edit_frontmatter(text, changes), encoding="utf-8")
        self.mem.commit_hand_edits()

    @property
    def mem(self):
        from epimem.api.memory import Memory

        return Memory(self.root, today=self.today.isoformat())

    @property
    def params(self) -> Params:
        return self.mem.params

    def set_day(self, d: date) -> None:
        self.today = d

    def active(self) -> list[Belief]:
        return [b for b in self.all_beliefs() if b.status == "active"]

    def all_beliefs(self) -> list[Belief]:
        return list(self.mem.vault.load_beliefs()[0])

    @property
    def beliefs(self) -> dict[str, Belief]:
        return {b.id: b for b in self.all_beliefs()}

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()

    def session_start(self, sid: str) -> dict:
        m = self.mem
        r = m.session_start("startup", session=sid) if self._counted_with_id else m.session_start("startup")
        return {"count": r.count, "counted": r.counted, "dormant": r.dormant_days, "due": r.review_due}

    def context(self, info: dict) -> str:
        from epimem.api import context as hook  # the session context's one rendering
        from epimem.store.context_cache import read_context_cache

        return hook.render_context(read_context_cache(self.root), info, cwd=CWD, today=self.today)

    def observe(self, items: list[dict], sid: str) -> list[dict]:
        if not items:
            return []
        report = self.mem.observe(items, source="bench", session=sid)
        return [{"belief": r.belief, "created": r.created, "before": r.before, "after": r.after,
                 "successor": r.successor} for r in report.results]

    def answer(self, bid: str, verdict: str, now: str = "", retire: bool = False) -> str:
        from epimem.mirror.gutcheck import answer

        a = answer(self.mem, bid, verdict, retire=retire, now=now, source="answer")
        return a.status

    def gut_check(self) -> list[str]:
        from epimem.mirror.gutcheck import gut_check, open_gut_check

        m = self.mem
        g = gut_check(m.snapshot(observations=False), m.params, m.today)
        if g.beliefs:
            open_gut_check(m, g.beliefs)
        return list(g.beliefs)

    def record_review(self) -> None:
        from epimem.mirror.gutcheck import close_gut_check, read_pending

        m = self.mem
        if read_pending(m) is not None:  # not every belief was answered (one was retired meanwhile)
            m.record_review("gut-check", "# Gut-check\n\nAnswered in part.")
            close_gut_check(m)

    def proposals(self) -> list[cal.Proposal]:
        from epimem.api.epistemology import calibrated_since
        from epimem.mirror.audit import audit

        m = self.mem
        a = audit(m.snapshot(observations=False), m.params, m.today, calibrated=calibrated_since(m))
        return list(a.calibration.proposals) if a.calibration else []

    def apply_proposals(self, props: list[cal.Proposal]) -> None:
        from epimem.api.epistemology import apply_calibration

        apply_calibration(self.mem, props)
        self.applied += props


# --- the simulation ----------------------------------------------------------------------------

@dataclass
class Figures:
    """What one run measured (summed over people by `merge`)."""

    sessions: int = 0
    stale_sessions: int = 0           # session starts that served a belief the person had left
    # (effective confidence, how often the belief is right when relied on), every active belief
    pairs: list[tuple[float, float]] = field(default_factory=list)
    served_pairs: list[tuple[float, float]] = field(default_factory=list)  # ...those listed as current
    binary: list[tuple[float, bool]] = field(default_factory=list)  # (effective, whether it holds)
    late: list[tuple[float, float]] = field(default_factory=list)   # `pairs` of the last quarter of the year
    # `pairs` with what kind of belief each is and when (`kind_of`), for `decompose`
    tagged: list[tuple[float, float, str, str]] = field(default_factory=list)
    stale_causes: list[str] = field(default_factory=list)  # one per stale session start: why (`stale_cause`)
    served_true: int = 0              # beliefs listed as current that hold (what a context is for)
    changes: int = 0
    followed: list[int] = field(default_factory=list)   # sessions from a change until the old belief is not served
    unfollowed: int = 0               # changes whose old belief was still served at the end
    detected: int = 0                 # changes with a tension (or the user's word) on the old belief within 60 days
    wrong_retired_auto: int = 0       # true beliefs retired or superseded without the user's word
    wrong_retired_user: int = 0       # ...by the user's (mistaken) word
    lowered_true: int = 0             # times a true belief's stored confidence was lowered by a rule
    questions_asked: int = 0
    verdicts: int = 0
    proposals: list[str] = field(default_factory=list)

    def merge(self, o: Figures) -> Figures:
        return Figures(*(getattr(self, f) + getattr(o, f) for f in self.__dataclass_fields__))

    def summary(self) -> dict[str, Any]:
        n = max(1, self.sessions)
        fol = sorted(self.followed)
        return {
            "sessions": self.sessions,
            "stale_serve_rate": round(self.stale_sessions / n, 4),
            "ece": _round(cal.ece(self.pairs)), "brier": _round(expected_brier(self.pairs)),
            "ece_served": _round(cal.ece(self.served_pairs)),
            "brier_served": _round(expected_brier(self.served_pairs)),
            "ece_holds": _round(cal.ece(self.binary)), "brier_holds": _round(cal.brier(self.binary)),
            "ece_last_quarter": _round(cal.ece(self.late)),
            "changes": self.changes,
            "sessions_to_follow_median": fol[len(fol) // 2] if fol else None,
            "sessions_to_follow_p90": fol[min(len(fol) - 1, int(0.9 * len(fol)))] if fol else None,
            "unfollowed": self.unfollowed,
            "detection_rate": round(self.detected / self.changes, 3) if self.changes else None,
            "wrong_retired_auto": self.wrong_retired_auto, "wrong_retired_user": self.wrong_retired_user,
            "lowered_true": self.lowered_true, "questions_asked": self.questions_asked,
            "served_true_per_session": round(self.served_true / n, 2),
            "verdicts": self.verdicts, "proposals": sorted(set(self.proposals)),
        }


def _period(d: int) -> str:
    return "months 1–3" if d < 91 else ("months 4–9" if d < LATE else "months 10–12")


def decompose(tagged: list[tuple[float, float, str, str]], by: int = 2, bins: int = 10) -> list[dict]:
    """ECE split by what a pair is (`by` 2: the kind of belief, 3: the period of the year): each
    group's share of the pairs, its mean confidence and fit, and its part of the ECE — within each
    of `cal.ece`'s bins, the group's signed gap weighted by its count, in the direction of the bin's
    gap, so that the parts add up to the ECE exactly (a negative part offsets the bin's error)."""
    n = len(tagged)
    if not n:
        return []
    binned: dict[int, list] = {}
    for t in tagged:
        binned.setdefault(min(bins - 1, int(t[0] * bins)), []).append(t)
    sign = {k: (1.0 if sum(c - p for c, p, *_ in g) >= 0 else -1.0) for k, g in binned.items()}
    out: dict[str, dict] = {}
    for k, g in binned.items():
        for t in g:
            o = out.setdefault(t[by], {"group": t[by], "n": 0, "c": 0.0, "p": 0.0, "part": 0.0})
            o["n"] += 1
            o["c"] += t[0]
            o["p"] += t[1]
            o["part"] += sign[k] * (t[0] - t[1]) / n
    return sorted(({"group": o["group"], "share": round(o["n"] / n, 3), "mean_confidence": round(o["c"] / o["n"], 3),
                    "mean_fit": round(o["p"] / o["n"], 3), "ece_part": round(o["part"], 4)}
                   for o in out.values()), key=lambda r: -r["ece_part"])


def decompose_bands(tagged: list[tuple[float, float, str, str]], params: Params = DEFAULTS) -> list[dict]:
    """By tier band: share, mean confidence and fit, and the band's part of the ECE (same bins)."""
    # The tiers' bounds are bounds of the ECE's bins too, so the bands' parts add up to the ECE.
    rows = [(f"{name} {lo:.2f}–{min(hi, 1.0):.2f}", [t for t in tagged if lo <= t[0] < hi])
            for name, lo, hi in cal.bands_of(params)]
    n = len(tagged)
    out = []
    for label, g in rows:
        if not g:
            continue
        e = cal.ece([(c, p) for c, p, *_ in g]) or 0.0
        out.append({"band": label, "share": round(len(g) / n, 3),
                    "mean_confidence": round(sum(t[0] for t in g) / len(g), 3),
                    "mean_fit": round(sum(t[1] for t in g) / len(g), 3), "ece_part": round(e * len(g) / n, 4)})
    return out


def expected_brier(pairs: list[tuple[float, float]]) -> float | None:
    """The Brier score of a confidence c against a session whose behaviour fits with
    probability p, in expectation: (c − p)² + p(1 − p)."""
    if not pairs:
        return None
    return sum((c - p) ** 2 + p * (1 - p) for c, p in pairs) / len(pairs)


def _round(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(x, 4)


_BELIEF_LINE = re.compile(r"^- \([^)]*\) .*\[([a-z0-9][a-z0-9\-]*)\]$")
_QUESTION_IDS = re.compile(r"\[([a-z0-9][a-z0-9\-]*)\]")


def read_context(text: str) -> tuple[set[str], list[list[str]]]:
    """(beliefs the context lists as current, the open questions with the ids each names)."""
    served: set[str] = set()
    questions: list[list[str]] = []
    in_q = False
    for line in text.splitlines():
        if line.startswith("Open questions"):
            in_q = True
            continue
        if not line.startswith("- "):
            in_q = False
            continue
        if in_q:
            questions.append(_QUESTION_IDS.findall(line))
            continue
        m = _BELIEF_LINE.match(line)
        if m and ", in question" not in line:
            served.add(m.group(1))
    return served, questions


class Simulation:
    def __init__(self, person: Person, quality: Quality, backend, seed: int, follow_proposals: bool = False,
                 verdicts: str = "holds"):
        if verdicts not in ("holds", "fit"):
            raise ValueError(f"verdicts must be 'holds' or 'fit', not {verdicts!r}")
        self.p = person
        self.verdicts = verdicts
        self.q = quality
        self.b = backend
        self.rng = random.Random(seed)
        self.follow = follow_proposals
        self.fig = Figures()
        self.of_belief: dict[str, tuple[str, str]] = {}   # belief id -> (trait, form)
        self.current: dict[str, str] = {}                 # trait -> the belief the observer holds for it
        self.change_state: dict[str, dict] = {}           # trait -> {day, served_gone, detected}
        self.context_log: list[str] = []                  # the session contexts, for the equivalence test

    # truth
    def true(self, bid: str, day: int) -> bool:
        trait, form = self.of_belief[bid]
        return self.p.trait(trait).true(form, day)

    def _form_for(self, trait: Trait, day: int) -> str:
        return "B" if trait.changes and trait.true("B", day) else "A"

    # one session
    def session(self, d: int, n: int) -> None:
        self.b.set_day(day_of(d))
        sid = f"{self.p.name}-s{n}"
        info = self.b.session_start(sid)
        text = self.b.context(info)
        self.context_log.append(text)
        served, questions = read_context(text)
        self._measure(d, served)
        if questions and self.rng.random() < self.q.ask:
            self._ask(d, questions[0])
        if info["due"] and self.rng.random() < self.q.review:
            self._gut_check(d)  # otherwise the review stays due, and is offered again next session
        self._observe(d, sid)

    def _measure(self, d: int, served: set[str]) -> None:
        f = self.fig
        f.sessions += 1
        stale = False
        beliefs = self.b.active()
        params = self.b.params
        for b in beliefs:
            if b.id not in self.of_belief:
                continue
            truth = self.true(b.id, d)
            key, form = self.of_belief[b.id]
            p = self.p.trait(key).fit(form, d)
            eff = rules.effective_confidence(b, day_of(d), params)
            f.pairs.append((eff, p))
            f.tagged.append((eff, p, self.kind_of(b, eff, params), _period(d)))
            f.binary.append((eff, truth))
            if d >= LATE:
                f.late.append((eff, p))
            if b.id in served:
                f.served_pairs.append((eff, p))
                f.served_true += truth
                key, form = self.of_belief[b.id]
                at = self.p.trait(key).changed_at()
                # Stale: the person left what it says (a belief that was never true is wrong, not stale).
                if not truth and form == "A" and at is not None and d >= at:
                    if not stale:
                        f.stale_causes.append(self.stale_cause(b, key, d))
                    stale = True
        f.stale_sessions += stale
        for st in self.change_state.values():
            if st["gone"] is not None:
                continue
            old = st["belief"]
            if old not in served:
                st["gone"] = st["sessions"]
            st["sessions"] += 1

    def stale_cause(self, b: Belief, key: str, d: int) -> str:
        """Why a belief the person left was listed: what kind of change, and what stood between it
        and a question (no contradiction on record yet; a tension the user's word closed)."""
        trait = self.p.trait(key)
        at = trait.changed_at() or d
        what = "a dependant" if trait.pattern == "dependent" else f"an {trait.pattern} change" \
            if trait.pattern == "abrupt" else "a slow change"
        tensions = [t for t in getattr(self.b, "tensions", {}).values() if t.belief == b.id]
        since = [t for t in tensions if (t.date - START).days >= at - (trait.ramp // 2)]
        if not since:
            why = "no tension yet"
        elif any(t.status != "resolved" for t in since):
            why = "a tension open (not shown)"
        else:
            why = "its tension closed"
        return f"{what}, {why}, {'≤ 30' if d - at <= 30 else '> 30'} days after"

    def kind_of(self, b: Belief, eff: float, params: Params) -> str:
        """Which kind of belief a pair is, first match: the pattern was never there; the person left
        it (stale); real and never confirmed; at its cap; decayed to the floor; else climbing."""
        key, form = self.of_belief[b.id]
        trait = self.p.trait(key)
        if trait.pattern == "spurious":
            return "never there"
        if not trait.true(form, (self.b.today - START).days):
            return "left by the person"
        if b.confirmed is None and not any(e.kind == "reinforcing" for e in b.evidence):
            return "real, never confirmed"
        if b.confidence >= params.caps.get(b.basis, 0.9) - 1e-9:
            return "real, at the cap" + (" (decayed)" if eff < b.confidence - 0.05 else "")
        if eff <= params.decay_floor + 1e-9 < b.confidence:
            return "real, decayed to the floor"
        return "real, below the cap" + (" (decayed)" if eff < b.confidence - 0.05 else "")

    def _ask(self, d: int, ids: list[str]) -> None:
        ids = [i for i in ids if i in self.of_belief]
        if not ids:
            return
        self.fig.questions_asked += 1
        bid = ids[0]
        self._verdict(d, bid, self.says_true(bid, d))

    def says_true(self, bid: str, d: int) -> bool:
        """The user's answer to "still true of you?" (a gut-check or a question), before answer error.

        `holds` (the default): whether it holds of the person at all. `fit`: a draw of the chance
        that a session bears it out (the quantity the ECE is scored against). Measured in round 4
        (docs/decisions.md): with `fit`, a real habit that fits 75 % of sessions is answered
        "false" a quarter of the time, and the product acts on a "false" (rule 5 lowers it), so
        the answers do not only measure the confidence, they drive it down — ECE 0.13–0.31."""
        if self.verdicts == "holds":
            truth = self.true(bid, d)
        else:
            key, form = self.of_belief[bid]
            truth = self.rng.random() < self.p.trait(key).fit(form, d)
        if self.rng.random() < self.q.answer_error:
            truth = not truth
        return truth

    def _verdict(self, d: int, bid: str, says_true: bool) -> None:
        self.fig.verdicts += 1
        trait_key, form = self.of_belief[bid]
        trait = self.p.trait(trait_key)
        before = {b.id: b.status for b in self.b.all_beliefs()}
        if says_true:
            self.b.answer(bid, "true")
        else:
            # What the mirror skill asks of the assistant: the user's words on what holds instead
            # (`now`), --retire when they say it was never so, else rule 5's lowering.
            other = "B" if form == "A" else "A"
            now = title_of(trait_key, other) if trait.changes and trait.true(other, d) else ""
            self.b.answer(bid, "false", now=now, retire=not now and trait.pattern == "spurious")
        self._after_write(d, before, by_user=True)

    def _gut_check(self, d: int) -> None:
        for bid in self.b.gut_check():
            if bid not in self.of_belief or bid not in {b.id for b in self.b.active()}:
                continue
            self._verdict(d, bid, self.says_true(bid, d))
        self.b.record_review()
        if self.follow:
            props = self.b.proposals()
            if props:
                self.b.apply_proposals(props)
                self.fig.proposals += [f"{p.key} {p.current:g}→{p.proposed:g}" for p in props]

    def _after_write(self, d: int, before: dict[str, str], by_user: bool) -> None:
        for b in self.b.all_beliefs():
            if b.id not in self.of_belief:
                self._learn(b)
            was = before.get(b.id)
            if was == "active" and b.status in ("retired", "superseded"):
                if b.id in self.of_belief and self.true(b.id, d):
                    if by_user:
                        self.fig.wrong_retired_user += 1
                    else:
                        self.fig.wrong_retired_auto += 1
                trait = self.of_belief.get(b.id, ("", ""))[0]
                st = self.change_state.get(trait)
                if st is not None and st["belief"] == b.id and st["day"] <= d:
                    st["detected"] = True
                if self.current.get(trait) == b.id:
                    self.current.pop(trait)
        for b in self.b.active():
            trait = self.of_belief.get(b.id, ("", ""))[0]
            if trait and trait not in self.current:
                self.current[trait] = b.id

    def _learn(self, b: Belief) -> None:
        """A belief the system made (a successor proposed, or one the user named): which trait and form."""
        m = re.match(r"^Pattern (p\d+) t(\d+) form ([AB])$", b.title)
        if m:
            self.of_belief[b.id] = (f"{m.group(1)}-t{m.group(2)}", m.group(3))

    def _observe(self, d: int, sid: str) -> None:
        q, rng = self.q, self.rng
        visible = [t for t in self.p.traits
                   if rng.random() < (VISIBLE_SPURIOUS if t.pattern == "spurious" else VISIBLE)]
        rng.shuffle(visible)
        items: list[dict] = []
        for t in visible[:3]:
            bid = self.current.get(t.key)
            if bid is None:
                if t.base and not self.current.get(t.base):
                    continue  # a habit that rests on another is read in its light, once that one is held
                form = self._form_for(t, d) if t.pattern != "spurious" else "A"
                # A pattern the observer only thought it saw is "seen" half the time.
                seen = 0.5 if t.pattern == "spurious" else t.fit(form, d)
                if rng.random() >= seen or rng.random() >= q.form:
                    continue
                item = {"connects": "new", "strength": "single", "evidence": f"{t.key} {form} seen on day {d}",
                        "title": title_of(t.key, form), "kind": "trait", "permanence": t.permanence,
                        "basis": "behavioral", "new_despite_similar": True}
                if t.base and self.current.get(t.base):
                    item["depends_on"] = [self.current[t.base]]
                items.append(item)
                continue
            _, form = self.of_belief[bid]
            fits = rng.random() < t.fit(form, d)
            if rng.random() < q.self_report:
                # The person's own words: what they do, or (sometimes) what they think they do.
                says = fits if rng.random() >= q.self_report_wrong else True
                items.append({"connects": bid, "strength": "confirming" if says else "contradicting",
                              "basis": "self-report", "evidence": f"{t.key}: said so on day {d}"})
                continue
            if fits:
                if rng.random() < q.record:
                    items.append({"connects": bid, "strength": "confirming", "basis": "behavioral",
                                  "evidence": f"{t.key}: fitted on day {d}"})
                continue
            r = rng.random()
            if r < q.miss:
                continue
            if r < q.miss + q.false_confirm:
                items.append({"connects": bid, "strength": "confirming", "basis": "behavioral",
                              "evidence": f"{t.key}: read as fitting on day {d}"})
                continue
            item = {"connects": bid, "strength": "contradicting", "basis": "behavioral",
                    "evidence": f"{t.key}: did otherwise on day {d}"}
            other = "B" if form == "A" else "A"
            if t.changes and t.true(other, d) and rng.random() < q.successor:
                item["successor"] = title_of(t.key, other)
                item["new_despite_similar"] = True
            items.append(item)
        if not items:
            return
        before = {b.id: (b.status, b.confidence) for b in self.b.all_beliefs()}
        results = self.b.observe(items, sid)
        for item, r in zip(items, results):
            if r.get("created") and r["belief"]:
                trait, form = _trait_form(item["title"])
                self.of_belief[r["belief"]] = (trait, form)
                self.current.setdefault(trait, r["belief"])
            elif r.get("belief") and r.get("before") is not None and r["after"] is not None \
                    and r["after"] < r["before"] - 1e-9 and self.true(r["belief"], d):
                self.fig.lowered_true += 1
            if r.get("belief") and item["strength"] == "contradicting":
                trait = self.of_belief.get(r["belief"], ("", ""))[0]
                st = self.change_state.get(trait)
                if st is not None and st["belief"] == r["belief"] and d - st["day"] <= 60:
                    st["detected"] = True
        self._after_write(d, {k: v[0] for k, v in before.items()}, by_user=False)

    def run(self) -> Figures:
        for n, d in enumerate(self.p.session_days):
            self._changes_due(d)
            self.session(d, n)
        for st in self.change_state.values():
            self.fig.changes += 1
            self.fig.detected += bool(st["detected"])
            if st["gone"] is None:
                self.fig.unfollowed += 1
            else:
                self.fig.followed.append(st["gone"])
        return self.fig

    def _changes_due(self, d: int) -> None:
        for t in self.p.traits:
            at = t.changed_at()
            if at is None or at > d or t.key in self.change_state:
                continue
            bid = self.current.get(t.key)
            if bid is None or self.of_belief[bid][1] != "A":
                continue  # nothing was believed about it yet, or only its new form
            self.change_state[t.key] = {"day": d, "belief": bid, "gone": None, "sessions": 0, "detected": False}


def _trait_form(title: str) -> tuple[str, str]:
    m = re.match(r"^Pattern (p\d+) t(\d+) form ([AB])$", title)
    assert m, title
    return f"{m.group(1)}-t{m.group(2)}", m.group(3)


def run(people: int, quality: str, *, backend: str = "core", seed: int = 26, params: Params = DEFAULTS,
        follow_proposals: bool = False, days: int = 365, questions: bool = True,
        verdicts: str = "holds", spurious: int = SPURIOUS) -> Figures:
    """Figures summed over `people` simulated people for one observer quality."""
    total = Figures()
    for i in range(people):
        rng = random.Random(seed * 1000 + i)
        person = make_person(rng, i, days, spurious)
        b = CoreBackend(params, questions) if backend == "core" else ApiBackend(params)
        try:
            sim = Simulation(person, QUALITIES[quality], b, seed * 7919 + i, follow_proposals, verdicts)
            total = total.merge(sim.run())
        finally:
            b.close()
    return total


_ = kernel  # the kernel's decay is what `rules.effective_confidence` evaluates
