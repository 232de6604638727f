"""Inline SVG for the visual mirror, drawn in Python (no chart library, no script). Pure.

Every text that comes from the vault goes through `esc`; the page template
inserts the result as markup, so this module is where escaping of charts lives.
Each drawn point carries `data-date` and `data-value` so a reader (or a test)
can check exactly what is drawn; colours come from CSS classes, so light, dark
and print themes restyle the same drawing.
"""

from __future__ import annotations

from datetime import date
from html import escape

from .history import MARKER_LABELS, Timeline

W, H = 640, 170
LEFT, RIGHT, TOP, BOTTOM = 40, 12, 10, 26


def esc(s: object) -> str:
    return escape(str(s), quote=True)


def _fmt(v: float) -> str:
    return f"{v:.2f}"


class _Scale:
    def __init__(self, start: date, end: date):
        self.start = start
        self.days = max((end - start).days, 1)

    def x(self, d: date) -> float:
        return round(LEFT + (W - LEFT - RIGHT) * (d - self.start).days / self.days, 1)

    @staticmethod
    def y(v: float) -> float:
        return round(TOP + (H - TOP - BOTTOM) * (1 - max(0.0, min(1.0, v))), 1)


def _marker_shape(kind: str, x: float, y: float) -> str:
    if kind == "confirmation":      # up triangle
        return f'<path d="M{x} {y - 6}L{x + 5.5} {y + 4}H{x - 5.5}Z"/>'
    if kind == "challenge":         # down triangle
        return f'<path d="M{x} {y + 6}L{x + 5.5} {y - 4}H{x - 5.5}Z"/>'
    if kind == "rejection":         # a cross
        return (f'<path d="M{x - 5} {y - 5}L{x + 5} {y + 5}M{x + 5} {y - 5}L{x - 5} {y + 5}" '
                f'class="stroke"/>')
    if kind == "verdict":           # a diamond
        return f'<path d="M{x} {y - 6}L{x + 6} {y}L{x} {y + 6}L{x - 6} {y}Z"/>'
    return f'<rect x="{x - 3}" y="{y - 3}" width="6" height="6"/>'


def timeline_svg(t: Timeline, title: str, tiers: tuple[tuple[str, float], ...]) -> str:
    sc = _Scale(t.start, t.end)
    out = [f'<svg class="timeline" viewBox="0 0 {W} {H}" role="img" aria-label="{esc(_summary(t, title))}" '
           f'data-belief="{esc(t.belief)}" xmlns="http://www.w3.org/2000/svg">']
    # Tier bands: the lower bound of each tier, with its name.
    for name, low in tiers:
        if 0 < low < 1:
            y = sc.y(low)
            out.append(f'<line class="tier" x1="{LEFT}" x2="{W - RIGHT}" y1="{y}" y2="{y}"/>'
                       f'<text class="tier-label" x="{W - RIGHT - 2}" y="{y - 2}" text-anchor="end">'
                       f'{esc(name)}</text>')
    for v in (0.0, 0.5, 1.0):
        out.append(f'<text class="axis" x="{LEFT - 6}" y="{sc.y(v) + 4}" text-anchor="end">{v:.1f}</text>')
    out.append(f'<line class="axis-line" x1="{LEFT}" x2="{W - RIGHT}" y1="{H - BOTTOM}" y2="{H - BOTTOM}"/>')
    out.append(f'<text class="axis" x="{LEFT}" y="{H - 8}">{t.start.isoformat()}</text>'
               f'<text class="axis" x="{W - RIGHT}" y="{H - 8}" text-anchor="end">{t.end.isoformat()}</text>')

    # The stored value as steps: horizontal until the next point, then vertical.
    for cls, segment in _step_paths(t, sc):
        out.append(f'<path class="{cls}" d="{segment}"/>')
    if t.decay:
        d = "M" + "L".join(f"{sc.x(day)} {sc.y(v)}" for day, v in t.decay)
        out.append(f'<path class="effective" d="{d}"/>')
        day, v = t.decay[-1]
        out.append(f'<circle class="effective-now" cx="{sc.x(day)}" cy="{sc.y(v)}" r="3" '
                   f'data-date="{day.isoformat()}" data-value="{v:.3f}"><title>effective today {day.isoformat()}: '
                   f'{v:.3f}</title></circle>')
    out.append('<g class="steps">')
    for s in t.steps:
        out.append(f'<circle class="step {s.source}" cx="{sc.x(s.day)}" cy="{sc.y(s.confidence)}" r="3" '
                   f'data-date="{s.day.isoformat()}" data-value="{_fmt(s.confidence)}" data-source="{s.source}">'
                   f'<title>{s.day.isoformat()} · {_fmt(s.confidence)} · {esc(s.label)}</title></circle>')
    out.append('</g><g class="markers">')
    for m in t.markers:
        x, y = sc.x(m.day), sc.y(m.value)
        label = f"{m.day.isoformat()} · {MARKER_LABELS[m.kind]} ({m.strength})" + (f": {m.text}" if m.text else "")
        out.append(f'<a href="#{esc(m.anchor)}" class="marker {m.kind}" data-date="{m.day.isoformat()}" '
                   f'data-kind="{m.kind}" aria-label="{esc(label)}">{_marker_shape(m.kind, x, y)}'
                   f'<title>{esc(label)}</title></a>')
    out.append("</g></svg>")
    return "".join(out)


