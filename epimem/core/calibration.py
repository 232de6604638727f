"""Calibration from the user's own verdicts (SPEC §14): does "0.80" mean right four times in five?

Every verdict the user gives on a belief — a gut-check answer, MCP `answer`, a rejection,
a supersession, an interview answer that confirms or denies — is written into the
evidence line that records it, with the confidence the belief had when asked:

    - 2026-06-01 · rejected — gut-check: false; moved (gut-check verdict false at 0.61;
      stored 0.75 behavioral, durable, 42 days) (0.75 → 0.55)

(one line in the file)

so the files stay the truth (an undo takes the verdict back with the answer, a merge
keeps both machines' verdicts, an export carries them). This module writes and reads
that tag, and computes from the verdicts, per confidence band, how often the user said
"still true" against the band's confidence, with a Wilson interval, the Brier score, and
— with enough verdicts — the parameter changes the numbers support. Pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date

from . import kernel
from .model import Belief
from .params import DEFAULTS, Params

OUTCOMES = ("true", "false", "unsure")
# Where a verdict came from (the tag's first word).
SOURCES = ("gut-check", "answer", "rejection", "retirement", "supersession", "interview")
# Observation sources whose confirming or contradicting self-reports are the user's answers.
INTERVIEW_SOURCES = frozenset({"mirror-interview", "interview"})

# The bands verdicts are counted in: the tiers' ranges, so "established" means the same
# here as everywhere else; a band says nothing about itself with fewer than BAND_MIN.
BAND_MIN = 10
# The audit proposes a parameter only from this many verdicts, and only a change that
# lowers the Brier score of those verdicts by PROPOSE_GAIN or more.
PROPOSE_MIN = 30
PROPOSE_GAIN = 0.005
Z = 1.96  # 95 % intervals

_TAG = re.compile(
    r"[ \t]*\((?P<how>[a-z][a-z\-]*) verdict (?P<v>true|false|unsure) at (?P<c>[01]\.\d\d); "
    r"stored (?P<s>[01]\.\d\d) (?P<b>[a-z\-]+), (?P<p>[a-z]+), (?P<d>\d+) days?\)")


@dataclass(frozen=True)
class Verdict:
    belief: str
    date: date | None
    outcome: str        # true | false | unsure
    confidence: float   # effective, as the user was shown it when asked
    stored: float
    basis: str
    permanence: str
    days: int           # days since decay's anchor when asked
    source: str         # one of SOURCES


def asked(b: Belief, today: date, params: Params = DEFAULTS) -> tuple[float, int]:
    """(effective confidence, days since decay's anchor) of `b` on `today`: what the user was asked about."""
    anchor = kernel.anchor(b.first, b.confirmed)
    eff = kernel.effective_at(b.confidence, b.permanence, anchor, b.pinned, today, params.decay, params.decay_floor)
    return round(eff + 1e-9, 2), max(0, (today - anchor).days)


def tag(b: Belief, outcome: str, source: str, today: date, params: Params = DEFAULTS) -> str:
    """The words appended to the evidence line of a verdict on `b` (as it was when asked)."""
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown verdict {outcome!r}")
    eff, days = asked(b, today, params)
    return (f"({source} verdict {outcome} at {eff:.2f}; stored {b.confidence:.2f} {b.basis}, {b.permanence}, "
            f"{days} day{'s' if days != 1 else ''})")


def with_tag(note: str, b: Belief, outcome: str, source: str, today: date, params: Params = DEFAULTS) -> str:
    return f"{note} {tag(b, outcome, source, today, params)}".strip()


def written_by_someone_else(text: str) -> str | None:
    """Why `text` (what an observation says it saw) may not enter an evidence line, or None.

    A verdict is the user's alone (a gut-check, `answer`, a rejection, an interview answer), and
    `parse` reads it from the words its answer appends to the line. An observation's evidence is
    written into that line as it is, so one that carries those words would count as the user
    saying "still true" (or "no longer"), feeding calibration and the audit's proposals."""
    if _TAG.search(text) is None:
        return None
    return ("it holds the words of a verdict ('… verdict true at 0.80; stored …'): only the user's own answer "
            "(a gut-check, `answer`, an interview) records a verdict; say what was seen without them")


def strip_tag(note: str) -> str:
    """The note without its verdict tag (what a person reads)."""
    return _TAG.sub("", note)


def parse(belief: str, day: date | None, note: str) -> Verdict | None:
    m = _TAG.search(note)
    if m is None:
        return None
    return Verdict(belief, day, m["v"], float(m["c"]), float(m["s"]), m["b"], m["p"], int(m["d"]),
                   m["how"])


def verdicts(beliefs: Iterable[Belief]) -> list[Verdict]:
    """Every verdict recorded in the beliefs' evidence (active or not), oldest first."""
    out = [v for b in beliefs for e in b.evidence if (v := parse(b.id, e.date, e.note)) is not None]
    return sorted(out, key=lambda v: (v.date or date.min, v.belief))


# --- the figures ------------------------------------------------------------------------------------

def wilson(k: int, n: int, z: float = Z) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials ((0, 1) when n is 0)."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, centre - half), min(1.0, centre + half)


def brier(pairs: Iterable[tuple[float, bool]]) -> float | None:
    """Mean squared gap between a confidence and what turned out (None without pairs)."""
    xs = [(c - (1.0 if t else 0.0)) ** 2 for c, t in pairs]
    return sum(xs) / len(xs) if xs else None


def ece(pairs: Iterable[tuple[float, bool]], bins: int = 10) -> float | None:
    """Expected calibration error over equal-width bins (None without pairs)."""
    groups: dict[int, list[tuple[float, bool]]] = {}
    n = 0
    for c, t in pairs:
        groups.setdefault(min(bins - 1, int(c * bins)), []).append((c, t))
        n += 1
    if not n:
        return None
    return sum(len(g) / n * abs(sum(c for c, _ in g) / len(g) - sum(t for _, t in g) / len(g))
               for g in groups.values())


@dataclass(frozen=True)
class Band:
    name: str
    low: float
    high: float
    n: int                 # verdicts true or false (unsure is counted apart)
    still_true: int
    unsure: int
    mean_confidence: float | None
    rate: float | None     # still_true / n
    interval: tuple[float, float]
    judgement: str         # "too few verdicts" | "over-confident" | "under-confident" | "fits"


@dataclass(frozen=True)
class Proposal:
    """A parameter change the verdicts support, with the numbers behind it."""

    key: str               # "decay.durable", "confirm_step"
    current: float
    proposed: float
    verdicts: int          # how many verdicts it rests on
    brier_before: float
    brier_after: float
    reason: str


@dataclass(frozen=True)
class Calibration:
    verdicts: int          # true or false
    unsure: int
    still_true: int
    brier: float | None
    bands: tuple[Band, ...]
    proposals: tuple[Proposal, ...]
    enough: bool           # PROPOSE_MIN verdicts or more
    thin: tuple[str, ...]  # band names with fewer than BAND_MIN verdicts


def bands_of(params: Params) -> list[tuple[str, float, float]]:
    tiers = sorted(params.tiers, key=lambda t: t[1])
    return [(name, low, tiers[i + 1][1] if i + 1 < len(tiers) else 1.0001) for i, (name, low) in enumerate(tiers)]


def band_of(confidence: float, params: Params = DEFAULTS) -> str:
    # A band is a range of numbers, named as the tiers are; not a belief's tier (no basis).
    return kernel.tier(confidence, params.tiers, kernel.FACT)


def _judge(n: int, mean: float | None, lo: float, hi: float) -> str:
    if n < BAND_MIN or mean is None:
        return "too few verdicts"
    if mean > hi:
        return "over-confident"
    if mean < lo:
        return "under-confident"
    return "fits"


def calibrate(vs: Iterable[Verdict], params: Params = DEFAULTS,
              since: Mapping[str, date] | None = None) -> Calibration:
    """The figures of the verdicts `vs`; `since` (parameter key → the day it was last changed by
    the user's verdicts) keeps a proposal to the verdicts given under the value it would change."""
    vs = list(vs)
    decided = [v for v in vs if v.outcome != "unsure"]
    rows = []
    for name, low, high in bands_of(params):
        inb = [v for v in vs if low - 1e-9 <= v.confidence < high - 1e-9]
        dec = [v for v in inb if v.outcome != "unsure"]
        k = sum(1 for v in dec if v.outcome == "true")
        mean = sum(v.confidence for v in dec) / len(dec) if dec else None
        lo, hi = wilson(k, len(dec))
        rows.append(Band(name, low, min(high, 1.0), len(dec), k, len(inb) - len(dec),
                         None if mean is None else round(mean, 3), round(k / len(dec), 3) if dec else None,
                         (round(lo, 3), round(hi, 3)), _judge(len(dec), mean, lo, hi)))
    rows.sort(key=lambda b: -b.low)
    b = brier((v.confidence, v.outcome == "true") for v in decided)
    return Calibration(
        verdicts=len(decided), unsure=len(vs) - len(decided), still_true=sum(v.outcome == "true" for v in decided),
        brier=None if b is None else round(b, 4), bands=tuple(rows),
        proposals=tuple(propose(decided, params, since)), enough=len(decided) >= PROPOSE_MIN,
        thin=tuple(r.name for r in rows if r.n < BAND_MIN))


# --- what the verdicts say about the parameters ---------------------------------------------------------

DECAY_FACTORS = (0.25, 0.5, 0.75, 1.5, 2.0, 3.0)
STEP_CHOICES = (0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.10)


def _decayed(v: Verdict, rate: float, floor: float) -> float:
    return kernel.effective(v.stored, rate, v.days, False, floor)


def _after(vs: list[Verdict], day: date | None) -> list[Verdict]:
    return vs if day is None else [v for v in vs if v.date is not None and v.date > day]


def propose(vs: list[Verdict], params: Params = DEFAULTS, since: Mapping[str, date] | None = None) -> list[Proposal]:
    """Parameter changes that would have made the user's verdicts better predicted.

    Only what the recorded numbers let us evaluate exactly is proposed:
    - the decay rate of a permanence class: each verdict carries the stored confidence and
      the days since confirmation, so the effective confidence under another rate is known;
    - the start and the confirmation step of behavioural beliefs: a stored confidence is its
      start plus its steps, so under another start s' and step c' it would have been
      s' + (stored − start) / step × c'.
    A change is proposed only from PROPOSE_MIN verdicts (those it concerns), and only when it
    lowers their Brier score by PROPOSE_GAIN or more; the best candidate of each key wins.
    A parameter changed by an accepted proposal is judged again only on the verdicts given
    since (`since`): older ones were given under a value that no longer holds, and reading them
    as if under the new one would swing the proposal back and forth."""
    since = since or {}
    vs = [v for v in vs if v.outcome != "unsure"]
    out: list[Proposal] = []
    floor = params.decay_floor
    for perm in sorted({v.permanence for v in vs}):
        mine = [v for v in _after(vs, since.get(f"decay.{perm}")) if v.permanence == perm and v.days > 0]
        if len(mine) < PROPOSE_MIN:
            continue
        rate = kernel.decay_rate(perm, params.decay)
        base = brier((_decayed(v, rate, floor), v.outcome == "true") for v in mine)
        assert base is not None
        best = None
        for f in DECAY_FACTORS:
            r = rate * f
            s = brier((_decayed(v, r, floor), v.outcome == "true") for v in mine)
            assert s is not None
            if best is None or s < best[1] - 1e-12:
                best = (r, s)
        if best is not None and base - best[1] >= PROPOSE_GAIN:
            r, s = best
            faster = r > rate
            out.append(Proposal(
                f"decay.{perm}", rate, float(f"{r:.4g}"), len(mine), round(base, 4), round(s, 4),
                f"{len(mine)} verdicts on {perm} beliefs: the user found them "
                f"{'less' if faster else 'more'} often still true than their decayed confidence said; "
                f"decay {'faster' if faster else 'slower'} ({rate:g} → {r:.4g} a day)"))
    # Rules 1 and 3 for behavioural beliefs: where one starts and how far a confirmation moves
    # it, fitted together (a belief's stored confidence is its start plus its steps).
    last = max((d for k in ("start.behavioral", "confirm_step") if (d := since.get(k)) is not None), default=None)
    mine = [v for v in _after(vs, last) if v.basis == "behavioral"]
    if len(mine) >= PROPOSE_MIN and params.confirm_step > 0:
        start, step = params.start.get("behavioral", DEFAULTS.start["behavioral"]), params.confirm_step

        def score(s0: float, st: float) -> float:
            got = brier((_rescaled(v, start, step, s0, st, params), v.outcome == "true") for v in mine)
            assert got is not None
            return got

        base = score(start, step)
        top = (start, step, base)
        for s0 in START_CHOICES:
            for st in STEP_CHOICES:
                b = score(s0, st)
                if b < top[2] - 1e-12:
                    top = (s0, st, b)
        s0, st, b = top
        if base - b >= PROPOSE_GAIN:
            higher = s0 + st > start + step
            why = (f"{len(mine)} verdicts on behavioural beliefs: still true {'more' if higher else 'less'} "
                   f"often than their confidence said")
            if s0 != start:
                out.append(Proposal("start.behavioral", start, s0, len(mine), round(base, 4), round(b, 4),
                                    f"{why}; a new one starts at {s0:.2f} instead of {start:.2f}"))
            if st != step:
                out.append(Proposal("confirm_step", step, st, len(mine), round(base, 4), round(b, 4),
                                    f"{why}; confirmations step by {st:.2f} instead of {step:.2f}"))
    return out


START_CHOICES = (0.20, 0.30, 0.40, 0.50, 0.60)


def _rescaled(v: Verdict, start: float, step: float, new_start: float, new_step: float, params: Params) -> float:
    """The effective confidence a behavioural verdict's belief would have had under another start and step."""
    steps = max(0.0, (v.stored - start) / step) if step else 0.0
    stored = min(params.caps.get(v.basis, 0.90), max(0.0, new_start + steps * new_step))
    if v.stored < start - 1e-9:  # lowered below its start by challenges: only the start moves
        stored = max(0.0, v.stored + new_start - start)
    return kernel.effective(stored, kernel.decay_rate(v.permanence, params.decay), v.days, False, params.decay_floor)


def apply_to_meta(meta: dict, proposals: Iterable[Proposal]) -> dict[str, object]:
    """The frontmatter keys of `epistemology.md` that accepting `proposals` changes, with their new values."""
    out: dict[str, object] = {}
    for p in proposals:
        key, _, sub = p.key.partition(".")
        if sub:
            current = out.get(key) or meta.get(key) or {}
            merged = dict(current) if isinstance(current, dict) else {}
            merged[sub] = p.proposed
            out[key] = merged
        else:
            out[key] = p.proposed
    return out
