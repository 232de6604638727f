"""The recall index of one vault: building it, keeping it current, opening it for search.

The index lives in `<vault>/.epimem/`: the sidecar — a table, a BM25 index
and every item's vector, which is what a query reads — and a manifest of the
files they were made from (`manifest.py`), and Chroma (`chroma.py`), which
holds the same vectors and metadata for a shared server and other readers;
which embedder and store is `config.py`.

Chroma follows the sidecar instead of being written with it: a rebuild or
sync writes the sidecar and marks what Chroma lacks (`chroma.json`), and
`update_chroma` copies it over — at once (`chroma="inline"`, the library's
default), in a detached process (`"background"`, the command line's), or when
asked (`"later"`). Importing chromadb and opening its store cost a one-file
sync 1–2 s and Chroma's adds were most of a rebuild; nothing on the query
path reads Chroma, so nobody waited for them but the writer.

Everything here is derived from the vault's files and can be deleted: a
missing, corrupt or incompatible index (another embedder, another Chroma
store) is rebuilt with a message.

`sync` looks at mtime and size first and reads only files whose stat changed,
confirming a change by sha256; inside a changed file only items whose text
changed are embedded again, and a vector whose text moved to another file or
id (a renamed belief) is reused rather than recomputed.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import vocabulary as vocab
from ..core.model import Problem, Refused
from . import chroma
from .bm25 import LexicalIndex, tokenize
from .config import Config, read_config
from .embed import get_embedder
from .errors import Corrupt
from .items import BELIEF, OBSERVATION, Item, chroma_metadata, to_row
from .manifest import (
    Parsed,
    Paths,
    State,
    Vectors,
    damage,
    load_chroma_state,
    load_manifest,
    load_state,
    parse_file,
    problems_from,
    refused_entry,
    refused_from,
    save_chroma_state,
    save_manifest,
    save_state,
    scan,
    sha256_bytes,
    verify,
)
from .table import Table

if TYPE_CHECKING:
    from ..store.vault import Reader

BATCH = 2048
# inline: update Chroma after the sync unless another process is at it; wait: update it, waiting
# for that process; background: a detached process does it; later: only when asked.
CHROMA_MODES = ("inline", "wait", "background", "later")
RETRY_AFTER = 300.0   # seconds before an unchanged sync tries a failed Chroma update again


Progress = Callable[[str], None]


# --- reports -------------------------------------------------------------------------------------

@dataclass
class Report:
    action: str                       # "rebuilt", "synced", "unchanged"
    reason: str = ""                  # why a rebuild happened
    items: int = 0                    # in the index afterwards
    files: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    embedded: int = 0                 # items whose vector was computed
    reused: int = 0                   # items whose vector moved with their text (renames)
    files_changed: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)  # hand edits indexed as last committed
    seconds: float = 0.0
    timings: dict = field(default_factory=dict)
    chroma: str = ""                  # "updated", "pending" (a detached process is at it), "" (nothing to do)

    def as_json(self) -> dict:
        return {"action": self.action, "reason": self.reason or None, "items": self.items,
                "chroma": self.chroma or None, "files": self.files, "added": self.added, "updated": self.updated,
                "removed": self.removed, "embedded": self.embedded, "reused": self.reused,
                "files_changed": self.files_changed, "seconds": round(self.seconds, 3),
                "problems": [{"path": p.path, "line": p.line, "message": p.message} for p in self.problems],
                "refused": vocab.refused(self.refused)}

    def summary(self) -> str:
        s = self._summary()
        if self.chroma == "pending" and self.action in ("rebuilt", "synced"):
            s += " Chroma's copy is being updated in the background."
        return s

    def _summary(self) -> str:
        if self.action == "rebuilt":
            s = f"Rebuilt the index: {self.items} items from {self.files} files in {self.seconds:.1f}s"
            if self.reason:
                s += f" ({self.reason})"
            return s
        if self.action == "unchanged":
            return f"Index is current ({self.items} items)."
        if self.action == "busy":
            return "Another epimem process is updating the index; it was used as it is."
        return (f"Synced {len(self.files_changed)} changed file(s): +{self.added} ~{self.updated} "
                f"-{self.removed} items ({self.items} in the index).")


@dataclass
class Status:
    exists: bool
    needs_rebuild: str = ""           # why, when the index cannot be synced
    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    items: int = 0
    files: int = 0
    embedder: str = ""
    store: str = ""
    written: str = ""
    chroma_pending: int = 0           # items Chroma still lacks (update_chroma copies them)
    chroma_error: str = ""            # why the last update of Chroma failed

    @property
    def stale(self) -> bool:
        return bool(self.needs_rebuild or self.new or self.changed or self.deleted)

    def as_json(self) -> dict:
        return {"exists": self.exists, "stale": self.stale, "needs_rebuild": self.needs_rebuild or None,
                "new": self.new, "changed": self.changed, "deleted": self.deleted,
                "items": self.items, "files": self.files, "embedder": self.embedder,
                "store": self.store, "written": self.written or None, "chroma_pending": self.chroma_pending,
                "chroma_error": self.chroma_error or None,
                "problems": [{"path": p.path, "line": p.line, "message": p.message} for p in self.problems]}


def _noted(rel: str, parsed: Parsed, problems: dict[str, list], refused: dict) -> bool:
    """Keep what the manifest says of a parsed file (a hand edit refused, its problems), for a
    rebuild and a sync alike; False when nothing of it can be indexed (`Parsed.fatal`)."""
    if parsed.refused is not None:
        refused[rel] = refused_entry(parsed.refused)
    if parsed.problems:
        problems[rel] = [[p.line, p.message] for p in parsed.problems]
    return not parsed.fatal


def judged_on() -> str:
    """The machine's day the index judges rule 20 against ("" under the test clock, which judges
    no date), as readers judge it (store/vault.Reader.real)."""
    from ..store.clock import machine_day

    day = machine_day()
    return day.isoformat() if day else ""


def _day_dependent(manifest: dict, now: dict, day: str) -> set[str]:
    """The indexed files whose reading may differ today from the day the index judged them.
    A hand edit dated ahead of the machine's day is refused (rule 20) until that day comes, with
    the file unchanged: a refused file is judged again on a new day. An index written before
    readers judged dates at all (no `judged`) may hold such an edit as it is: every belief file
    is read once more (parsing, not embedding: an unchanged text keeps its vector)."""
    judged = manifest.get("judged")
    if judged == day:
        return set()
    again = set(manifest.get("refused") or {})
    if judged is None:
        again |= {rel for rel in manifest["files"] if rel.startswith("beliefs/")}
    return {rel for rel in again if rel in now}


def _shown(store: str) -> str:
    """The store as status shows it: a server's URL may hold a password."""
    from ..core.redact import redact

    return redact(store)


