"""Recall as a library call: `recall(vault, "query", ...)`.

    from epimem.recall import recall
    res = recall("~/vault", "how does the user like code reviews?", limit=5, scope="myproj")
    for hit in res: print(hit.id, hit.score, hit.why)
    prompt_block = recall(vault, "…", budget=800).markdown

A `Recaller` keeps the index, the model and the Chroma collections loaded,
so a query in a long-lived process costs milliseconds. It keeps itself
current: on first use it syncs the index with the files (building it when
missing, rebuilding it when corrupt), and later whenever a file is added,
removed or replaced in `beliefs/` or `observations/` (epimem's own writes
replace files atomically, which changes the directory). An in-place edit by
an editor (which leaves the directory as it was) is seen by `epimem watch`, `epimem index sync`,
`Recaller.sync()`, and by a query one of whose results comes from the edited file: each result's
file is checked (one stat) before it is served.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from ..core import text as core_text
from ..core import vocabulary as vocab
from ..core.model import Problem, Refused
from ..core.redact import redact
from .bm25 import tokenize, tokens_with_words
from .config import Config, read_config
from .embed import MAX_CHARS
from .errors import Corrupt
from .index import Index, Report, judged_on
from .items import BELIEF, OBSERVATION
from .manifest import SUBDIRS, State, refused_from
from .rank import (
    COMMON_SHARE,
    KW_WEIGHT,
    SAME_SUBJECT,
    Filters,
    Hit,
    QueryError,
    anchor_date,
    fuse,
    make_hit,
    newer_first,
    passes,
    render_markdown,
    weight_of,
)

# Candidates taken from each ranker before fusion. Deeper than the results
# shown because a vault with many variants of a belief fills 50 places with a
# couple of them, and fusion gains from items that both rankers reach.
DEPTH = 100
MAX_QUERY_CHARS = 200_000
SIMILAR_MIN = 0.3     # cosine similarity a "similar belief" must reach
CHROMA_RETRY = 300.0  # seconds before a long-lived process tries to open Chroma again


def _redacted(h: Hit, patterns) -> Hit:
    """What recall hands on goes to a model (the `--budget` markdown, the JSON an
    assistant reads): redacted whatever its source, a secret typed into a file by hand too."""
    from dataclasses import replace

    return replace(h, title=redact(h.title, patterns), snippet=redact(h.snippet, patterns),
                   tags=tuple(redact(t, patterns) for t in h.tags), scope=redact(h.scope, patterns))


@dataclass
class Candidates:
    state: State
    keyword: list            # [(key, bm25 score, matched words)], best first
    semantic: list           # [(key, cosine similarity)], best first
    confidence: dict         # key → the confidence it brings to its score
    items: dict              # key → Item


@dataclass
class Results:
    query: str
    hits: list[Hit]
    markdown: str | None = None
    notes: list[str] = field(default_factory=list)       # e.g. "the index was rebuilt (…)"
    problems: list[Problem] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)  # hand edits recalled as last committed
    # SPEC §14: the open questions about the beliefs found (a tension's both sides), so that a
    # belief in question is never read as settled: [{tension, belief, successor, rests_on, …}].
    questions: list[dict] = field(default_factory=list)

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, i):
        return self.hits[i]

    @property
    def ids(self) -> list[str]:
        return [h.id for h in self.hits]

    def as_json(self) -> dict:
        d: dict[str, Any] = {"query": self.query, "results": [h.as_json() for h in self.hits],
                             "problems": vocab.problems(self.problems), "refused": vocab.refused(self.refused)}
        if self.markdown is not None:
            d["markdown"] = self.markdown
        if self.questions:
            d["questions"] = self.questions
        if self.notes:
            d["notes"] = self.notes
        return d


def _root_and_today(vault_or_root) -> tuple[Path, Any]:
    """Accept a Memory, a Vault, a path, or None ($EPIMEM_VAULT / default)."""
    if vault_or_root is None or isinstance(vault_or_root, (str, os.PathLike)):
        from ..store.paths import resolve_root

        return resolve_root(vault_or_root), None
    root = getattr(vault_or_root, "root", None)
    if root is None:
        raise TypeError("expected a vault path, a Vault or a Memory")
    today = getattr(vault_or_root, "today", None) if hasattr(vault_or_root, "observe") else None
    return Path(root), today


def _import_in_this_thread() -> None:
    """What the helper threads would import, imported by their starter first: two
    threads importing numpy at once can see it half initialised."""
    import importlib

    for name in ("numpy", "orjson", "tokenizers"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # orjson is optional; a missing tokenizers is the embedder's error to say


class _Early:
    """`load()` in a thread; its result only if the manifest is still the one it started with."""

    def __init__(self, load, key):
        self.key, self.value = key, None
        self.thread = None
        if key is None:
            return
        _import_in_this_thread()

        def run():
            try:
                self.value = load()
            except Exception:  # noqa: BLE001 - the caller loads again and reports it
                self.value = None

        self.thread = threading.Thread(target=run, name="epimem-index-read", daemon=True)
        self.thread.start()

    def result(self, key):
        if self.thread is None:
            return None
        self.thread.join()
        return self.value if key == self.key else None


class Recaller:
    def __init__(self, root: str | os.PathLike, *, embedder: str | None = None,
                 chroma_url: str | None = None, config: Config | None = None,
                 today: date | str | None = None, auto_sync: bool = True, progress=None,
                 chroma: str = "inline", semantic: str | None = None):
        from ..store.vault import Vault

        self.root = Path(root).expanduser().absolute()
        self.vault = Vault(self.root)
        self.index = Index(self.root, config or read_config(self.root, embedder=embedder, chroma_url=chroma_url),
                           progress=progress, chroma=chroma)
        self._today = today
        self.auto_sync = auto_sync
        self._state: State | None = None
        self._state_key = None
        self._dirs_key = None
        self._lock = threading.RLock()
        self._prefetch: threading.Thread | None = None
        self.notes: list[str] = []
        self.last_report: Report | None = None
        # Where the semantic ranker reads the vectors: Chroma in a process that lives long
        # enough to pay for opening it, and whenever a server is named; else the sidecar.
        if semantic not in (None, "chroma", "sidecar"):
            raise ValueError(f"semantic must be 'chroma' or 'sidecar', not {semantic!r}")
        self.semantic = semantic or ("chroma" if self.index.config.chroma_url else "sidecar")
        self._chroma_said = ""
        # False: not tried · a thread: opening the embedded store · True: open · a float: when it
        # failed (tried again CHROMA_RETRY seconds later)
        self._chroma_open: threading.Thread | bool | float = False

    # -- freshness --------------------------------------------------------------------------------
    @property
    def today(self) -> date:
        from ..store.clock import today

        return today(self._today)

    @property
    def keyword_weight(self) -> float:
        """The keyword list's weight in fusion: `recall: {keyword_weight: …}`, else rank.KW_WEIGHT."""
        cfg = self.index.config
        return cfg.keyword_weight if cfg.keyword_weight is not None else KW_WEIGHT

    @property
    def params(self):
        return self.vault.params()[0]

    def _dirs(self):
        """What says the index may be behind the files: the two folders' mtimes, and the machine's
        day (a long-lived server reads a hand edit dated ahead as refused only until that day)."""
        out: list = [judged_on()]
        for sub in SUBDIRS:
            try:
                st = os.stat(self.root / sub)
                out.append((st.st_mtime_ns, st.st_ino))
            except OSError:
                out.append(None)
        return tuple(out)

    def sync(self, wait: bool = True) -> Report:
        with self._lock:
            dirs = self._dirs()
            rep = self.index.sync(wait=wait)
            if rep.action != "busy":
                self._dirs_key = dirs
            self.last_report = rep
            if rep.action == "rebuilt":
                self.notes.append(f"the recall index was rebuilt ({rep.reason or 'first use'})")
            return rep

    def rebuild(self, reason: str = "") -> Report:
        with self._lock:
            dirs = self._dirs()
            rep = self.index.rebuild(reason)
            self._dirs_key = dirs
            self.last_report = rep
            return rep

    def _manifest_key(self):
        try:
            st = os.stat(self.index.paths.manifest)
            return (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            return None

    def state(self) -> State:
        """The index, synced when the vault changed, reloaded when another process wrote it."""
        with self._lock:
            early = None
            if self._state is None and self.auto_sync and self._dirs() != self._dirs_key:
                # A fresh process reads the index while the sync stats every file (the
                # two took 0.3 and 0.6 s of a fresh recall, one after the other); what
                # it read is kept if the sync wrote nothing.
                early = _Early(self.index.load, self._manifest_key())
            if self.auto_sync and self._dirs() != self._dirs_key:
                self.sync(wait=self._state is None and not self.index.paths.manifest.exists())
            key = self._manifest_key()
            if self._state is None or key != self._state_key:
                got = early.result(key) if early is not None else None
                try:
                    self._state = got if got is not None else self.index.load()
                except Corrupt as e:
                    self.index.progress(f"The recall index cannot be used ({e}); rebuilding it.")
                    self.rebuild(str(e))
                    self.notes.append(f"the recall index was rebuilt ({e})")
                    self._state = self.index.load()
                self._state_key = key
            return self._state

    # -- search -------------------------------------------------------------------------------------
    def search(self, query: str, *, limit: int = 5, filters: Filters | None = None, mode: str = "fused",
               conf_weight: float | None = None, rrf_k: int | None = None, with_text: bool = True,
               kw_weight: float | None = None, as_typed: bool = False, **filter_kw) -> list[Hit]:
        if not isinstance(query, str):
            raise QueryError("the query must be text")
        text = query.strip()
        if not text:
            raise QueryError("the query is empty: say what to recall, e.g. \"how the user likes code reviews\"")
        text = text[:MAX_QUERY_CHARS]
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # the tokenizer raised a TypeError on it
            raise QueryError("the query holds a character that is not text (a lone surrogate, or bytes that "
                             "are not UTF-8); type it again", field="query") from None
        if not isinstance(limit, int) or limit < 1:
            raise QueryError(f"limit must be a whole number ≥ 1, not {limit!r}")
        f = filters or Filters.make(**filter_kw)
        cfg = self.index.config
        conf_weight = cfg.confidence_weight if conf_weight is None else conf_weight
        k = cfg.rrf_k if rrf_k is None else rrf_k
        try:
            return self._search(text, limit, f, mode, conf_weight, k, with_text, kw_weight, as_typed)
        except Corrupt as e:
            # The Chroma side vanished under a valid table (a deleted .epimem/chroma).
            self.index.progress(f"The recall index cannot be used ({e}); rebuilding it.")
            self.rebuild(str(e))
            self.notes.append(f"the recall index was rebuilt ({e})")
            self._state = None
            return self._search(text, limit, f, mode, conf_weight, k, with_text, kw_weight, as_typed)

    def _search(self, text: str, limit: int, f: Filters, mode: str, conf_weight: float, k: int,
                with_text: bool, kw_weight: float | None = None, as_typed: bool = False,
                again: bool = True) -> list[Hit]:
        c = self.candidates(text, f, depth=max(DEPTH, 3 * limit), mode=mode, as_typed=as_typed)
        if c is None:
            return []
        ranked = fuse(c.keyword, c.semantic, c.confidence, limit=limit, mode=mode, k=k,
                      conf_weight=conf_weight, kw_weight=self.keyword_weight if kw_weight is None else kw_weight)
        st = c.state
        if again and self.auto_sync and self._saved_in_place(st, {c.items[r.key].path for r in ranked}):
            # A file a result comes from was saved in place since the index read it: read again
            # before serving it (SPEC §14: a belief retired by hand is never served as current).
            self.sync(wait=False)
            return self._search(text, limit, f, mode, conf_weight, k, with_text, kw_weight, as_typed, again=False)
        ranked = self._newer_first(st, ranked, c.items)
        texts = self._texts(st, [r.key for r in ranked]) if with_text else {}
        # What recall returns may go to a model: redacted whatever its source (a secret typed by hand).
        return [_redacted(make_hit(r, c.items[r.key], self.today, self.params,
                                   _snippet(c.items[r.key], texts.get(r.key, ""))), self.params.redact)
                for r in ranked]

    def candidates(self, text: str, f: Filters, *, depth: int = DEPTH, mode: str = "fused",
                   as_typed: bool = False) -> Candidates | None:
        """Each ranker's filtered candidates for `text` and their confidence:
        everything fusion needs (bench/ replays fusion on it)."""
        if mode != "keyword":
            self._prefetch_embedder()
        st = self.state()
        table = st.table
        today, params = self.today, self.params
        if not len(table):
            return None
        allowed = table.mask(f, today, params)
        pairs = tokens_with_words(text)
        tokens = [t for t, _ in pairs]
        word_of: dict[str, str] = {}
        for t, w in pairs:
            word_of.setdefault(t, w)
        kw = []
        if mode != "semantic":
            for row, score in st.lexical.top(tokens, allowed, k=depth):
                kw.append((table.keys[row], score,
                           [word_of[t] for t in st.lexical.matched_terms(row, tokens)]))
        sem = []
        if mode != "keyword":
            sem = self._semantic(st, text if as_typed else semantic_query(text, st.lexical), allowed, depth, f)

        # The authoritative filter (rank.passes) and each candidate's confidence.
        confidence: dict[str, float] = {}
        items = {}
        for key in {k for k, *_ in kw} | {k for k, _ in sem}:
            it = table.item_by_key(key)
            belief = table.belief_of(it) if it.type == OBSERVATION else None
            if passes(it, f, today, params, belief):
                items[key] = it
                confidence[key] = weight_of(it, today, params, belief)
        kw = [r for r in kw if r[0] in items]
        sem = [r for r in sem if r[0] in items]
        return Candidates(st, kw, sem, confidence, items)

    def _saved_in_place(self, st: State, paths: Iterable[str]) -> bool:
        """Whether a file of `paths` changed since the index read it, though the folders' mtimes
        (which `state` watches) did not move: an editor's save in place. One stat a result; a
        file the index keeps no (mtime, size) of (one that does not parse) is not asked about."""
        files = st.manifest.get("files") or {}
        for rel in paths:
            meta = files.get(rel)
            if not rel or meta is None:
                continue
            try:
                now = os.stat(self.root / rel)
            except OSError:
                return True  # gone: renamed or deleted
            if (now.st_mtime_ns, now.st_size) != (meta[0], meta[1]):
                return True
        return False

    def _newer_first(self, st: State, ranked: list, items: dict) -> list:
        """Of two results about the same subject (cosine similarity ≥ rank.SAME_SUBJECT), the
        newer first (rank.newer_first)."""
        if len(ranked) < 2:
            return ranked
        import numpy as np

        rows = st.table.row_of
        mat = st.vectors.matrix
        vec = {r.key: np.asarray(mat[rows[r.key]], np.float32) for r in ranked}
        threshold = SAME_SUBJECT
        order = newer_first([r.key for r in ranked], {r.key: anchor_date(items[r.key]) for r in ranked},
                            lambda a, b: float(vec[a] @ vec[b]) >= threshold)
        by_key = {r.key: r for r in ranked}
        return [by_key[key] for key in order]

    def _prefetch_embedder(self) -> None:
        """Load the model in a thread while this one reads the index: in a fresh
        process the two are a third of a query's time each, and the model's part
        (reading and hashing its files, the tokenizer's Rust parser) runs beside it."""
        if self._prefetch is not None or self.index._embedder is not None:
            return
        _import_in_this_thread()

        def load():
            try:
                _ = self.index.embedder
            except Exception:  # noqa: BLE001 - the query's own call raises it, with its message
                pass

        self._prefetch = threading.Thread(target=load, name="epimem-embedder", daemon=True)
        self._prefetch.start()

    def _semantic(self, st: State, text: str, allowed, depth: int, f: Filters) -> list[tuple[str, float]]:
        """The `depth` allowed items nearest to `text` (what `semantic_query` made of the
        query): an exact cosine scan of the sidecar's vectors (unit rows, so a dot product),
        which at 60,000 rows costs a few milliseconds and needs no chromadb — or the same
        ranking from Chroma's collections where this recaller reads them."""
        import numpy as np

        table = st.table
        mat = st.vectors.matrix
        if not len(table) or not allowed.any():
            return []
        qv = np.asarray(self.index.embedder.embed([text])[0], np.float32)
        if mat.shape[1] != qv.shape[0]:
            raise Corrupt(f"the index holds {mat.shape[1]}-dimensional vectors, the embedder gives {qv.shape[0]}")
        if self.semantic == "chroma":
            got = self._semantic_chroma(st, qv, allowed, depth)
            if got is not None:
                return got
        sims = mat @ qv
        rows = np.flatnonzero(allowed)
        if len(rows) > depth:
            rows = rows[np.argpartition(-sims[rows], depth - 1)[:depth]]
        order = sorted(rows.tolist(), key=lambda r: (-float(sims[r]), r))
        return [(table.keys[r], float(sims[r])) for r in order]

    def _semantic_chroma(self, st: State, qv, allowed, depth: int) -> list[tuple[str, float]] | None:
        """The same ranking from Chroma's collections (cosine space): each collection asked
        for `depth` more than it holds rows the filters exclude, so the allowed top `depth`
        is all there. None — the sidecar answers — while Chroma still lacks a change of the
        sidecar (it would rank an older vault), or when it cannot be reached: said once on
        stderr by the command that needed it."""
        import numpy as np

        from .errors import RecallIndexError
        from .manifest import load_chroma_state

        if not self.index.config.chroma_url and self._chroma_open is not True:
            # Opening the embedded store (importing chromadb, loading the HNSW index) costs
            # seconds: a long-lived process opens it beside its first queries, which the
            # sidecar answers meanwhile.
            failed = isinstance(self._chroma_open, float)
            if self._chroma_open is False or failed and time.monotonic() - self._chroma_open > CHROMA_RETRY:
                _import_in_this_thread()
                self._chroma_open = threading.Thread(target=self.open_chroma, name="epimem-chroma", daemon=True)
                self._chroma_open.start()
            return None
        m = load_chroma_state(self.index.paths)
        if m.get("rebuild") or m.get("dirty"):
            url = self.index.config.chroma_url
            if url:
                from .chroma import unreachable

                why = unreachable(url)
                if why:
                    self._say_chroma(why)
            return None
        table = st.table
        is_belief = table._col("is_belief")
        try:
            cols = self.index.collections(st)
            out = []
            for kind, prefix, of_kind in ((BELIEF, "b/", is_belief), (OBSERVATION, "o/", ~is_belief)):
                wanted = int((allowed & of_kind).sum())
                if not wanted:
                    continue
                n = min(int(of_kind.sum()), depth + int((~allowed & of_kind).sum()))
                res = cols[kind].query(query_embeddings=[np.asarray(qv, np.float32)], n_results=n,
                                       include=["distances"])
                for cid, dist in zip(res["ids"][0], res["distances"][0]):
                    row = table.row_of.get(prefix + cid)
                    if row is not None and allowed[row]:
                        out.append((row, 1.0 - float(dist)))
        except (RecallIndexError, OSError) as e:
            self._say_chroma(f"{e}")
            return None
        except Exception as e:  # noqa: BLE001 - a server's failure is any of chromadb's and httpx's errors
            self._say_chroma(f"{type(e).__name__}: {e}")
            return None
        out.sort(key=lambda x: (-x[1], x[0]))
        return [(table.keys[r], sim) for r, sim in out[:depth]]

    def open_chroma(self) -> bool:
        """Open Chroma's collections now (a long-lived process does it in a thread on its
        first query); False, and said, when they cannot be opened."""
        from .errors import RecallIndexError

        try:
            self.index.collections(self.state())
        except RecallIndexError as e:
            self._say_chroma(str(e))
            self._chroma_open = time.monotonic()
            return False
        except Exception as e:  # noqa: BLE001 - chromadb's own errors
            self._say_chroma(f"{type(e).__name__}: {e}")
            self._chroma_open = time.monotonic()
            return False
        self._chroma_open = True
        return True

    @property
    def chroma_problem(self) -> str:
        """What kept the last query from reading Chroma, if anything ("" when nothing did)."""
        return self._chroma_said

    def _say_chroma(self, why: str) -> None:
        where = self.index.config.chroma_url or "the embedded Chroma store"
        # Said on stderr and kept in the results' notes: never a password the URL carries.
        msg = redact(f"recall could not read {where} ({why}); answered from the sidecar index")
        if msg != self._chroma_said:
            self._chroma_said = msg
            self.index.progress(msg)
            self.notes.append(msg)

    def _texts(self, st: State, keys: list[str]) -> dict[str, str]:
        rows = st.table.row_of
        return {k: st.vectors.text(rows[k]) for k in keys if k in rows}

    def recall(self, query: str, *, limit: int = 5, budget: int | None = None, mode: str = "fused",
               filters: Filters | None = None, **filter_kw) -> Results:
        self.notes = []
        if budget is not None and (not isinstance(budget, int) or budget < 0):
            raise QueryError(f"budget must be a whole number of tokens ≥ 0, not {budget!r}")
        hits = self.search(query, limit=limit, filters=filters, mode=mode, **filter_kw)
        questions = questions_about(self.root, {h.id for h in hits if h.type == BELIEF})
        md = render_markdown(hits, budget) if budget is not None else None
        if md and questions:
            md = with_questions(md, questions, budget)
        rep = self.last_report
        st = self._state
        return Results(query=query, hits=hits, markdown=md, notes=list(self.notes),
                       problems=list(rep.problems) if rep else [], questions=questions,
                       refused=refused_from(st.manifest) if st is not None else [])

    def batch(self, entries: Iterable[Any], *, defaults: dict | None = None) -> Iterator[dict]:
        """One JSON-ready result per entry: a query string, or a dict with
        "query" and any of limit, budget, mode and the filters (an "id" is
        passed through). A bad entry gives {"error": …} and the batch goes on."""
        defaults = dict(defaults or {})
        for n, entry in enumerate(entries, 1):
            spec = dict(defaults)
            if isinstance(entry, str):
                spec["query"] = entry
            elif isinstance(entry, dict):
                spec.update(entry)
            else:
                yield {"line": n, "error": "expected a query string or an object with \"query\""}
                continue
            out: dict[str, Any] = {"line": n}
            if "id" in spec:
                out["id"] = spec.pop("id")
            query = spec.pop("query", None)
            out["query"] = query
            try:
                if not isinstance(query, str):
                    raise QueryError("missing \"query\"")
                res = self.recall(query, **_recall_kwargs(spec))
                d = res.as_json()
                out["results"] = d["results"]
                if res.markdown is not None:
                    out["markdown"] = res.markdown
                if res.notes:
                    out["notes"] = res.notes
            except (QueryError, TypeError) as e:
                out["error"] = str(e)
            yield out


_KW = {"limit", "budget", "mode", "kind", "permanence", "tag", "scope", "min_confidence", "since",
       "until", "include_observations", "include_inactive"}
# `budget_tokens` is the CLI's name (`--budget-tokens`); `budget` the Python keyword's.
_ALIASES = {"budget_tokens": "budget", "kinds": "kind", "permanences": "permanence", "tags": "tag",
            "observations": "include_observations", "inactive": "include_inactive"}


_QUESTIONS: dict[str, tuple[dict, float, list[dict]]] = {}  # root -> (signature, when, open questions)
QUESTIONS_MAX_AGE = 300.0  # seconds: an editor that saves in place leaves the folder's mtime alone


def questions_about(root: Path, ids: set[str]) -> list[dict]:
    """The open questions (`store.context_cache.open_questions`) that name any of `ids`.

    Kept per vault by the signature of what they are read from (three stats), so a warm recall
    pays nothing for them until a belief, a tension or the rules change."""
    if not ids:
        return []
    import time

    from ..store import context_cache

    sig = context_cache.signature(root)
    memo = _QUESTIONS.get(str(root))
    if memo is not None and memo[0] == sig and time.monotonic() - memo[1] < QUESTIONS_MAX_AGE:
        rows = memo[2]
    else:
        cache = context_cache.read_context_cache(root)
        if cache is not None and cache.get("signature") == sig and "questions" in cache:
            rows = cache["questions"]
        else:
            rows = context_cache.open_questions(root)
        _QUESTIONS[str(root)] = (sig, time.monotonic(), rows)
    return [q for q in rows if q["belief"] in ids or (q.get("successor") or "") in ids]


def with_questions(md: str, questions: list[dict], budget: int | None) -> str:
    """The recall markdown with the open questions about its beliefs after it, as far as the budget allows."""
    from .rank import estimate_tokens

    used = estimate_tokens(md)
    lines = ["In question (ask the user before relying on either side):"]
    for q in questions:
        if q.get("successor"):
            lines.append(f"- [{q['belief']}] may have given way to [{q['successor']}] ({q['successor_title']}): "
                         f"{q['what']}")
        elif q.get("rests_on"):
            lines.append(f"- [{q['belief']}] rests on [{q['rests_on']}], which changed: {q['what']}")
        else:
            lines.append(f"- [{q['belief']}] was contradicted on {q['date']}: {q['what']}")
    out = md
    block = ""
    for ln in lines:
        nxt = block + ln + "\n"
        if budget is not None and used + estimate_tokens(nxt) > budget:
            break
        block = nxt
    if block.count("\n") > 1:
        out = md + block
    return out


def _recall_kwargs(spec: dict) -> dict:
    out = {}
    for k, v in spec.items():
        k = _ALIASES.get(k, k)
        if k not in _KW:
            known = (_KW - {"budget"}) | {"budget_tokens", "query", "id"}
            raise QueryError(f"unknown key {k!r} (use: {', '.join(sorted(known))})")
        out[k] = v
    return out


def semantic_query(text: str, lexical, share: float = COMMON_SHARE) -> str:
    """What the semantic ranker embeds: the query less the words that are in more than
    `share` of the indexed texts. A mean of word vectors is pulled toward such a
    word (the name of the person half the vault is about) and away from the rare words
    that say what is asked; BM25 already gives them almost no weight."""
    n = lexical.n_docs
    if n == 0:
        return text
    limit = share * n
    return core_text.without(text[:MAX_CHARS], lambda t: lexical.df(t) > limit)


def _snippet(item, doc: str) -> str:
    """The statement (or observation text) out of the indexed document."""
    if item.type != BELIEF:
        return doc.strip()
    lines = doc.split("\n")[1:]  # the first line is the title
    if item.tags and lines and lines[-1].startswith("Tags: "):
        lines = lines[:-1]
    return "\n".join(lines).strip()


# --- module-level conveniences ---------------------------------------------------------------------

_RECALLERS: dict[tuple, Recaller] = {}
_RLOCK = threading.Lock()


def recaller(vault_or_root=None, *, embedder: str | None = None, chroma_url: str | None = None,
             progress=None) -> Recaller:
    """A Recaller for the vault, shared by every call in this process."""
    root, today = _root_and_today(vault_or_root)
    config = read_config(root, embedder=embedder, chroma_url=chroma_url)
    key = (str(root), config)
    with _RLOCK:
        r = _RECALLERS.get(key)
        if r is None:
            r = _RECALLERS[key] = Recaller(root, config=config, progress=progress)
    r._today = today  # a Memory's day, else the clock ($EPIMEM_TODAY or today)
    return r


def erase(root: str | os.PathLike, rebuild: bool = True) -> list[str]:
    """Erase the vault's index (its sidecar, its Chroma store or collections) and, when there was
    one, build it again from the files as they are now: what the files no longer hold, the index
    no longer holds either (`epimem forget`). What was done, in words."""
    root = Path(root).expanduser().absolute()
    with _RLOCK:
        for key in [k for k in _RECALLERS if k[0] == str(root)]:
            del _RECALLERS[key]
    r = Recaller(root)
    had = r.index.erase()
    if not (had and rebuild):
        return []
    rep = r.rebuild("erased: something was forgotten")
    return [f"the recall index was erased and rebuilt from the files ({rep.items} items)"]


def recall(vault_or_root, query: str, *, limit: int = 5, kind=None, permanence=None, tag=None,
           scope: str | None = None, min_confidence: float | None = None, since=None, until=None,
           include_observations: bool = False, include_inactive: bool = False,
           budget: int | None = None, mode: str = "fused", today=None,
           embedder: str | None = None, chroma_url: str | None = None) -> Results:
    """Rank the vault's active beliefs (and, if asked, observations) for `query`.

    Filters: kind, permanence, tag (a value or a list: any of them), scope (a
    project: its beliefs plus global ones), min_confidence (effective), since /
    until (dates). `budget` adds `.markdown`, at most that many tokens.
    """
    r = recaller(vault_or_root, embedder=embedder, chroma_url=chroma_url)
    if today is not None:
        r._today = today
    return r.recall(query, limit=limit, budget=budget, mode=mode, kind=kind, permanence=permanence,
                    tag=tag, scope=scope, min_confidence=min_confidence, since=since, until=until,
                    include_observations=include_observations, include_inactive=include_inactive)


def similar_beliefs(memory_or_vault, text: str, limit: int = 3) -> list[dict]:
    """The existing active beliefs nearest to `text` (any scope), for "did you
    mean one of these?" after adding a belief. Advice only: nothing is merged.

    Ranked by the same fusion as recall but without the confidence factor
    (likeness, not strength, is the question), and only beliefs whose cosine
    similarity reaches SIMILAR_MIN are listed: unrelated beliefs sit below 0.2
    with the default model, paraphrases above 0.5. Uses the index when there is
    one; otherwise (or when it cannot be used) compares in memory, so adding a
    belief never waits for an index to be built. Returns dicts with id,
    title, score, similarity and why.
    """
    if not isinstance(text, str) or not text.strip():
        return []
    root, _ = _root_and_today(memory_or_vault)
    from .errors import RecallIndexError
    from .manifest import Paths

    out = None
    if Paths(root).manifest.exists():
        try:
            # The similarity rule 17 compares with its threshold is of the texts as they are.
            hits = recaller(memory_or_vault).search(text, limit=limit, conf_weight=0.0, with_text=False,
                                                    as_typed=True)
            out = [_similar_json(h) for h in hits]
        except RecallIndexError:
            pass
    if out is None:
        out = _similar_in_memory(root, text, limit)
    return [d for d in out if (d["similarity"] or 0.0) >= SIMILAR_MIN]


def text_similarities(memory_or_vault, text: str, others: list[str]) -> list[float]:
    """The cosine similarity of `text` to each of `others` with the vault's embedder: rule 17
    compares two claims once both are written out the same way (`core.ids.claim_key`)."""
    if not others:
        return []
    root, _ = _root_and_today(memory_or_vault)
    from .embed import get_embedder

    vs = get_embedder(read_config(root).embedder).embed([text, *others])
    return [float(v @ vs[0]) for v in vs[1:]]


def _similar_json(h: Hit) -> dict:
    """A similar belief: a recall result's name, score and `why`, and its cosine `similarity`."""
    sim = h.semantic_similarity
    return {"id": h.id, "title": h.title, "score": round(h.score, 6),
            "similarity": None if sim is None else round(sim, 4), "why": h.why_json()}


def _similar_in_memory(root: Path, text: str, limit: int) -> list[dict]:
    import numpy as np

    from ..store.clock import lenient_today
    from ..store.vault import Vault
    from .bm25 import LexicalIndex
    from .embed import get_embedder
    from .items import from_belief
    from .rank import Ranked

    beliefs, _, _ = Vault(root).shown_beliefs(lenient_today())
    items = [from_belief(b) for b in beliefs if b.status == "active"]
    if not items:
        return []
    pairs = tokens_with_words(text)
    tokens = [t for t, _ in pairs]
    word_of = {}
    for t, w in pairs:
        word_of.setdefault(t, w)
    lex = LexicalIndex.build(tokenize(it.text) for it in items)
    kw = [(items[r].key, sc, [word_of[t] for t in lex.matched_terms(r, tokens)])
          for r, sc in lex.top(tokens, k=DEPTH)]
    emb = get_embedder(read_config(root).embedder)
    sims = emb.embed([it.text for it in items]) @ emb.embed([text])[0]
    order = np.argsort(-sims)[:DEPTH]
    sem = [(items[i].key, float(sims[i])) for i in order]
    ranked: list[Ranked] = fuse(kw, sem, {}, limit=limit, conf_weight=0.0)
    by_key = {it.key: it for it in items}
    out = []
    for r in ranked:
        it = by_key[r.key]
        out.append(_similar_json(make_hit(r, it, date.today())))
    return out
