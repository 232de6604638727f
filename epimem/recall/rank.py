"""Ranking, as pure functions: filters, reciprocal rank fusion, confidence
weighting, and the budgeted markdown a system prompt receives.

Nothing here touches a file, Chroma or a model; the index hands in ranked ids
and items, and everything below is testable with plain values.

The score of an item is

    rrf   = KW_WEIGHT / (RRF_K + keyword rank) + 1 / (RRF_K + semantic rank)
    score = rrf × (1 − CONF_WEIGHT + CONF_WEIGHT × effective confidence)

Reciprocal rank fusion needs no calibration between BM25 scores and cosine
similarities. The confidence factor (SPEC §6: recall is weighted by effective
confidence) lets a strong belief win a near-tie against a speculative one
without letting confidence outrank relevance. RRF_K (RRF_K_BY_EMBEDDER where an
embedder differs) and KW_WEIGHT were chosen by leave-one-conversation-out
cross-validation on public conversations (bench/recall_public.py, docs/recall.md);
every per-query factor tried there (a subject factor, the keyword list's coverage
and steepness) lowered recall and was removed. A vault can set `recall: {rrf_k: …, keyword_weight: …,
confidence_weight: …}` in epistemology.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from ..core import kernel
from ..core import vocabulary as vocab
from ..core.filters import Filters, QueryError
from ..core.params import DEFAULTS, Params
from .items import BELIEF, Item

RRF_K = 2
# MiniLM's list is chosen at k 5 by every fold of leave-one-conversation-out, and at k 2 its
# fused top 5 falls under MiniLM alone on open-domain questions, which the per-category rule
# forbids (docs/recall.md). chroma-minilm is the same network but was never measured (its
# model downloads on first use), so it keeps the shared k.
RRF_K_BY_EMBEDDER = {"minilm": 5}
KW_WEIGHT = 0.75
CONF_WEIGHT = 0.05
# The semantic ranker embeds the query without the words found in more than this
# share of the indexed texts (api.semantic_query); chosen with RRF_K (docs/recall.md).
COMMON_SHARE = 0.5
# Two results at least this alike (cosine) are about the same subject: the newer ranks first
# (newer_first). Chosen as the lowest value that lowers none of the project's own sets
# (docs/recall.md: "Newer over older").
SAME_SUBJECT = 0.8
# An observation has no confidence of its own: it weighs what the belief it
# supports weighs, or this when it supports none (yet).
NEUTRAL_CONFIDENCE = 0.5


def rrf_k_for(embedder: str) -> int:
    """The RRF k a vault gets when it sets none: the one its embedder was cross-validated at."""
    return RRF_K_BY_EMBEDDER.get(embedder, RRF_K)


def scope_matches(item_scope: str, requested: str | None) -> bool:
    """A project sees its own items and global ones: the one scope rule, `kernel.scope_matches`."""
    return kernel.scope_matches(item_scope, requested)


def effective(item: Item, today: date, params: Params = DEFAULTS) -> float:
    """Effective (decayed) confidence of a belief item, SPEC §2.7."""
    return kernel.effective_at(item.confidence or 0.0, item.permanence or "unknown",
                               kernel.anchor(item.first, item.confirmed) or date.min, item.pinned, today,
                               params.decay, params.decay_floor)


def belief_passes(item: Item, f: Filters, eff: float) -> bool:
    """The belief-level filters, on a belief item."""
    return f.admits(item.kind, item.permanence, item.tags, item.scope, eff)


def passes(item: Item, f: Filters, today: date, params: Params = DEFAULTS,
           belief: Item | None = None) -> bool:
    """Whether `item` may be returned. For an observation, `belief` is the item
    of the belief it connects (None when it connects none we know)."""
    if not f.dated_ok(item.updated):
        return False
    if item.type == BELIEF:
        if not f.status_ok(item.status):
            return False
        return belief_passes(item, f, effective(item, today, params))
    if not f.include_observations:
        return False
    if belief is None:
        return not f.belief_level
    return belief_passes(belief, f, effective(belief, today, params))


def weight_of(item: Item, today: date, params: Params = DEFAULTS, belief: Item | None = None) -> float:
    """The confidence an item brings to its score."""
    if item.type == BELIEF:
        return effective(item, today, params)
    if belief is not None and belief.status == "active":
        return effective(belief, today, params)
    return NEUTRAL_CONFIDENCE


# --- fusion ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Ranked:
    key: str
    score: float
    rrf: float
    confidence: float
    keyword_rank: int | None = None       # 1-based
    keyword_score: float | None = None
    keyword_terms: tuple[str, ...] = ()
    semantic_rank: int | None = None      # 1-based
    semantic_similarity: float | None = None


def rrf(rankings: Iterable[Sequence[str]], k: int = RRF_K,
        weights: Sequence[float] | None = None) -> dict[str, float]:
    """Σ weight / (k + rank) over the rankings (weights default to 1)."""
    out: dict[str, float] = {}
    for n, ranking in enumerate(rankings):
        w = 1.0 if weights is None else weights[n]
        for i, key in enumerate(ranking):
            out[key] = out.get(key, 0.0) + w / (k + i + 1)
    return out


def fuse(keyword: Sequence[tuple[str, float, Sequence[str]]],
         semantic: Sequence[tuple[str, float]],
         confidence: Mapping[str, float], *, limit: int, mode: str = "fused",
         k: int = RRF_K, conf_weight: float = CONF_WEIGHT, kw_weight: float = KW_WEIGHT) -> list[Ranked]:
    """Fuse a keyword ranking [(key, bm25, terms)] and a semantic ranking
    [(key, cosine similarity)], both best first and already filtered, into the
    `limit` best items. `mode` "keyword" or "semantic" uses one ranking only
    (for evaluation); the confidence factor applies in every mode."""
    if mode not in ("fused", "keyword", "semantic"):
        raise QueryError(f"unknown ranking mode {mode!r}")
    kw = list(keyword) if mode != "semantic" else []
    sem = list(semantic) if mode != "keyword" else []
    fused = rrf([[r[0] for r in kw], [r[0] for r in sem]], k, weights=(kw_weight if sem else 1.0, 1.0))
    kw_at = {r[0]: (i + 1, r[1], tuple(r[2])) for i, r in enumerate(kw)}
    sem_at = {r[0]: (i + 1, r[1]) for i, r in enumerate(sem)}
    out = []
    for key, base in fused.items():
        c = confidence.get(key, NEUTRAL_CONFIDENCE)
        kr = kw_at.get(key)
        sr = sem_at.get(key)
        out.append(Ranked(key=key, score=base * (1.0 - conf_weight + conf_weight * c), rrf=base,
                          confidence=c,
                          keyword_rank=kr[0] if kr else None, keyword_score=kr[1] if kr else None,
                          keyword_terms=kr[2] if kr else (),
                          semantic_rank=sr[0] if sr else None,
                          semantic_similarity=sr[1] if sr else None))
    out.sort(key=lambda r: (-r.score, r.keyword_rank or 10**9, r.semantic_rank or 10**9, r.key))
    return out[:max(0, limit)]


def newer_first(keys: Sequence[str], dates: Mapping[str, date | None], similar) -> list[str]:
    """`keys` in rank order, except that of two items about the same subject
    (`similar(a, b)`) the newer comes first: each item moves just above the
    best-ranked item it is similar to and newer than. "Newer" is the date the
    vault last had evidence for it (SPEC §2.7's anchor: confirmed, else first
    seen), so an older belief confirmed since keeps its place."""
    out: list[str] = []
    for key in keys:
        d = dates.get(key)
        at = len(out)
        if d is not None:
            for i, other in enumerate(out):
                od = dates.get(other)
                if od is not None and d > od and similar(key, other):
                    at = i
                    break
        out.insert(at, key)
    return out


def anchor_date(item: Item) -> date | None:
    """What "newer" compares: a belief's last confirmation, else its first sighting; an observation's date."""
    return kernel.anchor(item.first, item.confirmed) if item.type == BELIEF else item.date


# --- results --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Hit:
    id: str
    type: str
    title: str
    score: float
    effective_confidence: float | None
    tier: str = ""
    confidence: float | None = None       # stored
    keyword_terms: tuple[str, ...] = ()
    keyword_rank: int | None = None
    semantic_rank: int | None = None
    semantic_similarity: float | None = None
    kind: str = ""
    permanence: str = ""
    status: str = ""
    scope: str = ""
    tags: tuple[str, ...] = ()
    path: str = ""
    connects: str = ""
    date: date | None = None
    snippet: str = ""                     # the statement (or observation text)
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def why(self) -> str:
        parts = []
        if self.keyword_rank is not None:
            parts.append(f"keyword rank {self.keyword_rank} ({', '.join(self.keyword_terms)})")
        if self.semantic_rank is not None:
            sim = f", similarity {self.semantic_similarity:.2f}" if self.semantic_similarity is not None else ""
            parts.append(f"semantic rank {self.semantic_rank}{sim}")
        return "; ".join(parts)

    def why_json(self) -> dict:
        """Why it ranked where it did; the same object in recall results and similar beliefs."""
        return {"keyword_terms": list(self.keyword_terms), "keyword_rank": self.keyword_rank,
                "semantic_rank": self.semantic_rank,
                "semantic_similarity": None if self.semantic_similarity is None
                else round(self.semantic_similarity, 4),
                "text": self.why}

    def as_json(self) -> dict:
        """One recall result (`Hit.snippet` is `text` here)."""
        d = {
            "id": self.id, "type": self.type, "title": self.title, "score": round(self.score, 6),
            "effective_confidence": vocab.effective_confidence(self.effective_confidence),
            "confidence": vocab.confidence(self.confidence), "tier": self.tier or None,
            "why": self.why_json(), "text": self.snippet, "path": self.path,
        }
        if self.type == BELIEF:
            d.update(kind=self.kind, permanence=self.permanence, status=self.status, scope=self.scope,
                     tags=list(self.tags))
        else:
            d.update(date=vocab.iso(self.date), connects=self.connects)
        return d


def make_hit(r: Ranked, item: Item, today: date, params: Params = DEFAULTS, snippet: str = "") -> Hit:
    eff = effective(item, today, params) if item.type == BELIEF else None
    return Hit(id=item.id, type=item.type, title=item.title, score=r.score, effective_confidence=eff,
               tier=params.tier(eff, item.basis) if eff is not None else "", confidence=item.confidence,
               keyword_terms=r.keyword_terms, keyword_rank=r.keyword_rank,
               semantic_rank=r.semantic_rank, semantic_similarity=r.semantic_similarity,
               kind=item.kind, permanence=item.permanence, status=item.status, scope=item.scope,
               tags=item.tags, path=item.path, connects=item.connects, date=item.date,
               snippet=snippet)


# --- markdown within a token budget ------------------------------------------------------------

def estimate_tokens(text: str) -> int:
    """A deliberately high estimate of a text's tokens for any current LLM
    tokenizer: one per 3 ASCII characters, and one per UTF-8 byte pair beyond
    (a CJK character counts 1.5, an emoji 2). Rendering against it keeps the
    real count under the budget."""
    if not text:
        return 0
    ascii_n = sum(1 for c in text if ord(c) < 128)
    other_bytes = len(text.encode("utf-8")) - ascii_n
    return math.ceil(ascii_n / 3 + other_bytes / 2)


def _one_line(s: str) -> str:
    return " ".join(s.split())


def _clip(text: str, max_tokens: int) -> str:
    """The longest word-boundary prefix of `text` (plus "…") within max_tokens."""
    if estimate_tokens(text) <= max_tokens:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid].rstrip() + "…") <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    cut = text[:lo]
    if " " in cut[len(cut) // 2:]:
        cut = cut[:cut.rfind(" ")]
    cut = cut.rstrip(" ,;:—-")
    return (cut + "…") if cut else ""


HEADER = "## What epimem recalls about the user\n"


def hit_line(h: Hit, statement: str | None = None) -> str:
    statement = _one_line(h.snippet if statement is None else statement)
    if h.type == BELIEF:
        conf = f" ({h.tier}, {h.effective_confidence:.2f})" if h.effective_confidence is not None else ""
        if h.status and h.status != "active":
            # Asked for with --inactive: never shown as if it were still held.
            conf = f" ({h.status}, no longer held{', was ' + h.tier if h.tier else ''})"
        head = f"- **{_one_line(h.title)}**{conf}"
        return f"{head}: {statement} [{h.id}]" if statement else f"{head} [{h.id}]"
    when = h.date.isoformat() if h.date else ""
    about = f" (about {h.connects})" if h.connects and h.connects != "new" else ""
    return f"- Observed {when}{about}: {statement or _one_line(h.title)}"


def render_markdown(hits: Sequence[Hit], budget: int | None = None, header: str = HEADER,
                    min_statement_tokens: int = 12) -> str:
    """Compact markdown for a system prompt. With a budget (tokens, see
    estimate_tokens) the result never exceeds it: statements are clipped, then
    items dropped from the bottom; a budget too small for the header and one
    item gives the empty string."""
    if budget is not None and budget <= 0:
        return ""
    lines = [header.rstrip("\n")] if header else []
    used = estimate_tokens(lines[0] + "\n") if lines else 0
    added = 0
    for h in hits:
        line = hit_line(h)
        cost = estimate_tokens(line + "\n")
        if budget is not None and used + cost > budget:
            bare = hit_line(h, "")
            room = budget - used - estimate_tokens(bare + " …\n") - 2
            if room < min_statement_tokens:
                break
            line = hit_line(h, _clip(_one_line(h.snippet), room))
            cost = estimate_tokens(line + "\n")
            if used + cost > budget:
                break
        lines.append(line)
        used += cost
        added += 1
    if not added:
        return ""
    return "\n".join(lines) + "\n"
