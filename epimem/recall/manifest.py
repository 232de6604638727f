"""The index's state on disk, and the vault files it is made from.

    .epimem/recall/manifest.json  files indexed: path → [mtime_ns, size, sha256]
    .epimem/recall/table.json     one row per item (rank/filters), file → item keys
    .epimem/recall/lexical.npz    the BM25 arrays
    .epimem/recall/vectors.npz    the stamp and text offsets of the two arrays below
    .epimem/recall/vectors-<stamp>.npy, texts-<stamp>.npy
                                  every item's vector and indexed text, in table order
    .epimem/recall/lock           held while the index is written
    .epimem/recall/chroma.json    what Chroma still lacks of the above (see index.Index.update_chroma)
    .epimem/recall/chroma.lock    held while Chroma is brought up to date

The vectors file is what a query reads: an exact cosine scan of 60,000
rows is a few milliseconds, so answering needs neither chromadb (0.9 s to
import) nor its HNSW index; Chroma keeps the same vectors for writers and
for a shared server.

The four state files are written atomically and carry the same random
stamp; a reader that sees different stamps has caught a writer in the middle
and reads again. They are caches (rebuildable from the files), so they are
not fsynced: a crash loses at most an update that the next sync redoes.

The manifest also records each of those files' size, mtime and CRC-32 as written (`parts`):
a reader stats them and reads one again only when its time moved, so a truncated, replaced or
rewritten file is found before its vectors are served (docs/decisions.md, "Index integrity").
"""

from __future__ import annotations

import hashlib
import secrets
import time
import zipfile
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.ids import IdError, check_id
from ..core.model import Problem, Refused
from ..core.notes import parse_observations
from ..store.files import compact_json, write_cache
from ..store.paths import note_entries
from .bm25 import LexicalIndex
from .errors import Corrupt
from .items import Item, from_belief, from_observation
from .table import Table

if TYPE_CHECKING:
    from ..store.vault import Reader

FORMAT = 4   # 3: vectors and texts beside the table, memory-mapped; 4: items as readers are shown them
SUBDIRS = ("beliefs", "observations")


# --- the vault's files ---------------------------------------------------------------------------

def scan(root: Path) -> dict[str, tuple[int, int]]:
    """Indexable files (beliefs/*.md, observations/*.md) → (mtime_ns, size).
    Dotfiles and editors' temp files (`.x.md.swp`, `x.md~`, `x.md.tmp`) are not `*.md`."""
    out: dict[str, tuple[int, int]] = {}
    for sub in SUBDIRS:
        for e in note_entries(root / sub):
            try:
                st = e.stat()
            except FileNotFoundError:
                continue  # deleted while listing (an editor's delete-then-recreate)
            out[f"{sub}/{e.name}"] = (st.st_mtime_ns, st.st_size)
    return out


@dataclass
class Parsed:
    items: list[Item]
    problems: list[Problem]
    fatal: bool = False   # nothing usable: keep what was indexed before
    refused: Refused | None = None  # a hand edit not shown: the items are the file as last committed


def parse_file(rel: str, data: bytes, reader: Reader) -> Parsed:
    """The items of one vault file as readers are shown them (`store.vault.Reader`: redacted, a
    belief whose hand edit breaks a rule as last committed), so that the index never holds a
    secret or a number `validate` refuses (SPEC rules 21, 23)."""
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
        seen = reader.seen([reader.parse(rel, text)])[0]
        if seen.belief is None:
            p = seen.problem or Problem(rel, 1, "cannot be read")
            return Parsed([], [p], fatal=True)
        return Parsed([from_belief(seen.belief)], [], refused=seen.refused)
    obs, bad = parse_observations(text, rel)
    return Parsed([from_observation(reader.observation(o)) for o in obs],
                  [Problem(rel, line, msg) for line, msg in bad])


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- the state files ------------------------------------------------------------------------------

def _dumps(obj) -> bytes:
    try:
        import orjson  # a dependency of chromadb; 5x faster on 60,000 rows

        return orjson.dumps(obj)
    except ImportError:
        return compact_json(obj).encode("utf-8")


def _loads(data: bytes):
    try:
        import orjson

        return orjson.loads(data)
    except ImportError:
        import json

        return json.loads(data)


