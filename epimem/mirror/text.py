"""Small, deterministic text helpers for the mirror: tokens for similarity,
one-line excerpts. Pure; no model, no I/O, so a portrait is the same on every
machine and in every test."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from ..core import text as core_text

# Words that say nothing about a person's themes (beside `core.text`'s stopwords). Verbs of liking and habit
# are here because nearly every belief uses one ("prefers", "tends to").
STOPWORDS = frozenset("""
a about above after again against all almost also although always am among an and any are
around as at away back be became because been before being below between both but by can
could did do does doing done down during each either else even ever every few for from
further get gets getting go goes going gone got had has have having he her here hers him his
how however i if in into is it its itself just least less let like likes liked may me might
more most much must my never no nor not now of off often on once one only or other our ours
out over own per quite rather really same she should so some something sometimes still such
than that the their theirs them then there these they thing things this those though through
thus to too toward towards under until up upon us usually very via was way ways we well were
what when where whether which while who whom whose why will with within without would yet you
your yours prefer prefers preferred preferring want wants wanted use uses used using make
makes made making tend tends tended tendency instead first last new old good better best lot
lots kind sort bit time times user person people someone anything everything nothing
work works worked working instead usual usually generally mostly likely seems seem seemed
""".split())


def stem(word: str) -> str:
    """The stem recall's keyword ranker gives a word (`core.text.stem`): one stemmer, so a
    theme and a recall match agree on which words are the same."""
    return core_text.stem(word.casefold())


@lru_cache(maxsize=1 << 15)
def words(s: str) -> tuple[tuple[str, str], ...]:
    """(stem, surface) for each content word of `s`, in order: `core.text`'s words less
    the ones that name no theme. Cached: a portrait reads every title twice (its shared
    words, then their labels)."""
    return tuple((t, w) for t, w in core_text.tokens_with_words(s)
                 if len(w) >= 3 and len(t) >= 3 and w not in STOPWORDS and t not in STOPWORDS
                 and w.isalpha())


def tokens(text: str) -> frozenset[str]:
    return frozenset(s for s, _ in words(text))


def surfaces(texts: list[str]) -> dict[str, str]:
    """stem -> the surface form seen most often (ties: alphabetical), to label
    a theme with a real word rather than a stem."""
    seen: dict[str, Counter] = {}
    for t in texts:
        for s, w in words(t):
            seen.setdefault(s, Counter())[w] += 1
    return {s: sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] for s, c in seen.items()}


def one_line(text: str, limit: int = 100) -> str:
    """The text on one line, cut at a word boundary with an ellipsis."""
    s = " ".join((text or "").split())
    if len(s) <= limit:
        return s
    cut = s[:limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[:cut.rfind(" ")]
    return cut.rstrip(" ,;:—-") + "…"


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_sentence(text: str, limit: int = 140) -> str:
    s = " ".join((text or "").split())
    m = _SENTENCE_END.search(s)
    if m:
        s = s[:m.start()]
    return one_line(s, limit)


_CHANGE = re.compile(r"\s*\((\d+(?:\.\d+)?)\s*→\s*(\d+(?:\.\d+)?)\)\s*$")


def strip_change(note: str) -> str:
    """An evidence note without its trailing "(0.40 → 0.45)"."""
    return _CHANGE.sub("", note or "")


_CHANGES = re.compile(r"\((\d+(?:\.\d+)?)\s*→\s*(\d+(?:\.\d+)?)\)")


def changes(note: str) -> list[tuple[float, float]]:
    """Every "(a → b)" confidence move written in an evidence note."""
    if not note or "→" not in note:
        return []
    return [(float(a), float(b)) for a, b in _CHANGES.findall(note)]
