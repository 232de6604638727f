"""A mock Anthropic Messages API on 127.0.0.1 for driving the real Claude Code (and the anthropic
SDK's tool runner, tests/integrations) offline.

Claude Code streams: it posts to `/v1/messages?beta=true` with `stream: true` and reads
server-sent events. The mock answers every request the same way a real server would shape it,
logs each request body, and answers the *main* requests (those that carry tools: the
conversation itself, not titles or summaries) from a script:

    with MockAPI([tool_use("Bash", {"command": "epimem --version"}), text("done")]) as api:
        env["ANTHROPIC_BASE_URL"] = api.url
        ...                                  # run claude -p ...
        api.main_requests()                  # the bodies Claude Code sent, in order
        api.tool_results()                   # the tool_result blocks it sent back

A reply may also be a function of the request body (to answer with what the request holds).
When the script runs out, main requests get `text("ok")`.

The anthropic SDK's tool runner holds its conversation as a message thread (`thread: {"type":
"create"}`, then `{"type": "continue", "previous_message_id": …}` with only the new messages and
without `system` and `tools`). The mock holds threads as the server would: a `continue` is
answered, scripted and logged as the whole conversation it continues (`Logged.body`), and what
the client actually sent is `Logged.sent`. An unknown `previous_message_id` is refused with
`thread_not_found`, as the API refuses it, and the SDK replays the history under a new thread.

The server stops when the `with` block ends, and in any case after `lifetime` seconds, so a stuck
test never leaves it running.
Only the standard library is used.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True)
class Reply:
    """One assistant turn: content blocks (`{"type": "text"...}` / `{"type": "tool_use"...}`)."""

    blocks: tuple[dict, ...]

    @property
    def stop_reason(self) -> str:
        return "tool_use" if any(b["type"] == "tool_use" for b in self.blocks) else "end_turn"


def text(s: str) -> Reply:
    return Reply(({"type": "text", "text": s},))


def tool_use(name: str, tool_input: dict, *, say: str | None = None) -> Reply:
    """A turn that calls one tool (Claude Code runs it, then sends the `tool_result` back)."""
    block = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:20], "name": name, "input": tool_input}
    return Reply((({"type": "text", "text": say},) if say else ()) + (block,))


def bash(command: str, description: str = "Run a command") -> Reply:
    return tool_use("Bash", {"command": command, "description": description})


Script = list[Reply | Callable[[dict], Reply]]


@dataclass
class Logged:
    method: str
    path: str
    headers: dict
    body: Any        # the request as the conversation it is (a thread's `continue` with its history)
    sent: Any = None  # the request as the client sent it


THREAD_FIELDS = ("system", "tools")  # what a `continue` takes from the thread it continues


@dataclass
class MockAPI:
    script: Script = field(default_factory=list)
    lifetime: float = 300.0
    requests: list[Logged] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._script = list(self.script)
        self._server: ThreadingHTTPServer | None = None
        self._timer: threading.Timer | None = None
        self._threads: dict[str, dict] = {}  # a reply's id -> the conversation up to and with it

    # --- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> MockAPI:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet: the log is `api.requests`
                pass

            def do_GET(self):
                api._log(self, None)
                if self.path.split("?")[0].rstrip("/").endswith("/v1/models"):
                    return self._json({"data": [{"type": "model", "id": MODEL, "display_name": MODEL,
                                                 "created_at": "2025-01-01T00:00:00Z"}],
                                       "has_more": False, "first_id": MODEL, "last_id": MODEL})
                return self._json({}, 404)

            def do_HEAD(self):
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                path = self.path.split("?")[0]
                thread = body.get("thread") if isinstance(body.get("thread"), dict) else {}
                if thread.get("type") == "continue" and any(k in body for k in THREAD_FIELDS):
                    api._log(self, body)
                    return self._json({"type": "error", "error": {
                        "type": "invalid_request_error",
                        "message": f"a continue takes {' and '.join(THREAD_FIELDS)} from its thread"}}, 400)
                sent, body = body, api._conversation(body) if path.endswith("/v1/messages") else body
                api._log(self, body, sent)
                if path.endswith("/count_tokens"):
                    return self._json({"input_tokens": max(1, len(raw) // 4)})
                if not path.endswith("/v1/messages"):
                    return self._json({"type": "error", "error": {"type": "not_found_error",
                                                                  "message": path}}, 404)
                if body is None:
                    return self._json({"type": "error", "error": {
                        "type": "not_found_error", "message": "thread not found",
                        "details": {"error_code": "thread_not_found"}}}, 404)
                reply = api._next(body)
                message = _message(reply, body)
                if sent.get("thread"):
                    api._hold(message, body)
                if body.get("stream"):
                    return self._stream(reply, body, message["id"])
                return self._json(message)

            def _json(self, obj, status=200):
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: Reply, body: dict, message_id: str):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for event, data in _events(reply, body, message_id):
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self._timer = threading.Timer(self.lifetime, self.close)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None, "use MockAPI as a context manager"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # --- what was asked ----------------------------------------------------------------------

    def add(self, *replies: Reply | Callable[[dict], Reply]) -> None:
        with self._lock:
            self._script.extend(replies)

    def _log(self, handler: BaseHTTPRequestHandler, body: Any, sent: Any = None) -> None:
        with self._lock:
            self.requests.append(Logged(handler.command, handler.path, dict(handler.headers), body,
                                        body if sent is None else sent))

    def _conversation(self, body: dict) -> dict | None:
        """The whole conversation a request is (None: it continues a thread this server never held)."""
        thread = body.get("thread")
        if not isinstance(thread, dict) or thread.get("type") != "continue":
            return body
        with self._lock:
            held = self._threads.get(str(thread.get("previous_message_id")))
        if held is None:
            return None
        whole = {k: v for k, v in body.items() if k != "messages"}
        for k in THREAD_FIELDS:
            if k in held:
                whole[k] = held[k]
        whole["messages"] = held["messages"] + list(body.get("messages") or [])
        return whole

    def _hold(self, message: dict, body: dict) -> None:
        """Keep the conversation up to `message`, for a `continue` from it."""
        turn = {"role": "assistant", "content": message["content"]}
        held = {k: body[k] for k in THREAD_FIELDS if k in body}
        held["messages"] = list(body.get("messages") or []) + [turn]
        with self._lock:
            self._threads[message["id"]] = held

    def _next(self, body: dict) -> Reply:
        if not is_main(body):
            return text("Working session")
        with self._lock:
            item = self._script.pop(0) if self._script else text("ok")
        return item(body) if callable(item) else item

    def messages(self) -> list[dict]:
        with self._lock:
            return [r.body for r in self.requests
                    if r.method == "POST" and r.path.split("?")[0].endswith("/v1/messages")]

    def main_requests(self) -> list[dict]:
        return [b for b in self.messages() if is_main(b)]

    def tool_results(self) -> list[dict]:
        """Every `tool_result` block of the last main request (they accumulate in the history)."""
        reqs = self.main_requests()
        if not reqs:
            return []
        return [b for m in reqs[-1].get("messages", []) if isinstance(m.get("content"), list)
                for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def is_main(body: dict) -> bool:
    """The conversation's own requests list tools; side requests (titles, summaries) do not."""
    return bool(body.get("tools"))


def request_text(body: dict) -> str:
    """All the text of a request (system prompt and messages), for `in` checks."""
    parts: list[str] = []

    def walk(x: Any) -> None:
        if isinstance(x, str):
            parts.append(x)
        elif isinstance(x, dict):
            for k, v in x.items():
                if k in ("text", "content", "system", "messages") or isinstance(v, (list, dict)):
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(body.get("system"))
    walk(body.get("messages"))
    return "\n".join(parts)


def _usage() -> dict:
    return {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0}


def _message(reply: Reply, body: dict) -> dict:
    return {"id": "msg_" + uuid.uuid4().hex[:20], "type": "message", "role": "assistant",
            "model": body.get("model", MODEL), "content": list(reply.blocks),
            "stop_reason": reply.stop_reason, "stop_sequence": None, "usage": _usage()}


def _events(reply: Reply, body: dict, message_id: str):
    start = _message(Reply(()), body) | {"stop_reason": None, "id": message_id}
    yield "message_start", {"type": "message_start", "message": start}
    for i, block in enumerate(reply.blocks):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                          "delta": {"type": "text_delta", "text": block["text"]}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}
            yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                            "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}
