"""The gut-check: which six beliefs to ask, the answers, and the open gut-check they complete.

`gut_check` (pure, at the end of this module) picks the six beliefs. The
person answers them one at a time, often across several assistant turns.
What was asked is remembered in `.epimem/gut-check.json` (a cache: losing it
only means the completed gut-check is not counted as a review), and the
answer that completes it records the review. Each answer is one commit
through `epimem.api.memory`: true is the person's word (reinforcement, no
number changes, SPEC §2.3), false is the explicit rejection of SPEC §2.5,
unsure is noted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ..core.errors import InputError
from ..core.model import Problem, Snapshot
from ..core.params import DEFAULTS, Params
from ..core.redact import redact
from ..store import transaction
from . import text as tx
from .phrase import say
from .views import BeliefView, active, active_views, detailed, top_and_bottom

PENDING = "gut-check.json"
VERDICTS = ("true", "false", "unsure")


class AnswerError(InputError):
    """An answer to a gut-check that cannot be recorded; the message says why."""


@dataclass(frozen=True)
class Answer:
    belief: str
    verdict: str
    note: str
    confidence_before: float
    confidence_after: float
    status: str
    said: str
    progress: dict[str, Any] = field(default_factory=dict)
    # SPEC §14: the belief that now holds in its place, when the answer superseded it.
    successor: str = ""


def _path(mem):
    return mem.vault.internal / PENDING


def read_pending(mem) -> dict[str, Any] | None:
    try:
        raw = json.loads(_path(mem).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # a lost or broken cache only means the gut-check is not counted
    if not isinstance(raw, dict) or not isinstance(raw.get("beliefs"), list):
        return None
    raw.setdefault("answers", {})
    return raw


def _write_pending(mem, data: dict[str, Any] | None) -> None:
    # Through the one write path, uncommitted: the open gut-check is a cache in `.epimem/`.
    rel = f"{mem.vault.internal.name}/{PENDING}"
    w = transaction.delete(rel) if data is None else transaction.upsert(rel, json.dumps(data, ensure_ascii=False,
                                                                                      indent=1))
    transaction.apply(mem.root, [w], None, lock=mem.vault.lock())


def open_gut_check(mem, beliefs: tuple[str, ...]) -> None:
    """Remember what was asked; answers already given today carry over."""
    with mem.vault.lock():
        old = read_pending(mem) or {}
        answers = {k: v for k, v in (old.get("answers") or {}).items()
                   if k in beliefs and old.get("date") == mem.today.isoformat()}
        _write_pending(mem, {"date": mem.today.isoformat(), "beliefs": list(beliefs), "answers": answers})


def close_gut_check(mem) -> None:
    """Forget the open gut-check (it was recorded as a whole)."""
    _write_pending(mem, None)


def misplaced(verdict: str, retire: bool, now: str) -> str | None:
    """Which of `retire` and `now` this verdict cannot take ("retire" or "now"), else None: both go
    with a false verdict only, and not together (what holds instead supersedes the belief, it is not
    retired). The one home of the rule: each front end names the option its own way."""
    verdict = verdict.strip().lower()
    if retire and verdict != "false":
        return "retire"
    if " ".join((now or "").split()) and (verdict != "false" or retire):
        return "now"
    return None


def answer(mem, belief_id: str, verdict: str, note: str = "", retire: bool = False, now: str = "",
           source: str = "gut-check") -> Answer:
    """The user's verdict on a belief, recorded with the confidence it had when asked (SPEC §14).

    Where an open tension proposes a successor, the verdict settles it in one step: false on
    the belief (or true on the successor) supersedes it by the successor; true on the belief
    keeps it and retires the proposal; false on the successor retires it. `now` (false only)
    names what holds instead, in the user's words: it supersedes the belief by that."""
    from ..api import beliefs as beliefs_api
    from ..api import listing, updates
    from ..api.tensions import open_on
    from ..core import calibration

    verdict = verdict.strip().lower()
    if verdict not in VERDICTS:
        raise AnswerError(f"--verdict must be true, false or unsure, not {verdict!r}")
    bad = misplaced(verdict, retire, now)
    if bad == "retire":
        raise AnswerError("--retire goes with --verdict false")
    if bad == "now":
        raise AnswerError("--now goes with --verdict false: it names what holds instead")
    now = " ".join((now or "").split())
    # The note is echoed back (the answer, the open gut-check's file): redacted first, as it is written.
    note = redact(note.strip(), mem.params.redact)
    before = listing.get(mem, belief_id)[0]
    tag = calibration.tag(before, verdict, source, mem.today, mem.params)
    text = f"{source}: {verdict}" + (f"; {note}" if note else "")
    successor = ""
    questions = open_on(mem, belief_id)
    open_ = [t for t in questions if t.successor and not t.rests_on]
    as_old = next((t for t in open_ if t.belief == belief_id), None)
    as_new = next((t for t in open_ if t.successor == belief_id), None)
    asked = any(t.belief == belief_id and not t.successor for t in questions)
    if verdict == "false" and (now or (as_old is not None and not retire)):
        by = "" if now or as_old is None else as_old.successor
        after, new = updates.replace(mem, belief_id, by=by, title=now, note=text,
                                     tags={belief_id: tag})
        successor = new.id
        said = f"Superseded {belief_id} by {new.id} ({new.title}), in your words."
    elif verdict == "true" and as_new is not None:
        _, after = updates.replace(mem, as_new.belief, by=belief_id, note=text, tags={belief_id: tag})
        successor = belief_id
        said = f"Superseded {as_new.belief} by {belief_id}: you said {belief_id} holds now."
    elif verdict == "true" and as_old is not None:
        after = updates.keep(mem, belief_id, as_old.successor, note=text, tag=tag)
        said = (f"Recorded: {belief_id} still holds, in your words; the proposed {as_old.successor} "
                "was retired (decay counts from today).")
    elif verdict == "false" and as_new is not None:
        after = updates.decline(mem, belief_id, as_new.belief, note=text, tag=tag)
        said = f"Retired {belief_id}: it does not replace {as_new.belief}."
    elif verdict == "true" and asked:
        # "Still true" answers the open questions about it; a "false" that only lowers it leaves
        # them open (it is in question still), and a retirement closes them as every one does.
        after = updates.settle(mem, belief_id, note=f"{text} {tag}")
        said = f"Recorded: {belief_id} still holds, in your words; its open questions are resolved."
    elif verdict == "true":
        after = beliefs_api.reinforce(mem, belief_id, f"{text} {tag}", "reinforcing", True)
        said = (f"Recorded: {belief_id} is still true, in your words "
                "(no number changes; decay counts from today).")
    elif verdict == "false":
        after = beliefs_api.reject(mem, belief_id, retire=retire, note=f"{text} {tag}")
        said = (f"Retired {belief_id}." if retire else
                f"Lowered {belief_id}: {before.confidence:.2f} → {after.confidence:.2f}.")
    else:
        after = beliefs_api.reinforce(mem, belief_id, f"{text} {tag}", "unsure", False)
        said = f"Noted: unsure about {belief_id} (no number changes)."

    progress: dict[str, Any] = {"open": False, "answered": 0, "of": 0, "complete": False, "recorded": None}
    # Most answers come with no gut-check open: no need to queue for the vault lock to find that out.
    if not _path(mem).exists():
        return Answer(belief_id, verdict, note, round(before.confidence, 2), round(after.confidence, 2),
                      after.status, said, progress, successor)
    with mem.vault.lock():
        pending = read_pending(mem)
        if pending and belief_id in pending["beliefs"]:
            pending["answers"][belief_id] = {"verdict": verdict, "note": note, "title": before.title}
            done = all(b in pending["answers"] for b in pending["beliefs"])
            progress.update(open=True, answered=len(pending["answers"]), of=len(pending["beliefs"]),
                            complete=done)
            if done:
                rows = [(b, pending["answers"][b].get("title", b), pending["answers"][b]["verdict"],
                         pending["answers"][b].get("note", "")) for b in pending["beliefs"]]
                progress["recorded"] = write_review(mem, "gut-check", review_of_answers(mem.today, rows),
                                                    beliefs=pending["beliefs"])
                _write_pending(mem, None)
            else:
                _write_pending(mem, pending)
    return Answer(belief_id, verdict, note, round(before.confidence, 2), round(after.confidence, 2),
                  after.status, said, progress, successor)


