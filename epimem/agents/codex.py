"""Codex CLI: `AGENTS.md`, Agent Skills, `[mcp_servers.epimem]` in `config.toml`, a SessionStart hook.

Codex's hook protocol is Claude Code's (the same stdin fields, `source`
startup/resume/clear/compact, the same `hookSpecificOutput.additionalContext`
answer), so `epimem hook session-start` serves it unchanged and counts only
`startup`. Codex runs a new hook only after the user trusts it (`/hooks`).
"""

from __future__ import annotations

import shlex

from .hooks import HookSpec

LABEL = "Codex"
NOTE = ("Codex runs a new hook only once you trust it: open Codex and accept epimem's hook under /hooks "
        "(and it reads a project's .codex/ only in a project you trust).")


def mcp_entry(command: list[str], vault: str, scope: str = "user") -> dict:
    return {"command": command[0], "args": [*command[1:], "--vault", vault, "mcp"]}


def hook_specs(command: list[str], vault: str) -> list[HookSpec]:
    line = shlex.join([*command, "--vault", vault, "hook", "session-start"])
    handler = {"type": "command", "command": line, "timeout": 10}  # seconds
    # Counted: `startup`. The hook does not count the others, but the context is gone after
    # /clear and a compaction, so it is given again; `resume` keeps it in the transcript.
    return [HookSpec("SessionStart", "startup", handler), HookSpec("SessionStart", "clear|compact", handler)]
