"""Red-team round on rules 14–23 and SPEC §14–§15: a careless or sycophantic model (or a tool
writing beside it) going around a rule through the commands the skills allow, MCP's tools, the
memory tool, the inbox and the importers. Each test is one way around, through exactly that path.
(Round one, rules 1–13: test_redteam_rules.py.)"""

from __future__ import annotations

import subprocess

import anyio
from readers_support import edit_in_place, page
from test_rule23_readers_redact import leaks, stored_leaks

TODAY = "2026-11-30"
TOKEN = "ghp_Zq7Xw9Pk3Lm5Nb8Vc2Rt6Yu1Io4Ea0Sd3Fg7Hj"


def _git(root, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def _plain_commit(root, message: str) -> None:
    """A commit epimem did not make: Obsidian's git plugin, a `git commit -am` by hand, a push
    from another machine that `sync` merged. Its message is whatever that tool or person typed."""
    _git(root, "-c", "user.name=Obsidian", "-c", "user.email=o@example.com", "commit", "-qam", message)


# --- rule 23: a commit message is read back too -------------------------------------------------

def test_a_secret_in_a_commit_message_epimem_did_not_write_is_redacted_on_every_history_reader(vault, cli, tmp_path):
    """epimem redacts the messages of the commits it makes; a belief's history also lists the
    commits other tools made to its file, and their subjects went out as git holds them: `epimem
    history` (text and `--json`), MCP's `history` and `get` (which carries the history), the
    page's timeline (each step's label) and the history cache under `.epimem/`."""
    from mcp import Client

    from epimem.mcp.server import build

    root = vault.root
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference", basis="behavioral",
                     permanence="durable", confidence=0.30)
    edit_in_place(root / "beliefs" / "avoids-orms.md", "confidence: 0.30", "confidence: 0.40")
    _plain_commit(root, f"vault backup: rotated the CI token {TOKEN}")
    seen = {}
    for args in (("history", "avoids-orms"), ("history", "avoids-orms", "--json")):
        r = cli("--vault", root, *args)
        assert r.code == 0, r.err
        seen[" ".join(args)] = r.out + r.err
    assert "rotated the CI token [REDACTED:github-token]" in seen["history avoids-orms"]

    async def mcp():
        async with Client(build(root, today=TODAY)) as c:
            for name in ("history", "get"):
                r = await c.call_tool(name, {"id": "avoids-orms"})
                assert not r.is_error, r.content[0].text
                seen[f"mcp {name}"] = r.content[0].text
    anyio.run(mcp)
    seen["page"] = page(cli, root, tmp_path)
    assert {k: leaks(v) for k, v in seen.items()} == {k: [] for k in seen}
    assert stored_leaks(root) == []
    assert TOKEN in _git(root, "log", "-1", "--format=%s")  # the history itself is the user's (forget --purge-text)
