"""Claude Desktop: the MCP server in `claude_desktop_config.json` (stdio only), nothing else.

Claude Desktop has no instruction file, skills folder or hooks; the server's
`observe` and `mirror` prompts carry the method instead (SPEC §9).
"""

from __future__ import annotations

LABEL = "Claude Desktop"
NOTE = "Restart Claude Desktop to start the server."


def mcp_entry(command: list[str], vault: str, scope: str = "user") -> dict:
    return {"command": command[0], "args": [*command[1:], "--vault", vault, "mcp"]}


def hook_specs(command: list[str], vault: str) -> list:
    return []
