"""The one table: for each agent, Claude Code as the others, where its instruction file, skills,
MCP entry and hooks go.

A place is written per scope. `~/` is the home folder; `$CODEX_HOME`, `$XDG_CONFIG_HOME`,
`$CLAUDE_CONFIG_DIR` and `$CLAUDE_DESKTOP` are the folders those agents use (their environment
variable when set, else the documented default), `$CLAUDE_JSON` Claude Code's own `.claude.json`;
any other path is relative to the project. `None`: the agent has no such thing at that scope.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from . import claude_code, claude_desktop, codex, cursor, gemini, opencode, wiring


@dataclass(frozen=True)
class Config:
    """A config file holding one keyed entry of ours, and how it is written."""

    user: str | None
    project: str | None
    format: str            # "toml", "json" (strict) or "jsonc" (comments allowed)
    key: tuple[str, ...]   # where the entry goes, e.g. ("mcpServers", "epimem")
    optional: bool = False  # installed only when asked for (`install claude-code --mcp`); always uninstalled
    # Where the entry goes at project scope when not at `key` ("{project}": the project's path):
    # Claude Code keeps a project's personal servers in `.claude.json`, under the project.
    project_key: tuple[str, ...] | None = None

    def key_for(self, scope: str, project: Path) -> tuple[str, ...]:
        if scope == "project" and self.project_key is not None:
            return tuple(str(project.resolve()) if k == "{project}" else k for k in self.project_key)
        return self.key


@dataclass(frozen=True)
class Agent:
    name: str
    module: ModuleType
    binary: str | None                      # its CLI, looked for on PATH by `install --list`
    home: str                               # the folder whose existence says it is installed
    instructions: tuple[str | None, str | None]   # (user, project); cursor: a whole .mdc rule file
    skills: tuple[str | None, str | None]
    mcp: Config
    hooks: Config | None
    transcripts: str | None = None          # where its session logs are (read by the session-end pass)
    wired_by: str = "mcp"                   # the part that says it is wired (`install --list`)

    @property
    def label(self) -> str:
        return self.module.LABEL

    def scopes(self) -> tuple[str, ...]:
        return ("user", "project") if self.mcp.project else ("user",)


MCP_KEY = ("mcpServers", "epimem")

AGENTS: dict[str, Agent] = {a.name: a for a in (
    # Claude Code reads the vault from settings.json's "env" and runs hooks and skills: the MCP
    # server is optional (`--mcp`). A project's personal parts go where Claude Code keeps them, not
    # in a committed file: the hooks to settings.local.json, the server to the project's entry in
    # `.claude.json` (what `claude mcp add --scope local` writes).
    Agent("claude-code", claude_code, "claude", "$CLAUDE_CONFIG_DIR",
          instructions=("$CLAUDE_CONFIG_DIR/CLAUDE.md", "CLAUDE.md"),
          skills=("$CLAUDE_CONFIG_DIR/skills", ".claude/skills"),
          mcp=Config("$CLAUDE_JSON", "$CLAUDE_JSON", "json", MCP_KEY, optional=True,
                     project_key=("projects", "{project}", *MCP_KEY)),
          hooks=Config("$CLAUDE_CONFIG_DIR/settings.json", ".claude/settings.local.json", "json", ("hooks",)),
          transcripts="$CLAUDE_CONFIG_DIR/projects", wired_by="hook"),
    Agent("codex", codex, "codex", "$CODEX_HOME",
          instructions=("$CODEX_HOME/AGENTS.md", "AGENTS.md"),
          skills=("~/.agents/skills", ".agents/skills"),
          mcp=Config("$CODEX_HOME/config.toml", ".codex/config.toml", "toml", ("mcp_servers", "epimem")),
          hooks=Config("$CODEX_HOME/hooks.json", ".codex/hooks.json", "json", ("hooks",)),
          transcripts="$CODEX_HOME/sessions"),
    Agent("gemini", gemini, "gemini", "~/.gemini",
          instructions=("~/.gemini/GEMINI.md", "GEMINI.md"),
          skills=(None, None),
          mcp=Config("~/.gemini/settings.json", ".gemini/settings.json", "jsonc", MCP_KEY),
          hooks=Config("~/.gemini/settings.json", ".gemini/settings.json", "jsonc", ("hooks",))),
    Agent("opencode", opencode, "opencode", "$XDG_CONFIG_HOME/opencode",
          instructions=("$XDG_CONFIG_HOME/opencode/AGENTS.md", "AGENTS.md"),
          skills=("$XDG_CONFIG_HOME/opencode/skills", ".opencode/skills"),
          mcp=Config("$XDG_CONFIG_HOME/opencode/opencode.json", "opencode.json", "jsonc", ("mcp", "epimem")),
          hooks=None),
    Agent("cursor", cursor, "cursor", "~/.cursor",
          instructions=(None, ".cursor/rules/epimem.mdc"),
          skills=(None, None),
          mcp=Config("~/.cursor/mcp.json", ".cursor/mcp.json", "json", MCP_KEY),
          hooks=None),
    Agent("claude-desktop", claude_desktop, None, "$CLAUDE_DESKTOP",
          instructions=(None, None),
          skills=(None, None),
          mcp=Config("$CLAUDE_DESKTOP/claude_desktop_config.json", None, "json", MCP_KEY),
          hooks=None),
)}


def _claude_desktop_dir() -> Path:
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Claude"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude"
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Claude"


def resolve(place: str, project: Path) -> Path:
    if place.startswith("~/"):
        return Path.home() / place[2:]
    root, _, rest = place.partition("/")
    if root == "$CODEX_HOME":
        base = Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else Path.home() / ".codex"
    elif root == "$XDG_CONFIG_HOME":
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    elif root == "$CLAUDE_DESKTOP":
        base = _claude_desktop_dir()
    elif root == "$CLAUDE_CONFIG_DIR":
        base = wiring.claude_dir()
    elif root == "$CLAUDE_JSON":
        base = wiring.claude_json()
    else:
        return project / place
    return base / rest if rest else base


def place(places: tuple[str | None, str | None], scope: str, project: Path) -> Path | None:
    p = places[0] if scope == "user" else places[1]
    return resolve(p, project) if p else None


def config_path(cfg: Config | None, scope: str, project: Path) -> Path | None:
    return place((cfg.user, cfg.project), scope, project) if cfg else None
