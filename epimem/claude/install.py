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
import shlex
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import EpimemError
from ..store.files import atomic_write
from . import wiring

TEMPLATES = Path(__file__).parent.parent / "templates" / "claude"
SKILLS_DIR = TEMPLATES / "plugin" / "skills"  # one copy: the plugin's, which the settings install uses too
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
    return wiring.hook_role(handler) is not None


def _role(handler: dict) -> str:
    return wiring.hook_role(handler) or ""


@dataclass(frozen=True)
class HookSpec:
    event: str
    matcher: str | None
    handler: dict

    @property
    def role(self) -> str:
        return _role(self.handler)


def hook_command(command: str, *args: str) -> str:
    """One shell string: the only handler form every Claude Code version runs (`"args"` is
    dropped before 2.1.139, which then runs a bare `epimem` that fails)."""
    return " ".join(shlex.quote(w) for w in (command, "hook", *args))


def hook_specs(command: str, *, auto_observe: bool = False, llm: bool = False) -> list[HookSpec]:
    def handler(*args: str) -> dict:
        return {"type": "command", "command": hook_command(command, *args), "timeout": HOOK_TIMEOUT}

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
    for key, kind in (("hooks", "an object"), ("env", "an object")):
        node = root.get(key)
        if node is not None and node.kind != "object":
            raise InstallError(f"{path}: '{key}' must be {kind}; nothing was changed")
    hooks = root.get("hooks")
    for event, _, arr in hooks.members if hooks is not None else []:
        if arr.kind != "array":
            raise InstallError(f"{path}: 'hooks.{event}' must be a list; nothing was changed")


def _parsed(text: str, path: Path) -> Node:
    try:
        root = parse_spans(text)
    except ValueError as e:
        raise InstallError(f"{path}: invalid JSON at {e}; fix it first, nothing was changed") from None
    _check_shape(root, path)
    return root


def merge_hooks(text: str, specs: list[HookSpec], path: Path = Path("settings.json")) -> str:
    """settings.json text with exactly our handlers, everything else untouched."""
    if not text.strip():
        text = "{}\n"
    _parsed(text, path)
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


# --- "env" in settings.json ------------------------------------------------------------------

# The variables epimem sets in settings.json's top-level "env", which Claude Code passes to hooks,
# the skills' `!` lines and the model's Bash calls alike: where the vault is, and (for the
# plugin's bin/epimem) which epimem to run. An install sets exactly those it needs and removes the
# others; an uninstall removes them all.
ENV_KEYS = ("EPIMEM_VAULT", "EPIMEM_BIN")


def merge_env(text: str, wanted: dict[str, str], path: Path = Path("settings.json")) -> str:
    """settings.json text whose "env" holds `wanted` of epimem's variables and none of the others."""
    if not text.strip():
        if not wanted:
            return text
        text = "{}\n"
    _parsed(text, path)
    unit = indent_unit(text)
    for key in ENV_KEYS:
        root = parse_spans(text)
        env = root.get("env")
        node = env.get(key) if env is not None else None
        if key in wanted:
            value = wanted[key]
            if env is None:
                text = _insert(text, root, "env", {key: value}, unit)
            elif node is None:
                text = _insert(text, env, key, value, unit)
            elif node.value != value:
                text = text[:node.start] + json.dumps(value, ensure_ascii=False) + text[node.end:]
        elif node is not None:
            if len(env.members) == 1:  # the "env" was only ours: it goes too
                text = _remove(text, root, [k for k, _, _ in root.members].index("env"))
            else:
                text = _remove(text, env, [k for k, _, _ in env.members].index(key))
    return text


def is_empty_object(text: str) -> bool:
    try:
        return json.loads(text) == {}
    except ValueError:
        return False


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


# --- skills ----------------------------------------------------------------------------------

# Where a skill names the program: a `!` line, an inline command, `Bash(epimem *)`, or a line of
# a code block. Prose ("the epimem vault") is never at one of these places.
_COMMAND = re.compile(r"(?:(?<=`)|(?<=Bash\()|(?<=^)|(?<=^  ))epimem(?= )", re.M)


def render_skill(text: str, command: str) -> str:
    """The skill with `epimem` replaced by `command` where it is run, for an epimem off PATH.

    Claude Code runs the `!` lines and the model's commands with the session's PATH, so a bare
    `epimem` there fails when the user's epimem lives elsewhere (a venv, pipx without its bin
    dir on PATH). `allowed-tools` must name the same program, or the commands are not approved.
    """
    if command == "epimem":
        return text
    return _COMMAND.sub(lambda _: shlex.quote(command), text)


