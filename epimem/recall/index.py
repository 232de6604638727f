"""The sidecar index in `<vault>/.epimem/`: Chroma for vectors, a table and a
BM25 index beside it, and a manifest of the files they were made from.

    .epimem/chroma/            embedded Chroma store (PersistentClient)
    .epimem/recall/manifest.json  files indexed: path → [mtime_ns, size, sha256]
    .epimem/recall/table.json     one row per item (rank/filters), file → item keys
    .epimem/recall/lexical.npz    the BM25 arrays
    .epimem/recall/lock           held while the index is written

Everything here is derived from the vault's files and can be deleted: a
missing, corrupt or incompatible index (another embedder, another Chroma
store) is rebuilt with a message. The three state files are written
atomically and carry the same random stamp; a reader that sees different
stamps has caught a writer in the middle and reads again.

`sync` looks at mtime and size first and reads only files whose stat changed,
confirming a change by sha256; inside a changed file only items whose text
changed are embedded again, and a vector whose text moved to another file or
id (a renamed belief) is reused rather than recomputed.
"""

from __future__ import annotations

from ..core.errors import EpimemError

import hashlib
import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from ..core.ids import IdError, check_id
from ..core.model import Problem
from ..core.notes import NoteError, parse_belief, parse_note, parse_observations
from .bm25 import LexicalIndex, tokenize
from .embed import DEFAULT, get_embedder, normalize_name
from .items import BELIEF, OBSERVATION, Item, chroma_metadata, from_belief, from_observation, to_row
from .rank import CONF_WEIGHT, RRF_K
from .table import Table

FORMAT = 1
SUBDIRS = ("beliefs", "observations")
BATCH = 2048

Progress = Callable[[str], None]


class IndexError_(EpimemError):
    """The index cannot be used or built; the message says why."""


class Corrupt(IndexError_):
    """The index files are missing pieces or unreadable: rebuild."""


# --- configuration -------------------------------------------------------------------------

@dataclass(frozen=True)
class Config:
    embedder: str = DEFAULT
    chroma_url: str | None = None
    ollama_url: str | None = None
    rrf_k: int = RRF_K
    confidence_weight: float = CONF_WEIGHT

    @property
    def store(self) -> str:
        return self.chroma_url or "embedded"


def read_config(root: str | os.PathLike, *, embedder: str | None = None,
                chroma_url: str | None = None) -> Config:
    """Explicit arguments, else `$EPIMEM_EMBEDDER` / `$EPIMEM_CHROMA_URL`, else
    the `embedder:` / `chroma_url:` / `ollama_url:` keys of epistemology.md's
    frontmatter (top level or under `recall:`), else the defaults."""
    meta: dict = {}
    try:
        text = (Path(root) / "epistemology.md").read_text(encoding="utf-8")
        raw = parse_note(text).meta
        meta = dict(raw)
        if isinstance(raw.get("recall"), dict):
            meta.update(raw["recall"])
    except (OSError, UnicodeDecodeError, NoteError):
        pass  # a broken rules file is reported by the commands that own it

    def pick(arg, env, key):
        for v in (arg, os.environ.get(env), meta.get(key)):
            if isinstance(v, str) and v.strip():
                return v.strip()
        return None

    emb = pick(embedder, "EPIMEM_EMBEDDER", "embedder") or DEFAULT
    url = pick(chroma_url, "EPIMEM_CHROMA_URL", "chroma_url")
    if url and url.lower() in ("embedded", "local", "none"):
        url = None
    k = meta.get("rrf_k", meta.get("recall_rrf_k"))
    w = meta.get("confidence_weight", meta.get("recall_confidence_weight"))
    # An invalid number keeps the default, like every other rule parameter.
    k = k if isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= 1000 else RRF_K
    w = float(w) if isinstance(w, (int, float)) and not isinstance(w, bool) and 0 <= w <= 1 else CONF_WEIGHT
    return Config(embedder=normalize_name(emb), chroma_url=url.rstrip("/") if url else None,
                  ollama_url=pick(None, "OLLAMA_HOST", "ollama_url"), rrf_k=k, confidence_weight=w)


# --- files ------------------------------------------------------------------------------------

