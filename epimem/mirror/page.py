"""The visual mirror (SPEC §13): one self-contained HTML page of what is believed.

`build(mem)` reads one snapshot, every belief's history from one git walk
(`api.timeline.histories`, cached by commit), runs the same analyses as the
text modes (portrait, audit, `diff` since the last review) and renders
`templates/page/page.html.j2` with Jinja2, autoescaping on: every title,
statement, evidence line and note is escaped by the engine; the charts are
inline SVG drawn by `svg.py`, which escapes what it draws itself.

The page needs nothing but itself: CSS and the small filter script are inline,
no font, image or script is fetched. Static content reads without JavaScript.

A large vault shows the `top` strongest beliefs of each tier as cards with
their timeline and the rest as rows in pages of `page_size` (`<details>`),
so a 10,000-belief page stays a few megabytes. The finished page is cached in
`.epimem/page.html` by a key of everything it is built from (`page_cache`), so
building it again for an unchanged vault only reads that file.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, NamedTuple

from ..core.model import PERMANENCES, Belief, Snapshot
from . import page_cache
from .page_cache import PAGE_SIZE, TEMPLATES, TOP

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..api.service import Service
    from ..core.params import Params
    from ..store.vault import ObservationLog
    from .views import BeliefView

MAX_CHANGES = 60  # sentences in "what changed"
LIVE_MARK = "<!--epimem-live-->"


@dataclass(frozen=True)
class Built:
    html: str
    key: str
    cached: bool
    beliefs: int


# --- building ----------------------------------------------------------------------------

def build(mem: Service, *, top: int = TOP, page_size: int = PAGE_SIZE, live: str = "",
          use_cache: bool = True) -> Built:
    """The page's HTML. `live` is a script for `serve` (inserted after the cache)."""
    mem.vault.require()
    key = page_cache.key(mem.root, mem.today, top, page_size)
    html = page_cache.read(mem.root, key) if use_cache else None
    cached = html is not None
    n = 0
    if html is None:
        html, n = render_page(mem, top=top, page_size=page_size)
        page_cache.write(mem.root, key, html)
    if live:
        html = html.replace(LIVE_MARK, live, 1)
    return Built(html, key, cached, n)


def _histories(mem: Service, snap: Callable[[], Snapshot]) -> dict[str, list]:
    from ..api import timeline
    from ..store import git

    if not git.is_repo_root(mem.root):
        return {}
    return timeline.histories(mem, snapshot=snap)


def _changes(mem: Service, snap: Snapshot, log: ObservationLog) -> dict[str, Any]:
    """"What changed since the last review": sentences for the first beliefs and tensions
    (as `epimem diff` words them), counts for the rest, observations counted by their date."""
    from ..api import timeline
    from ..store import git

    out: dict[str, Any] = {"since": "", "sentences": [], "more": 0, "observations": 0, "counts": {}}
    if not git.is_repo_root(mem.root) or not git.has_commits(mem.root):
        return out
    last = snap.sessions.last_review
    if last is not None:
        since = last.isoformat()
        out["since"] = f"since the last review, {since}"
        out["observations"] = log.count_since(last)
    else:
        first = git.run(mem.root, "rev-list", "--max-parents=0", "HEAD").split()
        since = first[-1]
        out["since"] = "since the vault's first commit (no review recorded yet)"
        out["observations"] = len(log)
    changes, counts = timeline.diff_summary(mem, since, MAX_CHANGES)
    out["sentences"] = [c.sentence() for c in changes]
    noted = sum(n for folder, n in counts.items() if folder in ("beliefs", "tensions", "reviews"))
    out["more"] = max(0, noted - len(changes))
    out["counts"] = counts
    return out


def _obs_id(link: str) -> str:
    return link.rsplit("#", 1)[-1] if "#" in link else ""