class Vectors:
    """Every item's vector (float32, unit rows) and indexed text, in table
    order, read from vectors.npz; the texts are decoded only when asked."""

    def __init__(self, matrix, text_ptr, text_bytes):
        self.matrix = matrix
        self.text_ptr = text_ptr
        self.text_bytes = text_bytes

    @classmethod
    def make(cls, matrix, texts: list[str]) -> Vectors:
        import numpy as np

        enc = [t.encode("utf-8") for t in texts]
        ptr = np.zeros(len(enc) + 1, np.int64)
        if enc:
            ptr[1:] = np.cumsum([len(b) for b in enc])
        matrix = np.asarray(matrix, np.float32)
        if matrix.ndim != 2:
            matrix = matrix.reshape(len(texts), -1)
        return cls(matrix, ptr, np.frombuffer(b"".join(enc), np.uint8))

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    def text(self, row: int) -> str:
        s, e = int(self.text_ptr[row]), int(self.text_ptr[row + 1])
        return self.text_bytes[s:e].tobytes().decode("utf-8")

    def texts(self) -> list[str]:
        return [self.text(i) for i in range(len(self))]

    def edited(self, keep, new_matrix, new_texts: list[str]) -> Vectors:
        """Rows where `keep` (a bool array, or None for all) and then the new
        rows. Texts are copied as byte runs, not decoded: a one-file sync of a
        60,000-row index touches a handful of runs."""
        import numpy as np

        n = len(self)
        idx = np.arange(n) if keep is None else np.flatnonzero(keep)
        chunks, lens = [], []
        if len(idx):
            # runs of consecutive kept rows
            breaks = np.flatnonzero(np.diff(idx) != 1)
            starts = np.concatenate([[0], breaks + 1])
            ends = np.concatenate([breaks, [len(idx) - 1]])
            ptr = self.text_ptr
            runs = list(zip(idx[starts].tolist(), idx[ends].tolist()))
            for a, b in runs:
                chunks.append(np.asarray(self.text_bytes[int(ptr[a]):int(ptr[b + 1])]))
            lens.append(np.diff(ptr)[idx])
        else:
            runs = []
        enc = [t.encode("utf-8") for t in new_texts]
        chunks.append(np.frombuffer(b"".join(enc), np.uint8))
        lens.append(np.asarray([len(b) for b in enc], np.int64))
        all_lens = np.concatenate(lens) if lens else np.zeros(0, np.int64)
        text_ptr = np.zeros(len(all_lens) + 1, np.int64)
        np.cumsum(all_lens, out=text_ptr[1:])
        dim = self.matrix.shape[1] if self.matrix.ndim == 2 else 0
        # Slices of runs, not a fancy index: one sequential read of the mapped file.
        parts = [np.asarray(self.matrix[a:b + 1], np.float32) for a, b in runs] or \
            [np.zeros((0, dim), np.float32)]
        if new_texts:
            parts.append(np.asarray(new_matrix, np.float32).reshape(len(new_texts), dim or -1))
        return Vectors(np.concatenate(parts) if len(parts) > 1 else parts[0], text_ptr,
                       np.concatenate(chunks) if chunks else np.zeros(0, np.uint8))


@dataclass
class State:
    manifest: dict
    table: Table
    lexical: LexicalIndex
    vectors: Vectors

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
        self.vectors = self.dir / "vectors.npz"
        self.lock = self.dir / "lock"
        self.chroma_state = self.dir / "chroma.json"
        self.chroma_lock = self.dir / "chroma.lock"
        self.chroma_log = self.dir / "chroma.log"
        self.chroma = self.internal / "chroma"

    def matrix(self, stamp: str) -> Path:
        return self.dir / f"vectors-{stamp}.npy"

    def text_bytes(self, stamp: str) -> Path:
        return self.dir / f"texts-{stamp}.npy"


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


# --- the state files as written -------------------------------------------------------------

def _crc(data) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def _file_crc(path: Path) -> int:
    crc = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            crc = zlib.crc32(chunk, crc)
    return crc & 0xFFFFFFFF