def scan(root: Path) -> dict[str, tuple[int, int]]:
    """Indexable files (beliefs/*.md, observations/*.md) → (mtime_ns, size).
    Dotfiles and editors' temp files (`.x.md.swp`, `x.md~`, `x.md.tmp`) are not `*.md`."""
    out: dict[str, tuple[int, int]] = {}
    for sub in SUBDIRS:
        try:
            entries = os.scandir(root / sub)
        except (FileNotFoundError, NotADirectoryError):
            continue
        with entries:
            for e in entries:
                name = e.name
                if not name.endswith(".md") or name.startswith("."):
                    continue
                try:
                    if not e.is_file():
                        continue
                    st = e.stat()
                except FileNotFoundError:
                    continue  # deleted while listing (an editor's delete-then-recreate)
                out[f"{sub}/{name}"] = (st.st_mtime_ns, st.st_size)
    return out


@dataclass
class Parsed:
    items: list[Item]
    problems: list[Problem]
    fatal: bool = False   # nothing usable: keep what was indexed before


def parse_file(rel: str, data: bytes) -> Parsed:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        return Parsed([], [Problem(rel, line, "not valid UTF-8 text")], fatal=True)
    if rel.startswith("beliefs/"):
        belief_id = rel[len("beliefs/"):-3]
        try:
            check_id(belief_id)
        except IdError as e:
            return Parsed([], [Problem(rel, 1, str(e))], fatal=True)
        try:
            return Parsed([from_belief(parse_belief(text, belief_id, rel))], [])
        except NoteError as e:
            return Parsed([], [Problem(rel, e.line, e.message)], fatal=True)
    obs, bad = parse_observations(text, rel)
    return Parsed([from_observation(o) for o in obs], [Problem(rel, line, msg) for line, msg in bad])


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- persistence -------------------------------------------------------------------------------

def _dumps(obj) -> bytes:
    try:
        import orjson  # a dependency of chromadb; 5x faster on 60,000 rows

        return orjson.dumps(obj)
    except ImportError:
        import json

        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _loads(data: bytes):
    try:
        import orjson

        return orjson.loads(data)
    except ImportError:
        import json

        return json.loads(data)


def _atomic_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


@dataclass
class State:
    manifest: dict
    table: Table
    lexical: LexicalIndex

    @property
    def stamp(self) -> str:
        return self.manifest["stamp"]


class Paths:
    def __init__(self, root: Path):
        self.root = root
        self.internal = root / ".epimem"
        self.dir = self.internal / "recall"
        self.manifest = self.dir / "manifest.json"
        self.table = self.dir / "table.json"
        self.lexical = self.dir / "lexical.npz"
        self.lock = self.dir / "lock"
        self.chroma = self.internal / "chroma"


def load_manifest(paths: Paths) -> dict | None:
    try:
        data = paths.manifest.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise Corrupt(f"cannot read {paths.manifest.name}: {e}") from None
    try:
        m = _loads(data)
    except ValueError:
        raise Corrupt("the index manifest is not valid JSON") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT or not isinstance(m.get("files"), dict):
        raise Corrupt("the index manifest is from another version of epimem")
    return m


