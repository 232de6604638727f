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
from ..store import transaction
from . import render
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


def answer(mem, belief_id: str, verdict: str, note: str = "", retire: bool = False) -> Answer:
    verdict = verdict.strip().lower()
    if verdict not in VERDICTS:
        raise AnswerError(f"--verdict must be true, false or unsure, not {verdict!r}")
    if retire and verdict != "false":
        raise AnswerError("--retire goes with --verdict false")
    note = note.strip()
    before = mem.belief(belief_id)
    text = f"gut-check: {verdict}" + (f"; {note}" if note else "")
    if verdict == "true":
        after = mem.reinforce(belief_id, note=text, kind="reinforcing", affirm=True)
        said = (f"Recorded: {belief_id} is still true, in your words "
                "(no number changes; decay counts from today).")
    elif verdict == "false":
        after = mem.reject(belief_id, retire=retire, note=text)
        said = (f"Retired {belief_id}." if retire else
                f"Lowered {belief_id}: {before.confidence:.2f} → {after.confidence:.2f}.")
    else:
        after = mem.reinforce(belief_id, note=text, kind="unsure")
        said = f"Noted: unsure about {belief_id} (no number changes)."

    progress: dict[str, Any] = {"open": False, "answered": 0, "of": 0, "complete": False, "recorded": None}
    # Most answers come with no gut-check open: no need to queue for the vault lock to find that out.
    if not _path(mem).exists():
        return Answer(belief_id, verdict, note, round(before.confidence, 2), round(after.confidence, 2),
                      after.status, said, progress)
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
                progress["recorded"] = write_review(mem, "gut-check", render.review_of_answers(mem.today, rows),
                                                    beliefs=pending["beliefs"])
                _write_pending(mem, None)
            else:
                _write_pending(mem, pending)
    return Answer(belief_id, verdict, note, round(before.confidence, 2), round(after.confidence, 2),
                  after.status, said, progress)


def write_review(mem, kind: str, markdown: str, beliefs=()) -> dict[str, Any]:
    """Write a review (`reviews/<date>.md`, the counter reset); what the caller needs to say about it."""
    sha = mem.record_review(kind, markdown, beliefs=beliefs)
    s = mem.vault.read_sessions()
    return {"review": f"reviews/{mem.today.isoformat()}.md", "commit": sha,
            "next_review_at": s.next_review_at}


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

    @property
    def beliefs(self) -> tuple[str, ...]:
        return tuple(i.belief.id for i in self.high + self.low)


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
    return GutCheck(
        today=today,
        high=tuple(GutItem(v, "Still true?", say(v.title, v.certainty)) for v in high),
        low=tuple(GutItem(v, "Still uncertain?", say(v.title, v.certainty)) for v in low),
        pool=name, interpretive=len(interp),
        problems=snapshot.problems)
