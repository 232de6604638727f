"""`epimem install claude-code`: skills, hooks and CLAUDE.md lines in place.

The user's `settings.json` is edited as text, not re-serialised: a small
parser records where every JSON value starts and ends, and the installer
inserts or deletes exactly the spans it adds. Everything else in the file —
other hooks, other keys, key order, indentation, blank lines — stays byte for
byte, `--uninstall` after an install gives back the original file, and a
second install finds nothing to do.

What is ours is recognised by content: a hook handler whose command is
`epimem` (any path) with arguments starting `hook`, a skill whose frontmatter
carries `metadata: package: epimem`, the CLAUDE.md block between the
`epimem:begin`/`epimem:end` markers.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import EpimemError
from ..store.files import atomic_write

TEMPLATES = Path(__file__).parent.parent / "templates" / "claude"
SKILLS = ("observe", "mirror")
BEGIN, END = "<!-- epimem:begin -->", "<!-- epimem:end -->"
HOOK_TIMEOUT = 10


class InstallError(EpimemError):
    """Something the user must fix first; nothing has been changed."""


# --- a JSON parser that remembers where things are ----------------------------------------

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


_WS = " \t\r\n"
_DECODER = json.JSONDecoder()


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _sequence(text: str, i: int, close: str, entry) -> tuple[list, int]:
    """The entries of the object or array opened at `i`, and the offset after its `close`."""
    out: list = []
    j = _skip(text, i + 1)
    if j < len(text) and text[j] == close:
        return out, j + 1
    while True:
        item, j = entry(text, j)
        out.append(item)
        j = _skip(text, j)
        if j < len(text) and text[j] == ",":
            j += 1
            continue
        if j < len(text) and text[j] == close:
            return out, j + 1
        raise ValueError(f"expected ',' or '{close}' at offset {j}")


def _member(text: str, j: int) -> tuple[tuple[str, int, Node], int]:
    j = _skip(text, j)
    if j >= len(text) or text[j] != '"':
        raise ValueError(f"expected a key at offset {j}")
    key, k = json.decoder.scanstring(text, j + 1)
    k = _skip(text, k)
    if k >= len(text) or text[k] != ":":
        raise ValueError(f"expected ':' at offset {k}")
    val = _parse(text, k + 1)
    return (key, j, val), val.end


def _element(text: str, j: int) -> tuple[Node, int]:
    val = _parse(text, j)
    return val, val.end


def _parse(text: str, i: int) -> Node:
    i = _skip(text, i)
    if i >= len(text):
        raise ValueError("unexpected end of file")
    ch = text[i]
    if ch == "{":
        members, end = _sequence(text, i, "}", _member)
        return Node("object", i, end, members=members)
    if ch == "[":
        items, end = _sequence(text, i, "]", _element)
        return Node("array", i, end, items=items)
    value, end = _DECODER.raw_decode(text, i)
    return Node("value", i, end, value=value)


def parse_spans(text: str) -> Node:
    """The document's tree of spans; ValueError (with a line number) when it is not JSON."""
    try:
        json.loads(text)  # the standard parser's messages name the line and column
    except json.JSONDecodeError as e:
        raise ValueError(f"line {e.lineno}, column {e.colno}: {e.msg}") from None
    return _parse(text, 0)


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
    """JSON as Claude Code's own files look: objects one key a line, short lists inline."""
    if isinstance(value, dict) and value:
        inner = indent + unit
        rows = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_render(v, inner, unit)}" for k, v in value.items()]
        return "{\n" + ",\n".join(rows) + "\n" + indent + "}"
    if isinstance(value, list) and value and any(isinstance(v, (dict, list)) for v in value):
        inner = indent + unit
        return "[\n" + ",\n".join(inner + _render(v, inner, unit) for v in value) + "\n" + indent + "]"
    return json.dumps(value, ensure_ascii=False)


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
        return text[:ends[index - 1]] + text[ends[index]:]
    return text[:starts[0]] + text[starts[1]:]


# --- hooks in settings.json ------------------------------------------------------------------

def is_ours(handler: Any) -> bool:
    if not isinstance(handler, dict):
        return False
    cmd = handler.get("command")
    if not isinstance(cmd, str):
        return False
    args = handler.get("args")
    if isinstance(args, list) and args[:1] == ["hook"]:
        return os.path.basename(cmd.strip()) == "epimem"
    return bool(re.match(r"^\S*epimem\s+hook\s+session-", cmd.strip()))


def _role(handler: dict) -> str:
    args = handler.get("args")
    if isinstance(args, list) and len(args) > 1:
        return str(args[1])
    m = re.search(r"hook\s+(\S+)", handler.get("command", ""))
    return m.group(1) if m else ""


@dataclass(frozen=True)
class HookSpec:
    event: str
    matcher: str | None
    handler: dict

    @property
    def role(self) -> str:
        return _role(self.handler)