# --- the index -------------------------------------------------------------------------------------

class Index:
    """Build, update and open the recall index of one vault."""

    def __init__(self, root: str | os.PathLike, config: Config | None = None, *,
                 progress: Progress | None = None, chroma: str = "inline"):
        if chroma not in CHROMA_MODES:
            raise ValueError(f"chroma must be one of {', '.join(CHROMA_MODES)}, not {chroma!r}")
        self.chroma_mode = chroma
        self.root = Path(root).absolute()
        self.config = config or read_config(self.root)
        self.paths = Paths(self.root)
        self.progress = progress or (lambda msg: None)
        self._http = None
        self._cols: tuple | None = None   # (generation, names, collections)
        self._embedder = None

    # -- parts ----------------------------------------------------------------------------------
    @property
    def embedder(self):
        # get_embedder loads each model once per process, under a lock: a
        # prefetching thread and this one may both ask.
        if self._embedder is None:
            self._embedder = get_embedder(self.config.embedder, ollama_url=self.config.ollama_url)
        return self._embedder

    def client(self, fresh: bool = False):
        if self.config.chroma_url:
            if self._http is None:
                self._http = chroma.open_client(self.config, self.paths)
            return self._http
        return chroma.open_client(self.config, self.paths, fresh=fresh)

    def collection(self, names: dict, kind: str):
        return chroma.get_collection(self.client(), names[kind])

    def lock(self, timeout: float = 600.0):
        from ..store.files import VaultLock

        return VaultLock(self.paths.lock, timeout=timeout)

    def _reader(self) -> Reader:
        """What the index holds of each file is what readers are shown of it (SPEC rules 21, 23)."""
        from ..store.clock import lenient_today
        from ..store.vault import Vault

        return Vault(self.root).reader(lenient_today())

    def _incompatible(self, manifest: dict | None) -> str:
        if manifest is None:
            return "there was no index"
        if manifest.get("embedder_name") != self.config.embedder:
            return f"the embedder changed from {manifest.get('embedder_name')} to {self.config.embedder}"
        if manifest.get("redacted") != self._reader().redacted_with:
            return "the redaction patterns in epistemology.md changed"
        # Another Chroma store needs no new vectors: update_chroma fills it from the sidecar.
        return ""

    # -- status -----------------------------------------------------------------------------------
    def status(self) -> Status:
        """What is stale, without opening Chroma or loading a model."""
        try:
            m = load_manifest(self.paths)
        except Corrupt as e:
            return Status(exists=True, needs_rebuild=str(e), store=_shown(self.config.store),
                          embedder=self.config.embedder)
        why = self._incompatible(m)
        if m is None:
            return Status(exists=False, needs_rebuild=why, store=_shown(self.config.store),
                          embedder=self.config.embedder)
        why = why or self._damaged(m)
        st = Status(exists=True, needs_rebuild=why, items=int(m.get("items", 0)), files=len(m["files"]),
                    embedder=m.get("embedder", ""), store=_shown(m.get("store", "")), written=m.get("written", ""),
                    problems=problems_from(m), chroma_pending=self.chroma_pending(),
                    chroma_error=str(load_chroma_state(self.paths).get("error") or ""))
        now = scan(self.root)
        old = m["files"]
        for rel, (mt, size) in sorted(now.items()):
            e = old.get(rel)
            if e is None:
                st.new.append(rel)
            elif (e[0], e[1]) != (mt, size):
                try:
                    if sha256_bytes((self.root / rel).read_bytes()) != e[2]:
                        st.changed.append(rel)
                except OSError:
                    st.changed.append(rel)
        st.deleted = sorted(rel for rel in old if rel not in now)
        # A malformed file that was never indexed and is now gone is no problem any more.
        st.problems = [p for p in st.problems if p.path in now or p.path in old]
        # A malformed file stays out of the manifest until fixed: it is a
        # problem, not news, as long as it is the one already reported.
        reported = {p.path for p in st.problems}
        st.new = [r for r in st.new if r not in reported]
        return st

    def _damaged(self, m: dict) -> str:
        """Why the state files are not as written, every byte read: a status is asked to be sure."""
        for _ in range(3):
            problem = verify(self.paths, m)
            if not problem:
                return ""
            try:  # a writer between its renames is no damage: the next manifest says
                again = load_manifest(self.paths)
            except Corrupt as e:
                return str(e)
            if again is None or again.get("stamp") == m.get("stamp"):
                return problem
            m = again
        return problem

    # -- erase ------------------------------------------------------------------------------------
    def erase(self) -> bool:
        """Forget everything the index holds (`epimem forget`, SPEC §15): the sidecar's files, the
        embedded Chroma store as files (SQLite keeps a deleted row's text in its free pages), this
        vault's collections on a Chroma server. Whether there was an index to erase."""
        with self.lock():
            had = self.paths.manifest.exists() or self.paths.chroma.exists()
            if self.config.chroma_url:
                try:
                    chroma.drop_collections(self.client(), chroma.collection_names(self.root, "")[0], keep=set())
                except Exception as e:  # noqa: BLE001 - said, not fatal: the files are erased regardless
                    self.progress(f"The Chroma server's collections of this vault could not be dropped ({e}).")
            chroma.wipe_embedded(self.paths)
            keep = {self.paths.lock.name, self.paths.chroma_lock.name}
            for p in list(self.paths.dir.iterdir()) if self.paths.dir.is_dir() else []:
                if p.name not in keep and p.is_file():
                    p.unlink(missing_ok=True)
            self._cols = None
        return had

    # -- rebuild ----------------------------------------------------------------------------------
    def rebuild(self, reason: str = "") -> Report:
        with self.lock():
            rep = self._rebuild(reason)
        return self._follow(rep)

    def _rebuild(self, reason: str = "") -> Report:
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        self.progress("Building the recall index from the vault's files…")
        emb = self.embedder

        t = time.perf_counter()
        files_now = scan(self.root)
        manifest_files: dict[str, list] = {}
        problems: dict[str, list] = {}
        refused: dict[str, str] = {}
        items: list[Item] = []
        claimed: dict[str, str] = {}
        reader = self._reader()
        for rel in sorted(files_now):
            try:
                data = (self.root / rel).read_bytes()
            except OSError:
                continue
            parsed = parse_file(rel, data, reader)
            if not _noted(rel, parsed, problems, refused):
                continue
            mt, size = files_now[rel]
            manifest_files[rel] = [mt, size, sha256_bytes(data)]
            for it in parsed.items:
                if it.key in claimed:
                    problems.setdefault(rel, []).append(
                        [1, f"duplicate {it.type} id '{it.id}' (also in {claimed[it.key]}); skipped"])
                    continue
                claimed[it.key] = rel
                items.append(it)
        timings["parse"] = time.perf_counter() - t

        t = time.perf_counter()
        matrix = self._embed([it.text for it in items])
        timings["embed"] = time.perf_counter() - t
        t = time.perf_counter()
        lexical = LexicalIndex.build(tokenize(it.text) for it in items)
        table = Table([to_row(it) for it in items], [it.text_digest for it in items])
        vectors = Vectors.make(matrix, [it.text for it in items])
        timings["keyword"] = time.perf_counter() - t

        manifest = {"embedder": emb.fingerprint, "embedder_name": self.config.embedder,
                    "store": self.config.store, "files": manifest_files,
                    "problems": problems, "items": len(items), "refused": refused,
                    "redacted": reader.redacted_with, "judged": judged_on()}
        t = time.perf_counter()
        save_state(self.paths, manifest, table, lexical, vectors)
        self._mark_chroma(everything=True)
        timings["save"] = time.perf_counter() - t
        dt = time.perf_counter() - t0
        plist = [Problem(rel, line, msg) for rel, rows in sorted(problems.items()) for line, msg in rows]
        rep = Report("rebuilt", reason=reason, items=len(items), files=len(manifest_files),
                     added=len(items), embedded=len(items), problems=plist, seconds=dt, timings=timings,
                     refused=refused_from(manifest))
        self.progress(rep.summary())
        return rep

    def _embed(self, texts: list[str]):
        """The vectors of `texts` (float32, one unit row each)."""
        import numpy as np

        dim = getattr(self.embedder, "dim", None)
        if not texts:
            return np.zeros((0, dim or 0), np.float32)
        parts = []
        for s in range(0, len(texts), BATCH):
            parts.append(np.asarray(self.embedder.embed(texts[s:s + BATCH]), np.float32))
            if len(texts) > 5000:
                self.progress(f"  embedded {min(s + BATCH, len(texts))}/{len(texts)}")
        return np.concatenate(parts)

    # -- sync ----------------------------------------------------------------------------------------
    def sync(self, *, wait: bool = True) -> Report:
        """Bring the index up to date with the files; rebuild when it is missing,
        corrupt or made with another embedder or store. With wait=False, return
        an "unchanged" report at once when another process holds the index lock."""
        lock = self.lock(timeout=600.0 if wait else 0.0)
        try:
            lock.acquire()
        except Exception:
            if wait:
                raise
            return Report("busy", reason="another epimem process is updating the index")
        try:
            rep = self._sync()
        finally:
            lock.release()
        return self._follow(rep)

    def _sync(self) -> Report:
        t0 = time.perf_counter()
        try:
            manifest = load_manifest(self.paths)
        except Corrupt as e:
            return self._rebuild(f"{e}; rebuilt")
        why = self._incompatible(manifest)
        if why:
            return self._rebuild(why)
        broken, moved = damage(self.paths, manifest)
        if broken:
            return self._rebuild(f"{broken}; rebuilt")
        if moved is not None:  # copied or restored: the times it now has, so they are not read again
            manifest = dict(manifest, parts=moved)
            save_manifest(self.paths, manifest)
        old_files: dict[str, list] = manifest["files"]
        now = scan(self.root)
        touched: dict[str, list] = {}
        changed: dict[str, tuple[bytes, list]] = {}
        for rel, (mt, size) in now.items():
            e = old_files.get(rel)
            if e is not None and e[0] == mt and e[1] == size:
                continue
            try:
                data = (self.root / rel).read_bytes()
            except OSError:
                continue  # vanished between scan and read: the next sync sees the delete
            sha = sha256_bytes(data)
            if e is not None and e[2] == sha:
                touched[rel] = [mt, size, sha]
            else:
                changed[rel] = (data, [mt, size, sha])
        day = judged_on()
        for rel in sorted(_day_dependent(manifest, now, day) - changed.keys()):
            try:
                data = (self.root / rel).read_bytes()
            except OSError:
                continue
            changed[rel] = (data, [*now[rel], sha256_bytes(data)])
        deleted = [rel for rel in old_files if rel not in now]
        # A malformed file is kept out of `files` until it parses; if it is
        # deleted instead, only its problem entry is left to drop.
        problems = manifest.get("problems") or {}
        vanished = [rel for rel in problems if rel not in now and rel not in old_files]
        if not changed and not deleted:
            if touched or vanished or manifest.get("judged") != day:
                man = dict(manifest)
                man["files"] = {**old_files, **touched}
                man["problems"] = {rel: rows for rel, rows in problems.items() if rel not in vanished}
                man["judged"] = day
                save_manifest(self.paths, man)
                manifest = man
            return Report("unchanged", items=int(manifest.get("items", 0)), files=len(old_files),
                          problems=problems_from(manifest), refused=refused_from(manifest),
                          seconds=time.perf_counter() - t0)
        try:
            state = load_state(self.paths)
            rep = self._apply(state, changed, deleted, touched, now, day)
        except Corrupt as e:
            return self._rebuild(f"{e}; rebuilt")
        rep.seconds = time.perf_counter() - t0
        return rep

    def _apply(self, state: State, changed: dict[str, tuple[bytes, list]],
               deleted: list[str], touched: dict[str, list], now: dict, day: str) -> Report:
        manifest = dict(state.manifest)
        files_meta = {**manifest["files"], **touched}
        problems = dict(manifest.get("problems") or {})
        refused = {rel: why for rel, why in (manifest.get("refused") or {}).items() if rel not in deleted}
        reader = self._reader()
        table, lexical, vectors = state.table, state.lexical, state.vectors
        rep = Report("synced")

        # Files whose items are replaced: deleted ones, and changed ones that parse.
        replaced: set[str] = set(deleted)
        for rel in deleted:
            files_meta.pop(rel, None)
            problems.pop(rel, None)
            rep.files_changed.append(rel)
        for rel in [r for r in problems if r not in now and r not in files_meta]:
            problems.pop(rel)  # a malformed file, never indexed, since deleted
        parsed_files: dict[str, Parsed] = {}
        for rel in sorted(changed):
            parsed = parse_file(rel, changed[rel][0], reader)
            problems.pop(rel, None)
            refused.pop(rel, None)
            if not _noted(rel, parsed, problems, refused):
                # Skipped, never rewritten: what was indexed before stays, and
                # the file is read again by every sync until it parses.
                continue
            parsed_files[rel] = parsed
            replaced.add(rel)
            files_meta[rel] = changed[rel][1]
            rep.files_changed.append(rel)
        paths = table.columns["path"]
        remove = {k for k, p in zip(table.keys, paths) if p in replaced}

        def owner(key: str) -> str | None:
            """The file that holds `key` in the index, unless that file is being replaced."""
            row = table.row_of.get(key)
            return None if row is None or paths[row] in replaced else paths[row]

        incoming: dict[str, Item] = {}
        claimed: dict[str, str] = {}
        for rel, parsed in parsed_files.items():
            for it in parsed.items:
                other = owner(it.key) or claimed.get(it.key)
                if other is not None:
                    problems.setdefault(rel, []).append(
                        [1, f"duplicate {it.type} id '{it.id}' (also in {other}); skipped"])
                    continue
                claimed[it.key] = rel
                incoming[it.key] = it

        # Decide per item: unchanged, metadata only, or text (re-embed).
        meta_only: list[Item] = []
        embed: list[Item] = []
        for key, it in incoming.items():
            row = table.row_of.get(key)
            if row is None:
                embed.append(it)
                rep.added += 1
                continue
            if table.text_digests[row] != it.text_digest:
                embed.append(it)
                rep.updated += 1
            elif table.row(row) != to_row(it):
                meta_only.append(it)
                rep.updated += 1
            remove.discard(key)
        gone = [k for k in remove if k not in incoming]
        rep.removed = len(gone)

        new_vecs, rep.reused = self._vectors_for(embed, gone, table, vectors)
        rep.embedded = len(embed) - rep.reused

        # The table and BM25 rows: drop gone and re-embedded rows, patch
        # metadata-only rows in place, append the new ones.
        drop = {table.row_of[k] for k in gone} | {table.row_of[it.key] for it in embed if it.key in table.row_of}
        new_table = table.edited({table.row_of[it.key]: to_row(it) for it in meta_only}, drop,
                                 [to_row(it) for it in embed], [it.text_digest for it in embed])
        keep = None
        if drop:
            import numpy as np

            keep = np.ones(len(table), bool)
            keep[list(drop)] = False
            lexical = lexical.keep_rows(keep)
        lexical = lexical.append(tokenize(it.text) for it in embed)
        vectors = vectors.edited(keep, new_vecs, [it.text for it in embed])

        manifest.update(files=files_meta, problems=problems, items=len(new_table), refused=refused,
                        judged=day)
        if not (embed or meta_only or gone):
            # Files read again (a new day, a touched file) that hold what they held: the index
            # files stay as they are; only the manifest says what was read, and when.
            save_manifest(self.paths, manifest)
        else:
            save_state(self.paths, manifest, new_table, lexical, vectors)
        self._mark_chroma(keys=[*gone, *(it.key for it in meta_only), *(it.key for it in embed)])
        rep.items, rep.files = len(new_table), len(files_meta)
        rep.problems = problems_from(manifest)
        rep.refused = refused_from(manifest)
        return rep

    def _vectors_for(self, embed: list[Item], gone: list[str], table: Table, vectors: Vectors):
        """The vectors of the items to (re)index, in `embed` order, and how many
        were reused: a vector whose text only moved (a renamed file, a belief
        given a new id) is taken from the sidecar instead of embedded again."""
        import numpy as np

        by_digest = {table.text_digests[table.row_of[k]]: table.row_of[k] for k in gone}
        rows = [by_digest.get(it.text_digest) for it in embed]
        need = [i for i, r in enumerate(rows) if r is None]
        fresh = self._embed([embed[i].text for i in need]) if need else None
        dim = vectors.matrix.shape[1] if len(vectors) else (fresh.shape[1] if fresh is not None else 0)
        out = np.zeros((len(embed), dim), np.float32)
        for i, r in enumerate(rows):
            if r is not None:
                out[i] = vectors.matrix[r]
        if need:
            out[need] = fresh
        return out, len(embed) - len(need)

    # -- opening for search -----------------------------------------------------------------------------
    def load(self) -> State:
        return load_state(self.paths)

    def collections(self, state: State | None = None) -> dict:
        """Chroma's collections as they are (`update_chroma` brings them up to date),
        reopening the embedded store when another process wrote it since this
        process last opened or wrote it. Raises Corrupt when there are none."""
        m = load_chroma_state(self.paths)
        if not m.get("collections"):
            raise Corrupt("Chroma has no collections for this index yet")
        chroma.reopen_if_written(self.config, self.paths, m.get("token", ""))
        names = tuple(sorted(m["collections"].items()))
        if self._cols is not None and self._cols[0] == chroma.generation and self._cols[1] == names:
            return self._cols[2]
        cols = {k: self.collection(m["collections"], k) for k in (BELIEF, OBSERVATION)}
        self._cols = (chroma.generation, names, cols)
        return cols

    # -- Chroma follows the sidecar ----------------------------------------------------------------
    def _mark_chroma(self, keys=(), everything: bool = False) -> None:
        """Note what Chroma lacks (under the index lock, after the sidecar is written)."""
        m = load_chroma_state(self.paths)
        keys = list(keys)
        if not keys and not everything:
            return
        m["seq"] += 1
        if everything:
            m["rebuild"], m["dirty"] = m["seq"], {}
        else:
            m["dirty"].update(dict.fromkeys(keys, m["seq"]))
        save_chroma_state(self.paths, m)

    def chroma_failed(self, message: str) -> None:
        """Record why Chroma could not be updated (`index status` says it)."""
        with self.lock():
            m = load_chroma_state(self.paths)
            m["error"], m["error_at"] = message, time.time()
            save_chroma_state(self.paths, m)

    def chroma_pending(self) -> int:
        """How many items Chroma lacks (the whole index while a full build is due)."""
        m = load_chroma_state(self.paths)
        if m["rebuild"] or not m.get("collections") or m.get("store") != self.config.store:
            man = load_manifest(self.paths) if self.paths.manifest.exists() else None
            return int(man.get("items", 0)) if man else 0
        return len(m["dirty"])

    def _follow(self, rep: Report) -> Report:
        if rep.action == "unchanged" and self.chroma_mode != "later" and not self._chroma_busy():
            # What an interrupted update left undone (it is not done by anyone else).
            m = load_chroma_state(self.paths)
            # After a failure (a server down), retried on the next change or after a while,
            # not by every recall.
            failed_lately = time.time() - float(m.get("error_at") or 0) < RETRY_AFTER
            if (m["rebuild"] or m["dirty"]) and not failed_lately:
                if self.chroma_mode == "wait":
                    self.update_chroma()
                    rep.chroma = "updated"
                elif self.chroma_mode == "inline" and self._update_chroma_unless_busy():
                    rep.chroma = "updated"
                else:
                    if self.chroma_mode == "background":
                        self.update_chroma_later()
                    rep.chroma = "pending"
            return rep
        if rep.action in ("rebuilt", "synced"):
            if self.chroma_mode == "wait":
                self.update_chroma()
                rep.chroma = "updated"
            elif self.chroma_mode == "inline":
                rep.chroma = "updated" if self._update_chroma_unless_busy() else "pending"
            elif self.chroma_mode == "background":
                self.update_chroma_later()
                rep.chroma = "pending"
            else:
                rep.chroma = "pending"
        return rep

    def _update_chroma_unless_busy(self) -> bool:
        """update_chroma, unless another process is at it (a full build can take a minute):
        then what this sync marked waits for the next sync, which finds it pending."""
        from ..store.files import LockTimeout

        try:
            self.update_chroma(wait=0.0)
        except LockTimeout:
            return False
        return True

    def _chroma_busy(self) -> bool:
        from ..store.files import VaultLock

        lock = VaultLock(self.paths.chroma_lock, timeout=0.0)
        try:
            lock.acquire()
        except Exception:
            return True
        lock.release()
        return False

    def update_chroma_later(self) -> None:
        """`update_chroma` in a detached process (`python -m epimem.recall.follow`),
        its errors in `.epimem/recall/chroma.log`."""
        from ..store.spawn import spawn_detached

        args = ["-m", "epimem.recall.follow", str(self.root)]
        if self.config.chroma_url:
            args += ["--chroma-url", self.config.chroma_url]
        spawn_detached(self.paths.chroma_log, args)

    def update_chroma(self, wait: float = 3600.0) -> dict:
        """Copy into Chroma what it lacks of the sidecar: everything after a
        rebuild (or when its collections are missing or damaged, or the store
        changed), else the marked items — each deleted and added again from the
        sidecar as it is now, so a mark applied twice or late is still right.
        No embedding: the vectors come from the sidecar. One process at a time
        (`chroma.lock`); the index lock is held only to record what was done,
        so syncs go on meanwhile and what they mark waits for the next call."""
        from ..store.files import VaultLock

        t0 = time.perf_counter()
        with VaultLock(self.paths.chroma_lock, timeout=wait):
            m = load_chroma_state(self.paths)
            seq = m["seq"]
            full = bool(m["rebuild"]) or not m.get("collections") or m.get("store") != self.config.store
            if not full and not m["dirty"]:
                return {"action": "unchanged", "items": 0, "seconds": time.perf_counter() - t0}
            try:
                state = self.load()
            except Corrupt:
                return {"action": "no index", "items": 0, "seconds": time.perf_counter() - t0}
            names = None
            if not full:
                try:
                    n = self._chroma_apply(state, sorted(m["dirty"]))
                except Corrupt as e:
                    self.progress(f"Chroma cannot be updated ({e}); writing it afresh from the sidecar.")
                    full = True
            if full:
                names, old_prefix = self._chroma_build(state)
                n = len(state.table)
            token = secrets.token_hex(8)
            with self.lock():
                now = load_chroma_state(self.paths)
                if names is not None:
                    now.update(collections=names, store=self.config.store)
                    if now["rebuild"] <= seq:
                        now["rebuild"] = 0
                now["dirty"] = {k: s for k, s in now["dirty"].items() if s > seq}
                now["token"] = token
                now.pop("error", None)
                now.pop("error_at", None)
                save_chroma_state(self.paths, now)
            chroma.seen(self.paths, token)
            if names is not None:
                chroma.drop_collections(self.client(), old_prefix, keep=set(names.values()))
        return {"action": "rebuilt" if names else "updated", "items": n, "seconds": time.perf_counter() - t0}

    def _chroma_build(self, state: State) -> tuple[dict, str]:
        """New collections holding the whole sidecar; (their names, the vault's prefix)."""
        import numpy as np

        try:
            client = self.client()
        except Corrupt:
            if self.config.chroma_url:
                raise
            self.progress("The Chroma store is damaged; starting it afresh.")
            chroma.wipe_embedded(self.paths)
            client = self.client(fresh=True)
        prefix, names = chroma.collection_names(self.root, state.manifest["embedder"])
        table, mat = state.table, state.vectors.matrix
        kinds = table.columns["type"]
        for kind in (BELIEF, OBSERVATION):
            col = chroma.create_collection(client, names[kind])
            rows = [i for i, t in enumerate(kinds) if t == kind]
            for s in range(0, len(rows), BATCH):
                chunk = rows[s:s + BATCH]
                col.add(ids=[table.keys[r][2:] for r in chunk], embeddings=np.asarray(mat[chunk], np.float32),
                        metadatas=[chroma_metadata(table.item(r)) for r in chunk])
        return names, prefix

    def _chroma_apply(self, state: State, keys: list[str]) -> int:
        """Replace `keys` in Chroma by what the sidecar holds of them (nothing, for a removed item)."""
        import numpy as np

        cols = self.collections(state)
        table, mat = state.table, state.vectors.matrix
        for kind, pre in ((BELIEF, "b/"), (OBSERVATION, "o/")):
            mine = [k for k in keys if k.startswith(pre)]
            col = cols[kind]
            for s in range(0, len(mine), BATCH):
                chunk = mine[s:s + BATCH]
                col.delete(ids=[k[2:] for k in chunk])
                rows = [table.row_of[k] for k in chunk if k in table.row_of]
                if rows:
                    col.add(ids=[table.keys[r][2:] for r in rows], embeddings=np.asarray(mat[rows], np.float32),
                            metadatas=[chroma_metadata(table.item(r)) for r in rows])
        return len(keys)