def damage(paths: Paths, manifest: dict) -> tuple[str, dict | None]:
    """(why the state files are not the ones the manifest was written with, or ""; the manifest's
    `parts` with the times a copy moved, when only times moved, else None).

    A size that differs is damage. A time that differs is read again: a copy or a restore moves
    the time and keeps the bytes, and a rebuild would embed every item again for nothing. Bytes
    changed with the time kept (a disk's own rot) are past what a stat can see; `verify` reads all."""
    parts = manifest.get("parts")
    if not isinstance(parts, dict):
        return "", None  # written before the check: the zip files' own checksums still hold
    moved = {}
    for name, rec in parts.items():
        try:
            size, mtime, crc = rec
            st = (paths.dir / name).stat()
        except FileNotFoundError:
            return f"{_shown(paths, name)} is missing", None
        except OSError as e:
            return f"cannot read {_shown(paths, name)}: {e.strerror or e}", None
        except (TypeError, ValueError):
            return "the index manifest's record of its files is damaged", None
        if st.st_size != size:
            return (f"{_shown(paths, name)} is damaged: {st.st_size:,} bytes, {size:,} as written "
                    "(truncated or replaced)"), None
        if st.st_mtime_ns != mtime:
            problem = _changed(paths, name, crc)
            if problem:
                return problem, None
            moved[name] = [size, st.st_mtime_ns, crc]
    return "", ({**parts, **moved} if moved else None)


def verify(paths: Paths, manifest: dict) -> str:
    """`damage`, and every file read whatever its time says: what `index status` checks."""
    problem, _ = damage(paths, manifest)
    for name, rec in (manifest.get("parts") or {}).items():
        if problem:
            break
        problem = _changed(paths, name, rec[2])
    return problem


def _changed(paths: Paths, name: str, crc: int) -> str:
    try:
        if _file_crc(paths.dir / name) == crc:
            return ""
    except OSError as e:
        return f"cannot read {_shown(paths, name)}: {e.strerror or e}"
    return f"{_shown(paths, name)} is damaged: its bytes changed since it was written"


def _shown(paths: Paths, name: str) -> str:
    return (paths.dir / name).relative_to(paths.root).as_posix()