def _card(b: Belief, v: BeliefView, points, snap_obs: dict[str, Any], today: date, params: Params) -> dict:
    from . import history as hist
    from . import svg

    t = hist.timeline(b, points, today, params)
    evidence = []
    for anchor, ev in hist.evidence_items(b):
        o = snap_obs.get(_obs_id(ev.link))
        evidence.append({"anchor": anchor, "date": ev.date.isoformat() if ev.date else "", "kind": ev.kind,
                         "marker": hist.marker_kind(ev), "note": ev.note, "link": ev.link,
                         "observation": o.evidence if o else "", "suggests": o.suggests if o else ""})
    return {**_row(b, v)._asdict(), "statement": b.statement, "basis": b.basis, "pinned": b.pinned,
            "depends_on": list(b.depends_on),
            "first": b.first.isoformat(), "challenged": b.challenged.isoformat() if b.challenged else "",
            "chart": svg.timeline_svg(t, b.title, params.tiers), "timeline": t, "evidence": evidence}


class Row(NamedTuple):
    """A belief as a row (and the head of a card): attributes, because the template
    reads them millions of times on a large vault and Jinja looks attributes up first."""

    id: str
    title: str
    kind: str
    permanence: str
    scope: str
    tags: tuple[str, ...]
    tags_attr: str
    tags_text: str      # joined here: a filter call per row costs a 10,000-row page a second
    confidence: str
    effective: str
    tier: str
    certainty: str
    confirmed: str


def _row(b: Belief, v: BeliefView) -> Row:
    return Row(b.id, b.title, b.kind, b.permanence, b.scope, b.tags, "|" + "|".join(b.tags) + "|", ", ".join(b.tags),
               f"{b.confidence:.2f}", f"{v.effective_confidence:.3f}", v.tier, v.certainty,
               b.confirmed.isoformat() if b.confirmed else "")


def _portrait_html(snap: Snapshot, params: Params, today: date, views: list[BeliefView], observations: int) -> str:
    from dataclasses import replace

    import mistune

    from .portrait import portrait_brief
    from .render import portrait_markdown

    # The snapshot holds no observations (the page reads them as a log): their count is given.
    md = portrait_markdown(replace(portrait_brief(snap, params, today, views=views), observations=observations))
    body = md.split("\n", 1)[1] if md.startswith("# Portrait") else md
    # escape=True: raw HTML in a belief's title is shown as text, like everywhere on the page.
    html = mistune.create_markdown(escape=True)(body)
    return str(html).replace("<h2>", "<h3>").replace("</h2>", "</h3>")


def _tensions(snap: Snapshot, obs: dict[str, Any], today: date) -> list[dict]:
    titles = {b.id: b.title for b in snap.beliefs if b.status == "active"}  # what has a card or row to link to
    order = {"unresolved": 0, "watching": 1, "resolved": 2}
    out = []
    for t in sorted(snap.tensions, key=lambda t: (order.get(t.status, 3), t.date, t.id)):
        ev = []
        for link in t.evidence:
            o = obs.get(_obs_id(link))
            ev.append({"link": link, "text": o.evidence if o else "", "date": o.date.isoformat() if o else ""})
        out.append({"id": t.id, "title": t.title, "status": t.status, "belief": t.belief,
                    "belief_title": titles.get(t.belief, ""), "date": t.date.isoformat(),
                    "successor": t.successor, "successor_title": titles.get(t.successor, ""),
                    "rests_on": t.rests_on,
                    "days_open": (today - t.date).days, "what_happened": t.what_happened,
                    "suggests": t.suggests, "resolution": t.resolution, "evidence": ev})
    return out


def _dependencies(snap: Snapshot) -> dict[str, Any]:
    """What rests on what among the active beliefs (SPEC §14): the drawing and the list."""
    from markupsafe import Markup

    from ..core import dependencies as deps
    from . import svg

    active = [b for b in snap.beliefs if b.status == "active"]
    titles = {b.id: b.title for b in snap.beliefs}
    edges = deps.edges(active)
    flagged = {t.belief for t in snap.tensions if t.rests_on and t.status != "resolved"}
    return {"edges": [{"from": a, "from_title": titles.get(a, a), "to": b, "to_title": titles.get(b, b),
                       "flagged": a in flagged, "active": b in {x.id for x in active}} for a, b in edges],
            "svg": Markup(svg.dependencies_svg(edges, titles, flagged)) if edges else ""}


def _calibration(mem: Service, snap: Snapshot, params: Params):
    from ..api.epistemology import calibrated_since
    from ..core import calibration as cal

    return cal.calibrate(cal.verdicts(snap.beliefs), params, calibrated_since(mem))


