"""The index's state on disk, and the vault files it is made from.

    .epimem/recall/manifest.json  files indexed: path → [mtime_ns, size, sha256]
    .epimem/recall/table.json     one row per item (rank/filters), file → item keys
    .epimem/recall/lexical.npz    the BM25 arrays
    .epimem/recall/lock           held while the index is written

The three state files are written atomically and carry the same random
stamp; a reader that sees different stamps has caught a writer in the middle
and reads again. They are caches (rebuildable from the files), so they are
not fsynced: a crash loses at most an update that the next sync redoes.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..core.ids import IdError, check_id
from ..core.model import Problem
from ..core.notes import NoteError, parse_belief, parse_observations
from ..store.files import compact_json, write_cache
from ..store.paths import note_entries
from .bm25 import LexicalIndex
from .errors import Corrupt
from .items import Item, from_belief, from_observation
from .table import Table

FORMAT = 1
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
                    written=datetime.now(UTC).isoformat(timespec="seconds"))
    buf = io.BytesIO()
    np.savez(buf, stamp=np.array([stamp]), **lexical.arrays())
    write_cache(paths.lexical, buf.getvalue())
    write_cache(paths.table, _dumps({"stamp": stamp, "terms": lexical.terms, **table.to_json()}))
    write_cache(paths.manifest, _dumps(manifest))  # last: it is what readers open first
    return stamp



def save_manifest(paths: Paths, manifest: dict) -> None:
    """Rewrite the manifest alone (same stamp): for changes that touch no item,
    such as a file saved again unchanged."""
    write_cache(paths.manifest, _dumps(manifest))


def problems_from(manifest: dict) -> list[Problem]:
    out = []
    for rel, rows in sorted((manifest.get("problems") or {}).items()):
        out.extend(Problem(rel, int(line), str(msg)) for line, msg in rows)
    return out
