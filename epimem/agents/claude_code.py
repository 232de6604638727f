"""Claude Code: CLAUDE.md lines, the /observe and /mirror skills, SessionStart hooks and the vault
in `settings.json` (its "env"), the MCP server with `--mcp`, or all of it as the plugin.

An agent of the installer like the others (`table.py`, `install.py`); what is its own:
- the hooks run `epimem hook session-start` with no vault: the vault travels in settings.json's
  "env" (`EPIMEM_VAULT`, only when it is not the default), which reaches the hooks, the skills'
  `!` lines and the model's commands alike (docs/claude-code.md);
- a project install keeps everything personal (the hooks' path to epimem, the vault) in
  `.claude/settings.local.json` and the MCP server in the project's entry of `~/.claude.json`
  (Claude Code's "local" scope), none of it committed; the committed `.claude/settings.json` and
  `.mcp.json` only lose what an older install put there;
- the skills are the plugin's (`templates/claude/plugin/skills`, one copy), with `epimem`
  replaced by the epimem this machine has where they run it, when it is off PATH;
- the plugin (`templates/claude/plugin`) is the other way to install the same skills and hook;
  `plugin_plan` drives `claude plugin …` for it, and the two refuse each other (`wiring`).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from pathlib import Path

from . import wiring
from .base import Action, InstallError, read
from .hooks import HookSpec
from .jsonc import Node, _insert, _remove, indent_unit, parse_spans

LABEL = "Claude Code"
NOTE = ""
DONE = "Done: new Claude Code sessions start with epimem's context; /observe and /mirror are ready."

TEMPLATES = Path(__file__).parent.parent / "templates" / "claude"
SKILLS_DIR = TEMPLATES / "plugin" / "skills"  # one copy: the plugin's, which the settings install uses too
SKILLS = ("observe", "mirror")
HOOK_TIMEOUT = 10


def default_command() -> list[str]:
    """`epimem` when that is what the PATH finds, else this installation's script by path."""
    here = Path(sys.executable).parent / "epimem"
    found = shutil.which("epimem")
    if found and (not here.exists() or Path(found).resolve() == here.resolve()):
        return ["epimem"]
    return [str(here)] if here.exists() else ["epimem"]


def env_vault(vault: str | None) -> str | None:
    """The vault to record in "env": None for the default place, which needs no entry."""
    from ..store.paths import default_root

    return None if vault is None or Path(vault) == default_root().absolute() else vault


# --- hooks in settings.json ------------------------------------------------------------------

def hook_command(command: list[str], *args: str) -> str:
    """One shell string: the only handler form every Claude Code version runs (`"args"` is
    dropped before 2.1.139, which then runs a bare `epimem` that fails)."""
    return shlex.join([*command, "hook", *args])


def hook_specs(command: list[str], vault: str | None = None, *, auto_observe: bool = False,
               llm: bool = False) -> list[HookSpec]:
    def handler(*args: str) -> dict:
        return {"type": "command", "command": hook_command(command, *args), "timeout": HOOK_TIMEOUT}

    start = ("session-start", "--skills", wiring.SKILLS_VERSION)  # the skills installed beside it
    specs = [
        # Counted: a new session.
        HookSpec("SessionStart", "startup", handler(*start)),
        # Not counted (the hook checks `source`), but the context is gone after
        # /clear and a compaction, so it is given again.
        HookSpec("SessionStart", "clear|compact", handler(*start)),
    ]
    if auto_observe:
        specs.append(HookSpec("SessionEnd", None, handler("session-end", *(["--llm"] if llm else []))))
    return specs


def hooks_detail(uninstall: bool, *, vault: str | None = None, auto_observe: bool = False, **_) -> str:
    if uninstall:
        return "epimem's hooks and settings"
    v = env_vault(vault)
    return ("SessionStart hook (startup; clear|compact)" + (" and SessionEnd hook" if auto_observe else "")
            + (f", env EPIMEM_VAULT={v}" if v else ""))


def _check_shape(root: Node, path: Path) -> None:
    if root.kind != "object":
        raise InstallError(f"{path}: the file must hold a JSON object; nothing was changed")
    node = root.get("env")
    if node is not None and node.kind != "object":
        raise InstallError(f"{path}: 'env' must be an object; nothing was changed")


