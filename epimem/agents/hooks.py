"""Session hooks in the event → matcher group → handlers shape Claude Code, Codex and Gemini CLI share.

All three read `{"hooks": {"SessionStart": [{"matcher": …, "hooks": [handler]}]}}` (Claude Code
in `settings.json`, Codex in `hooks.json`, Gemini CLI in `settings.json`). A handler is epimem's
when its command runs `epimem … hook session-…` (`wiring.hook_role`, its role). A merge first
drops every handler of ours that is not wanted as it is, then adds what is missing, so a
reinstall finds nothing to do, an upgrade leaves no stale copy, and an empty list of specs takes
out exactly what an install put in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .jsonc import Node, _insert, _remove, indent_unit, parse_spans, value_of
from .wiring import hook_role


def is_ours(handler: Any) -> bool:
    return hook_role(handler) is not None


@dataclass(frozen=True)
class HookSpec:
    """One handler of ours: the event, the matcher group it goes in, the handler itself."""

    event: str
    matcher: str | None
    handler: dict

    @property
    def role(self) -> str:
        return hook_role(self.handler) or ""


def find_ours(root: Node) -> list[tuple[str, int, int, dict]]:
    """(event, group index, handler index, handler) of every epimem handler."""
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
                if is_ours(v):
                    out.append((event, gi, hi, v))
    return out


def matcher(group: Node) -> str | None:
    m = group.get("matcher")
    return m.value if m is not None and m.kind == "value" else None


def check(root: Node) -> None:
    """ValueError when the file is not of the shape hooks go in (what to fix is in the message)."""
    if root.kind != "object":
        raise ValueError("the file must hold a JSON object")
    hooks = root.get("hooks")
    if hooks is None:
        return
    if hooks.kind != "object":
        raise ValueError("'hooks' must be an object")
    for event, _, arr in hooks.members:
        # Gemini CLI's `"hooks": {"disabled": true}`-like switches are not event lists.
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
    check(parse_spans(text, comments=comments))
    unit = indent_unit(text)
    wanted = {(s.event, s.matcher, s.role): s for s in specs}

    def key(root: Node, event: str, gi: int, h: dict) -> tuple:
        return event, matcher(root.get("hooks").get(event).items[gi]), hook_role(h)

    while True:
        root = parse_spans(text, comments=comments)
        stale = next(((e, gi, hi) for e, gi, hi, h in find_ours(root)
                      if key(root, e, gi, h) not in wanted or wanted[key(root, e, gi, h)].handler != h), None)
        if stale is None:
            break
        text = _remove_handler(text, *stale, comments)
    for s in specs:
        root = parse_spans(text, comments=comments)
        if (s.event, s.matcher, s.role) in {key(root, e, gi, h) for e, gi, _, h in find_ours(root)}:
            continue
        text = add_group(text, root, s.event, s.matcher, s.handler, unit)
    return text


def add_group(text: str, root: Node, event: str, matcher: str | None, handler: dict, unit: str) -> str:
    """`text` with a matcher group holding `handler` added under `hooks.<event>`, creating `hooks`
    and the event as needed."""
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
