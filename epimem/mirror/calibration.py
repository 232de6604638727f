"""`epimem mirror calibration` (SPEC §14): how often the user said "still true" of the
beliefs in each confidence band, against the band's confidence.

The figures are `core.calibration`'s, computed from the verdicts recorded in the
beliefs' evidence; this module picks them from a snapshot and says them in words. A
band with fewer than `BAND_MIN` verdicts gets no verdict of its own ("too few"): a
handful of answers says nothing about a confidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from ..core import calibration as cal
from ..core.model import Problem, Snapshot
from ..core.params import DEFAULTS, Params

RECENT = 8


@dataclass(frozen=True)
class CalibrationReport:
    today: date
    figures: cal.Calibration
    recent: tuple[cal.Verdict, ...]   # the latest verdicts, newest first
    band_min: int
    propose_min: int
    problems: tuple[Problem, ...]


def calibration(snapshot: Snapshot, params: Params = DEFAULTS, today: date | None = None,
                calibrated: dict[str, date] | None = None) -> CalibrationReport:
    today = today or snapshot.today or date.today()
    vs = cal.verdicts(snapshot.beliefs)
    return CalibrationReport(today, cal.calibrate(vs, params, calibrated), tuple(reversed(vs[-RECENT:])), cal.BAND_MIN,
                             cal.PROPOSE_MIN, snapshot.problems)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{round(100 * x)} %"


def band_lines(c: cal.Calibration) -> list[str]:
    """The table of the bands, as markdown lines (shared by the audit's section)."""
    out = ["| band | verdicts | still true | confidence | 95 % interval | |",
           "|---|---:|---:|---:|---|---|"]
    for b in c.bands:
        if b.n == 0 and not b.unsure:
            out.append(f"| {b.name} ({b.low:.2f}–{b.high:.2f}) | 0 | — | — | — | no verdicts yet |")
            continue
        lo, hi = b.interval
        unsure = f" (+{b.unsure} unsure)" if b.unsure else ""
        out.append(f"| {b.name} ({b.low:.2f}–{b.high:.2f}) | {b.n}{unsure} | {_pct(b.rate)} | "
                   f"{_pct(b.mean_confidence)} | {_pct(lo)}–{_pct(hi)} | {b.judgement} |")
    return out


def summary(c: cal.Calibration) -> str:
    if c.verdicts == 0:
        return ("No verdicts yet: every gut-check answer, rejection, supersession and interview answer "
                "is counted here, with the confidence the belief had when you were asked.")
    brier = f"; Brier score {c.brier:.3f} (0 is perfect, 0.25 is a coin)" if c.brier is not None else ""
    enough = ("" if c.enough else
              f" Parameter changes are proposed from {cal.PROPOSE_MIN} verdicts on; {c.verdicts} so far.")
    return (f"{c.verdicts} verdict{'s' if c.verdicts != 1 else ''}: still true {c.still_true} times"
            f"{brier}.{enough}")


def proposal_lines(c: cal.Calibration) -> list[str]:
    return [f"- `{p.key}`: {p.current:g} → {p.proposed:g} — {p.reason} (Brier {p.brier_before:.3f} → "
            f"{p.brier_after:.3f} over {p.verdicts} verdicts)" for p in c.proposals]


def markdown(r: CalibrationReport) -> str:
    c = r.figures
    lines = [f"# Calibration — {r.today.isoformat()}", "", summary(c), ""]
    if c.verdicts or c.unsure:
        lines += band_lines(c)
        lines.append("")
        lines.append(f"A band is judged from {r.band_min} verdicts on: over-confident when its confidence is "
                     "above the interval of how often you said still true, under-confident when below.")
    if c.proposals:
        lines += ["", "## What the verdicts propose", *proposal_lines(c), "",
                  "`epimem mirror audit --apply` commits them to epistemology.md, citing these numbers."]
    if r.recent:
        lines += ["", "## Latest verdicts"]
        for v in r.recent:
            lines.append(f"- {v.date.isoformat() if v.date else '—'} · {v.belief}: {v.outcome} at "
                         f"{v.confidence:.2f} ({v.source})")
    if c.thin and c.verdicts:
        lines += ["", f"Thin bands ({', '.join(c.thin)}): the gut-check asks about beliefs there."]
    return "\n".join(lines).rstrip() + "\n"