# --- "env" in settings.json ------------------------------------------------------------------

# The variables epimem sets in settings.json's top-level "env": where the vault is, and (for the
# plugin's bin/epimem) which epimem to run. An install sets exactly those it needs and removes the
# others; an uninstall removes them all.
ENV_KEYS = ("EPIMEM_VAULT", "EPIMEM_BIN")


def merge_env(text: str, wanted: dict[str, str], path: Path = Path("settings.json")) -> str:
    """settings.json text whose "env" holds `wanted` of epimem's variables and none of the others."""
    if not text.strip():
        if not wanted:
            return text
        text = "{}\n"
    try:
        _check_shape(parse_spans(text), path)
    except ValueError as e:
        raise InstallError(f"{path}: invalid JSON at {e}; fix it first, nothing was changed") from None
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


def edit_hooks_file(text: str, path: Path, *, vault: str | None, uninstall: bool) -> str:
    """What Claude Code's settings file carries besides the hooks: the vault in "env"."""
    v = None if uninstall else env_vault(vault)
    return merge_env(text, {"EPIMEM_VAULT": v} if v else {}, path)


# --- CLAUDE.md and the skills ----------------------------------------------------------------

def instruction_text(command: list[str], vault: str) -> str:
    from .base import BEGIN, END

    text = (TEMPLATES / "CLAUDE.md.example").read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


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


def skill_texts(command: list[str], vault: str, scope: str) -> dict[str, str]:
    # A project's skills are committed, so they name plain `epimem` whatever this machine has.
    cmd = command[0] if scope == "user" else "epimem"
    return {name: render_skill((SKILLS_DIR / name / "SKILL.md").read_text(encoding="utf-8"), cmd)
            for name in SKILLS}


SKILL_LABEL = "/{name}"


# --- the MCP server --------------------------------------------------------------------------

def mcp_entry(command: list[str], vault: str, scope: str = "user") -> dict:
    """What `claude mcp add` writes, at either scope a personal entry (`.claude.json`): this
    machine's epimem, and the vault when it is not the default."""
    v = env_vault(vault)
    return {"type": "stdio", "command": command[0], "args": [*command[1:], *(["--vault", v] if v else []), "mcp"],
            "env": {}}


def mcp_mode(path: Path) -> int | None:
    return 0o600  # `.claude.json` holds the account


# --- what else a plan does ---------------------------------------------------------------------

def check(scope: str, project: Path, uninstall: bool) -> None:
    """Refuse the settings install while the plugin is on: both would count every session."""
    if uninstall:
        return
    enabled = wiring.plugin_enabled(project if scope == "project" else None)
    if enabled is not None:
        raise InstallError(
            f"the epimem plugin is enabled in {enabled}: its hooks and these would both count every "
            f"session. Keep the plugin, or remove it first (`claude plugin uninstall {wiring.PLUGIN_ID}`, "
            "or `epimem install claude-code --plugin --uninstall`); nothing was changed")


def installed_as(scope: str, project: Path) -> str:
    """"plugin" when Claude Code has epimem as its plugin at this scope (not this installer's files)."""
    if scope != "user":
        return ""
    return "plugin" if wiring.plugin_enabled(project) is not None else ""


def legacy_files(scope: str, project: Path) -> list:
    """Files an older install wrote what now goes elsewhere, with what takes epimem's parts out:
    a project's committed settings.json held the hooks (personal paths) settings.local.json holds
    now, and its committed `.mcp.json` the server now in the project's entry of `.claude.json`."""
    if scope != "project":
        return []
    settings = project / ".claude" / "settings.json"
    mcp_json = project / ".mcp.json"
    return [(settings, "epimem's hooks moved to settings.local.json (this file is committed; they hold "
                       "personal paths)", lambda text: strip_settings(text, settings)),
            (mcp_json, "epimem's MCP server moved to this project's entry in ~/.claude.json (this file is "
                       "committed; it held personal paths)", lambda text: _strip_mcp_json(text, mcp_json))]


def _strip_mcp_json(text: str, path: Path) -> str:
    from .jsonc import delete_path, get_path

    try:
        if not wiring.is_our_server(get_path(text, ("mcpServers", "epimem"))):
            return text  # someone else's `epimem`, or none: not ours to move
        return delete_path(text, ("mcpServers", "epimem"), prune=1)
    except ValueError as e:
        raise InstallError(f"{path}: invalid JSON ({e}); fix it first, nothing was changed") from None