def hook_specs(command: str, *, auto_observe: bool = False, llm: bool = False,
               vault: str | None = None) -> list[HookSpec]:
    extra = ["--vault", vault] if vault else []

    def handler(*args: str) -> dict:
        return {"type": "command", "command": command, "args": ["hook", *args, *extra],
                "timeout": HOOK_TIMEOUT}

    specs = [
        # Counted: a new session.
        HookSpec("SessionStart", "startup", handler("session-start")),
        # Not counted (the hook checks `source`), but the context is gone after
        # /clear and a compaction, so it is given again.
        HookSpec("SessionStart", "clear|compact", handler("session-start")),
    ]
    if auto_observe:
        specs.append(HookSpec("SessionEnd", None, handler("session-end", *(["--llm"] if llm else []))))
    return specs


def _find_ours(root: Node) -> list[tuple[str, int, int, dict]]:
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
                value = _value(h)
                if is_ours(value):
                    out.append((event, gi, hi, value))
    return out


def _value(node: Node) -> Any:
    if node.kind == "object":
        return {k: _value(n) for k, _, n in node.members}
    if node.kind == "array":
        return [_value(n) for n in node.items]
    return node.value


def _matcher(group: Node) -> str | None:
    m = group.get("matcher")
    return m.value if m is not None and m.kind == "value" else None


def _check_shape(root: Node, path: Path) -> None:
    if root.kind != "object":
        raise InstallError(f"{path}: the file must hold a JSON object; nothing was changed")
    hooks = root.get("hooks")
    if hooks is None:
        return
    if hooks.kind != "object":
        raise InstallError(f"{path}: 'hooks' must be an object; nothing was changed")
    for event, _, arr in hooks.members:
        if arr.kind != "array":
            raise InstallError(f"{path}: 'hooks.{event}' must be a list; nothing was changed")


def merge_hooks(text: str, specs: list[HookSpec], path: Path = Path("settings.json")) -> str:
    """settings.json text with exactly our handlers, everything else untouched."""
    if not text.strip():
        text = "{}\n"
    try:
        root = parse_spans(text)
    except ValueError as e:
        raise InstallError(f"{path}: invalid JSON at {e}; fix it first, nothing was changed") from None
    _check_shape(root, path)
    unit = indent_unit(text)
    wanted = {(s.event, s.matcher, s.role): s for s in specs}
    # 1. ours that are no longer wanted, or differ: removed (re-added below)
    while True:
        root = parse_spans(text)
        stale = None
        for event, gi, hi, h in _find_ours(root):
            group = root.get("hooks").get(event).items[gi]
            key = (event, _matcher(group), _role(h))
            if key not in wanted or wanted[key].handler != h:
                stale = (event, gi, hi)
                break
        if stale is None:
            break
        text = _remove_handler(text, *stale)
    # 2. what is missing: added
    for s in specs:
        root = parse_spans(text)
        present = {(e, _matcher(root.get("hooks").get(e).items[gi]), _role(h))
                   for e, gi, _, h in _find_ours(root)}
        if (s.event, s.matcher, s.role) in present:
            continue
        group: dict = {"matcher": s.matcher} if s.matcher is not None else {}
        group["hooks"] = [s.handler]
        hooks = root.get("hooks")
        if hooks is None:
            text = _insert(text, root, "hooks", {s.event: [group]}, unit)
            continue
        arr = hooks.get(s.event)
        if arr is None:
            text = _insert(text, hooks, s.event, [group], unit)
            continue
        text = _insert(text, arr, None, group, unit)
    return text


def _remove_handler(text: str, event: str, gi: int, hi: int) -> str:
    """Remove one handler, then whatever container that leaves empty and was only a wrapper."""
    root = parse_spans(text)
    hooks = root.get("hooks")
    arr = hooks.get(event)
    group = arr.items[gi]
    hs = group.get("hooks")
    if len(hs.items) > 1 or set(k for k, _, _ in group.members) - {"matcher", "hooks"}:
        return _remove(text, hs, hi)
    if len(arr.items) > 1:
        return _remove(text, arr, gi)
    idx = [k for k, _, _ in hooks.members].index(event)
    if len(hooks.members) > 1:
        return _remove(text, hooks, idx)
    return _remove(text, root, [k for k, _, _ in root.members].index("hooks"))


def remove_hooks(text: str, path: Path = Path("settings.json")) -> str:
    return merge_hooks(text, [], path) if text.strip() else text


# --- CLAUDE.md -------------------------------------------------------------------------------

def claude_md_block() -> str:
    text = (TEMPLATES / "CLAUDE.md.example").read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


def add_block(text: str, block: str) -> str:
    """The block replaced between its markers, or appended after a blank line."""
    if BEGIN in text and END in text:
        start, end = text.index(BEGIN), text.index(END) + len(END)
        return text[:start] + block + text[end:]
    if not text:
        return block + "\n"
    return (text if text.endswith("\n") else text + "\n") + "\n" + block + "\n"


def remove_block(text: str) -> str:
    if BEGIN not in text or END not in text:
        return text
    start, end = text.index(BEGIN), text.index(END) + len(END)
    before, after = text[:start], text[end:]
    if after.startswith("\n"):
        after = after[1:]
    if not after and before.endswith("\n\n"):
        before = before[:-1]
    return before + after


