"""One table in a TOML file (Codex's `config.toml`), added and removed as text.

tomlkit parses the file (so a broken one is refused with its line, and the
result is checked to mean what was intended) and renders the table; the table
itself is appended at the end of the file, after a marker comment, and
`remove_table` cuts exactly that span again, so the user's comments, order
and spacing are never re-rendered.
"""

from __future__ import annotations

import re
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

MARK = "# epimem: added by `epimem install`; `epimem install --uninstall` removes this table"


class TomlError(ValueError):
    pass


def parse(text: str) -> dict:
    try:
        return tomlkit.parse(text).unwrap()
    except TOMLKitError as e:
        raise TomlError(str(e)) from None


def get_table(text: str, path: tuple[str, ...]) -> Any:
    node: Any = parse(text)
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _header(path: tuple[str, ...]) -> str:
    return "[" + ".".join(k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else tomlkit.string(k).as_string()
                          for k in path) + "]"


def _span(text: str, path: tuple[str, ...]) -> tuple[int, int] | None:
    """Where the `[path]` table (with our marker line before it, if there) starts and ends."""
    header = re.escape(_header(path))
    m = re.search(rf"^[ \t]*{header}[ \t]*(?:#.*)?$", text, re.M)
    if not m:
        return None
    start = m.start()
    before = text[:start]
    if before.endswith(MARK + "\n"):
        start -= len(MARK) + 1
    nxt = re.compile(r"^[ \t]*\[", re.M).search(text, m.end())
    end = nxt.start() if nxt else len(text)
    return start, end


def set_table(text: str, path: tuple[str, ...], value: dict) -> str:
    """`text` with the table at `path` holding `value` (an existing one of ours replaced)."""
    doc = parse(text)
    if get_table(text, path) == value:
        return text
    if get_table(text, path) is not None:
        text = remove_table(text, path)
        doc = parse(text)
    node: Any = doc
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            break
        if not isinstance(node, dict):
            raise TomlError(f"'{key}' is not a table; fix it first")
    body = tomlkit.dumps(value)
    sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
    new = text + sep + MARK + "\n" + _header(path) + "\n" + body
    try:
        ok = get_table(new, path) == value
    except TomlError:
        ok = False
    if not ok:  # e.g. an inline `mcp_servers = {…}` that an appended table cannot extend
        raise TomlError(f"cannot add {_header(path)} to this file: {'.'.join(path[:-1])} is written inline "
                        "or as dotted keys; write it as a [table] first")
    return new


def remove_table(text: str, path: tuple[str, ...]) -> str:
    span = _span(text, path)
    if span is None:
        return text
    start, end = span
    before, after = text[:start], text[end:]
    if not after and before.endswith("\n\n"):
        before = before[:-1]   # the blank line set_table put before it
    return before + after
