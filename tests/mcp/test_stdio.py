"""`epimem mcp` over stdio as a client spawns it: nothing but protocol on stdout, a clear
failure without a vault, and a client that goes away mid-call."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from mcp_support import commits, env, git

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def spawn(root):
    return subprocess.Popen([sys.executable, "-m", "epimem", "--vault", str(root), "mcp"], env=env(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def send(p, *msgs):
    for m in msgs:
        p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()


def test_stdout_carries_only_protocol_messages(mvault):
    p = spawn(mvault)
    calls = [{"jsonrpc": "2.0", "id": 2 + i, "method": "tools/call", "params": {"name": n, "arguments": a}}
             for i, (n, a) in enumerate([("describe", {}), ("recall", {"query": "sql"}),
                                         ("get", {"id": "nope"}), ("mirror", {"mode": "audit"}),
                                         ("observe", {"observations": [{"connects": "writes-sql-by-hand",
                                                                        "strength": "confirming",
                                                                        "evidence": "Wrote SQL."}]})])]
    send(p, INIT, INITIALIZED, *calls)
    out = []
    deadline = time.monotonic() + 120
    while len(out) < 1 + len(calls) and time.monotonic() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        out.append(json.loads(line))  # a stray print would fail here
    p.stdin.close()
    p.wait(timeout=30)
    by_id = {m.get("id"): m for m in out}  # calls run concurrently: answers come as they finish
    assert sorted(by_id) == list(range(1, 2 + len(calls)))
    assert all(m["jsonrpc"] == "2.0" for m in out)
    assert by_id[4]["result"]["isError"] is True and "no belief 'nope'" in by_id[4]["result"]["content"][0]["text"]
    assert by_id[6]["result"]["structuredContent"]["commit"]
    assert p.returncode == 0


def test_without_a_vault_it_fails_with_one_line_on_stderr(tmp_path):
    r = subprocess.run([sys.executable, "-m", "epimem", "--vault", str(tmp_path / "none"), "mcp"], env=env(),
                       input="", capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and r.stdout == ""
    assert "epimem init" in r.stderr and "Traceback" not in r.stderr


def test_a_client_killed_mid_call_leaves_a_whole_vault(mvault):
    """The client sends a write and goes away at once (stdin closed): the server exits, and
    the observation is either one whole commit or absent; nothing is left half-written."""
    before = commits(mvault)
    for i in range(3):
        p = spawn(mvault)
        send(p, INIT, INITIALIZED, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "observe", "arguments": {"observations": [
                {"connects": "prefers-small-pull-requests", "strength": "complicating",
                 "evidence": f"Went away {i}."}], "session": f"gone-{i}"}}})
        time.sleep(0.2 * i)
        p.stdin.close()
        p.stdout.close()
        assert p.wait(timeout=60) is not None
        p.stderr.close()
    log_path = mvault / "observations" / "2026-11.md"
    log = log_path.read_text()
    landed = sum(f"Went away {i}." in log for i in range(3))
    assert commits(mvault) - before == landed
    assert git(mvault, "status", "--porcelain") == ""
    assert not (mvault / ".git" / "index.lock").exists()
    assert not list(mvault.rglob("*.epimem-*.tmp"))


def test_it_exits_when_the_client_hangs_up(mvault):
    """Clients wait for the server to exit after closing its stdin (`gemini mcp list` shows a slow one
    as disconnected). The SDK keeps its copy of stdout open after it returns, so the answers' relay
    must not wait for that pipe's end: with the SDK loaded, the exit takes what the SDK's own takes,
    far below the 10 s the relay once waited for."""
    p = spawn(mvault)
    send(p, INIT, INITIALIZED, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                "params": {"name": "describe", "arguments": {}}})
    answers = [json.loads(p.stdout.readline()) for _ in range(2)]  # the SDK is loaded once a tool answered
    assert {a["id"] for a in answers} == {1, 2}
    p.stdin.close()
    assert p.wait(timeout=8) == 0
