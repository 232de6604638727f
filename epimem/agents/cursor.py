"""Cursor: a rule file `.cursor/rules/epimem.mdc` (always applied) and `mcpServers` in `mcp.json`.

Cursor keeps user-level rules in its settings, not in files, so the rule is
written for `--scope project` only; the MCP entry goes in `~/.cursor/mcp.json`
or the project's `.cursor/mcp.json`.
"""

from __future__ import annotations

LABEL = "Cursor"
NOTE = "Cursor's user rules live in its settings: `--scope project` also writes .cursor/rules/epimem.mdc."


def mcp_entry(command: list[str], vault: str, scope: str = "user") -> dict:
    return {"type": "stdio", "command": command[0], "args": [*command[1:], "--vault", vault, "mcp"]}


def hook_specs(command: list[str], vault: str) -> list:
    return []