def _environment():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    # autoescape=True for every template: no title, statement or note reaches the page unescaped.
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    return env


def render_page(mem: Service, *, top: int = TOP, page_size: int = PAGE_SIZE) -> tuple[str, int]:
    from concurrent.futures import Future, ThreadPoolExecutor
    from dataclasses import replace

    from markupsafe import Markup

    from . import svg
    from .audit import count_totals
    from .views import active_views, certainty_words

    params = mem.params
    today = mem.today
    ready: Future[Snapshot] = Future()
    with ThreadPoolExecutor(max_workers=1) as pool:
        # git walks the log (another process: another core) while this thread reads the files;
        # the walk waits for the snapshot only to take the unchanged files' states from it.
        walk = pool.submit(_histories, mem, ready.result)
        try:
            # The observations as the parse cache holds them: the page counts them and shows
            # the few its cards and tensions cite, so it does not build all of them.
            snap, log = mem.snapshot_and_log()
        except BaseException as e:
            ready.set_exception(e)
            raise
        ready.set_result(snap)
        active = active_views(snap, today, params)
        histories = walk.result()
    views = {v.id: v for v in active}
    beliefs = {b.id: b for b in snap.beliefs if b.id in views}

    by_tier: dict[str, list[BeliefView]] = {name: [] for name, _ in params.tiers}
    for v in views.values():
        by_tier.setdefault(v.tier, []).append(v)
    ranked = {name: sorted(by_tier.get(name, []), key=lambda v: (-v.effective_confidence, -v.confidence, v.id))
              for name, _ in params.tiers}
    cited = {_obs_id(ev.link) for vs in ranked.values() for v in vs[:top] for ev in beliefs[v.id].evidence}
    cited.update(_obs_id(link) for t in snap.tensions for link in t.evidence)
    obs = log.find(cited)

    tiers = []
    words = certainty_words(params)
    matrix = []
    for name, low in params.tiers:
        vs = ranked[name]
        cards = [_card(beliefs[v.id], v, histories.get(v.id, []), obs, today, params) for v in vs[:top]]
        for c in cards:
            c["chart"] = Markup(c["chart"])  # drawn by svg.py, which escapes every text it draws
        rest = [_row(beliefs[v.id], v) for v in vs[top:]]
        pages = [rest[i:i + page_size] for i in range(0, len(rest), page_size)]
        tiers.append({"name": name, "low": low, "certainty": words.get(name, ""), "total": len(vs),
                      "cards": cards, "pages": pages, "offset": len(cards)})
        counts = Counter(v.permanence for v in vs)
        matrix.append((name, {p: counts.get(p, 0) for p in PERMANENCES}))

    changed = _changes(mem, snap, log)
    dependencies = _dependencies(snap)
    kinds = sorted({b.kind for b in beliefs.values()})
    tags = sorted({t for b in beliefs.values() for t in b.tags})
    scopes = sorted({b.scope for b in beliefs.values()})
    ctx = {
        "today": today.isoformat(), "vault": mem.root.name,
        "portrait": Markup(_portrait_html(snap, params, today, active, len(log))),
        "totals": replace(count_totals(snap), observations=len(log)), "permanences": PERMANENCES, "matrix": matrix,
        "bars": Markup(svg.bars_svg(matrix, PERMANENCES, "Active beliefs by tier and permanence")),
        "tiers": tiers, "tensions": _tensions(snap, obs, today), "changed": changed,
        "dependencies": dependencies, "calibration": _calibration(mem, snap, params),
        "problems": [str(p) for p in snap.problems], "refused": [str(r) for r in snap.refused],
        "kinds": kinds, "tags": tags, "scopes": scopes, "n_beliefs": len(views), "top": top,
        "legend": [(label, Markup(key)) for label, key in svg.legend_keys()], "live_mark": Markup(LIVE_MARK),
        "css": Markup(_asset("page.css")), "js": Markup(_asset("page.js")),
    }
    return _environment().get_template("page.html.j2").render(**ctx), len(views)


def _asset(name: str) -> str:
    # Inlined verbatim: ours, and neither may contain "</style>" or "</script>".
    return (TEMPLATES / name).read_text(encoding="utf-8")
