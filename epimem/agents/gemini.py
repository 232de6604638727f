"""Gemini CLI: `GEMINI.md`, `mcpServers` and a SessionStart hook in `settings.json` (JSON with comments).

Gemini CLI's SessionStart input carries `source` (startup, resume, clear) and
reads `hookSpecificOutput.additionalContext` from the JSON on stdout, which is
what `epimem hook session-start` prints; its matchers on lifecycle events are
exact strings, and its timeouts are milliseconds.
"""

from __future__ import annotations

import shlex

from .hooks import HookSpec

LABEL = "Gemini CLI"
NOTE = "Gemini CLI loads a project's settings only in a folder you trust."


def mcp_entry(command: list[str], vault: str, scope: str = "user") -> dict:
    return {"command": command[0], "args": [*command[1:], "--vault", vault, "mcp"]}


def hook_specs(command: list[str], vault: str) -> list[HookSpec]:
    line = shlex.join([*command, "--vault", vault, "hook", "session-start"])

    def handler(name: str) -> dict:
        return {"name": name, "type": "command", "command": line, "timeout": 10000}  # milliseconds

    return [HookSpec("SessionStart", "startup", handler("epimem-session-start")),
            HookSpec("SessionStart", "clear", handler("epimem-session-clear"))]
