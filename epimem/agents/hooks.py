"""Session-start hooks in the event → matcher group → handlers shape Codex and Gemini CLI share.

Both read `{"hooks": {"SessionStart": [{"matcher": …, "hooks": [handler]}]}}`
(Codex in `hooks.json`, Gemini CLI in `settings.json`), the shape Claude Code
introduced. A merge first drops every handler of ours that is not wanted as
it is, then adds what is missing, so a reinstall finds nothing to do and an
upgrade leaves no stale copy. A handler is ours when its command runs
`epimem … hook session-…`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .jsonc import Node, _insert, _remove, indent_unit, parse_spans, value_of

_OURS = re.compile(r"(?:^|[\s/'\"])epimem['\"]?\s.*\bhook\s+session-")


def is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and isinstance(handler.get("command"), str) and bool(
        _OURS.search(handler["command"]))


@dataclass(frozen=True)
class HookSpec:
    event: str
    matcher: str | None
    handler: dict


def find_ours(root: Node, ours: Callable[[Any], bool] = is_ours) -> list[tuple[str, int, int, dict]]:
    """(event, group index, handler index, handler) of every epimem handler (`ours` tells which:
    Claude Code's installer knows its handlers by role, the other agents' by command)."""
    out = []
    hooks = root.get("hooks") if root.kind == "object" else None
    if hooks is None or hooks.kind != "object":
        return out
    for event, _, arr in hooks.members:
        if arr.kind != "array":
            continue
        for gi, group in enumerate(arr.items):
            hs = group.get("hooks") if group.kind == "object" else None
            if hs is None or hs.kind != "array":
                continue
            for hi, h in enumerate(hs.items):
                v = value_of(h)
                if ours(v):
                    out.append((event, gi, hi, v))
    return out


def matcher(group: Node) -> str | None:
    m = group.get("matcher")
    return m.value if m is not None and m.kind == "value" else None


def _check(root: Node) -> None:
    if root.kind != "object":
        raise ValueError("the file must hold a JSON object")
    hooks = root.get("hooks")
    if hooks is None:
        return
    if hooks.kind != "object":
        raise ValueError("'hooks' must be an object")
    for event, _, arr in hooks.members:
        if arr.kind != "array" and not (arr.kind == "value" and isinstance(arr.value, bool)):
            raise ValueError(f"'hooks.{event}' must be a list")


def _remove_handler(text: str, event: str, gi: int, hi: int, comments: bool) -> str:
    """Remove one handler, then whatever container that leaves empty and was only a wrapper."""
    root = parse_spans(text, comments=comments)
    hooks = root.get("hooks")
    arr = hooks.get(event)
    group = arr.items[gi]
    hs = group.get("hooks")
    if len(hs.items) > 1 or set(group.keys()) - {"matcher", "hooks"}:
        return _remove(text, hs, hi)
    if len(arr.items) > 1:
        return _remove(text, arr, gi)
    if len(hooks.members) > 1:
        return _remove(text, hooks, hooks.keys().index(event))
    return _remove(text, root, root.keys().index("hooks"))


def merge_hooks(text: str, specs: list[HookSpec], *, comments: bool = False) -> str:
    """The file's text with exactly `specs` as epimem's handlers; ValueError for a file of the wrong shape."""
    if not text.strip():
        if not specs:
            return text
        text = "{}\n"
    root = parse_spans(text, comments=comments)
    _check(root)
    unit = indent_unit(text)
    wanted = {(s.event, s.matcher): s for s in specs}
    while True:
        root = parse_spans(text, comments=comments)
        stale = None
        for event, gi, hi, h in find_ours(root):
            key = (event, matcher(root.get("hooks").get(event).items[gi]))
            if key not in wanted or wanted[key].handler != h:
                stale = (event, gi, hi)
                break
        if stale is None:
            break
        text = _remove_handler(text, *stale, comments)
    for s in specs:
        root = parse_spans(text, comments=comments)
        present = {(e, matcher(root.get("hooks").get(e).items[gi])) for e, gi, _, _ in find_ours(root)}
        if (s.event, s.matcher) in present:
            continue
        text = add_group(text, root, s.event, s.matcher, s.handler, unit)
    return text


def add_group(text: str, root: Node, event: str, matcher: str | None, handler: dict, unit: str) -> str:
    """`text` with a matcher group holding `handler` added under `hooks.<event>` (the settings
    schema Claude Code, Codex and Gemini CLI share), creating `hooks` and the event as needed."""
    group: dict = {"matcher": matcher} if matcher is not None else {}
    group["hooks"] = [handler]
    hooks = root.get("hooks")
    if hooks is None:
        return _insert(text, root, "hooks", {event: [group]}, unit)
    arr = hooks.get(event)
    if arr is None:
        return _insert(text, hooks, event, [group], unit)
    return _insert(text, arr, None, group, unit)


def has_ours(text: str | None, *, comments: bool = False) -> bool:
    if not text or not text.strip():
        return False
    try:
        return bool(find_ours(parse_spans(text, comments=comments)))
    except ValueError:
        return False
