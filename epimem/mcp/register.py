"""Registering `epimem mcp` with Claude Code: what `claude mcp add` would write, without needing `claude`.

- user scope: `mcpServers.epimem` in Claude Code's own `~/.claude.json`
  (`$CLAUDE_CONFIG_DIR/.claude.json` when that is set), the file
  `claude mcp add --scope user` edits;
- project scope: `mcpServers.epimem` in the project's `.mcp.json`, the file
  `claude mcp add --scope project` writes and a team commits.

The entry is the one `claude mcp add` makes (`type`, `command`, `args`,
`env`). Every other key of those files is kept as it was; the file keeps its
mode (`~/.claude.json` is 0600: it holds the account) and gets a backup
before it changes. An entry named `epimem` that does not run `epimem mcp` is
someone else's: it is reported and left alone.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ..agents.base import backup
from ..claude.install import Action, claude_dir, default_command

NAME = "epimem"


class RegisterError(Exception):
    pass


def claude_json(scope: str, project: Path | None = None) -> Path:
    if scope == "user":
        d = os.environ.get("CLAUDE_CONFIG_DIR")
        # Claude Code keeps `.claude.json` beside `~/.claude`, or inside CLAUDE_CONFIG_DIR when set.
        return (Path(d).expanduser() if d else claude_dir().parent) / ".claude.json"
    if scope == "project":
        return (project or Path.cwd()).absolute() / ".mcp.json"
    raise RegisterError(f"--scope must be user or project, not {scope!r}")


def entry(command: str | None = None, vault: str | None = None) -> dict:
    args = (["--vault", vault] if vault else []) + ["mcp"]
    return {"type": "stdio", "command": command or default_command(), "args": args, "env": {}}


def is_ours(e: object) -> bool:
    if not isinstance(e, dict):
        return False
    args = e.get("args") or []
    cmd = str(e.get("command") or "")
    return isinstance(args, list) and args[-1:] == ["mcp"] and (Path(cmd).name == "epimem" or "epimem" in args)


def _load(path: Path) -> dict | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise RegisterError(f"cannot read {path}: {e.strerror or e}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as e:
        raise RegisterError(f"{path} is not valid JSON ({e}); fix it or move it away, epimem will not "
                            "overwrite it") from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise RegisterError(f"{path}: expected a JSON object with an object 'mcpServers'; left alone")
    return data


def _dump(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"  # as Claude Code writes it


def plan(scope: str, *, project: Path | None = None, command: str | None = None, vault: str | None = None,
         uninstall: bool = False) -> list[Action]:
    path = claude_json(scope, project)
    data = _load(path)
    servers = (data or {}).get("mcpServers") or {}
    cur = servers.get(NAME)
    if uninstall:
        if cur is None:
            return []
        if not is_ours(cur):
            return [Action(path, "unchanged", f"an MCP server named {NAME} that is not `epimem mcp`; left alone")]
        new = dict(data or {})
        rest = {k: v for k, v in servers.items() if k != NAME}
        if rest:
            new["mcpServers"] = rest
        else:
            new.pop("mcpServers", None)
        if scope == "project" and not new:
            return [Action(path, "remove", "the epimem MCP server (the file held nothing else)", None)]
        return [Action(path, "update", "removed the epimem MCP server", _dump(new))]
    want = entry(command, vault)
    if cur == want:
        return [Action(path, "unchanged", "the epimem MCP server is already registered")]
    if cur is not None and not is_ours(cur):
        return [Action(path, "refused", f"an MCP server named {NAME} that is not `epimem mcp` is registered "
                                        "there; remove it to register epimem's")]
    new = dict(data or {})
    new["mcpServers"] = {**servers, NAME: want}
    return [Action(path, "create" if data is None else "update",
                   f"the epimem MCP server ({' '.join([want['command'], *want['args']])})", _dump(new))]


def apply(actions: list[Action]) -> list[str]:
    """Write the plan: backup first, then an atomic replace that keeps the file's mode."""
    notes = []
    for a in actions:
        if a.what in ("unchanged", "refused"):
            continue
        if a.new is not None and a.path.exists():
            notes.append(f"backup of {a.path} in {backup(a.path)}")
        if a.new is None:  # only a file that held nothing but our entry is removed: nothing to keep
            a.path.unlink(missing_ok=True)
            continue
        mode = a.path.stat().st_mode & 0o777 if a.path.exists() else (0o600 if a.path.name == ".claude.json"
                                                                        else 0o644)
        a.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{a.path.name}.", suffix=".epimem.tmp", dir=a.path.parent)
        try:
            os.fchmod(fd, mode)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(a.new)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, a.path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return notes
