"""Rule 17: a new belief is checked against the active ones before it is created.

Two checks, cheapest first: the same normalised title or statement
(`core.ids.text_key`), then recall's similarity (`epimem.recall.similar_beliefs`,
its public function) at or above `similar_threshold` from `epistemology.md`.
Cosine similarity tells a duplicate from a contradiction poorly (docs/recall.md:
"Similar beliefs"), so nothing is ever merged here: the caller is shown the
similar beliefs and chooses to connect to one, or to insist.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.ids import claim_key, plain

if TYPE_CHECKING:
    from .service import Service

LIMIT = 3


def similar(mem: Service, title: str, statement: str = "", *, exclude: frozenset[str] = frozenset(),
            batch: Sequence[tuple[str, str, str]] = ()) -> list[dict]:
    """Beliefs close to a would-be new one: [{id, title, similarity}], closest first.

    The active beliefs, and `batch`: (the id it would get, title, statement) of the new
    beliefs before it in the same call, which are checked like any other (`in_batch`: true).
    Both sides are compared as claims (`claim_key`: abbreviations written out, plurals made
    singular), for the same text and for the similarity test."""
    threshold = mem.params.similar_threshold
    beliefs, _ = mem.vault.load_beliefs()
    pool: dict[str, tuple[str, str, bool]] = {b.id: (b.title, b.statement, False) for b in beliefs
                                              if b.status == "active" and b.id not in exclude}
    for bid, t, st in batch:
        pool.setdefault(bid, (t, st, True))
    if not pool:
        return []
    keys = {claim_key(t) for t in (title, statement) if t and claim_key(t)}
    found: dict[str, float] = {bid: 1.0 for bid, (t, st, _) in pool.items()
                               if claim_key(t) in keys or (st and claim_key(st) in keys)}
    query = ". ".join(plain(t) for t in (title, statement) if t)  # the index is asked what a person reads
    from ..recall import similar_beliefs, text_similarities

    raw: dict[str, float] = {}
    for s in similar_beliefs(mem, query, limit=LIMIT + len(found) + 2):
        sim = s.get("similarity")
        if s.get("id") in pool and sim is not None:
            raw[s["id"]] = float(sim)
    # The nearest by the index, and this call's own new beliefs, compared as claims.
    rescore = [bid for bid in dict.fromkeys([*raw, *(b for b, (_, _, inb) in pool.items() if inb)])
               if bid not in found]
    claims = text_similarities(mem, claim_key(query), [claim_key(". ".join(x for x in pool[b][:2] if x))
                                                       for b in rescore])
    # The test is on the claims, not the raw words: "Uses tmux" and "Uses vim" share a verb,
    # "Keeps PRs small" and "Keeps pull requests small" a claim (bench/similar_pairs.py).
    for bid, sim in zip(rescore, claims):
        if sim >= threshold:
            found[bid] = round(sim, 2)
    ranked = sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[:LIMIT]
    return [dict({"id": bid, "title": pool[bid][0], "similarity": sim}, **({"in_batch": True} if pool[bid][2] else {}))
            for bid, sim in ranked]
