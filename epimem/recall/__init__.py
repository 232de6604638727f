"""Recall: a sidecar index of the vault (Chroma + BM25) and hybrid ranking.

    from epimem.recall import recall, similar_beliefs, Recaller
    res = recall(vault_path, "how does the user like code reviews?", limit=5)

Importing this package loads neither chromadb nor a model; they are loaded
on the first query. See docs/recall.md.
"""

from __future__ import annotations

__all__ = ["recall", "similar_beliefs", "text_similarities", "recaller", "Recaller", "Results", "Filters", "Hit",
           "QueryError", "RecallIndexError", "Index", "read_config", "render_markdown", "estimate_tokens"]

_WHERE = {
    "recall": "api", "similar_beliefs": "api", "text_similarities": "api", "recaller": "api", "Recaller": "api",
    "Results": "api",
    "Filters": "rank", "Hit": "rank", "QueryError": "rank", "render_markdown": "rank",
    "estimate_tokens": "rank", "Index": "index", "read_config": "config", "RecallIndexError": "errors",
}


def __getattr__(name: str):
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'epimem.recall' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{mod}"), name)
