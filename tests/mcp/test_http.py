"""`epimem mcp --http` as a real daemon: the token, Host and Origin checks, sessions, two
writers at once, and clients that disconnect mid-call."""

from __future__ import annotations

import json
import stat
import subprocess
import sys

import anyio
import httpx
import pytest
from mcp_support import HttpServer, commits, env, git, http_client, tree_state

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "observe", "arguments": {"observations": [
            {"connects": "prefers-small-pull-requests", "strength": "confirming", "evidence": "Split it."}]}}}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def post(srv: HttpServer, body: dict, **headers: str) -> httpx.Response:
    return httpx.post(srv.url, json=body, headers={**HEADERS, **headers}, timeout=30)


def test_the_token_is_made_once_private_and_required(http_server, mvault):
    path = mvault / ".epimem" / "mcp-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = http_server.token
    assert len(token) >= 32
    assert git(mvault, "check-ignore", ".epimem/mcp-token").strip()  # never committed
    before = tree_state(mvault)
    for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": f"Basic {token}"},
                    {"authorization": token}):
        r = post(http_server, INIT, **headers)
        assert r.status_code == 401, headers
        assert r.headers["www-authenticate"].startswith("Bearer")
        r = post(http_server, CALL, **headers)
        assert r.status_code == 401
    r = httpx.get(http_server.url, timeout=10)
    assert r.status_code == 401
    assert tree_state(mvault) == before
    assert post(http_server, INIT, authorization=f"Bearer {token}").status_code == 200
    # A restart keeps the token: clients configured with it keep working.
    http_server.stop()
    again = HttpServer(mvault)
    try:
        assert again.token == token
    finally:
        again.stop()


def test_host_and_origin_are_checked_against_loopback(http_server):
    auth = {"authorization": f"Bearer {http_server.token}"}
    assert post(http_server, INIT, **auth, origin="http://evil.example").status_code == 403
    assert post(http_server, INIT, **auth, origin="http://127.0.0.1.evil.example:80").status_code == 403
    assert post(http_server, INIT, **auth, host="evil.example").status_code == 421
    assert post(http_server, INIT, **auth, host=f"attacker.example:{http_server.port}").status_code == 421
    assert post(http_server, INIT, **auth, origin=f"http://localhost:{http_server.port}").status_code == 200
    assert post(http_server, INIT, **auth, host=f"localhost:{http_server.port}").status_code == 200


def test_another_address_is_explicit_and_still_needs_the_token(mvault):
    r = subprocess.run([sys.executable, "-m", "epimem", "--vault", str(mvault), "mcp", "--host", "127.0.0.2"],
                       env=env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--host goes with --http" in r.stderr
    srv = HttpServer(mvault, host="127.0.0.2")
    try:
        assert post(srv, INIT).status_code == 401
        assert post(srv, INIT, authorization=f"Bearer {srv.token}").status_code == 200
        assert post(srv, INIT, authorization=f"Bearer {srv.token}", host="evil.example").status_code == 421
    finally:
        err = srv.stop()
    assert "reachable beyond this machine" in err


def test_one_mcp_session_is_one_session(http_server):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.types import Implementation

    def obs(text):
        return {"observations": [{"connects": "new", "strength": "single", "evidence": text}]}

    async def client(mode, name):
        headers = {"Authorization": f"Bearer {http_server.token}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with Client(streamable_http_client(http_server.url, http_client=http), mode=mode,
                              client_info=Implementation(name=name, version="1")) as c:
                first = (await c.call_tool("observe", obs(f"{mode} {name} one"))).structured_content["session"]
                second = (await c.call_tool("observe", obs(f"{mode} {name} two"))).structured_content["session"]
                assert first == second
                return first

    async def main():
        # The handshake versions carry an MCP session id: each client session is its own session.
        a, b = await client("legacy", "same"), await client("legacy", "same")
        assert a != b
        # 2026-07-28 has no sessions: requests count per client name on this daemon.
        c, d, e = await client("auto", "desk"), await client("auto", "desk"), await client("auto", "cursor")
        assert c == d != e
    anyio.run(main)


@pytest.mark.parametrize("kind", ["http", "stdio"])
def test_two_writers_at_once_both_land_as_two_commits(mvault, kind):
    from mcp_support import connect

    before = commits(mvault)
    srv = HttpServer(mvault) if kind == "http" else None

    async def writer(belief, text, results):
        async with connect(kind, mvault, srv) as c:
            r = await c.call_tool("observe", {"observations": [
                {"connects": belief, "strength": "confirming", "evidence": text}]})
            assert not r.is_error, r.content[0].text
            results.append(r.structured_content["commit"])

    async def main():
        results: list[str] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer, "prefers-small-pull-requests", "Asked for two PRs.", results)
            tg.start_soon(writer, "writes-sql-by-hand", "Wrote the report query by hand.", results)
        return results
    try:
        shas = anyio.run(main)
    finally:
        if srv:
            srv.stop()
    assert len(set(shas)) == 2 and commits(mvault) == before + 2
    log = (mvault / "observations" / "2026-11.md").read_text()
    assert "Asked for two PRs." in log and "Wrote the report query by hand." in log
    assert git(mvault, "status", "--porcelain") == ""


