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


def test_a_connection_has_its_own_three_and_names_it_gives_share_one_more(mvault):
    """Rule 9 per session, SPEC §9: the connection is one session, named by the server. The model
    can only choose the `session` argument: after its connection's three it names its own id again
    (refused), then other connections' ids and made-up `mcp-…` names, one per call: those share one
    session's three a day however many it invents, and every entry is accounted for."""
    def obs(i, session=None):
        o = {"connects": "prefers-small-pull-requests", "strength": "complicating", "evidence": f"Sign {i}."}
        return {"observations": [o], **({"session": session} if session else {})}

    async def main():
        async with connect("memory", mvault) as a, connect("memory", mvault) as b:
            mine = [(await a.call_tool("observe", obs(i))) for i in range(3)]
            assert not any(r.is_error for r in mine)
            own = mine[0].structured_content["session"]
            assert own.startswith("mcp-")
            again = await a.call_tool("observe", obs(3, session=own))
            assert again.is_error and "rule 9" in again.content[0].text
            theirs = (await b.call_tool("observe", obs(4))).structured_content["session"]  # b's own: its own three
            refused = []
            for n, name in enumerate([theirs, *(f"mcp-made-up-{k}" for k in range(6))]):
                r = await a.call_tool("observe", obs(10 + n, session=name))
                refused.append(r.is_error)
                assert not r.is_error or "rule 9" in r.content[0].text, r.content[0].text
            # Named from a, b's connection is just a name: b's entry and these share one session's
            # three of the day, however many names a invents.
            assert refused == [False, False, True, True, True, True, True], refused
    anyio.run(main)
    logs = "".join(p.read_text() for p in (mvault / "observations").glob("*.md"))
    assert logs.count("Sign ") == 3 + 1 + 2
