"""The one per-file cache: what a file parsed to, kept while its (mtime, size) stays the same.

The vault's beliefs and observation logs and the hook context's index of active beliefs are each
a map of file → parsed value under `.epimem/cache/`, so that a command reads only the files that
changed since the last one. They share one rule for when a cached value may be trusted:

- the file's (mtime_ns, size) is the one the value was parsed from, and
- the file was already *settled* when it was parsed: its mtime at least `SETTLE_NS` older than
  the moment the pass began. A file rewritten twice within the filesystem's mtime granularity
  (git's "racy clean" case) keeps its (mtime, size); a young entry is parsed again on every pass
  until it is older, and stored as settled then.

On disk: `marshal` (it builds only built-in values and never runs code, and loads 50,000 rows
faster than JSON), `{"version": "statcache-1/N", "files": {key: (mtime_ns, size, settled, value)}}`. A missing,
corrupt or older cache is a cold start, never an error. Written with `files.write_cache` (atomic,
no fsync: it can always be rebuilt).
"""

from __future__ import annotations

import marshal
import os
import time
from pathlib import Path
from typing import Any

from .files import INTERNAL_DIR, write_cache

SETTLE_NS = 2_000_000_000
FORMAT = "statcache-1"
_MISS = object()


def path_of(root: str | os.PathLike, name: str) -> Path:
    return Path(root) / INTERNAL_DIR / "cache" / f"{name}.marshal"


class StatCache:
    """One cache file, for one pass over its files: `get` each file's value (or parse it and
    `put` it), then `save`. Entries not seen in the pass are dropped at `save` unless `keep` is
    asked (a pass over a few changed files only)."""

    def __init__(self, root: str | os.PathLike, name: str, version: int, salt: str = ""):
        self.path = path_of(root, name)
        # The layout's own version beside the value's: a cache an older epimem wrote under the
        # same name (an int version, other tuples) is a cold start here, and this one there.
        # `salt` names what else the values were made with (the redaction patterns: a value
        # redacted under other patterns is stale though its file is not).
        self.version = f"{FORMAT}/{version}" + (f"/{salt}" if salt else "")
        # Taken before any file is looked at: a file written while the pass runs is young.
        self.settled_before = time.time_ns() - SETTLE_NS
        self._old: dict[str, tuple] = {}
        try:
            raw = marshal.loads(self.path.read_bytes())
            if isinstance(raw, dict) and raw.get("version") == self.version and isinstance(raw.get("files"), dict):
                self._old = raw["files"]
        except (OSError, ValueError, EOFError, TypeError):
            pass  # a missing or corrupt cache is just a cold start
        self._new: dict[str, tuple] = {}
        self._fresh: set[str] = set()  # looked at in this pass (a kept entry is not)
        self._changed = False

    @property
    def loaded(self) -> bool:
        """Whether the file held entries (a cold start has none to keep)."""
        return bool(self._old)

    def get(self, key: str, st: os.stat_result, default: Any = None) -> Any:
        """The value parsed from this (mtime, size) of the file, or `default` when it must be
        parsed again (not cached, changed, or not settled when it was)."""
        seen = self._new.get(key) if key in self._fresh else None
        if seen is not None and seen[0] == st.st_mtime_ns and seen[1] == st.st_size:
            return seen[3]  # parsed (or found) in this pass already: settled or not, it is this pass's
        hit = self._old.get(key)
        if hit is not None and hit[2] and hit[0] == st.st_mtime_ns and hit[1] == st.st_size:
            self._new[key] = hit
            self._fresh.add(key)
            return hit[3]
        return default

    def lookup(self, key: str, st: os.stat_result) -> tuple[bool, Any]:
        """(found, value): for values that may be None themselves."""
        v = self.get(key, st, _MISS)
        return (False, None) if v is _MISS else (True, v)

    def put(self, key: str, st: os.stat_result, value: Any) -> None:
        entry = (st.st_mtime_ns, st.st_size, st.st_mtime_ns < self.settled_before, value)
        old = self._old.get(key)
        if old is None or old[:3] != entry[:3] or old[3] != value:
            self._changed = True
        self._new[key] = entry
        self._fresh.add(key)

    def keep(self) -> None:
        """Keep every entry not seen in this pass, as it was (not checked against its file)."""
        for k, v in self._old.items():
            self._new.setdefault(k, v)

    def drop(self, key: str) -> None:
        if self._new.pop(key, None) is not None:
            self._changed = True

    def values(self) -> list[Any]:
        return [e[3] for e in self._new.values()]

    def items(self) -> list[tuple[str, Any]]:
        return [(k, e[3]) for k, e in self._new.items()]

    def __len__(self) -> int:
        return len(self._new)

    def save(self) -> None:
        """Write the entries of this pass when any differ from the file's (a read-only vault
        still reads: an OSError is ignored)."""
        if not self._changed and self._new.keys() == self._old.keys():
            return
        try:
            write_cache(self.path, marshal.dumps({"version": self.version, "files": self._new}))
        except (OSError, ValueError):
            pass
