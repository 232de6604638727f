"""A belief's confidence over time, as the visual mirror draws it (SPEC §13). Pure.

Three things make one timeline:

- **steps**: the stored confidence at each commit that touched the belief file,
  from `epimem history` (git). When git's history of the file begins after the
  belief was first recorded (a vault imported or committed in one go), the
  moves its `## Evidence` lines recorded, `(0.30 → 0.20)`, fill in the time
  before, marked `source="evidence"` and drawn dashed: what the file says
  happened, not what git saw.
- **decay**: the effective value (SPEC §2.7) of today's stored value, from the
  day decay counts from (`confirmed`, else `first`) to today, or from the last
  move of the value after it. A commit that only shows the file as it already was
  (git's first sight of a copied or imported vault) is no move: the decay of such a
  vault starts where the rule says, not at its first commit.
- **markers**: the evidence lines, by what they did: confirmations, challenges,
  rejections and the user's own verdicts; each one links to its evidence text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from ..core import kernel, rules
from ..core.model import Belief, Evidence
from ..core.params import DEFAULTS, Params

# What an evidence line did, for the legend and the marker's shape.
MARKER_KINDS = {
    "single": "confirmation", "confirming": "confirmation",
    "contradicting": "challenge", "complicating": "challenge", "diverging": "challenge",
    "rejected": "rejection", "retired": "rejection",
    # A gut-check answer or the user restating the belief: their own word on it.
    "reinforcing": "verdict", "reinforced": "verdict", "unsure": "verdict",
}


def marker_kind(ev: Evidence) -> str:
    """What an evidence line is on the chart and the page (a key of MARKER_LABELS). "Your verdict"
    is the user's word alone: a line that links an observation is what an assistant reported —
    a restatement, or a confirmation the rules held back (rules 3 and 19) — and shows as the
    confirmation it is, unless it carries the tag of an interview answer (`core.calibration`)."""
    kind = MARKER_KINDS.get(ev.kind, "note")
    if kind == "verdict" and ev.link.startswith("observations/"):
        from ..core import calibration

        if calibration.parse("", ev.date, ev.note) is None:
            return "confirmation"
    return kind


MARKER_LABELS = {"confirmation": "confirmation", "challenge": "challenge", "rejection": "rejection",
                 "verdict": "your verdict", "note": "edit or note"}
_MOVE = re.compile(r"\((\d(?:\.\d+)?)\s*→\s*(\d(?:\.\d+)?)\)")
DECAY_SAMPLES = 24


@dataclass(frozen=True)
class Step:
    day: date
    confidence: float
    status: str
    label: str          # the commit subject, or the evidence line
    source: str         # "git" | "evidence"
    sha: str = ""


@dataclass(frozen=True)
class Marker:
    day: date
    kind: str           # a key of MARKER_LABELS
    strength: str       # the evidence line's own word (confirming, rejected, …)
    text: str
    link: str           # the observation it cites ("observations/2026-11#obs-…"), or ""
    anchor: str         # the id of its evidence item on the page
    value: float        # the stored value just after it, for where it sits on the chart


@dataclass(frozen=True)
class Timeline:
    belief: str
    start: date
    end: date
    steps: tuple[Step, ...]
    decay: tuple[tuple[date, float], ...]
    markers: tuple[Marker, ...]
    effective: float


def evidence_anchor(belief_id: str, n: int) -> str:
    return f"ev-{belief_id}-{n}"


def _move(note: str) -> tuple[float, float] | None:
    m = _MOVE.search(note)
    return (float(m.group(1)), float(m.group(2))) if m else None


def _reconstructed(b: Belief, before: date | None) -> list[Step]:
    """Steps the evidence log recorded before git's first point (all of them without git)."""
    out: list[Step] = []
    for ev in b.evidence:
        if ev.date is None or (before is not None and ev.date >= before):
            continue
        mv = _move(ev.note)
        if mv is None:
            continue
        if not out:
            out.append(Step(b.first, mv[0], "active", "first recorded", "evidence"))
        out.append(Step(ev.date, mv[1], "active", f"{ev.kind}: {ev.note}", "evidence"))
    return out


def _value_at(steps: list[Step], day: date, default: float) -> float:
    v = steps[0].confidence if steps else default
    for s in steps:
        if s.day <= day:
            v = s.confidence
        else:
            break
    return v


def timeline(b: Belief, points, today: date, params: Params = DEFAULTS) -> Timeline:
    """`points`: the belief's `HistoryPoint`s, oldest first (empty outside git)."""
    git_steps = [Step(p.when.date(), p.confidence, p.status or "active", p.subject, "git", p.sha)
                 for p in points if p.confidence is not None]
    first_git = git_steps[0].day if git_steps else None
    steps = _reconstructed(b, first_git) + git_steps
    if first_git is not None and steps[0] is git_steps[0] and b.first < first_git:
        # Git saw the file only later (an import, a vault committed in one go): the value it
        # first saw is the best there is for the time before, drawn dashed as not seen by git.
        steps.insert(0, Step(b.first, git_steps[0].confidence, git_steps[0].status,
                             "first recorded (value as git first saw it)", "evidence"))
    if not steps:
        steps = [Step(b.first, b.confidence, b.status, "as stored now", "evidence")]
    elif not git_steps and steps[-1].confidence != b.confidence:
        # An uncommitted vault whose file says something else than its last recorded move.
        steps.append(Step(max(steps[-1].day, b.first), b.confidence, b.status, "as stored now", "evidence"))
    steps.sort(key=lambda s: s.day)  # stable: same-day commits keep git's order
    start = min(b.first, steps[0].day)
    end = max(today, steps[-1].day)

    markers = []
    for n, ev in enumerate(b.evidence):
        if ev.date is None:
            continue
        kind = marker_kind(ev)
        mv = _move(ev.note)
        value = mv[1] if mv else _value_at(steps, ev.date, b.confidence)
        markers.append(Marker(ev.date, kind, ev.kind, ev.note, ev.link, evidence_anchor(b.id, n), value))
        start = min(start, ev.date)

    anchor = kernel.anchor(b.first, b.confirmed)
    decay_from = max([anchor] + [s.day for s in _moves(steps)])
    decay: list[tuple[date, float]] = []
    if b.status == "active" and decay_from < end:
        span = (end - decay_from).days
        days = sorted({round(span * i / DECAY_SAMPLES) for i in range(DECAY_SAMPLES + 1)})
        for d in days:
            day = decay_from + timedelta(days=d)
            decay.append((day, round(_effective(b, day, params), 3)))
    eff = round(_effective(b, today, params), 3)
    return Timeline(b.id, start, end, tuple(steps), tuple(decay), tuple(markers), eff)


def _moves(steps: list[Step]) -> list[Step]:
    """The steps where the stored value or status changed: a step equal to the one before is
    none, nor is git's first point after the evidence log's (when git first saw the file,
    not when the value moved)."""
    return [s for prev, s in zip(steps, steps[1:])
            if (s.confidence, s.status) != (prev.confidence, prev.status)
            and not (s.source == "git" and prev.source == "evidence")]


def _effective(b: Belief, day: date, params: Params) -> float:
    return rules.effective_confidence(b, day, params)


def evidence_items(b: Belief) -> list[tuple[str, Evidence]]:
    """(anchor, evidence line) in the order of the file: what markers link to."""
    return [(evidence_anchor(b.id, n), ev) for n, ev in enumerate(b.evidence)]
