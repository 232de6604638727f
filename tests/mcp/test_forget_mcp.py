"""Forgetting is the user's, typed by them (rule 22, SPEC §15): the MCP server offers no way to it.

A client model that wants something gone can only ask: there is no tool that forgets or purges,
`retire` (destructive, asked by the client) keeps the text, and a tool named to look like one is
an error that changes nothing. A belief forgotten by the user is shown as a tombstone."""

from __future__ import annotations

import anyio
from mcp_support import TODAY, commits, connect

from epimem.api.memory import Memory


def test_no_tool_forgets_and_a_forgotten_belief_reads_as_a_tombstone(mvault):
    async def main():
        async with connect("memory", mvault) as c:
            tools = (await c.list_tools()).tools
            for t in tools:
                words = f"{t.name} {t.description}".lower()
                assert "purge" not in words and "forget" not in t.name, t.name
            before = commits(mvault)
            for name in ("forget", "purge", "forget_belief"):
                r = await c.call_tool(name, {"id": "prefers-small-pull-requests", "purge": True})
                assert r.is_error
            assert commits(mvault) == before
            r = await c.call_tool("retire", {"id": "prefers-small-pull-requests", "note": "gone"})
            assert not r.is_error
        # retired by a model (the client asked the user): the text stays, for the user to forget
        text = (mvault / "beliefs" / "prefers-small-pull-requests.md").read_text()
        assert "Prefers small pull requests" in text
        mem = Memory(mvault, today=TODAY)
        p = mem.forget_plan(["prefers-small-pull-requests"])
        mem.forget(p, confirm=p.token)
        async with connect("memory", mvault) as c:
            g = await c.call_tool("get", {"id": "prefers-small-pull-requests"})
            assert not g.is_error
            got = g.structured_content
            assert got["status"] == "retired" and got["title"] == "Forgotten"
            assert "small pull" not in str(got).lower()
            lst = await c.call_tool("list", {})
            assert "prefers-small-pull-requests" not in str(lst.structured_content)

    anyio.run(main)