def _step_paths(t: Timeline, sc: _Scale) -> list[tuple[str, str]]:
    """One path per source, so the time reconstructed from the evidence log is drawn dashed."""
    out: list[tuple[str, str]] = []
    steps = t.steps
    for i, s in enumerate(steps):
        # The last step runs until decay takes over, or to today when decay began before it.
        nxt = steps[i + 1].day if i + 1 < len(steps) else (
            t.decay[0][0] if t.decay and t.decay[0][0] >= s.day else t.end)
        x0, x1, y = sc.x(s.day), sc.x(nxt), sc.y(s.confidence)
        d = f"M{x0} {y}H{x1}"
        if i + 1 < len(steps):
            d += f"V{sc.y(steps[i + 1].confidence)}"
        out.append(("stored" + (" reconstructed" if s.source == "evidence" else ""), d))
    return out


def _summary(t: Timeline, title: str) -> str:
    first, last = t.steps[0], t.steps[-1]
    return (f"Confidence over time for “{title}”: {_fmt(first.confidence)} on {first.day.isoformat()}, "
            f"{_fmt(last.confidence)} stored since {last.day.isoformat()}, {t.effective:.3f} effective today; "
            f"{len(t.markers)} evidence markers.")


def bars_svg(rows: list[tuple[str, dict[str, int]]], columns: tuple[str, ...], label: str) -> str:
    """Horizontal stacked bars: one row per tier, one segment per permanence."""
    total = max((sum(c.values()) for _, c in rows), default=0) or 1
    row_h, left, width = 22, 96, 420
    h = row_h * len(rows) + 24
    out = [f'<svg class="bars" viewBox="0 0 {left + width + 60} {h}" role="img" aria-label="{esc(label)}" '
           f'xmlns="http://www.w3.org/2000/svg">']
    for i, (name, counts) in enumerate(rows):
        y = i * row_h + 4
        out.append(f'<text class="axis" x="{left - 6}" y="{y + 13}" text-anchor="end">{esc(name)}</text>')
        x = float(left)
        for j, col in enumerate(columns):
            n = counts.get(col, 0)
            if not n:
                continue
            w = round(width * n / total, 1)
            out.append(f'<rect class="seg seg-{j}" x="{x}" y="{y}" width="{max(w, 1)}" height="{row_h - 6}" '
                       f'data-tier="{esc(name)}" data-permanence="{esc(col)}" data-count="{n}">'
                       f'<title>{esc(name)} · {esc(col)}: {n}</title></rect>')
            x += w
        out.append(f'<text class="axis" x="{x + 6}" y="{y + 13}">{sum(counts.values())}</text>')
    for j, col in enumerate(columns):
        x = left + j * 100
        out.append(f'<rect class="seg seg-{j}" x="{x}" y="{h - 14}" width="10" height="10"/>'
                   f'<text class="axis" x="{x + 14}" y="{h - 5}">{esc(col)}</text>')
    out.append("</svg>")
    return "".join(out)


