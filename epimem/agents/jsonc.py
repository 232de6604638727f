"""A JSON (and JSON-with-comments) editor that changes only the spans it means to.

Agents' config files are the user's: `settings.json`, `opencode.json`,
`mcp.json`. They are edited as text, not re-serialised: a small parser
records where every value starts and ends, and the installers insert or
delete exactly the spans they add. Everything else — other keys, key order,
indentation, blank lines, comments — stays byte for byte, so an uninstall
after an install gives back the original file.

`comments=True` accepts what Gemini CLI and opencode accept: `//` and
`/* */` comments and trailing commas (JSONC). Strict JSON files (Claude
Code's, Claude Desktop's) are parsed strictly, so a file their owner would
refuse is refused here too, with its line and column.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..core.nesting import MAX_DEPTH, TOO_DEEP


class JsonSyntaxError(ValueError):
    """Not (commented) JSON; the message starts with `line L, column C`."""


@dataclass
class Node:
    kind: str            # "object", "array" or "value"
    start: int
    end: int             # exclusive
    value: Any = None
    members: list | None = None  # object: [(key, key_start, Node)]
    items: list | None = None    # array: [Node]

    def get(self, key: str) -> Node | None:
        for k, _, n in self.members or []:
            if k == key:
                return n
        return None

    def keys(self) -> list[str]:
        return [k for k, _, _ in self.members or []]


_WS = " \t\r\n"
_DECODER = json.JSONDecoder()


def _where(text: str, i: int) -> str:
    line = text.count("\n", 0, i) + 1
    col = i - (text.rfind("\n", 0, i) + 1) + 1
    return f"line {line}, column {col}"


class _Parser:
    def __init__(self, text: str, comments: bool):
        self.text = text
        self.comments = comments
        self.depth = 0

    def error(self, i: int, msg: str) -> JsonSyntaxError:
        return JsonSyntaxError(f"{_where(self.text, i)}: {msg}")

    def skip(self, i: int) -> int:
        text = self.text
        while i < len(text):
            ch = text[i]
            if ch in _WS:
                i += 1
            elif self.comments and text.startswith("//", i):
                nl = text.find("\n", i)
                i = len(text) if nl < 0 else nl + 1
            elif self.comments and text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0:
                    raise self.error(i, "unterminated comment")
                i = end + 2
            else:
                break
        return i

    def sequence(self, i: int, close: str, entry) -> tuple[list, int]:
        text = self.text
        out: list = []
        j = self.skip(i + 1)
        if j < len(text) and text[j] == close:
            return out, j + 1
        while True:
            item, j = entry(j)
            out.append(item)
            j = self.skip(j)
            if j < len(text) and text[j] == ",":
                j = self.skip(j + 1)
                if self.comments and j < len(text) and text[j] == close:
                    return out, j + 1  # a trailing comma, as JSONC allows
                continue
            if j < len(text) and text[j] == close:
                return out, j + 1
            raise self.error(j, f"expected ',' or '{close}'")

    def member(self, j: int) -> tuple[tuple[str, int, Node], int]:
        text = self.text
        j = self.skip(j)
        if j >= len(text) or text[j] != '"':
            raise self.error(j, "expected a key in double quotes")
        try:
            key, k = json.decoder.scanstring(text, j + 1)
        except json.JSONDecodeError as e:
            raise self.error(j, e.msg) from None
        k = self.skip(k)
        if k >= len(text) or text[k] != ":":
            raise self.error(k, "expected ':'")
        val = self.parse(k + 1)
        return (key, j, val), val.end

    def element(self, j: int) -> tuple[Node, int]:
        val = self.parse(j)
        return val, val.end

    def parse(self, i: int) -> Node:
        text = self.text
        i = self.skip(i)
        if i >= len(text):
            raise self.error(i, "unexpected end of file")
        ch = text[i]
        if ch in "{[":
            # The descent is recursive, as are the walks of its tree: past the one limit of every
            # parsed value the file is refused on its line, before the stack runs out.
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self.error(i, TOO_DEEP)
            try:
                if ch == "{":
                    members, end = self.sequence(i, "}", self.member)
                    return Node("object", i, end, members=members)
                items, end = self.sequence(i, "]", self.element)
                return Node("array", i, end, items=items)
            finally:
                self.depth -= 1
        try:
            value, end = _DECODER.raw_decode(text, i)
        except json.JSONDecodeError as e:
            raise self.error(i, e.msg) from None
        return Node("value", i, end, value=value)


def parse_spans(text: str, *, comments: bool = False) -> Node:
    """The document's tree of spans; JsonSyntaxError (with line and column) when it is not JSON."""
    if not comments:
        try:
            json.loads(text)  # the standard parser's messages are the ones users know
        except json.JSONDecodeError as e:
            raise JsonSyntaxError(f"line {e.lineno}, column {e.colno}: {e.msg}") from None
        except RecursionError:
            raise JsonSyntaxError(TOO_DEEP) from None
    p = _Parser(text, comments)
    root = p.parse(0)
    rest = p.skip(root.end)
    if rest < len(text):
        raise p.error(rest, "extra data after the document")
    return root


def value_of(node: Node) -> Any:
    if node.kind == "object":
        return {k: value_of(n) for k, _, n in node.members}
    if node.kind == "array":
        return [value_of(n) for n in node.items]
    return node.value


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    m = re.match(r"[ \t]*", text[start:])
    return m.group(0)


def _own_line(text: str, pos: int) -> bool:
    start = text.rfind("\n", 0, pos) + 1
    return text[start:pos].strip() == ""


def indent_unit(text: str) -> str:
    for line in text.splitlines()[1:]:
        m = re.match(r"([ \t]+)\S", line)
        if m:
            return m.group(1)
    return "  "