def write_review(mem, kind: str, markdown: str, beliefs=()) -> dict[str, Any]:
    """Write a review (`reviews/<date>.md`, the counter reset); what the caller needs to say about it."""
    from ..api.sessions import record_review

    sha = record_review(mem, kind, markdown, beliefs)
    s = mem.vault.read_sessions()
    return {"review": f"reviews/{mem.today.isoformat()}.md", "commit": sha,
            "next_review_at": s.next_review_at}


def review_of_answers(today: date, answers: list[tuple[str, str, str, str]]) -> str:
    """The review file body for a completed gut-check: (id, title, verdict, note)."""
    out = [f"Gut-check completed on {today.isoformat()}.", ""]
    for bid, title, verdict, note in answers:
        line = f"- `{bid}` {title}: **{verdict}**"
        if note:
            line += f" — {tx.one_line(note, 160)}"
        out.append(line)
    return "\n".join(out) + "\n"


# --- the gut-check: which six beliefs to ask about -------------------------------------------------

GUT_N = 3


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
    problems: tuple[Problem, ...]  # JSON: [{path, line, message}], as every command
    # SPEC §14: beliefs from confidence bands where the user's verdicts are still thin, so
    # that calibration learns about every band, not only the two ends.
    calibrate: tuple[GutItem, ...] = ()

    @property
    def beliefs(self) -> tuple[str, ...]:
        return tuple(i.belief.id for i in self.high + self.low + self.calibrate)


