"""The mirror's values as plain data, for `--json`: the field names are the JSON's."""

from __future__ import annotations

import math
from dataclasses import fields, is_dataclass
from datetime import date
from typing import Any

_SHAPES: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _shape(cls: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if cls not in _SHAPES:
        extras = tuple(n for n in ("empty", "total")
                       if isinstance(getattr(cls, n, None), property))
        _SHAPES[cls] = (tuple(f.name for f in fields(cls)), extras)
    return _SHAPES[cls]


_PLAIN = frozenset((str, int, bool, type(None)))


def as_data(obj: Any) -> Any:
    """Plain JSON-able data: dates as ISO strings, floats to three decimals (below 0.01: three
    significant digits),
    and the properties that carry figures (`empty`, `total`) included.
    (Exact type tests, not isinstance: a 10,000-belief audit has 100,000 values.)"""
    t = type(obj)
    if t in _PLAIN:
        return obj
    if t is float:
        if not math.isfinite(obj):
            return None
        # A decay rate (0.00125 a day) keeps three significant digits; everything else three decimals.
        return round(obj, 3) if obj == 0 or abs(obj) >= 0.01 else float(f"{obj:.3g}")
    if t is tuple or t is list:
        return [v if type(v) in _PLAIN else as_data(v) for v in obj]
    if t is date:
        return obj.isoformat()
    if t is dict:
        return {str(k): as_data(v) for k, v in obj.items()}
    if is_dataclass(obj) and not isinstance(obj, type):
        names, extras = _shape(t)
        out = {}
        for n in names:
            v = getattr(obj, n)
            out[n] = v if type(v) in _PLAIN else as_data(v)
        for n in extras:
            out[n] = as_data(getattr(obj, n))
        return out
    if isinstance(obj, float):
        return round(obj, 3) if math.isfinite(obj) else None
    if isinstance(obj, date):
        return obj.isoformat()
    return obj
