"""How deep a parsed value may nest: one limit for every reader and every walker.

The parsers nest far deeper than the walkers can follow: libyaml builds 1,000 levels and
`json.loads` nearly as many, while a recursive walk (redaction, a comparison, a commit
message's summary) runs out of Python's stack a few hundred levels down. Nothing epimem or
Obsidian writes nests more than three levels, so every reader refuses a value deeper than
`MAX_DEPTH` as a problem on its line (`validate` reports the same), and every walker may then
recurse without a guard of its own — or, for a value no reader has checked, asks `too_deep`
first.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

# The frontmatter mapping (or a JSON document's outer object) is the first level.
MAX_DEPTH = 64

TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"


def depth(value: Any, stop: int = MAX_DEPTH + 1) -> int:
    """How many containers (dict, list, tuple) deep `value` nests, counted without recursion
    and no further than `stop`: a scalar is 0, `[]` is 1, `{"a": [1]}` is 2."""
    deepest = 0
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        v, level = todo.pop()
        if isinstance(v, dict):
            items = list(v.values()) + [k for k in v if isinstance(k, tuple)]
        elif isinstance(v, (list, tuple)):
            items = list(v)
        else:
            continue
        if level > deepest:
            deepest = level
            if deepest >= stop:
                return deepest
        todo.extend((x, level + 1) for x in items if isinstance(x, (dict, list, tuple)))
    return deepest


def too_deep(value: Any) -> bool:
    return depth(value) > MAX_DEPTH


class TooDeep(ValueError):
    def __init__(self) -> None:
        super().__init__(TOO_DEEP)


def loads_json(text: str | bytes) -> Any:
    """`json.loads`, with a document nested past `MAX_DEPTH` refused as `TooDeep` (a ValueError,
    as every other malformed JSON is) — whether the parser ran out of stack or a walker would."""
    import json

    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep() from None
    if too_deep(value):
        raise TooDeep()
    return value