def legend_keys() -> list[tuple[str, str]]:
    """(label, a small drawing of its marker) for the legend, in the shapes the charts use."""
    return [(label, f'<svg viewBox="0 0 30 16" class="key" aria-hidden="true" xmlns="http://www.w3.org/2000/svg">'
                    f'<g class="marker {kind}">{_marker_shape(kind, 15, 8)}</g></svg>')
            for kind, label in MARKER_LABELS.items()]


# --- dependencies (SPEC §14) -----------------------------------------------------------------

DEP_COL, DEP_ROW, DEP_BOX_W, DEP_BOX_H = 230, 34, 200, 24
DEP_MAX = 60  # nodes drawn; the list beside the drawing names every dependency


def dependencies_svg(edges: list[tuple[str, str]], titles: dict[str, str], flagged: set[str]) -> str:
    """What rests on what: each belief a box, a column per depth (a base left of what rests
    on it), an arrow from each dependant to its base. A flagged dependant (its base changed)
    is drawn with the class `flagged`."""
    nodes = sorted({n for e in edges for n in e})[:DEP_MAX]
    keep = set(nodes)
    edges = [(a, b) for a, b in edges if a in keep and b in keep]
    bases: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        bases[a].append(b)
    depth: dict[str, int] = {}

    def level(n: str, seen: frozenset[str] = frozenset()) -> int:
        if n in depth:
            return depth[n]
        if n in seen:  # a loop (validate reports it): drawn at the depth reached
            return 0
        d = 1 + max((level(b, seen | {n}) for b in bases[n]), default=-1)
        depth[n] = d
        return d

    for n in nodes:
        level(n)
    columns: dict[int, list[str]] = {}
    for n in nodes:
        columns.setdefault(depth[n], []).append(n)
    pos = {n: (10 + d * DEP_COL, 10 + i * DEP_ROW) for d, ns in columns.items() for i, n in enumerate(ns)}
    w = 20 + (max(columns, default=0) + 1) * DEP_COL
    h = 20 + max((len(ns) for ns in columns.values()), default=1) * DEP_ROW
    out = [f'<svg class="dependencies" viewBox="0 0 {w} {h}" role="img" '
           f'aria-label="{esc(f"{len(edges)} dependencies between {len(nodes)} beliefs")}" '
           'xmlns="http://www.w3.org/2000/svg">',
           '<defs><marker id="dep-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M0 0L10 5L0 10Z"/></marker></defs>']
    for a, b in edges:
        (ax, ay), (bx, by) = pos[a], pos[b]
        out.append(f'<line class="dep-edge" data-from="{esc(a)}" data-to="{esc(b)}" x1="{ax}" '
                   f'y1="{ay + DEP_BOX_H / 2}" x2="{bx + DEP_BOX_W}" y2="{by + DEP_BOX_H / 2}" '
                   'marker-end="url(#dep-arrow)"/>')
    for n in nodes:
        x, y = pos[n]
        label = titles.get(n, n)
        short = label if len(label) <= 30 else label[:29] + "…"
        cls = "dep-node flagged" if n in flagged else "dep-node"
        out.append(f'<g class="{cls}" data-id="{esc(n)}"><title>{esc(label)} [{esc(n)}]</title>'
                   f'<rect x="{x}" y="{y}" width="{DEP_BOX_W}" height="{DEP_BOX_H}" rx="4"/>'
                   f'<text x="{x + 6}" y="{y + 16}">{esc(short)}</text></g>')
    out.append("</svg>")
    return "".join(out)
