"""The sidecar table: every indexed item's metadata as rows, plus numpy
columns that turn a Filters value into a row mask in microseconds.

`rank.passes` is the definition of what a filter means; `Table.mask` is its
vectorised twin used to prefilter tens of thousands of rows per query, and
the final candidates are checked again with `rank.passes`. A test keeps the
two in agreement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from ..core.params import DEFAULTS, Params
from .items import BELIEF, ROW_FIELDS, Item, from_row
from .rank import Filters, scope_matches

F = {name: i for i, name in enumerate(ROW_FIELDS)}


def _ymd(v: str | None) -> int:
    return int(v.replace("-", "")) if v else 0


def _ordinal(v: str | None) -> int:
    return date.fromisoformat(v).toordinal() if v else 0


@dataclass
class Table:
    rows: list                      # lists in ROW_FIELDS order
    text_digests: list              # aligned with rows
    _cols: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.keys = [("b/" if r[1] == BELIEF else "o/") + r[0] for r in self.rows]
        self.row_of = {k: i for i, k in enumerate(self.keys)}

    def __len__(self) -> int:
        return len(self.rows)

    def item(self, row: int, text: str = "") -> Item:
        return from_row(self.rows[row], text)

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

        rows = self.rows
        if name == "is_belief":
            return np.fromiter((r[1] == BELIEF for r in rows), bool, len(rows))
        if name == "active":
            return np.fromiter((r[6] == "active" for r in rows), bool, len(rows))
        if name == "conf":
            return np.fromiter(((r[9] if r[9] is not None else 0.0) for r in rows), np.float64, len(rows))
        if name == "pinned":
            return np.fromiter((bool(r[10]) for r in rows), bool, len(rows))
        if name == "updated":
            def upd(r):
                if r[1] != BELIEF:
                    return _ymd(r[14])
                return max(_ymd(r[11]), _ymd(r[12]), _ymd(r[13]))
            return np.fromiter((upd(r) for r in rows), np.int64, len(rows))
        if name == "anchor":  # the day decay counts from: confirmed, else first
            return np.fromiter((_ordinal(r[12] or r[11]) for r in rows), np.int64, len(rows))
        if name in ("kind", "permanence", "scope"):
            idx = F[name]
            values: dict[str, int] = {}
            codes = np.fromiter((values.setdefault(r[idx], len(values)) for r in rows), np.int32, len(rows))
            return codes, list(values)
        if name == "belief_row":
            return np.fromiter((self.row_of.get("b/" + r[15], -1) if r[1] != BELIEF and r[15] else -1
                                for r in rows), np.int64, len(rows))
        if name == "tags":
            by_tag: dict[str, list[int]] = {}
            for i, r in enumerate(rows):
                for t in r[8]:
                    by_tag.setdefault(t, []).append(i)
            return by_tag
        raise KeyError(name)

    def _coded(self, name: str, wanted) -> "object":
        import numpy as np

        codes, values = self._col(name)
        ok = [i for i, v in enumerate(values) if wanted(v)]
        return np.isin(codes, np.asarray(ok, np.int32)) if ok else np.zeros(len(codes), bool)

    def effective(self, today: date, params: Params = DEFAULTS):
        """Vectorised SPEC §2.7 (same formula as core.rules.effective_confidence)."""
        import numpy as np

        conf = self._col("conf")
        codes, perms = self._col("permanence")
        unknown = params.decay.get("unknown", 0.010)
        lam = np.asarray([params.decay.get(p, unknown) for p in perms] or [0.0])[codes]
        days = np.maximum(0, today.toordinal() - self._col("anchor"))
        decayed = conf * np.exp(-lam * days)
        eff = np.maximum(decayed, np.minimum(conf, params.decay_floor))
        return np.where(self._col("pinned"), conf, eff)

    def mask(self, f: Filters, today: date, params: Params = DEFAULTS):
        """Rows that pass `f` (see rank.passes)."""
        import numpy as np

        n = len(self.rows)
        if n == 0:
            return np.zeros(0, bool)
        is_belief = self._col("is_belief")
        upd = self._col("updated")
        ok_date = np.ones(n, bool)
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
        if not f.include_inactive:
            beliefs &= self._col("active")
        if not f.include_observations:
            return beliefs
        brow = self._col("belief_row")
        connected = brow >= 0
        obs_ok = np.where(connected, bl[np.maximum(brow, 0)], not f.belief_level)
        return beliefs | (~is_belief & obs_ok & ok_date)
