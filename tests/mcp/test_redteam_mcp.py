"""Red-team over MCP: what a model can do with the tools a client runs without asking the user
(those not marked destructive)."""

from __future__ import annotations

import anyio
from mcp_support import commits, connect
from vaults import count_sessions

from epimem.api.memory import Memory


def test_a_model_cannot_record_a_review_through_a_tool_that_does_not_ask(mvault):
    """Rule 10's review is how the user looks at the tensions left open and at what went stale;
    recording one resets the counter (the skills leave it to the user: `--record` goes through
    the permission prompt). MCP's `mirror` took `record: true` under a non-destructive annotation,
    so a model could make a due review not due without the user seeing anything."""
    mem = Memory(mvault)
    count_sessions(mem, *(f"real-{n}" for n in range(12)))

    async def main():
        async with connect("memory", mvault) as c:
            assert (await c.call_tool("describe", {})).structured_content["review_due"]
            n = commits(mvault)
            await c.call_tool("mirror", {"mode": "audit", "record": True})
            assert commits(mvault) == n
            assert not list((mvault / "reviews").glob("*.md"))
            assert (await c.call_tool("describe", {})).structured_content["review_due"]
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert "record" not in tools["mirror"].input_schema.get("properties", {})
            # recording it is the user's decision, and the tool that does it says so
            assert tools["record_review"].annotations.destructive_hint is True
            m = (await c.call_tool("record_review", {"mode": "audit"})).structured_content
            assert m["recorded"]["review"] and commits(mvault) == n + 1
            assert not (await c.call_tool("describe", {})).structured_content["review_due"]
    anyio.run(main)
