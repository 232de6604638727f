"""`epimem mcp` over stdio: the SDK's server, with a client's discovery answered before the SDK has loaded.

Why this module exists: importing the MCP SDK (its pydantic models of every protocol version it
speaks, starlette, the auth modules) costs more CPU than everything epimem does at start-up
(docs/benchmarks.md, "MCP"). Clients start their MCP servers when they launch and wait for the handshake and the
tool list before the user can type. Those answers (`initialize`, `server/discover`, `tools/list`,
`prompts/list`, `resources/list`, `resources/templates/list`) are fixed for one build of epimem and
the SDK, so the SDK's own answers from an earlier start are kept in `.epimem/mcp-handshake.json` and
replayed at once, while the SDK loads beside them. Every request, those included, still goes to the
SDK in order (its session state is its own); its answer to a request already answered is compared
with the replayed one, kept for the next start when it differs, and not sent twice. The first
*tool call* waits for the SDK as before. A cache written by another build of epimem or the SDK, or
a request with different parameters (another client, another protocol version), is never replayed.

The client's ends of fd 0 and 1 are kept private (`_Wire`); the SDK runs through its public
`MCPServer.run_stdio_async` over fds 0 and 1 made two pipes, one fed by `_pump`, one read by
`_relay`, and diverts them from handlers as it does a terminal's, so a stray print of a handler
can never corrupt the protocol.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO

CACHE_NAME = "mcp-handshake.json"
CACHEABLE = frozenset({"initialize", "server/discover", "tools/list", "prompts/list", "resources/list",
                       "resources/templates/list"})
PING = "ping"  # answered at once while the SDK loads, never kept


def stamp() -> str:
    """What the cached answers are valid for: this epimem's code and the installed SDK.

    Every module of the package counts (a tool's description comes from several), by size and
    modification time: an upgrade or an edit of an editable install changes it."""
    from importlib.metadata import PackageNotFoundError, version

    from .. import __version__

    h = hashlib.sha256(__version__.encode())
    try:
        h.update(version("mcp").encode())
    except PackageNotFoundError:  # the import will fail with its own message
        pass
    pkg = Path(__file__).resolve().parent.parent
    for path in sorted(pkg.rglob("*.py")):
        st = path.stat()
        h.update(f"{path.relative_to(pkg)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:24]


def request_key(msg: dict[str, Any]) -> str | None:
    """The cache key of a discovery request (its method and whole parameters), or None."""
    method = msg.get("method")
    if method not in CACHEABLE or "id" not in msg:
        return None
    return method + " " + json.dumps(msg.get("params"), sort_keys=True, separators=(",", ":"))


class Handshake:
    """The replayed answers and the bookkeeping of which requests were answered early."""

    def __init__(self, path: Path, stamp_: str) -> None:
        self.path = path
        self.stamp = stamp_
        self.answers: dict[str, Any] = {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("stamp") == stamp_ and isinstance(data.get("answers"), dict):
                self.answers = data["answers"]
        except (OSError, ValueError):
            pass  # no cache, or a broken one: every answer comes from the SDK and is cached anew
        self.lock = threading.Lock()
        self.early: dict[str, str] = {}  # id (as JSON) of a request answered from the cache -> its key
        self.pending: dict[str, str] = {}  # id of a discovery request left to the SDK -> its key
        self.sdk_ready = False

    def on_request(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        """The answer to send now for this client message, or None to leave it to the SDK."""
        if msg.get("method") == "ping" and "id" in msg:
            # Always the empty result (the protocol's): a client's health check (`gemini mcp list`
            # pings within 5 s of starting the server) needs no SDK.
            with self.lock:
                if self.sdk_ready:
                    return None
                self.early[json.dumps(msg["id"])] = PING
            return {"jsonrpc": "2.0", "id": msg["id"], "result": {}}
        key = request_key(msg)
        if key is None:
            return None
        rid = json.dumps(msg["id"])
        with self.lock:
            if not self.sdk_ready and key in self.answers:
                self.early[rid] = key
                return {"jsonrpc": "2.0", "id": msg["id"], "result": self.answers[key]}
            self.pending[rid] = key
        return None

    def on_answer(self, msg: dict[str, Any]) -> bool:
        """Whether the SDK's message goes to the client; learns discovery answers for the next start."""
        if "method" in msg or "id" not in msg:
            return True  # a request or notification of the server's own: never an answer to drop
        rid = json.dumps(msg["id"])
        with self.lock:
            key = self.early.pop(rid, None)
            send = key is None
            key = key or self.pending.pop(rid, None)
            if key in (None, PING) or "result" not in msg or self.answers.get(key) == msg["result"]:
                return send
            self.answers[key] = msg["result"]
            data = {"stamp": self.stamp, "answers": self.answers}
        self._save(data)
        return send

    def watching(self) -> bool:
        with self.lock:
            return bool(self.early or self.pending)

    def _save(self, data: dict[str, Any]) -> None:
        from ..store.files import compact_json, write_cache

        try:
            write_cache(self.path, compact_json(data))
        except OSError:
            pass  # a read-only vault serves on; the next start is merely slower


class _Wire:
    """The client's end of the protocol: the private duplicates of fd 0 and 1."""

    def __init__(self) -> None:
        self.inp: BinaryIO = os.fdopen(_divert(0, os.O_RDONLY), "rb", buffering=0)
        self.out: BinaryIO = os.fdopen(_divert(1, os.O_WRONLY), "wb", buffering=0)
        self.lock = threading.Lock()

    def send(self, line: bytes) -> None:
        with self.lock:
            view = memoryview(line)
            while view:
                view = view[self.out.write(view) or 0:]


def _divert(fd: int, flags: int) -> int:
    """A private duplicate of `fd` for the wire; `fd` itself then reads the null device (stdin) or
    writes to stderr (stdout), as the SDK's transport does, so nothing else can touch the wire."""
    import fcntl

    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    if fd == 0:
        null = os.open(os.devnull, flags)
        os.dup2(null, 0)
        os.close(null)
    else:
        sys.stdout.flush()
        os.dup2(2, 1)
    return private


_END = b"\x00epimem: the SDK has stopped\n"  # never a JSON line: the SDK's last word is before it


def _relay(from_sdk: int, wire: _Wire, handshake: Handshake) -> None:
    """What the SDK writes, whole JSON lines, to the client, filtered through the handshake."""
    with os.fdopen(from_sdk, "rb") as lines:
        for line in lines:
            if line == _END:
                return
            if not line.strip():
                continue  # the newline that ends what the SDK left unfinished (see serve)
            if handshake.watching():
                try:
                    msg = json.loads(line)
                except ValueError:
                    msg = None
                if isinstance(msg, dict) and not handshake.on_answer(msg):
                    continue
            wire.send(line if line.endswith(b"\n") else line + b"\n")


def _pump(wire: _Wire, handshake: Handshake, to_sdk: int) -> None:
    """The client's lines, in order, to the SDK; a discovery request answered at once when it can be."""
    try:
        for line in wire.inp:
            try:
                msg = json.loads(line)
            except ValueError:
                msg = None  # the SDK reports a malformed message the way the protocol says
            if isinstance(msg, dict):
                answer = handshake.on_request(msg)
                if answer is not None:
                    wire.send(json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
            view = memoryview(line)
            while view:
                view = view[os.write(to_sdk, view):]
    except OSError:
        pass  # the SDK is gone (it exited or failed to load): nothing left to feed
    finally:
        os.close(to_sdk)  # the client's EOF is the SDK's EOF: the server then exits, as it always did


def serve(root: Path, *, today: str | None = None) -> int:
    """Serve the vault at `root` over this process's stdin and stdout until the client hangs up."""
    handshake = Handshake(root / ".epimem" / CACHE_NAME, stamp())
    wire = _Wire()
    sdk_in, to_sdk = os.pipe()
    from_sdk, sdk_out = os.pipe()
    threading.Thread(target=_pump, args=(wire, handshake, to_sdk), daemon=True, name="mcp-stdin").start()
    relay = threading.Thread(target=_relay, args=(from_sdk, wire, handshake), daemon=True, name="mcp-stdout")
    relay.start()

    import anyio

    from . import server

    srv = server.build(root, today=today)
    with handshake.lock:
        handshake.sdk_ready = True
    # The SDK's own stdio transport, through its public entry point, over fds 0 and 1 made the two
    # pipes: it claims them (and diverts them from handlers) as it claims a terminal's.
    sys.stdout.flush()
    os.dup2(sdk_in, 0)
    os.dup2(sdk_out, 1)
    os.close(sdk_in)
    # The SDK may keep its duplicate of fd 1 open after it returns: the relay stops at a line of
    # ours written after the SDK's last, not at the pipe's end.
    end = os.dup(sdk_out)
    os.close(sdk_out)
    try:
        anyio.run(srv.run_stdio_async)
    finally:
        sys.stdout.flush()
        os.write(end, b"\n" + _END)
        os.close(end)
        relay.join()
    return 0


def main(vault: str | None, today: str | None) -> int:
    """`epimem [--vault V] [--today D] mcp`: what the console script and the CLI both run.

    Reached through the CLI's parser and this module only; an error before serving is one line
    on stderr, which clients show as a failed connection, and nothing on stdout."""
    from ..core.errors import VaultError
    from ..store.paths import resolve_root
    from ..store.vault import Vault

    root = resolve_root(vault)
    try:
        Vault(root).require()
    except VaultError as e:
        sys.stderr.write(f"epimem: error: {e}\n")
        return 1
    try:
        return serve(root, today=today)
    except KeyboardInterrupt:
        return 130
