"""What is epimem's in an agent's config, and how epimem is wired into Claude Code.

`hook_role` knows a hook handler of epimem's in any agent's config, by its command. Claude Code
is wired by settings.json hooks or by the plugin, never both: both put the same SessionStart hook
in place, and Claude Code runs every hook it finds (docs/claude-code.md), so with both a session
would be counted twice. Each way detects the other: the settings installer refuses while the
plugin is enabled, and the plugin's hook (run as `epimem hook session-start --via plugin`) stands
down when a settings hook of epimem's is there.

Stdlib only and cheap: the plugin's session-start hook calls `settings_hook_present` on every run,
and the settings' one reads `SKILLS_VERSION`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

PLUGIN = "epimem"
MARKETPLACE = "epimem"
PLUGIN_ID = f"{PLUGIN}@{MARKETPLACE}"
# The skills' version stamp, their `metadata.version` (a test holds the two equal): it moves when what
# the skills run or may run does. The settings install writes it into the session-start hook's command
# (`--skills`), so after an upgrade the hook tells the session the skills are an older epimem's
# without reading a file (`epimem doctor` compares their text).
SKILLS_VERSION = "4"


def claude_dir() -> Path:
    d = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(d).expanduser() if d else Path.home() / ".claude"


def claude_json() -> Path:
    """Claude Code's `.claude.json` (the user's MCP servers, the file `claude mcp add --scope user`
    edits): beside `~/.claude`, or inside CLAUDE_CONFIG_DIR when that is set."""
    d = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(d).expanduser() if d else Path.home()) / ".claude.json"


def settings_files(project: str | os.PathLike | None = None) -> list[Path]:
    """The settings files Claude Code merges for a session in `project` (user, project, local)."""
    files = [claude_dir() / "settings.json"]
    if project:
        p = Path(project)
        files += [p / ".claude" / "settings.json", p / ".claude" / "settings.local.json"]
    return files


def _load(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


GLOBAL_OPTIONS = ("--vault", "--today")  # what may come between the program and `hook`


def hook_role(handler: Any) -> str | None:
    """`session-start` / `session-end` when `handler` is epimem's, else None.

    Ours is a command whose program is `epimem` (any path), or `python -m epimem`, followed by the
    global options and `hook ROLE`: the shell string every agent runs, or the `"args"` form an
    older epimem wrote for Claude Code.
    """
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return None
    args = handler.get("args")
    if isinstance(args, list) and args:
        words = [handler["command"], *map(str, args)]
    else:
        import shlex  # here: the session-start hook imports this module for SKILLS_VERSION alone

        try:
            words = shlex.split(handler["command"])
        except ValueError:
            return None
    if words and os.path.basename(words[0]) == "epimem":
        i = 1
    elif words[1:3] == ["-m", "epimem"] and os.path.basename(words[0]).startswith("python"):
        i = 3
    else:
        return None
    while i < len(words) and words[i].partition("=")[0] in GLOBAL_OPTIONS:
        i += 1 if "=" in words[i] else 2
    if words[i:i + 1] == ["hook"] and i + 1 < len(words) and words[i + 1].startswith("session-"):
        return words[i + 1]
    return None


def _handlers(settings: dict, event: str):
    hooks = settings.get("hooks")
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    for group in groups if isinstance(groups, list) else []:
        hs = group.get("hooks") if isinstance(group, dict) else None
        yield from hs if isinstance(hs, list) else []


def settings_hook_present(project: str | os.PathLike | None = None) -> Path | None:
    """The settings file that holds epimem's SessionStart hook for `project`, if any."""
    for path in settings_files(project):
        if any(hook_role(h) == "session-start" for h in _handlers(_load(path), "SessionStart")):
            return path
    return None


def plugin_enabled(project: str | os.PathLike | None = None) -> Path | None:
    """The settings file that enables the epimem plugin (`enabledPlugins`), if any.

    `claude plugin install` records the plugin there, in the file of the scope it was given.
    A later file that sets it to false wins, as Claude Code's own merge does.
    """
    found = None
    for path in settings_files(project):
        enabled = _load(path).get("enabledPlugins")
        if isinstance(enabled, dict):
            for key, value in enabled.items():
                if isinstance(key, str) and key.split("@")[0] == PLUGIN:
                    found = path if value is True else None
    return found


def is_our_server(entry: Any) -> bool:
    """An `epimem` entry that runs `… mcp` is ours; one the user wrote for something else is not."""
    if not isinstance(entry, dict):
        return False
    cmd = entry.get("command")
    argv = cmd if isinstance(cmd, list) else [cmd, *(entry.get("args") or [])]
    return bool(argv) and argv[-1] == "mcp" and any(isinstance(a, str) and "epimem" in a for a in argv)