def _render(value: Any, indent: str, unit: str) -> str:
    """JSON as agents' own files look: objects one key a line, short lists inline."""
    if isinstance(value, dict) and value:
        inner = indent + unit
        rows = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_render(v, inner, unit)}" for k, v in value.items()]
        return "{\n" + ",\n".join(rows) + "\n" + indent + "}"
    if isinstance(value, list) and value and any(isinstance(v, (dict, list)) for v in value):
        inner = indent + unit
        return "[\n" + ",\n".join(inner + _render(v, inner, unit) for v in value) + "\n" + indent + "]"
    return json.dumps(value, ensure_ascii=False)


_TRAILING_COMMENT = re.compile(r"[ \t]*(?://[^\n]*|/\*(?:(?!\*/)[^\n])*\*/[ \t]*)")


def _insert(text: str, node: Node, key: str | None, value: Any, unit: str) -> str:
    """Add `value` (under `key` in an object) at the end of an object or array."""
    children = node.members if node.kind == "object" else node.items
    prefix = "" if key is None else json.dumps(key, ensure_ascii=False) + ": "
    close = node.end - 1
    if not children:
        outer = _line_indent(text, node.start)
        inner = outer + unit
        return (text[:node.start + 1] + "\n" + inner + prefix + _render(value, inner, unit) + "\n"
                + outer + text[close:])
    last_start = children[-1][1] if node.kind == "object" else children[-1].start
    last_end = children[-1][2].end if node.kind == "object" else children[-1].end
    if "\n" in text[node.start:node.end] and _own_line(text, last_start):
        ind = _line_indent(text, last_start)
        # A comment after the last entry, on its line, stays on that line: the new entry goes below it.
        eol = text.find("\n", last_end)
        if eol != -1 and _TRAILING_COMMENT.fullmatch(text, last_end, eol):
            return text[:last_end] + "," + text[last_end:eol] + "\n" + ind + prefix + _render(value, ind, unit) \
                + text[eol:]
        return text[:last_end] + ",\n" + ind + prefix + _render(value, ind, unit) + text[last_end:]
    # a container written on one line stays on one line
    return text[:last_end] + ", " + prefix + json.dumps(value, ensure_ascii=False) + text[last_end:]


def _remove(text: str, node: Node, index: int) -> str:
    """Delete one entry and the separator that came with it."""
    children = node.members if node.kind == "object" else node.items
    starts = [c[1] for c in children] if node.kind == "object" else [c.start for c in children]
    ends = [c[2].end for c in children] if node.kind == "object" else [c.end for c in children]
    if len(children) == 1:
        return text[:node.start + 1] + text[node.end - 1:]
    if index > 0:
        # What separated it from the entry before goes with it, except a comment: never the user's to lose
        # (the inverse of `_insert` below a comment ending the last entry's line).
        sep = text[ends[index - 1]:starts[index]]
        sep = sep[1:] if sep.startswith(",") else sep
        kept = sep[:sep.rfind("\n")] if "\n" in sep and ("//" in sep or "/*" in sep) else ""
        return text[:ends[index - 1]] + kept + text[ends[index]:]
    return text[:starts[0]] + text[starts[1]:]


# --- one keyed entry at a path: what an MCP server entry is ---------------------------------

def _walk(root: Node, path: tuple[str, ...]) -> list[Node]:
    """The nodes along `path` that exist (root first)."""
    nodes = [root]
    for key in path:
        node = nodes[-1].get(key) if nodes[-1].kind == "object" else None
        if node is None:
            break
        nodes.append(node)
    return nodes


def get_path(text: str, path: tuple[str, ...], *, comments: bool = False) -> Any:
    """The value at `path`, or None."""
    if not text.strip():
        return None
    nodes = _walk(parse_spans(text, comments=comments), path)
    return value_of(nodes[-1]) if len(nodes) == len(path) + 1 else None


def set_path(text: str, path: tuple[str, ...], value: Any, *, comments: bool = False) -> str:
    """`text` with `value` at `path` (the last key replaced or added, the objects on the way created)."""
    if not text.strip():
        text = "{}\n"
    root = parse_spans(text, comments=comments)
    nodes = _walk(root, path)
    unit = indent_unit(text)
    if len(nodes) == len(path) + 1:
        old = nodes[-1]
        if value_of(old) == value:
            return text
        parent = nodes[-2]
        index = parent.keys().index(path[-1])
        text = _remove(text, parent, index)
        return set_path(text, path, value, comments=comments)
    parent = nodes[-1]
    if parent.kind != "object":
        raise JsonSyntaxError(f"{_where(text, parent.start)}: '{'.'.join(path[:len(nodes) - 1])}' "
                              "must be an object")
    rest = path[len(nodes) - 1:]
    wrapped: Any = value
    for key in reversed(rest[1:]):
        wrapped = {key: wrapped}
    return _insert(text, parent, rest[0], wrapped, unit)


def delete_path(text: str, path: tuple[str, ...], *, comments: bool = False, prune: int = 0) -> str:
    """`text` without the entry at `path`; then up to `prune` enclosing objects that it left empty."""
    if not text.strip():
        return text
    root = parse_spans(text, comments=comments)
    nodes = _walk(root, path)
    if len(nodes) != len(path) + 1:
        return text
    depth = len(path)
    # Climb while the container would be left empty and pruning is allowed.
    while prune > 0 and depth > 1 and len(nodes[depth - 1].members or []) == 1:
        depth -= 1
        prune -= 1
    parent = nodes[depth - 1]
    return _remove(text, parent, parent.keys().index(path[depth - 1]))
