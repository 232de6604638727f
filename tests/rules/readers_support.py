"""What the rule 21 and 23 tests share: a model's hand edit, and every front end's reading of a belief.

The adversary is a model with an editor and a shell (Claude Code's Edit and Bash tools): it
edits a belief file in place, as the Edit tool does, then reads it back through each front
end a user or a model has — the CLI as a skill runs it, the session-start hook as Claude Code
runs it, the MCP server through the SDK's own client, the page, the export.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TODAY = "2026-11-30"
EPIMEM = str(Path(sys.executable).parent / "epimem")


def edit_in_place(path: Path, old: str, new: str) -> None:
    """What Claude Code's Edit tool does: the file rewritten in place, one string replaced."""
    text = path.read_text(encoding="utf-8")
    assert old in text, (old, text)
    with open(path, "r+", encoding="utf-8") as fh:
        fh.write(text.replace(old, new, 1))
        fh.truncate()


def hook_context(root: Path, cwd: Path) -> str:
    """The session-start hook's additionalContext, the hook run as Claude Code runs it, after the
    context cache has caught up with the edit (a `resume`: nothing is counted)."""
    from epimem.store.context_cache import refresh_context

    refresh_context(root)  # what the hook's background refresh does once it sees the edit
    r = subprocess.run([EPIMEM, "hook", "session-start", "--vault", str(root)],
                       input=json.dumps({"source": "resume", "cwd": str(cwd)}), capture_output=True, text=True,
                       timeout=30, env={**os.environ, "EPIMEM_TODAY": TODAY})
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"] if r.stdout else ""


async def mcp_reads(root: Path, belief_id: str) -> dict[str, str]:
    """Every MCP reader of a belief, through the SDK's client: each one's whole answer as text."""
    from mcp import Client

    from epimem.mcp.server import build

    out: dict[str, str] = {}
    async with Client(build(root, today=TODAY)) as c:
        for name, args in (("get", {"id": belief_id}), ("list", {}), ("describe", {}),
                           ("recall", {"query": "orms sql"}), ("mirror", {"mode": "portrait"}),
                           ("mirror", {"mode": "gut-check"}), ("mirror", {"mode": "audit"})):
            r = await c.call_tool(name, args)
            assert not r.is_error, r.content[0].text
            out[f"{name} {args.get('mode', '')}".strip()] = r.content[0].text
        for uri in (f"epimem://belief/{belief_id}", f"epimem://context?cwd={root}", "epimem://audit"):
            out[uri] = (await c.read_resource(uri)).contents[0].text
    return out


def export_records(cli, root: Path) -> list[dict]:
    r = cli("--vault", root, "export")
    assert r.code == 0, r.err
    return [json.loads(line) for line in r.out.splitlines()]


def page(cli, root: Path, tmp: Path) -> str:
    out = tmp / "page.html"
    r = cli("--vault", root, "mirror", "page", "--out", out)
    assert r.code == 0, r.err
    return out.read_text(encoding="utf-8")