def strip_settings(text: str, path: Path) -> str:
    """A settings file with none of epimem's hooks and env entries."""
    from .hooks import merge_hooks

    if not text.strip():
        return text
    try:
        return merge_env(merge_hooks(text, []), {}, path)
    except ValueError as e:
        raise InstallError(f"{path}: invalid JSON at {e}; fix it first, nothing was changed") from None


def notes(scope: str, command: list[str]) -> list[str]:
    """What the user should know about a plan before it runs."""
    if scope == "project" and command != ["epimem"]:
        return [f"epimem is not on PATH ({shlex.join(command)}): this project's skills call plain `epimem`, so "
                "put its folder on PATH (the hooks and the MCP server find it by path)"]
    return []


# --- the plugin ------------------------------------------------------------------------------

def marketplace_dir() -> Path:
    """The marketplace this package ships (`.claude-plugin/marketplace.json`, the plugin in ./plugin)."""
    return TEMPLATES


def settings_path(scope: str, project: Path | None = None) -> Path:
    if scope == "user":
        return wiring.claude_dir() / "settings.json"
    return (project or Path.cwd()).absolute() / ".claude" / "settings.local.json"


def run_plugin_commands(commands: list[list[str]], *, project: Path | None, uninstall: bool):
    """Run the `claude plugin …` commands of `plugin_plan` in turn, yielding the last line each
    said; InstallError when `claude` is not on PATH, or when one fails on an install (an uninstall
    goes on: what is already gone fails to be removed again)."""
    import subprocess

    claude = shutil.which("claude")
    if claude is None:
        raise InstallError("`claude` is not on PATH: install Claude Code, or run the `claude plugin` commands "
                           "above yourself; nothing was changed")
    for argv in commands:
        proc = subprocess.run([claude, *argv], capture_output=True, text=True, cwd=project or None)
        said = (proc.stdout + proc.stderr).strip()
        if proc.returncode != 0 and not uninstall:
            raise InstallError(f"claude {' '.join(argv)} failed: {said}")
        if said:
            yield said.splitlines()[-1]


def plugin_plan(scope: str = "user", *, project: Path | None = None, uninstall: bool = False,
                command: list[str] | None = None, vault: str | None = None
                ) -> tuple[list[list[str]], list[Action]]:
    """The `claude plugin …` commands and the settings changes of a plugin install.

    The plugin's hooks name no vault and no path: the vault and, when epimem is off PATH, the
    epimem to run travel in "env" (EPIMEM_VAULT, EPIMEM_BIN), which reaches the plugin's hooks,
    its bin/epimem and the model's commands.
    """
    from .base import change

    project = (project or Path.cwd()).absolute()
    command = command or default_command()
    if uninstall:
        cmds = [["plugin", "uninstall", wiring.PLUGIN_ID, "--scope", scope],
                ["plugin", "marketplace", "remove", wiring.MARKETPLACE]]
    else:
        present = wiring.settings_hook_present(project if scope == "project" else None)
        if present is not None:
            where = "" if present == wiring.claude_dir() / "settings.json" else " --scope project"
            raise InstallError(
                f"epimem's hooks are installed in {present}: with the plugin's as well every session would "
                f"be counted twice. Remove them first (`epimem install claude-code --uninstall{where}`); "
                "nothing was changed")
        cmds = [["plugin", "marketplace", "add", str(marketplace_dir())],
                ["plugin", "install", wiring.PLUGIN_ID, "--scope", scope]]
    path = settings_path(scope, project)
    old = read(path)
    wanted = {}
    if not uninstall:
        v = env_vault(vault)
        if v:
            wanted["EPIMEM_VAULT"] = v
        if command != ["epimem"]:
            wanted["EPIMEM_BIN"] = command[0]  # a path the plugin's bin/epimem runs
    new = merge_env(old or "", wanted, path) if (old is not None or wanted) else None
    detail = ", ".join(f"env {k}={v}" for k, v in wanted.items()) or "epimem's env entries removed"
    a = change(path, old, new, detail, same="already as wanted")
    a.strip = lambda text: merge_env(text, {}, path)
    return cmds, [a]