def test_a_client_that_disconnects_mid_call_leaves_the_server_serving(http_server, mvault):
    """Each request is cut off right after it is sent: the server keeps serving, and each write
    either landed whole (one commit, the vault clean) or not at all."""
    token = http_server.token
    headers = {**HEADERS, "authorization": f"Bearer {token}"}
    r = post(http_server, INIT, **{"authorization": f"Bearer {token}"})
    sid = r.headers["mcp-session-id"]
    headers["mcp-session-id"] = sid
    headers["mcp-protocol-version"] = "2025-06-18"
    httpx.post(http_server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    before = commits(mvault)
    for i in range(3):
        call = json.loads(json.dumps(CALL))
        call["id"] = 10 + i
        call["params"]["arguments"]["observations"][0]["evidence"] = f"Cut off {i}."
        try:
            httpx.post(http_server.url, json=call, headers=headers, timeout=0.05)
        except httpx.TimeoutException:
            pass  # the client gave up and closed the connection mid-call
    call = json.loads(json.dumps(CALL))
    call["params"] = {"name": "describe", "arguments": {}}

    async def main():
        async with http_client(http_server.url, token) as c:
            r = await c.call_tool("describe", {})
            assert not r.is_error
            # A cut-off call may still finish on the server's side: wait until nothing has moved for 2 s.
            seen, still = -1, 0
            while still < 20:
                n = commits(mvault)
                still = still + 1 if n == seen else 0
                seen = n
                await anyio.sleep(0.1)
    anyio.run(main)
    assert http_server.proc.poll() is None
    landed = commits(mvault) - before
    log = (mvault / "observations" / "2026-11.md").read_text()
    assert landed == sum(f"Cut off {i}." in log for i in range(3))
    assert git(mvault, "status", "--porcelain") == ""


def test_every_scope_but_lifespan_needs_the_token():
    """"Not http" once meant "not checked": a WebSocket scope went straight to the app."""
    from epimem.mcp.http import BearerToken

    reached, sent = [], []

    async def inner(scope, receive, send):
        reached.append(scope["type"])

    async def receive():
        return {"type": "websocket.connect"}

    async def send(message):
        sent.append(message)

    guard = BearerToken(inner, "t" * 43)
    ws = {"type": "websocket", "path": "/mcp", "headers": [(b"host", b"127.0.0.1:8765")]}
    anyio.run(guard, ws, receive, send)
    assert reached == [] and sent == [{"type": "websocket.close", "code": 1008}]
    anyio.run(guard, {**ws, "headers": [(b"authorization", b"Bearer " + b"t" * 43)]}, receive, send)
    anyio.run(guard, {"type": "lifespan"}, receive, send)
    assert reached == ["websocket", "lifespan"]
