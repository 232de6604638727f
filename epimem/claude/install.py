"""`epimem install claude-code`: skills, hooks and CLAUDE.md lines in place.

The user's `settings.json` is edited as text, not re-serialised: a small
parser records where every JSON value starts and ends, and the installer
inserts or deletes exactly the spans it adds. Everything else in the file —
other hooks, other keys, key order, indentation, blank lines — stays byte for
byte, `--uninstall` after an install gives back the original file, and a
second install finds nothing to do.

What is ours is recognised by content: a hook handler whose program is
`epimem` (any path) followed by `hook session-…` (`wiring.hook_role`), the
`EPIMEM_VAULT`/`EPIMEM_BIN` entries of `"env"`, a skill whose frontmatter
carries `metadata: package: epimem`, the CLAUDE.md block between the
`epimem:begin`/`epimem:end` markers.

The plugin (`templates/claude/plugin`) is the other way to install the same
skills and hook; `plugin_plan` drives `claude plugin …` for it, and the two
refuse each other (`wiring`).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# What every agent's installer shares (the marker block, backups, reading, the error) has one home.
from ..agents.base import (
    BACKUP,
    BEGIN,
    END,
    Action,
    InstallError,
    add_block,
    backup,
    read,
    remove_block,
    skill_is_ours,
)
from ..agents.hooks import add_group, find_ours, matcher
from ..agents.jsonc import Node, _insert, _remove, indent_unit, parse_spans
from ..store.files import atomic_write
from . import wiring

TEMPLATES = Path(__file__).parent.parent / "templates" / "claude"
SKILLS_DIR = TEMPLATES / "plugin" / "skills"  # one copy: the plugin's, which the settings install uses too
SKILLS = ("observe", "mirror")
HOOK_TIMEOUT = 10


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
        for event, gi, hi, h in find_ours(root, is_ours):
            group = root.get("hooks").get(event).items[gi]
            key = (event, matcher(group), _role(h))
            if key not in wanted or wanted[key].handler != h:
                stale = (event, gi, hi)
                break
        if stale is None:
            break
        text = _remove_handler(text, *stale)
    # 2. what is missing: added
    for s in specs:
        root = parse_spans(text)
        present = {(e, matcher(root.get("hooks").get(e).items[gi]), _role(h))
                   for e, gi, _, h in find_ours(root, is_ours)}
        if (s.event, s.matcher, s.role) in present:
            continue
        text = add_group(text, root, s.event, s.matcher, s.handler, unit)
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


# --- the plan --------------------------------------------------------------------------------

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
    old = read(path)
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
        old = read(legacy)
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
        cur = read(dst)
        if uninstall:
            if cur is None:
                continue
            if skill_is_ours(cur):
                actions.append(Action(dst, "remove", f"the /{name} skill", None))
            else:
                actions.append(Action(dst, "unchanged", f"not epimem's /{name} skill; left alone"))
        elif cur == src:
            actions.append(Action(dst, "unchanged", f"/{name} skill up to date"))
        elif cur is not None and not skill_is_ours(cur):
            actions.append(Action(dst, "refused", f"a /{name} skill that is not epimem's is already there; "
                                                  "move it away to install epimem's"))
        else:
            actions.append(Action(dst, "create" if cur is None else "update", f"the /{name} skill", src))
    # CLAUDE.md
    path = t["claude_md"]
    old = read(path)
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


def notes(scope: str, command: str | None = None) -> list[str]:
    """What the user should know about a plan before it runs."""
    out = []
    command = command or default_command()
    if scope == "project" and command != "epimem":
        out.append(f"epimem is not on PATH ({command}): this project's skills call plain `epimem`, "
                   "so put its folder on PATH (the hooks in settings.local.json find it by path)")
    return out




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
            notes.append(f"backup of {a.path} in {backup(a.path)}")
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
            where = "" if present == wiring.claude_dir() / "settings.json" else " --scope project"
            raise InstallError(
                f"epimem's hooks are installed in {present}: with the plugin's as well every session would "
                f"be counted twice. Remove them first (`epimem install claude-code --uninstall{where}`); "
                "nothing was changed")
        cmds = [["plugin", "marketplace", "add", str(marketplace_dir())],
                ["plugin", "install", wiring.PLUGIN_ID, "--scope", scope]]
    path = t["settings"]
    old = read(path)
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


# --- what is there (`epimem doctor`) ------------------------------------------------------------

def doctor_row(root: Path, project: Path | None = None):
    """Claude Code's wiring to the vault at `root`, as this installer would leave it: wired when its
    hooks or skills are in place, current when `install claude-code` would change nothing."""
    from ..api.doctor import AgentWiring
    from ..store.paths import default_root

    present = bool(shutil.which("claude")) or claude_dir().is_dir()
    try:
        if wiring.plugin_enabled(project) is not None:
            return AgentWiring("claude-code", "Claude Code", "user", present, True, how="plugin")
        vault = None if Path(root).absolute() == default_root().absolute() else str(Path(root).absolute())
        t = targets("user")
        settings = read(t["settings"]) or ""
        hooked = bool(settings.strip()) and remove_hooks(settings, t["settings"]) != settings
        skills = [read(t["skills"] / s / "SKILL.md") for s in SKILLS]
        wired = hooked or any(s is not None and skill_is_ours(s) for s in skills)
        stale = tuple(str(a.path) for a in plan("user", project=project, vault=vault) if a.what != "unchanged") \
            if wired else ()
    except InstallError as e:
        return AgentWiring("claude-code", "Claude Code", "user", present, False, problem=str(e))
    return AgentWiring("claude-code", "Claude Code", "user", present, wired, stale)