def gut_check(snapshot: Snapshot, params: Params = DEFAULTS, today: date | None = None) -> GutCheck:
    """The 3 strongest and 3 weakest interpretive beliefs (effective confidence).

    With fewer than six interpretive beliefs the pool widens to the other
    non-fact beliefs (behavioral, self-report), so a young vault still gets a
    full gut-check; `pool` says when that happened."""
    today = today or snapshot.today or date.today()
    views = active_views(snapshot, today, params)
    interp = [v for v in views if v.basis == "interpretive"]
    pool, name = interp, "interpretive"
    if len(interp) < 2 * GUT_N:
        pool = [v for v in views if v.basis != "fact"]
        if len(pool) > len(interp):
            name = "interpretive+"
    high, low = top_and_bottom(pool, GUT_N)
    bmap = {b.id: b for b in active(snapshot)}
    high, low = detailed(high, bmap), detailed(low, bmap)
    thin = detailed(thin_bands(snapshot, pool, {v.id for v in high + low}, params), bmap)
    return GutCheck(
        today=today,
        high=tuple(GutItem(v, "Still true?", say(v.title, v.certainty)) for v in high),
        low=tuple(GutItem(v, "Still uncertain?", say(v.title, v.certainty)) for v in low),
        pool=name, interpretive=len(interp),
        problems=snapshot.problems,
        calibrate=tuple(GutItem(v, "Still true?", say(v.title, v.certainty)) for v in thin))


CALIBRATE_N = 2


def thin_bands(snapshot: Snapshot, pool: list[BeliefView], taken: set[str], params: Params,
               n: int = CALIBRATE_N) -> list[BeliefView]:
    """Up to `n` beliefs of `pool` (not in `taken`) from the bands with the fewest verdicts,
    thinnest first, one per band: the one unconfirmed the longest."""
    from ..core import calibration as cal

    figures = cal.calibrate(cal.verdicts(snapshot.beliefs), params)
    counts = {b.name: b.n for b in figures.bands}
    by_band: dict[str, list[BeliefView]] = {}
    for v in pool:
        if v.id not in taken:
            by_band.setdefault(cal.band_of(v.effective_confidence, params), []).append(v)
    out: list = []
    for band in sorted(by_band, key=lambda b: (counts.get(b, 0), b)):
        if counts.get(band, 0) >= cal.BAND_MIN or len(out) >= n:
            continue
        out.append(min(by_band[band], key=lambda v: (v.confirmed or v.first, v.id)))
    return out