def load_state(paths: Paths, attempts: int = 3) -> State:
    import numpy as np

    last = "?"
    for i in range(attempts):
        manifest = load_manifest(paths)
        if manifest is None:
            raise Corrupt("there is no index yet")
        try:
            t = _loads(paths.table.read_bytes())
            with np.load(paths.lexical, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        except (OSError, ValueError, KeyError) as e:
            last = f"cannot read the index table: {e}"
            time.sleep(0.05 * (i + 1))
            continue
        lex_stamp = str(arrays.pop("stamp", np.array([""]))[0])
        if t.get("stamp") == manifest["stamp"] == lex_stamp:
            try:
                table = Table.from_json(t)
                lexical = LexicalIndex.from_arrays(t["terms"], arrays)
            except (KeyError, TypeError, IndexError, AttributeError) as e:
                raise Corrupt(f"the index table is damaged ({type(e).__name__}: {e})") from None
            if lexical.n_docs != len(table) or len(table.text_digests) != len(table):
                raise Corrupt("the index table and the keyword index disagree")
            return State(manifest, table, lexical)
        last = "the index files are from different versions (a write was interrupted)"
        time.sleep(0.05 * (i + 1))  # a writer may be between two renames
    raise Corrupt(last)


def save_state(paths: Paths, manifest: dict, table: Table, lexical: LexicalIndex) -> str:
    import io

    import numpy as np

    stamp = secrets.token_hex(8)
    manifest = dict(manifest, stamp=stamp, format=FORMAT,
                    written=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    buf = io.BytesIO()
    np.savez(buf, stamp=np.array([stamp]), **lexical.arrays())
    _atomic_bytes(paths.lexical, buf.getvalue())
    _atomic_bytes(paths.table, _dumps({"stamp": stamp, "terms": lexical.terms, **table.to_json()}))
    _atomic_bytes(paths.manifest, _dumps(manifest))  # last: it is what readers open first
    return stamp


# --- Chroma --------------------------------------------------------------------------------------

def _settings():
    from chromadb.config import Settings

    # SPEC §8: epimem sends nothing anywhere unless asked; Chroma's telemetry is off.
    return Settings(anonymized_telemetry=False)


# Embedded clients, one per store path for the whole process: Chroma keeps one
# "system" per path (with the HNSW index in memory) and every client and
# collection object refers to it. When another process has rewritten the
# store, the only way to see its vectors is to drop that cache, which breaks
# every object made before; `generation` tells holders to fetch new ones.
_EMBEDDED: dict[str, object] = {}
_SEEN_STAMP: dict[str, str] = {}
generation = 0


def release_embedded(force: bool = False) -> None:
    """Forget every embedded Chroma system of this process."""
    global generation
    if not _EMBEDDED and not force:
        return
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()
    _EMBEDDED.clear()
    generation += 1


def open_client(config: Config, paths: Paths, fresh: bool = False):
    """A Chroma client: embedded at .epimem/chroma, or a server by URL."""
    import chromadb

    if config.chroma_url:
        from urllib.parse import urlparse

        u = urlparse(config.chroma_url if "://" in config.chroma_url else "http://" + config.chroma_url)
        if not u.hostname:
            raise IndexError_(f"chroma_url {config.chroma_url!r} is not a URL like http://HOST:PORT")
        ssl = u.scheme == "https"
        try:
            client = chromadb.HttpClient(host=u.hostname, port=u.port or (443 if ssl else 8000), ssl=ssl,
                                         settings=_settings())
            client.heartbeat()
        except Exception as e:
            raise IndexError_(f"cannot reach the Chroma server at {config.chroma_url}: {e}") from None
        return client
    key = str(paths.chroma)
    db = paths.chroma / "chroma.sqlite3"
    cached = _EMBEDDED.get(key)
    if cached is not None and not fresh and _inode(db) != cached[1]:
        fresh = True  # the store was deleted or replaced under this process
    if fresh:
        release_embedded()
        cached = None
    if cached is None:
        paths.chroma.mkdir(parents=True, exist_ok=True)
        try:
            client = chromadb.PersistentClient(path=key, settings=_settings())
        except Exception as e:
            release_embedded(force=True)  # Chroma caches even a system that failed to start
            raise Corrupt(f"the Chroma store in .epimem/chroma cannot be opened: {e}") from None
        cached = _EMBEDDED[key] = (client, _inode(db))
    return cached[0]


def _inode(path: Path):
    try:
        st = path.stat()
        return (st.st_dev, st.st_ino)
    except OSError:
        return None


def vault_tag(root: Path) -> str:
    """Names this vault's collections on a shared server: the same vault
    directory on the same machine gets the same names, so a rebuild after
    deleting .epimem/ replaces its old collections instead of orphaning them."""
    ident = f"{socket.gethostname()}:{root.resolve()}"
    return hashlib.sha1(ident.encode("utf-8")).hexdigest()[:10]


def _collection_names(root: Path, fingerprint: str) -> tuple[str, dict[str, str]]:
    prefix = f"epimem-{vault_tag(root)}-"
    gen = f"{hashlib.sha1(fingerprint.encode()).hexdigest()[:6]}-{secrets.token_hex(3)}"
    return prefix, {BELIEF: f"{prefix}{gen}-b", OBSERVATION: f"{prefix}{gen}-o"}


def _metadata(it: Item, table: Table) -> dict:
    """Chroma metadata for an item that may already be stored: Chroma merges
    metadata on update and upsert, so a removed tag's flag is set to None."""
    md = chroma_metadata(it)
    row = table.row_of.get(it.key)
    if row is not None:
        for t in table.tags(row):
            flag = f"tag:{t}"[:120]
            if flag not in md:
                md[flag] = None
    return md


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
    seconds: float = 0.0
    timings: dict = field(default_factory=dict)

    def as_json(self) -> dict:
        return {"action": self.action, "reason": self.reason or None, "items": self.items,
                "files": self.files, "added": self.added, "updated": self.updated,
                "removed": self.removed, "embedded": self.embedded, "reused": self.reused,
                "files_changed": self.files_changed, "seconds": round(self.seconds, 3),
                "problems": [{"path": p.path, "line": p.line, "message": p.message} for p in self.problems]}

    def summary(self) -> str:
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

    @property
    def stale(self) -> bool:
        return bool(self.needs_rebuild or self.new or self.changed or self.deleted)

    def as_json(self) -> dict:
        return {"exists": self.exists, "stale": self.stale, "needs_rebuild": self.needs_rebuild or None,
                "new": self.new, "changed": self.changed, "deleted": self.deleted,
                "items": self.items, "files": self.files, "embedder": self.embedder,
                "store": self.store, "written": self.written or None,
                "problems": [{"path": p.path, "line": p.line, "message": p.message} for p in self.problems]}


def _problems_from(manifest: dict) -> list[Problem]:
    out = []
    for rel, rows in sorted((manifest.get("problems") or {}).items()):
        out.extend(Problem(rel, int(line), str(msg)) for line, msg in rows)
    return out


# --- the index -------------------------------------------------------------------------------------

class Index:
    """Build, update and open the recall index of one vault."""

    def __init__(self, root: str | os.PathLike, config: Config | None = None, *,
                 progress: Progress | None = None):
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
        if self._embedder is None:
            self._embedder = get_embedder(self.config.embedder, ollama_url=self.config.ollama_url)
        return self._embedder

    def client(self, fresh: bool = False):
        if self.config.chroma_url:
            if self._http is None:
                self._http = open_client(self.config, self.paths)
            return self._http
        return open_client(self.config, self.paths, fresh=fresh)

    def _saved(self, stamp: str) -> None:
        _SEEN_STAMP[str(self.paths.chroma)] = stamp

    def collection(self, manifest: dict, kind: str):
        name = manifest["collections"][kind]
        try:
            return self.client().get_collection(name, embedding_function=None)
        except Exception as e:
            raise Corrupt(f"the Chroma collection {name} is missing ({type(e).__name__})") from None

    def lock(self, timeout: float = 600.0):
        from ..store.vault import VaultLock

        return VaultLock(self.paths.lock, timeout=timeout)

    def _incompatible(self, manifest: dict | None) -> str:
        if manifest is None:
            return "there was no index"
        if manifest.get("embedder_name") != self.config.embedder:
            return f"the embedder changed from {manifest.get('embedder_name')} to {self.config.embedder}"
        if manifest.get("store") != self.config.store:
            return f"the Chroma store changed from {manifest.get('store')} to {self.config.store}"
        return ""

    # -- status -----------------------------------------------------------------------------------
    def status(self) -> Status:
        """What is stale, without opening Chroma or loading a model."""
        try:
            m = load_manifest(self.paths)
        except Corrupt as e:
            return Status(exists=True, needs_rebuild=str(e), store=self.config.store,
                          embedder=self.config.embedder)
        why = self._incompatible(m)
        if m is None:
            return Status(exists=False, needs_rebuild=why, store=self.config.store,
                          embedder=self.config.embedder)
        st = Status(exists=True, needs_rebuild=why, items=int(m.get("items", 0)), files=len(m["files"]),
                    embedder=m.get("embedder", ""), store=m.get("store", ""), written=m.get("written", ""),
                    problems=_problems_from(m))
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

    # -- rebuild ----------------------------------------------------------------------------------
    def rebuild(self, reason: str = "") -> Report:
        with self.lock():
            return self._rebuild(reason)

    def _rebuild(self, reason: str = "") -> Report:
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        self.progress("Building the recall index from the vault's files…")
        emb = self.embedder
        try:
            client = self.client()
        except Corrupt:
            if self.config.chroma_url:
                raise
            self._wipe_embedded()
            client = self.client(fresh=True)
        prefix, names = _collection_names(self.root, emb.fingerprint)

        t = time.perf_counter()
        files_now = scan(self.root)
        manifest_files: dict[str, list] = {}
        problems: dict[str, list] = {}
        items: list[Item] = []
        claimed: dict[str, str] = {}
        for rel in sorted(files_now):
            try:
                data = (self.root / rel).read_bytes()
            except OSError:
                continue
            parsed = parse_file(rel, data)
            if parsed.problems:
                problems[rel] = [[p.line, p.message] for p in parsed.problems]
            if parsed.fatal:
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

        collections = {}
        for kind, name in names.items():
            collections[kind] = client.create_collection(
                name, metadata={"hnsw:space": "cosine", "epimem": "recall"}, embedding_function=None)
        self._write_vectors(collections, items, timings)

        t = time.perf_counter()
        lexical = LexicalIndex.build(tokenize(it.text) for it in items)
        table = Table([to_row(it) for it in items], [it.text_digest for it in items])
        timings["keyword"] = time.perf_counter() - t

        manifest = {"embedder": emb.fingerprint, "embedder_name": self.config.embedder,
                    "store": self.config.store, "collections": names, "files": manifest_files,
                    "problems": problems, "items": len(items)}
        t = time.perf_counter()
        self._saved(save_state(self.paths, manifest, table, lexical))
        timings["save"] = time.perf_counter() - t
        self._drop_collections(client, prefix, keep=set(names.values()))
        dt = time.perf_counter() - t0
        plist = [Problem(rel, line, msg) for rel, rows in sorted(problems.items()) for line, msg in rows]
        rep = Report("rebuilt", reason=reason, items=len(items), files=len(manifest_files),
                     added=len(items), embedded=len(items), problems=plist, seconds=dt, timings=timings)
        self.progress(rep.summary())
        return rep

    def _write_vectors(self, collections: dict, items: list[Item], timings: dict) -> None:
        emb_t = add_t = 0.0
        for kind in (BELIEF, OBSERVATION):
            group = [it for it in items if it.type == kind]
            for s in range(0, len(group), BATCH):
                chunk = group[s:s + BATCH]
                t = time.perf_counter()
                vecs = self.embedder.embed([it.text for it in chunk])
                emb_t += time.perf_counter() - t
                t = time.perf_counter()
                collections[kind].add(ids=[it.id for it in chunk], embeddings=vecs,
                                      metadatas=[chroma_metadata(it) for it in chunk],
                                      documents=[it.text for it in chunk])
                add_t += time.perf_counter() - t
                if len(items) > 5000:
                    self.progress(f"  {kind}s: {min(s + BATCH, len(group))}/{len(group)}")
        timings["embed"] = timings.get("embed", 0.0) + emb_t
        timings["chroma"] = timings.get("chroma", 0.0) + add_t

    def _drop_collections(self, client, prefix: str, keep: set[str]) -> None:
        """Remove this vault's older generations (a finished or crashed rebuild)."""
        try:
            cols = client.list_collections()
        except Exception:
            return
        for c in cols:
            name = c if isinstance(c, str) else getattr(c, "name", "")
            if name.startswith(prefix) and name not in keep:
                try:
                    client.delete_collection(name)
                except Exception:
                    pass

    def _wipe_embedded(self) -> None:
        import shutil

        self.progress("The Chroma store is damaged; starting it afresh.")
        release_embedded()  # let go of the old files
        shutil.rmtree(self.paths.chroma, ignore_errors=True)

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
            return self._sync()
        finally:
            lock.release()

    def _sync(self) -> Report:
        t0 = time.perf_counter()
        try:
            manifest = load_manifest(self.paths)
        except Corrupt as e:
            return self._rebuild(f"{e}; rebuilt")
        why = self._incompatible(manifest)
        if why:
            return self._rebuild(why)
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
        deleted = [rel for rel in old_files if rel not in now]
        # A malformed file is kept out of `files` until it parses; if it is
        # deleted instead, only its problem entry is left to drop.
        problems = manifest.get("problems") or {}
        vanished = [rel for rel in problems if rel not in now and rel not in old_files]
        if not changed and not deleted:
            if touched or vanished:
                man = dict(manifest)
                man["files"] = {**old_files, **touched}
                man["problems"] = {rel: rows for rel, rows in problems.items() if rel not in vanished}
                _atomic_bytes(self.paths.manifest, _dumps(man))
                manifest = man
            return Report("unchanged", items=int(manifest.get("items", 0)), files=len(old_files),
                          problems=_problems_from(manifest), seconds=time.perf_counter() - t0)
        try:
            state = load_state(self.paths)
            cols = self.collections(state)
        except Corrupt as e:
            return self._rebuild(f"{e}; rebuilt")
        rep = self._apply(state, cols, changed, deleted, touched, now)
        rep.seconds = time.perf_counter() - t0
        return rep

    def _apply(self, state: State, cols: dict, changed: dict[str, tuple[bytes, list]],
               deleted: list[str], touched: dict[str, list], now: dict) -> Report:
        manifest = dict(state.manifest)
        files_meta = {**manifest["files"], **touched}
        problems = dict(manifest.get("problems") or {})
        table, lexical = state.table, state.lexical
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
            parsed = parse_file(rel, changed[rel][0])
            problems.pop(rel, None)
            if parsed.problems:
                problems[rel] = [[p.line, p.message] for p in parsed.problems]
            if parsed.fatal:
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

        rep.reused = self._chroma_changes(cols, table, gone, meta_only, embed)
        rep.embedded = len(embed) - rep.reused

        # The table and BM25 rows: drop gone and re-embedded rows, patch
        # metadata-only rows in place, append the new ones.
        drop = {table.row_of[k] for k in gone} | {table.row_of[it.key] for it in embed if it.key in table.row_of}
        new_table = table.edited({table.row_of[it.key]: to_row(it) for it in meta_only}, drop,
                                 [to_row(it) for it in embed], [it.text_digest for it in embed])
        if drop:
            import numpy as np

            keep = np.ones(len(table), bool)
            keep[list(drop)] = False
            lexical = lexical.keep_rows(keep)
        lexical = lexical.append(tokenize(it.text) for it in embed)

        manifest.update(files=files_meta, problems=problems, items=len(new_table))
        self._saved(save_state(self.paths, manifest, new_table, lexical))
        rep.items, rep.files = len(new_table), len(files_meta)
        rep.problems = _problems_from(manifest)
        return rep

    def _chroma_changes(self, cols: dict, table: Table, gone: list[str], meta_only: list[Item],
                        embed: list[Item]) -> int:
        """Apply the changes to Chroma; returns how many vectors were reused."""
        reused = 0
        for kind, prefix in ((BELIEF, "b/"), (OBSERVATION, "o/")):
            col = cols[kind]
            ids = [k[2:] for k in gone if k.startswith(prefix)]
            # Vectors whose text only moved (a renamed file, a belief given a
            # new id) are reused instead of embedded again.
            reuse: dict[str, list[float]] = {}
            todo = [it for it in embed if it.type == kind]
            if ids and todo:
                by_digest = {table.text_digests[table.row_of[prefix + i]]: i for i in ids}
                want = {it.id: by_digest[it.text_digest] for it in todo if it.text_digest in by_digest}
                if want:
                    got = col.get(ids=sorted(set(want.values())), include=["embeddings"])
                    vec = dict(zip(got["ids"], got["embeddings"]))
                    reuse = {new: vec[old] for new, old in want.items() if old in vec}
                    reused += len(reuse)
            for s in range(0, len(ids), BATCH):
                col.delete(ids=ids[s:s + BATCH])
            for s in range(0, len(todo), BATCH):
                chunk = todo[s:s + BATCH]
                need = [it for it in chunk if it.id not in reuse]
                fresh = dict(zip([it.id for it in need], self.embedder.embed([it.text for it in need]))) \
                    if need else {}
                vecs = [reuse[it.id] if it.id in reuse else fresh[it.id] for it in chunk]
                col.upsert(ids=[it.id for it in chunk], embeddings=[list(map(float, v)) for v in vecs],
                           metadatas=[_metadata(it, table) for it in chunk],
                           documents=[it.text for it in chunk])
            metas = [it for it in meta_only if it.type == kind]
            for s in range(0, len(metas), BATCH):
                chunk = metas[s:s + BATCH]
                col.update(ids=[it.id for it in chunk], metadatas=[_metadata(it, table) for it in chunk])
        return reused

    # -- opening for search -----------------------------------------------------------------------------
    def load(self) -> State:
        return load_state(self.paths)

    def collections(self, state: State) -> dict:
        """The collections of `state`, reopening the embedded store when another
        process wrote it since this process last opened or wrote it."""
        if not self.config.chroma_url:
            key = str(self.paths.chroma)
            seen = _SEEN_STAMP.get(key)
            if key in _EMBEDDED and seen is not None and seen != state.stamp:
                open_client(self.config, self.paths, fresh=True)
            _SEEN_STAMP[key] = state.stamp
        names = tuple(sorted(state.manifest["collections"].items()))
        if self._cols is not None and self._cols[0] == generation and self._cols[1] == names:
            return self._cols[2]
        cols = {k: self.collection(state.manifest, k) for k in (BELIEF, OBSERVATION)}
        self._cols = (generation, names, cols)
        return cols
