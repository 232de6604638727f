"""Keyword relevance: Okapi BM25 over arrays, on the words of `core.text`.

Chroma's own sparse index is not available in the embedded store, so keyword
ranking is computed here, beside it, over the same texts. The index is a pair
of compressed sparse matrices (document → terms for updates, term → documents
for queries) held in numpy arrays, so it loads from `.epimem/` in a few
milliseconds and a query touches only the postings of its own terms.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..core.text import STOPWORDS, stem, tokenize, tokens_with_words

__all__ = ["K1", "B", "MAX_QUERY_TERMS", "LexicalIndex", "STOPWORDS", "stem", "tokenize", "tokens_with_words"]

K1 = 1.2
B = 0.75
# A 100 KB query has thousands of distinct words; scoring only the rarest
# keeps a pathological query inside the time budget and changes no ranking
# that matters (common words carry almost no BM25 weight).
MAX_QUERY_TERMS = 256


@dataclass
class LexicalIndex:
    """BM25 over rows 0..n-1. Arrays are numpy; `vocab` maps term → term id.

    doc_ptr/doc_terms/doc_tf: the document → term matrix (CSR), kept so rows
    can be removed and appended without re-tokenizing the vault.
    term_ptr/post_docs/post_tf: its transpose, what a query reads.
    """

    vocab: dict
    terms: list
    doc_ptr: object
    doc_terms: object
    doc_tf: object
    doc_len: object
    term_ptr: object
    post_docs: object
    post_tf: object

    @property
    def n_docs(self) -> int:
        return len(self.doc_len)

    # -- building ----------------------------------------------------------------
    @classmethod
    def empty(cls) -> LexicalIndex:
        import numpy as np

        return cls._from_forward({}, [], np.zeros(1, np.int64), np.zeros(0, np.int32),
                                 np.zeros(0, np.float32))

    @classmethod
    def build(cls, token_lists: Iterable[Sequence[str]]) -> LexicalIndex:
        return cls.empty().append(token_lists)

    def append(self, token_lists: Iterable[Sequence[str]]) -> LexicalIndex:
        """A new index with rows added at the end (terms unseen so far get new ids)."""
        import numpy as np

        vocab = dict(self.vocab)
        terms = list(self.terms)
        lens: list[int] = []
        tids: list[int] = []
        tfs: list[int] = []
        for toks in token_lists:
            counts: dict[int, int] = {}
            for t in toks:
                tid = vocab.get(t)
                if tid is None:
                    tid = vocab[t] = len(terms)
                    terms.append(t)
                counts[tid] = counts.get(tid, 0) + 1
            lens.append(len(counts))
            tids.extend(counts)
            tfs.extend(counts.values())
        if not lens:
            return self
        ptr_new = np.cumsum(np.asarray([0] + lens, np.int64)) + self.doc_ptr[-1]
        doc_ptr = np.concatenate([self.doc_ptr, ptr_new[1:]])
        doc_terms = np.concatenate([self.doc_terms, np.asarray(tids, np.int32)])
        doc_tf = np.concatenate([self.doc_tf, np.asarray(tfs, np.float32)])
        return self._from_forward(vocab, terms, doc_ptr, doc_terms, doc_tf)

    def keep_rows(self, keep) -> LexicalIndex:
        """A new index holding only the rows where `keep` (a bool array) is true."""
        import numpy as np

        keep = np.asarray(keep, bool)
        if keep.all():
            return self
        lengths = np.diff(self.doc_ptr)
        mask = np.repeat(keep, lengths)
        doc_ptr = np.concatenate([[0], np.cumsum(lengths[keep])]).astype(np.int64)
        return self._from_forward(self.vocab, self.terms, doc_ptr,
                                  self.doc_terms[mask], self.doc_tf[mask])

    @classmethod
    def _from_forward(cls, vocab, terms, doc_ptr, doc_terms, doc_tf) -> LexicalIndex:
        import numpy as np

        lengths = np.diff(doc_ptr)
        rows = np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)
        doc_len = np.bincount(rows, weights=doc_tf, minlength=len(lengths)).astype(np.float32)
        order = np.argsort(doc_terms, kind="stable")
        counts = np.bincount(doc_terms, minlength=len(terms)) if len(doc_terms) else np.zeros(len(terms), np.int64)
        term_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return cls(vocab, terms, doc_ptr, doc_terms, doc_tf, doc_len, term_ptr,
                   rows[order], doc_tf[order])

    # -- persistence -----------------------------------------------------------------
    def arrays(self) -> dict:
        return {"doc_ptr": self.doc_ptr, "doc_terms": self.doc_terms, "doc_tf": self.doc_tf,
                "doc_len": self.doc_len, "term_ptr": self.term_ptr, "post_docs": self.post_docs,
                "post_tf": self.post_tf}

    @classmethod
    def from_arrays(cls, terms: list, arrays) -> LexicalIndex:
        vocab = {t: i for i, t in enumerate(terms)}
        return cls(vocab, terms, arrays["doc_ptr"], arrays["doc_terms"], arrays["doc_tf"],
                   arrays["doc_len"], arrays["term_ptr"], arrays["post_docs"], arrays["post_tf"])

    # -- querying ----------------------------------------------------------------------
    def idf(self, tid: int) -> float:
        n = self.n_docs
        df = int(self.term_ptr[tid + 1] - self.term_ptr[tid])
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def query_terms(self, tokens: Sequence[str]) -> list[int]:
        """Distinct known term ids of a query, the rarest MAX_QUERY_TERMS of them."""
        seen: dict[int, None] = {}
        for t in tokens:
            tid = self.vocab.get(t)
            if tid is not None and self.term_ptr[tid + 1] > self.term_ptr[tid]:
                seen.setdefault(tid, None)
        tids = list(seen)
        if len(tids) > MAX_QUERY_TERMS:
            tids.sort(key=lambda t: int(self.term_ptr[t + 1] - self.term_ptr[t]))
            tids = tids[:MAX_QUERY_TERMS]
        return tids

    def scores(self, tids: Sequence[int]):
        """BM25 score of every row for the given query term ids (numpy array)."""
        import numpy as np

        n = self.n_docs
        out = np.zeros(n, np.float32)
        if n == 0 or not tids:
            return out
        norm = self.__dict__.get("_norm")
        if norm is None:
            avgdl = float(self.doc_len.mean()) or 1.0
            norm = self.__dict__["_norm"] = (K1 * (1.0 - B + B * self.doc_len / avgdl)).astype(np.float32)
        for tid in tids:
            s, e = int(self.term_ptr[tid]), int(self.term_ptr[tid + 1])
            docs = self.post_docs[s:e]
            tf = self.post_tf[s:e]
            out[docs] += self.idf(tid) * tf * (K1 + 1.0) / (tf + norm[docs])
        return out

    def top(self, tokens: Sequence[str], allowed=None, k: int = 100) -> list[tuple[int, float]]:
        """(row, score) of the k best rows with a positive score, best first.

        `allowed` is an optional bool array: rows outside it are never returned.
        """
        import numpy as np

        tids = self.query_terms(tokens)
        if not tids:
            return []
        sc = self.scores(tids)
        if allowed is not None:
            sc = np.where(allowed, sc, 0.0)
        hits = np.flatnonzero(sc > 0)
        if len(hits) > k:
            part = np.argpartition(-sc[hits], k - 1)[:k]
            hits = hits[part]
        order = sorted(hits.tolist(), key=lambda r: (-float(sc[r]), r))
        return [(r, float(sc[r])) for r in order]

    def df(self, token: str) -> int:
        """How many indexed texts contain `token`."""
        tid = self.vocab.get(token)
        return 0 if tid is None else int(self.term_ptr[tid + 1] - self.term_ptr[tid])

    def matched_terms(self, row: int, tokens: Sequence[str]) -> list[str]:
        """The query terms present in a row, in query order."""
        s, e = int(self.doc_ptr[row]), int(self.doc_ptr[row + 1])
        present = set(self.doc_terms[s:e].tolist())
        out: list[str] = []
        for t in tokens:
            tid = self.vocab.get(t)
            if tid is not None and tid in present and t not in out:
                out.append(t)
        return out
