"""The sidecar table: every indexed item's metadata as rows, plus numpy
columns that turn a Filters value into a row mask in microseconds.

`rank.passes` is the definition of what a filter means; `Table.mask` is its
vectorised twin used to prefilter tens of thousands of rows per query, and
the final candidates are checked again with `rank.passes`. A test keeps the
two in agreement. Decay and scope are not twins: both call the kernel
(`kernel.effective` with numpy's array functions, `kernel.scope_matches`
once per distinct scope).
"""

from __future__ import annotations

from datetime import date

from ..core import kernel
from ..core.params import DEFAULTS, Params
from .items import BELIEF, ROW_FIELDS, Item, from_row
from .rank import Filters, scope_matches

F = {name: i for i, name in enumerate(ROW_FIELDS)}
TAGS = F["tags"]


def _ymd(v: str | None) -> int:
    return int(v.replace("-", "")) if v else 0


def _ordinal(v: str | None) -> int:
    return date.fromisoformat(v).toordinal() if v else 0


class Table:
    """Rows kept as columns (lists, one per field of ROW_FIELDS): that is how
    they are stored, because 60,000 rows parse from JSON columns several
    times faster than from 60,000 small lists. Tags, a list per row, are one
    flat list plus a count per row."""

    def __init__(self, rows: list | None = None, text_digests: list | None = None, *,
                 columns: dict | None = None, tags_flat: list | None = None, tags_n: list | None = None):
        if columns is None:
            rows = rows or []
            cols = [list(c) for c in zip(*rows)] if rows else [[] for _ in ROW_FIELDS]
            columns = dict(zip(ROW_FIELDS, cols))
            tags = columns.pop("tags")
            tags_n = [len(t) for t in tags]
            tags_flat = [t for ts in tags for t in ts]
        self.columns = columns
        self.tags_flat = list(tags_flat or [])
        self.tags_n = list(tags_n or [])
        self.text_digests = list(text_digests or [])
        ids, types = columns["id"], columns["type"]
        self.keys = [("b/" if t == BELIEF else "o/") + i for i, t in zip(ids, types)]
        self.row_of = {k: i for i, k in enumerate(self.keys)}
        self._cols: dict = {}
        self._tag_start = None

    @classmethod
    def from_json(cls, d: dict) -> Table:
        return cls(text_digests=d["digests"], columns=d["columns"], tags_flat=d["tags_flat"], tags_n=d["tags_n"])

    def to_json(self) -> dict:
        return {"columns": self.columns, "tags_flat": self.tags_flat, "tags_n": self.tags_n,
                "digests": self.text_digests}

    def __len__(self) -> int:
        return len(self.keys)

    def _tag_starts(self) -> list[int]:
        if self._tag_start is None:
            from itertools import accumulate

            self._tag_start = list(accumulate(self.tags_n, initial=0))
        return self._tag_start

    def tags(self, row: int) -> list:
        s = self._tag_starts()[row]
        return self.tags_flat[s:s + self.tags_n[row]]

    def row(self, i: int) -> list:
        out = [self.columns[name][i] if name != "tags" else None for name in ROW_FIELDS]
        out[TAGS] = self.tags(i)
        return out

    def edited(self, patch: dict[int, list], drop: set[int], append: list[list],
               append_digests: list[str]) -> Table:
        """A new table: rows in `patch` replaced (text unchanged), rows in `drop`
        removed, `append` added at the end. Column-wise, so a one-file change
        in a 60,000-row table costs milliseconds, not a rebuild of every row."""
        n = len(self)
        cols = {name: list(col) for name, col in self.columns.items()}
        for r, row in patch.items():
            for i, name in enumerate(ROW_FIELDS):
                if name != "tags":
                    cols[name][r] = row[i]
        # Tags stay flat: only the patched rows' lists are rebuilt, the kept
        # rows' tags are copied by slices of consecutive rows.
        starts = self._tag_starts()
        patched = {r: list(row[TAGS]) for r, row in patch.items()}
        tags_flat: list = []
        tags_n: list = []
        run_from = None
        for i in range(n + 1):
            plain = i < n and i not in drop and i not in patched
            if plain:
                if run_from is None:
                    run_from = i
                continue
            if run_from is not None:
                tags_flat.extend(self.tags_flat[starts[run_from]:starts[i - 1] + self.tags_n[i - 1]])
                tags_n.extend(self.tags_n[run_from:i])
                run_from = None
            if i < n and i in patched:
                tags_flat.extend(patched[i])
                tags_n.append(len(patched[i]))
        digests = list(self.text_digests)
        if drop and len(drop) <= 256:
            # A one-file sync drops a handful of rows: deleting them in place
            # beats filtering 17 columns of 60,000 values.
            for r in sorted(drop, reverse=True):
                for col in cols.values():
                    del col[r]
                del digests[r]
        elif drop:
            keep = [i not in drop for i in range(n)]
            cols = {name: [v for v, k in zip(col, keep) if k] for name, col in cols.items()}
            digests = [d for d, k in zip(digests, keep) if k]
        for row in append:
            for i, name in enumerate(ROW_FIELDS):
                if name == "tags":
                    tags_flat.extend(row[i])
                    tags_n.append(len(row[i]))
                else:
                    cols[name].append(row[i])
        digests.extend(append_digests)
        return Table(text_digests=digests, columns=cols, tags_flat=tags_flat, tags_n=tags_n)

    def scopes(self) -> list[str]:
        """The distinct scopes of the indexed items (every query asks: no codes needed)."""
        c = self._cols.get("scope")
        if c is not None:
            return c[1]
        # Kept: a warm server asks at every query, and 60,000 values cost 2 ms to scan.
        names = self._cols.get("scope_names")
        if names is None:
            names = self._cols["scope_names"] = list(dict.fromkeys(self.columns["scope"]))
        return names

    def item(self, row: int, text: str = "") -> Item:
        return from_row(self.row(row), text)

    def item_by_key(self, key: str) -> Item | None:
        i = self.row_of.get(key)
        return None if i is None else self.item(i)

    def belief_of(self, item: Item) -> Item | None:
        """The belief an observation connects, if it is indexed."""
        if item.type == BELIEF or not item.connects or item.connects == "new":
            return None
        return self.item_by_key("b/" + item.connects)

    # -- columns (built on first use) ---------------------------------------------------
    def _col(self, name: str):
        c = self._cols.get(name)
        if c is None:
            c = self._cols[name] = self._build(name)
        return c

    def _build(self, name: str):
        import numpy as np

        n = len(self)
        col = self.columns
        # Compared as one string array, not a generator: a fresh query builds these.
        if name == "is_belief":
            return np.asarray(col["type"], dtype=str) == BELIEF if n else np.zeros(0, bool)
        if name == "active":
            return np.asarray(col["status"], dtype=str) == "active" if n else np.zeros(0, bool)
        if name == "conf":
            return np.fromiter(((c if c is not None else 0.0) for c in col["confidence"]), np.float64, n)
        if name == "pinned":
            return np.fromiter((bool(p) for p in col["pinned"]), bool, n)
        if name == "updated":
            return np.fromiter(
                (_ymd(d) if t != BELIEF else max(_ymd(f), _ymd(c), _ymd(h))
                 for t, d, f, c, h in zip(col["type"], col["date"], col["first"], col["confirmed"],
                                          col["challenged"])), np.int64, n)
        if name == "anchor":
            return np.fromiter((_ordinal(kernel.anchor(f, c)) for f, c in zip(col["first"], col["confirmed"])),
                               np.int64, n)
        if name in ("kind", "permanence", "scope", "status"):
            values: dict[str, int] = {}
            codes = np.fromiter((values.setdefault(v, len(values)) for v in col[name]), np.int32, n)
            return codes, list(values)
        if name == "belief_row":
            return np.fromiter((self.row_of.get("b/" + c, -1) if t != BELIEF and c else -1
                                for t, c in zip(col["type"], col["connects"])), np.int64, n)
        if name == "tags":
            by_tag: dict[str, list[int]] = {}
            i = 0
            for row, k in enumerate(self.tags_n):
                for t in self.tags_flat[i:i + k]:
                    by_tag.setdefault(t, []).append(row)
                i += k
            return by_tag
        raise KeyError(name)

    def _coded(self, name: str, wanted) -> object:
        import numpy as np

        codes, values = self._col(name)
        ok = [i for i, v in enumerate(values) if wanted(v)]
        return np.isin(codes, np.asarray(ok, np.int32)) if ok else np.zeros(len(codes), bool)

    def effective(self, today: date, params: Params = DEFAULTS):
        """SPEC §2.7 on every row at once: `kernel.effective` with numpy's functions."""
        import numpy as np

        conf = self._col("conf")
        codes, perms = self._col("permanence")
        lam = np.asarray([kernel.decay_rate(p, params.decay) for p in perms] or [0.0])[codes]
        return kernel.effective(conf, lam, today.toordinal() - self._col("anchor"), self._col("pinned"),
                                params.decay_floor, exp=np.exp, maximum=np.maximum, minimum=np.minimum,
                                where=np.where)

    def mask(self, f: Filters, today: date, params: Params = DEFAULTS):
        """Rows that pass `f` (see rank.passes)."""
        import numpy as np

        n = len(self)
        if n == 0:
            return np.zeros(0, bool)
        is_belief = self._col("is_belief")
        ok_date = np.ones(n, bool)
        if f.since or f.until:
            # Built only when asked: 60,000 rows of dates are a tenth of a second
            # of a fresh process that most queries do not need.
            upd = self._col("updated")
            if f.since:
                ok_date &= upd >= int(f.since.strftime("%Y%m%d"))
            if f.until:
                ok_date &= (upd <= int(f.until.strftime("%Y%m%d"))) & (upd > 0)
        # belief-level filters, evaluated on belief rows
        bl = np.ones(n, bool)
        if f.kinds:
            bl &= self._coded("kind", lambda v: v in f.kinds)
        if f.permanences:
            bl &= self._coded("permanence", lambda v: v in f.permanences)
        if f.tags:
            tagged = np.zeros(n, bool)
            by_tag = self._col("tags")
            for t in f.tags:
                tagged[by_tag.get(t, [])] = True
            bl &= tagged
        if f.scope is not None:
            bl &= self._coded("scope", lambda v: scope_matches(v, f.scope))
        if f.min_confidence is not None:
            bl &= self.effective(today, params) >= f.min_confidence - 1e-9
        beliefs = is_belief & bl & ok_date
        if f.statuses == ("active",):
            beliefs &= self._col("active")
        elif f.statuses:
            beliefs &= self._coded("status", lambda v: v in f.statuses)
        if not f.include_observations:
            return beliefs
        brow = self._col("belief_row")
        connected = brow >= 0
        obs_ok = np.where(connected, bl[np.maximum(brow, 0)], not f.belief_level)
        return beliefs | (~is_belief & obs_ok & ok_date)