# --- the plan --------------------------------------------------------------------------------

@dataclass
class Action:
    path: Path
    what: str          # "create", "update", "remove", "unchanged", "refused"
    detail: str
    new: str | None = None   # the file's new text (None: delete it)

    def line(self) -> str:
        return f"{self.what:<9} {self.path} — {self.detail}"


def claude_dir() -> Path:
    d = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(d).expanduser() if d else Path.home() / ".claude"


def targets(scope: str, project: Path | None = None) -> dict[str, Path]:
    if scope == "user":
        base = claude_dir()
        return {"settings": base / "settings.json", "skills": base / "skills", "claude_md": base / "CLAUDE.md"}
    if scope == "project":
        p = (project or Path.cwd()).absolute()
        return {"settings": p / ".claude" / "settings.json", "skills": p / ".claude" / "skills",
                "claude_md": p / "CLAUDE.md"}
    raise InstallError(f"--scope must be user or project, not {scope!r}")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise InstallError(f"cannot read {path}: {e}") from None


def _skill_is_ours(text: str) -> bool:
    fm = text.split("---", 2)[1] if text.startswith("---") and text.count("---") >= 2 else ""
    return bool(re.search(r"^\s+package:\s*epimem\s*$", fm, re.M))


def default_command() -> str:
    """`epimem` when that is what the PATH finds, else this installation's script by path."""
    here = Path(sys.executable).parent / "epimem"
    found = shutil.which("epimem")
    if found and (not here.exists() or Path(found).resolve() == here.resolve()):
        return "epimem"
    return str(here) if here.exists() else "epimem"


def plan(scope: str = "user", *, project: Path | None = None, auto_observe: bool = False,
         llm: bool = False, uninstall: bool = False, command: str | None = None,
         vault: str | None = None) -> list[Action]:
    t = targets(scope, project)
    actions: list[Action] = []
    # settings.json
    path = t["settings"]
    old = _read(path)
    if uninstall:
        new = remove_hooks(old or "", path) if old is not None else None
    else:
        specs = hook_specs(command or default_command(), auto_observe=auto_observe, llm=llm, vault=vault)
        new = merge_hooks(old or "", specs, path)
    if old is None and uninstall:
        actions.append(Action(path, "unchanged", "no settings file"))
    elif new == old:
        actions.append(Action(path, "unchanged", "hooks already as wanted"))
    else:
        what = "create" if old is None else "update"
        detail = ("removed epimem's hooks" if uninstall else
                  "SessionStart hook (startup; clear|compact)" + (" and SessionEnd hook" if auto_observe else ""))
        actions.append(Action(path, what, detail, new))
    # skills
    for name in SKILLS:
        src = (TEMPLATES / "skills" / name / "SKILL.md").read_text(encoding="utf-8")
        dst = t["skills"] / name / "SKILL.md"
        cur = _read(dst)
        if uninstall:
            if cur is None:
                continue
            if _skill_is_ours(cur):
                actions.append(Action(dst, "remove", f"the /{name} skill", None))
            else:
                actions.append(Action(dst, "unchanged", f"not epimem's /{name} skill; left alone"))
        elif cur == src:
            actions.append(Action(dst, "unchanged", f"/{name} skill up to date"))
        elif cur is not None and not _skill_is_ours(cur):
            actions.append(Action(dst, "refused", f"a /{name} skill that is not epimem's is already there; "
                                                  "move it away to install epimem's"))
        else:
            actions.append(Action(dst, "create" if cur is None else "update", f"the /{name} skill", src))
    # CLAUDE.md
    path = t["claude_md"]
    old = _read(path)
    if uninstall:
        if old is not None and BEGIN in old:
            new = remove_block(old)
            actions.append(Action(path, "remove" if not new.strip() else "update", "epimem's lines",
                                  new if new.strip() else None))
    else:
        new = add_block(old or "", claude_md_block())
        if new == old:
            actions.append(Action(path, "unchanged", "epimem's lines already there"))
        else:
            actions.append(Action(path, "create" if old is None else "update", "epimem's lines between markers", new))
    return actions


def _backup(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    dst = path.with_name(f"{path.name}.epimem-backup-{stamp}")
    n = 1
    while dst.exists():
        n += 1
        dst = path.with_name(f"{path.name}.epimem-backup-{stamp}-{n}")
    shutil.copy2(path, dst)
    return dst


def apply(actions: list[Action]) -> list[str]:
    """Carry out a plan; settings files get a backup before they change. Returns notes."""
    notes = []
    for a in actions:
        if a.what in ("unchanged", "refused"):
            continue
        if a.path.name == "settings.json" and a.path.exists():
            notes.append(f"backup of {a.path} in {_backup(a.path)}")
        if a.new is None:
            a.path.unlink(missing_ok=True)
            # A skill's folder, then `skills/` itself, when nothing else is in them.
            for folder in (a.path.parent, a.path.parent.parent):
                if folder.name != "skills" and folder != a.path.parent:
                    break
                try:
                    folder.rmdir()
                except OSError:
                    break
            continue
        atomic_write(a.path, a.new)
    return notes
