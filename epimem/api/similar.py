"""Rule 17: a new belief is checked against the active ones before it is created.

Two checks, cheapest first: the same normalised title or statement
(`core.ids.text_key`), then recall's similarity (`epimem.recall.similar_beliefs`,
its public function) at or above `similar_threshold` from `epistemology.md`.
Cosine similarity tells a duplicate from a contradiction poorly (docs/recall.md:
"Similar beliefs"), so nothing is ever merged here: the caller is shown the
similar beliefs and chooses to connect to one, or to insist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.ids import text_key

if TYPE_CHECKING:
    from .memory import Memory

LIMIT = 3


def similar(mem: Memory, title: str, statement: str = "", *, exclude: frozenset[str] = frozenset()) -> list[dict]:
    """Active beliefs close to a would-be new one: [{id, title, similarity}], closest first."""
    threshold = mem.params.similar_threshold
    beliefs, _ = mem.vault.load_beliefs()
    active = {b.id: b for b in beliefs if b.status == "active" and b.id not in exclude}
    if not active:
        return []
    keys = {text_key(t) for t in (title, statement) if t and text_key(t)}
    found: dict[str, float] = {b.id: 1.0 for b in active.values()
                               if text_key(b.title) in keys or text_key(b.statement) in keys}
    query = ". ".join(t for t in (title, statement) if t)
    from ..recall import similar_beliefs

    for s in similar_beliefs(mem, query, limit=LIMIT + len(found)):
        sim = s.get("similarity")
        if s.get("id") in active and sim is not None and sim >= threshold:
            found.setdefault(s["id"], round(float(sim), 2))
    ranked = sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[:LIMIT]
    return [{"id": bid, "title": active[bid].title, "similarity": sim} for bid, sim in ranked]
