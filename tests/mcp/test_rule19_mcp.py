"""Rule 19 over MCP (issue 24, item 1): neither the `session` argument nor reconnecting over HTTP
makes a session the vault counted. A client's connections together move a belief one step a day;
a session id the hook counted, passed as `session`, moves it once."""

from __future__ import annotations

import anyio
import pytest
from mcp_support import HttpServer, connect

BELIEF = "prefers-small-pull-requests"


def confirming(text: str, session: str | None = None) -> dict:
    args: dict = {"observations": [{"connects": BELIEF, "strength": "confirming", "basis": "behavioral",
                                    "evidence": text}]}
    if session is not None:
        args["session"] = session
    return args


async def confidence(c) -> float:
    return (await c.call_tool("get", {"id": BELIEF})).structured_content["confidence"]


@pytest.mark.seed_rules
def test_the_session_argument_names_no_counted_session(mvault):
    async def main():
        async with connect("memory", mvault) as c:
            before = await confidence(c)
            refused = []
            for n in range(12):
                r = await c.call_tool("observe", confirming(f"Split the change into small PRs ({n}).", f"made-up-{n}"))
                refused.append(r.is_error)
                assert not r.is_error or "rule 9" in r.content[0].text, r.content[0].text
            # the names nobody counted share one session's three a day (rule 9; the vault's own
            # entry of today is among them): the first few are recorded, the rest refused
            assert 1 <= refused.index(True) <= 3 and all(refused[refused.index(True):]), refused
            assert await confidence(c) == round(before + 0.05, 2)
    anyio.run(main)


@pytest.mark.seed_rules
def test_a_session_the_hook_counted_moves_it_once_over_mcp(mvault):
    from epimem.api.memory import Memory

    Memory(mvault).session_start("startup", session="hook-counted-1")

    async def main():
        async with connect("memory", mvault) as c:
            before = await confidence(c)
            await c.call_tool("observe", confirming("Asked for two small PRs.", "hook-counted-1"))
            await c.call_tool("observe", confirming("Asked for three small PRs.", "hook-counted-1"))
            assert await confidence(c) == round(before + 0.05, 2)
            # the connection's own step of the day is still there, once
            await c.call_tool("observe", confirming("Split the docs change off."))
            await c.call_tool("observe", confirming("Split the tests change off."))
            assert await confidence(c) == round(before + 0.10, 2)
    anyio.run(main)


def test_reconnecting_over_http_is_not_a_new_step(mvault):
    srv = HttpServer(mvault)
    try:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        async def once(n: int) -> tuple[float, str]:
            # The handshake protocol versions give each connection an MCP session id of its own.
            headers = {"Authorization": f"Bearer {srv.token}"}
            async with create_mcp_http_client(headers=headers) as http, \
                    Client(streamable_http_client(srv.url, http_client=http), mode="legacy") as c:
                res = await c.call_tool("observe", confirming(f"Kept the PR small again ({n})."))
                assert not res.is_error, res.content[0].text
                r = res.structured_content
                return await confidence(c), r["session"]

        async def main():
            seen = [await once(n) for n in range(4)]
            assert len({s for _, s in seen}) == 4  # four MCP sessions (rule 9 bounds each)...
            assert {c for c, _ in seen} == {seen[0][0]}  # ...and one step between them (rule 19)
        anyio.run(main)
    finally:
        srv.stop()
