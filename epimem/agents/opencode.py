"""opencode: `AGENTS.md`, Agent Skills, a local server under `mcp` in `opencode.json` (JSON with comments).

opencode has no hooks a config file can declare (its plugins are JavaScript),
so it gets no session-start context; the instructions send it to `describe`.
"""

from __future__ import annotations

LABEL = "opencode"
NOTE = ""


def mcp_entry(command: list[str], vault: str, scope: str = "user") -> dict:
    return {"type": "local", "command": [*command, "--vault", vault, "mcp"], "enabled": True}


def hook_specs(command: list[str], vault: str) -> list:
    return []
