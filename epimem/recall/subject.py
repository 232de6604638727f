"""The subject a query names — a project (a scope) or a name — and what that
does to the ranking. Pure functions over plain values.

A question such as "How are deploys done in ledger-sync?" or "What pet does
Marcus have?" is about one subject among several the vault speaks of. The
semantic ranker sees the topic (deploys, pets) and ranks every subject's
belief on it alike; the keyword ranker sees the name but, for a project,
scoped beliefs seldom repeat their project's name. So the subject is
honoured here, as a factor on each candidate's fused score:

- a known scope named in the query: its items get SCOPE_BOOST, items of
  other (non-global) scopes SUBJECT_DEMOTE, global items 1;
- a name in the query (a capitalised word that is not the first word of a
  sentence and that the index knows): candidates whose text lacks every
  such name get SUBJECT_DEMOTE — but only when some candidate has one, so a
  name the vault never mentions changes nothing.

A factor, not a filter: a strong match on another subject can still rank,
and an explicit `scope` filter replaces the scope rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from .bm25 import tokenize

SCOPE_BOOST = 1.5
SUBJECT_DEMOTE = 0.5

_WORD = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?:;]\s*$")


def scope_name(scope: str) -> str:
    """How a project scope is said: the last part of a path, lower case."""
    s = scope.strip().rstrip("/\\")
    return re.split(r"[/\\]", s)[-1].lower() if s else ""


def named_scopes(query: str, scopes: Iterable[str]) -> set[str]:
    """The non-global scopes whose name the query contains as a whole word
    ("-", "_" and spaces alike: "ledger sync" names ledger-sync)."""
    text = " " + re.sub(r"[-_\s]+", " ", query.lower()) + " "
    out = set()
    for sc in scopes:
        if not sc or sc == "global":
            continue
        name = re.sub(r"[-_\s]+", " ", scope_name(sc)).strip()
        if len(name) >= 3 and re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text):
            out.add(sc)
    return out


def name_tokens(query: str) -> list[str]:
    """Keyword tokens of the names in a query: capitalised words that do not
    start a sentence ("Marcus", "GoLand"), possessive 's dropped."""
    out: list[str] = []
    for m in _WORD.finditer(query):
        w = m.group(0)
        if not w[0].isupper() or w.isupper() and len(w) <= 3:
            continue  # lower case, or an acronym like "API" / "CI" (a topic, not a subject)
        before = query[:m.start()]
        if not before.strip() or _SENTENCE_END.search(before):
            continue
        w = re.sub(r"['’]s$", "", w)
        out.extend(t for t in tokenize(w) if t not in out)
    return out


def factors(candidates: Mapping[str, tuple[str, Sequence[str]]], *, scopes: set[str],
            names: Sequence[str]) -> dict[str, float]:
    """key → factor for candidates {key: (scope, the name tokens its text has)}.
    `scopes`: the scopes the query named; `names`: its name tokens the index
    knows. Only factors ≠ 1 are returned."""
    out: dict[str, float] = {}
    use_names = bool(names) and any(has for _, has in candidates.values())
    for key, (scope, has) in candidates.items():
        f = 1.0
        if scopes and scope != "global":
            f *= SCOPE_BOOST if scope in scopes else SUBJECT_DEMOTE
        if use_names and not has:
            f *= SUBJECT_DEMOTE
        if f != 1.0:
            out[key] = f
    return out