def _skill_is_ours(text: str) -> bool:
    fm = text.split("---", 2)[1] if text.startswith("---") and text.count("---") >= 2 else ""
    return bool(re.search(r"^\s+package:\s*epimem\s*$", fm, re.M))


# --- the plan --------------------------------------------------------------------------------

@dataclass
class Action:
    path: Path
    what: str          # "create", "update", "remove", "unchanged", "refused"
    detail: str
    new: str | None = None   # the file's new text (None: delete it)
    backup: bool = True      # settings files: copy the old text aside first (on install)

    def line(self) -> str:
        return f"{self.what:<9} {self.path} — {self.detail}"


def claude_dir() -> Path:
    return wiring.claude_dir()


def targets(scope: str, project: Path | None = None) -> dict[str, Any]:
    """Where each part goes. A project install keeps everything personal (the hooks' path to
    epimem, the vault) in `.claude/settings.local.json`, which is not committed; the committed
    `.claude/settings.json` only loses epimem hooks an older install put there."""
    if scope == "user":
        base = claude_dir()
        return {"settings": base / "settings.json", "legacy": None, "skills": base / "skills",
                "claude_md": base / "CLAUDE.md", "project": None}
    if scope == "project":
        p = (project or Path.cwd()).absolute()
        return {"settings": p / ".claude" / "settings.local.json", "legacy": p / ".claude" / "settings.json",
                "skills": p / ".claude" / "skills", "claude_md": p / "CLAUDE.md", "project": p}
    raise InstallError(f"--scope must be user or project, not {scope!r}")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise InstallError(f"cannot read {path}: {e}") from None


def default_command() -> str:
    """`epimem` when that is what the PATH finds, else this installation's script by path."""
    here = Path(sys.executable).parent / "epimem"
    found = shutil.which("epimem")
    if found and (not here.exists() or Path(found).resolve() == here.resolve()):
        return "epimem"
    return str(here) if here.exists() else "epimem"


def _settings_action(path: Path, old: str | None, new: str | None, detail: str, uninstall: bool) -> Action:
    if new is not None and old is not None and uninstall and is_empty_object(new) \
            and not is_empty_object(old) and not _backups(path):
        new = None  # epimem created the file (it made no backup), and `{}` is all that is left: it goes
    if new == old:
        return Action(path, "unchanged", "no settings file" if old is None else "already as wanted")
    if new is None:
        return Action(path, "remove", detail)
    return Action(path, "create" if old is None else "update", detail, new)


def plan(scope: str = "user", *, project: Path | None = None, auto_observe: bool = False,
         llm: bool = False, uninstall: bool = False, command: str | None = None,
         vault: str | None = None) -> list[Action]:
    """What `epimem install claude-code` would change, file by file (nothing is written).

    `vault` is the vault to record in "env" (None: the default place, nothing recorded).
    """
    t = targets(scope, project)
    command = command or default_command()
    if not uninstall:
        enabled = wiring.plugin_enabled(t["project"])
        if enabled is not None:
            raise InstallError(
                f"the epimem plugin is enabled in {enabled}: its hooks and these would both count every "
                f"session. Keep the plugin, or remove it first (`claude plugin uninstall {wiring.PLUGIN_ID}`, "
                "or `epimem install claude-code --plugin --uninstall`); nothing was changed")
    actions: list[Action] = []
    # settings: hooks, then "env"
    path = t["settings"]
    old = _read(path)
    if uninstall:
        new = None if old is None else merge_env(remove_hooks(old, path), {}, path)
        detail = "removed epimem's hooks and settings"
    else:
        new = merge_hooks(old or "", hook_specs(command, auto_observe=auto_observe, llm=llm), path)
        new = merge_env(new, {"EPIMEM_VAULT": vault} if vault else {}, path)
        detail = ("SessionStart hook (startup; clear|compact)" + (" and SessionEnd hook" if auto_observe else "")
                  + (f", env EPIMEM_VAULT={vault}" if vault else ""))
    actions.append(_settings_action(path, old, new, detail, uninstall))
    legacy = t["legacy"]
    if legacy is not None:
        old = _read(legacy)
        if old is not None:
            new = merge_env(remove_hooks(old, legacy), {}, legacy)
            if new != old:
                a = _settings_action(legacy, old, new, "epimem's hooks moved to settings.local.json "
                                     "(this file is committed; they hold personal paths)", True)
                a.backup = False  # like an uninstall: the file goes back to what it was without epimem
                actions.append(a)
    # skills: a project's are committed, so they name plain `epimem` whatever this machine has
    skill_command = command if scope == "user" else "epimem"
    for name in SKILLS:
        src = render_skill((SKILLS_DIR / name / "SKILL.md").read_text(encoding="utf-8"), skill_command)
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


