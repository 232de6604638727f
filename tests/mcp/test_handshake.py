"""`epimem mcp` over stdio answers a client's discovery from the SDK's answers of an earlier start
(`.epimem/mcp-handshake.json`) while the SDK loads, and never answers a request twice."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from mcp_support import env

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
DESCRIBE = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "describe", "arguments": {}}}


def session(root, *msgs, expect: int) -> list[dict]:
    """Send `msgs`, read `expect` answers, hang up, and read whatever else comes until the server exits."""
    p = subprocess.Popen([sys.executable, "-m", "epimem", "--vault", str(root), "mcp"], env=env(),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdin.write("".join(json.dumps(m) + "\n" for m in msgs))
    p.stdin.flush()
    out = []
    deadline = time.monotonic() + 120
    while len(out) < expect and time.monotonic() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        out.append(json.loads(line))
    p.stdin.close()
    out += [json.loads(line) for line in p.stdout.read().splitlines()]  # a second answer would show here
    p.wait(timeout=60)
    p.stderr.close()
    assert p.returncode == 0
    return out


def cache(root):
    return json.loads((root / ".epimem" / "mcp-handshake.json").read_text())


def tool_names(answer: dict) -> list[str]:
    return sorted(t["name"] for t in answer["result"]["tools"])


@pytest.mark.slow  # three real server starts: seconds each, run by .ci/run after the default set
def test_the_sdk_s_answers_are_kept_then_replayed_once_each(mvault):
    first = session(mvault, INIT, INITIALIZED, LIST, DESCRIBE, expect=3)
    assert sorted(m["id"] for m in first) == [1, 2, 3]
    kept = cache(mvault)["answers"]
    assert len(kept) == 2  # initialize and tools/list; a tool call is never kept

    # Plant a marker in the kept tool list: the next start must send it (it came from the cache,
    # before the SDK could answer), then learn the SDK's real answer for the start after.
    data = cache(mvault)
    key = next(k for k in data["answers"] if k.startswith("tools/list "))
    data["answers"][key]["tools"].append({"name": "planted-marker", "inputSchema": {"type": "object"}})
    (mvault / ".epimem" / "mcp-handshake.json").write_text(json.dumps(data))

    second = session(mvault, INIT, INITIALIZED, LIST, DESCRIBE, expect=3)
    assert sorted(m["id"] for m in second) == [1, 2, 3]  # one answer per request, no duplicate
    by_id = {m["id"]: m for m in second}
    assert "planted-marker" in tool_names(by_id[2])
    assert by_id[1] == {**first[[m["id"] for m in first].index(1)]}
    assert by_id[3]["result"]["structuredContent"]["beliefs"]  # a tool call still reaches the SDK
    assert "planted-marker" not in json.dumps(cache(mvault))  # corrected for the next start

    third = session(mvault, INIT, INITIALIZED, LIST, expect=2)
    assert tool_names({m["id"]: m for m in third}[2]) == tool_names({m["id"]: m for m in first}[2])


@pytest.mark.slow  # three real server starts
def test_a_cache_of_another_build_or_other_parameters_is_never_replayed(mvault):
    session(mvault, INIT, INITIALIZED, LIST, expect=2)
    data = cache(mvault)
    for answer in data["answers"].values():
        if "tools" in answer:
            answer["tools"].append({"name": "planted-marker", "inputSchema": {"type": "object"}})
    path = mvault / ".epimem" / "mcp-handshake.json"
    path.write_text(json.dumps({**data, "stamp": "another-build"}))
    stale = session(mvault, INIT, INITIALIZED, LIST, expect=2)
    assert "planted-marker" not in json.dumps(stale)

    path.write_text(json.dumps(data))  # the right build, but the client asks with other parameters
    other = {**LIST, "params": {"cursor": None, "_meta": {"progressToken": 7}}}
    answers = session(mvault, INIT, INITIALIZED, other, expect=2)
    assert sorted(m["id"] for m in answers) == [1, 2]
    assert "planted-marker" not in tool_names({m["id"]: m for m in answers}[2])


def test_a_broken_cache_is_ignored_and_rewritten(mvault):
    path = mvault / ".epimem" / "mcp-handshake.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text("{not json")
    answers = session(mvault, INIT, INITIALIZED, LIST, expect=2)
    assert sorted(m["id"] for m in answers) == [1, 2]
    assert len(cache(mvault)["answers"]) == 2


def test_a_ping_is_answered_before_the_sdk_has_loaded_and_only_once(mvault, tmp_path):
    from epimem.mcp.stdio import Handshake

    h = Handshake(tmp_path / "none.json", "stamp")
    ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    assert h.on_request(ping) == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert h.on_answer({"jsonrpc": "2.0", "id": 7, "result": {}}) is False  # the SDK's own is not sent twice
    assert h.answers == {} and not (tmp_path / "none.json").exists()  # nothing kept for it
    h.sdk_ready = True
    assert h.on_request({**ping, "id": 8}) is None  # the SDK answers once it is there
    # and over the wire: one answer per request
    answers = session(mvault, INIT, INITIALIZED, {**ping, "id": 2}, LIST | {"id": 3}, expect=3)
    assert sorted(m["id"] for m in answers) == [1, 2, 3]
    assert {m["id"]: m for m in answers}[2]["result"] == {}
