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

import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agents.jsonc import Node, _insert, _remove, indent_unit, parse_spans
from ..core.errors import EpimemError
from ..store.files import atomic_write

TEMPLATES = Path(__file__).parent.parent / "templates" / "claude"
SKILLS = ("observe", "mirror")
BEGIN, END = "<!-- epimem:begin -->", "<!-- epimem:end -->"
HOOK_TIMEOUT = 10


class InstallError(EpimemError):
    """Something the user must fix first; nothing has been changed."""


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
