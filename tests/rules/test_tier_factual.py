"""Issue 24, item 3: "factual" is the tier of basis `fact` alone. A behavioural belief at its
0.90 cap is "established" in every reader — the hook, recall, the mirror, the page, MCP."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import anyio

EPIMEM = str(Path(sys.executable).parent / "epimem")


def capped(vault) -> None:
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand rather than through an ORM.",
                     kind="preference", basis="behavioral", permanence="stable", confidence=0.90, pinned=True)
    vault.add_belief(title="Ships on Postgres", statement="The shop's database is Postgres 16.",
                     kind="fact", basis="fact", permanence="stable", pinned=True)


def test_the_tier_of_a_capped_behavioural_belief_everywhere(vault, tmp_path, cli):
    capped(vault)
    root = vault.root

    # CLI: show, list, recall (the JSON and the text).
    show = cli("--vault", root, "belief", "show", "avoids-orms", "--json").json()
    assert show["confidence"] == 0.90 and show["tier"] == "established"
    assert cli("--vault", root, "belief", "show", "ships-on-postgres", "--json").json()["tier"] == "factual"
    listed = {b["id"]: b["tier"] for b in cli("--vault", root, "belief", "list", "--json").json()["beliefs"]}
    assert listed == {"avoids-orms": "established", "ships-on-postgres": "factual"}
    hits = {h["id"]: h["tier"] for h in cli("--vault", root, "recall", "sql orm postgres", "--json").json()["results"]
            if h["type"] == "belief"}
    assert hits["avoids-orms"] == "established" and hits["ships-on-postgres"] == "factual"
    text = cli("--vault", root, "recall", "sql by hand orm").out
    assert "established" in text and "0.90 factual" not in text

    # The session-start hook, as Claude Code runs it (the context cache rebuilt first).
    cli("--vault", root, "index", "sync")
    payload = {"session_id": "s-1", "cwd": str(tmp_path), "hook_event_name": "SessionStart", "source": "resume"}
    r = subprocess.run([EPIMEM, "hook", "session-start", "--vault", str(root)], input=json.dumps(payload),
                       capture_output=True, text=True, timeout=30)
    ctx = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "(established, pinned) Avoids ORMs" in ctx, ctx
    assert "(factual, pinned) Ships on Postgres" in ctx

    # The mirror: the audit's tiers and the page's sections.
    audit = cli("--vault", root, "mirror", "audit", "--json").json()
    assert audit["by_tier"].get("factual") == 1 and audit["by_tier"].get("established") == 1
    page = tmp_path / "page.html"
    assert cli("--vault", root, "mirror", "page", "--out", page).code == 0
    html = page.read_text()
    factual = re.search(r'<section class="tier" id="tier-factual".*?</section>', html, re.S).group(0)
    assert "Ships on Postgres" in factual and "Avoids ORMs" not in factual
    established = re.search(r'<section class="tier" id="tier-established".*?</section>', html, re.S).group(0)
    assert "Avoids ORMs" in established

    # MCP: get, list and describe.
    async def main():
        from mcp import Client

        from epimem.mcp.server import build

        async with Client(build(root)) as c:
            g = (await c.call_tool("get", {"id": "avoids-orms"})).structured_content
            assert g["tier"] == "established"
            rows = (await c.call_tool("list", {})).structured_content["beliefs"]
            assert {b["id"]: b["tier"] for b in rows}["avoids-orms"] == "established"
            d = (await c.call_tool("describe", {})).structured_content
            assert d["beliefs"]["by_tier"].get("factual") == 1

    anyio.run(main)