def load_state(paths: Paths, attempts: int = 3) -> State:
    import numpy as np

    last = "?"
    for i in range(attempts):
        manifest = load_manifest(paths)
        if manifest is None:
            raise Corrupt("there is no index yet")
        try:
            reading = paths.table
            t = _loads(paths.table.read_bytes())
            reading = paths.lexical
            with np.load(paths.lexical, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            reading = paths.vectors
            with np.load(paths.vectors, allow_pickle=False) as z:
                vec = {k: z[k] for k in z.files}
            # The two big arrays are memory-mapped: a query reads only the pages
            # it touches, and a fresh process does not copy 60 MB first.
            vstamp = str(vec.get("stamp", np.array([""]))[0])
            reading = paths.matrix(vstamp)
            vec["matrix"] = np.load(reading, mmap_mode="r", allow_pickle=False)
            reading = paths.text_bytes(vstamp)
            vec["text_bytes"] = np.load(reading, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as e:
            # an npz is a zip, whose own checksums find what an index written before `parts` hides
            last = damage(paths, manifest)[0] or f"cannot read {_shown(paths, reading.name)}: {e}"
            time.sleep(0.05 * (i + 1))
            continue
        lex_stamp = str(arrays.pop("stamp", np.array([""]))[0])
        vec_stamp = str(vec.pop("stamp", np.array([""]))[0])
        if t.get("stamp") == manifest["stamp"] == lex_stamp == vec_stamp:
            # What the stamps cannot tell, and the memory-mapped arrays are not read to check: the
            # bytes under them are the ones written.
            problem, _ = damage(paths, manifest)
            if problem:
                last = problem
                time.sleep(0.05 * (i + 1))
                continue
            try:
                table = Table.from_json(t)
                lexical = LexicalIndex.from_arrays(t["terms"], arrays)
                vectors = Vectors(vec["matrix"], vec["text_ptr"], vec["text_bytes"])
            except (KeyError, TypeError, IndexError, AttributeError) as e:
                raise Corrupt(f"the index table is damaged ({type(e).__name__}: {e})") from None
            if lexical.n_docs != len(table) or len(table.text_digests) != len(table) or len(vectors) != len(table):
                raise Corrupt("the index table, the keyword index and the vectors disagree")
            return State(manifest, table, lexical, vectors)
        last = "the index files are from different versions (a write was interrupted)"
        time.sleep(0.05 * (i + 1))  # a writer may be between two renames
    raise Corrupt(last)


def save_state(paths: Paths, manifest: dict, table: Table, lexical: LexicalIndex, vectors: Vectors) -> str:
    import io

    import numpy as np

    stamp = secrets.token_hex(8)
    manifest = dict(manifest, stamp=stamp, format=FORMAT,
                    written=datetime.now(UTC).isoformat(timespec="seconds"))
    crcs: dict[Path, int] = {}

    def write(path: Path, data) -> None:
        crcs[path] = _crc(data)
        write_cache(path, data)

    buf = io.BytesIO()
    np.savez(buf, stamp=np.array([stamp]), **lexical.arrays())
    write(paths.lexical, buf.getvalue())
    for path, arr in ((paths.matrix(stamp), np.ascontiguousarray(vectors.matrix, np.float32)),
                      (paths.text_bytes(stamp), np.ascontiguousarray(vectors.text_bytes, np.uint8))):
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        write(path, buf.getbuffer())  # a view: no second copy of 60 MB
    buf = io.BytesIO()
    np.savez(buf, stamp=np.array([stamp]), text_ptr=vectors.text_ptr)
    write(paths.vectors, buf.getvalue())
    write(paths.table, _dumps({"stamp": stamp, "terms": lexical.terms, **table.to_json()}))
    manifest["parts"] = {p.name: [(st := p.stat()).st_size, st.st_mtime_ns, crc] for p, crc in crcs.items()}
    write_cache(paths.manifest, _dumps(manifest))  # last: it is what readers open first
    _drop_old_arrays(paths, stamp)
    return stamp


def _drop_old_arrays(paths: Paths, stamp: str) -> None:
    """Remove the arrays of earlier stamps. A reader still mapping one keeps
    its pages (POSIX); one that opens it too late retries with the new stamp."""
    keep = {paths.matrix(stamp).name, paths.text_bytes(stamp).name}
    for p in paths.dir.glob("*.npy"):
        if p.name not in keep and (p.name.startswith("vectors-") or p.name.startswith("texts-")):
            try:
                p.unlink()
            except OSError:
                pass  # in use (Windows) or already gone: the next write retries



def save_manifest(paths: Paths, manifest: dict) -> None:
    """Rewrite the manifest alone (same stamp): for changes that touch no item,
    such as a file saved again unchanged."""
    write_cache(paths.manifest, _dumps(manifest))


def load_chroma_state(paths: Paths) -> dict:
    """What Chroma holds of the sidecar: its collections (None before the first
    build), and what it still lacks — `rebuild` (a sequence number, 0 for none)
    and `dirty` (item key → the sequence number that marked it). An unreadable
    file asks for a full build: Chroma is rebuilt from the sidecar, not the other way."""
    fresh = {"collections": None, "store": None, "seq": 0, "rebuild": 0, "dirty": {}, "token": ""}
    try:
        m = _loads(paths.chroma_state.read_bytes())
    except FileNotFoundError:
        return fresh
    except (OSError, ValueError):
        return dict(fresh, seq=1, rebuild=1)
    if not isinstance(m, dict) or not isinstance(m.get("dirty"), dict) or not isinstance(m.get("seq"), int):
        return dict(fresh, seq=1, rebuild=1)
    return {**fresh, **m}


def save_chroma_state(paths: Paths, state: dict) -> None:
    write_cache(paths.chroma_state, _dumps(state))


def refused_entry(r: Refused) -> str | list[str]:
    """How the manifest keeps a refused edit: its reason, with the commit it is shown from when
    that is older than HEAD (an index written before that held reasons only)."""
    return [r.why, r.since] if r.since else r.why


def refused_from(manifest: dict) -> list[Refused]:
    """The hand edits the index holds as last committed (SPEC rule 21)."""
    out = []
    for rel, entry in sorted((manifest.get("refused") or {}).items()):
        why, since = (entry[0], entry[1]) if isinstance(entry, list) and len(entry) == 2 else (entry, "")
        out.append(Refused(rel, str(why), str(since)))
    return out


def problems_from(manifest: dict) -> list[Problem]:
    out = []
    for rel, rows in sorted((manifest.get("problems") or {}).items()):
        out.extend(Problem(rel, int(line), str(msg)) for line, msg in rows)
    return out