def notes(actions: list[Action], scope: str, command: str | None = None) -> list[str]:
    """What the user should know about a plan before it runs."""
    out = []
    command = command or default_command()
    if scope == "project" and command != "epimem":
        out.append(f"epimem is not on PATH ({command}): this project's skills call plain `epimem`, "
                   "so put its folder on PATH (the hooks in settings.local.json find it by path)")
    return out


BACKUP = ".epimem-backup-"


def _backup(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    dst = path.with_name(f"{path.name}{BACKUP}{stamp}")
    n = 1
    while dst.exists():
        n += 1
        dst = path.with_name(f"{path.name}{BACKUP}{stamp}-{n}")
    shutil.copy2(path, dst)
    return dst


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + BACKUP + "*"))


def _is_settings(path: Path) -> bool:
    return path.name in ("settings.json", "settings.local.json")


def apply(actions: list[Action], *, uninstall: bool = False) -> list[str]:
    """Carry out a plan. An install backs a settings file up before changing it; an uninstall,
    which gives the file back as it was, removes those backups. Returns notes."""
    notes = []
    for a in actions:
        if a.what in ("unchanged", "refused"):
            continue
        if _is_settings(a.path) and a.path.exists() and a.backup and not uninstall:
            notes.append(f"backup of {a.path} in {_backup(a.path)}")
        if a.new is None:
            a.path.unlink(missing_ok=True)
            # What the install made and is now empty: a skill's folder, then `skills/`, then
            # the `.claude` folder holding them (a project's, usually).
            folders = ([a.path.parent] if _is_settings(a.path) else
                       list(a.path.parents)[:3] if a.path.name == "SKILL.md" else [])
            for folder in folders:
                try:
                    folder.rmdir()
                except OSError:
                    break
        else:
            atomic_write(a.path, a.new)
        if uninstall and _is_settings(a.path):
            for b in _backups(a.path):
                b.unlink()
                notes.append(f"removed {b} (the install's backup; the file is back as it was)")
    return notes


# --- the plugin ------------------------------------------------------------------------------

def marketplace_dir() -> Path:
    """The marketplace this package ships (`.claude-plugin/marketplace.json`, the plugin in ./plugin)."""
    return TEMPLATES


def plugin_plan(scope: str = "user", *, project: Path | None = None, uninstall: bool = False,
                command: str | None = None, vault: str | None = None) -> tuple[list[list[str]], list[Action]]:
    """The `claude plugin …` commands and the settings changes of a plugin install.

    The plugin's hooks name no vault and no path: the vault and, when epimem is off PATH, the
    epimem to run travel in "env" (EPIMEM_VAULT, EPIMEM_BIN), which reaches the plugin's hooks,
    its bin/epimem and the model's commands.
    """
    t = targets(scope, project)
    command = command or default_command()
    if uninstall:
        cmds = [["plugin", "uninstall", wiring.PLUGIN_ID, "--scope", scope],
                ["plugin", "marketplace", "remove", wiring.MARKETPLACE]]
    else:
        present = wiring.settings_hook_present(t["project"])
        if present is not None:
            raise InstallError(
                f"epimem's hooks are installed in {present}: with the plugin's as well every session would "
                "be counted twice. Remove them first (`epimem install claude-code --uninstall"
                + (" --scope project" if present.name == "settings.local.json" or t["project"] and
                   present.parent.parent == t["project"] else "") + "`); nothing was changed")
        cmds = [["plugin", "marketplace", "add", str(marketplace_dir())],
                ["plugin", "install", wiring.PLUGIN_ID, "--scope", scope]]
    path = t["settings"]
    old = _read(path)
    wanted = {}
    if not uninstall:
        if vault:
            wanted["EPIMEM_VAULT"] = vault
        if command != "epimem":
            wanted["EPIMEM_BIN"] = command
    new = merge_env(old or "", wanted, path) if (old is not None or wanted) else None
    detail = ", ".join(f"env {k}={v}" for k, v in wanted.items()) or "epimem's env entries removed"
    actions = [_settings_action(path, old, new, detail, uninstall)]
    return cmds, actions
