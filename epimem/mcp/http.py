"""`epimem mcp --http`: streamable HTTP, one daemon for many clients, behind a bearer token.

Three checks stand before any tool runs, outermost first:

1. the bearer token of `.epimem/mcp-token` (made on first start, mode 0600),
   compared in constant time; a request without it gets 401 (a WebSocket
   handshake, 403) and reaches nothing, so it can neither read nor write
   the vault;
2. the Host header (the SDK's transport security): only the loopback names,
   plus the `--host` the user chose explicitly, so a page on another site
   that resolves its own name to 127.0.0.1 (DNS rebinding) is refused;
3. the Origin header, when a browser sends one: loopback origins only.

The token matters even on loopback: any local process, and any web page
through the browser, can reach 127.0.0.1.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import sys
from pathlib import Path

from mcp.server.transport_security import TransportSecuritySettings

from ..store.vault import INTERNAL

TOKEN_FILE = "mcp-token"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def token_path(root: str | os.PathLike) -> Path:
    return Path(root) / INTERNAL / TOKEN_FILE


def read_or_create_token(root: str | os.PathLike) -> str:
    """The server's token: read from `.epimem/mcp-token`, or made there on first start.

    Not a vault note (`.epimem/` is git-ignored and never committed), so it is
    not written through the transaction: the file is created 0600 before a
    byte is in it and linked into place, so no other user ever sees a partial
    or world-readable token, and of two servers starting at once one makes it
    and the other reads it.
    """
    path = token_path(root)
    try:
        token = path.read_text(encoding="ascii").strip()
        if len(token) >= 32:
            _tighten(path)
            return token
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError):
        pass  # unreadable or not ours: replaced below
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    tmp = path.parent / f".{TOKEN_FILE}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(token + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            existing = path.read_text(encoding="ascii").strip()
            if len(existing) >= 32:
                return existing  # another server made it first
            os.replace(tmp, path)  # a short or empty token is no token
    finally:
        tmp.unlink(missing_ok=True)
    return token


def _tighten(path: Path) -> None:
    try:
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
    except OSError:
        pass


def security(host: str) -> TransportSecuritySettings:
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*",
               "http://127.0.0.1", "http://localhost", "http://[::1]"]
    if host not in LOOPBACK and host not in ("0.0.0.0", "::"):
        # The address the user bound explicitly is a name clients may use too.
        name = f"[{host}]" if ":" in host else host
        hosts += [name, f"{name}:*"]
        origins += [f"http://{name}", f"http://{name}:*"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=hosts, allowed_origins=origins)


class BearerToken:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`."""

    def __init__(self, app, token: str):
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":  # the session manager starts and stops through it
            await self.app(scope, receive, send)
            return
        given = b""
        for k, v in scope.get("headers") or ():
            if k == b"authorization":
                given = v
                break
        scheme, _, value = given.partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), self._token):
            if scope["type"] != "http":
                # A WebSocket upgrade is not a route today, but "not http" must never mean
                # "not checked": a later SDK (or a route of ours) that speaks it would
                # otherwise be open to every local process and web page. Closing before
                # accept makes the server answer the handshake with 403.
                await send({"type": "websocket.close", "code": 1008})
                return
            body = json.dumps({"error": "unauthorized",
                               "error_description": "a bearer token is required: the one in .epimem/mcp-token"
                               }).encode()
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"www-authenticate", b'Bearer realm="epimem"'),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def app(server, root: str | os.PathLike, host: str = "127.0.0.1"):
    """The ASGI app: the SDK's streamable HTTP app behind the token."""
    token = read_or_create_token(root)
    inner = server.streamable_http_app(transport_security=security(host), host=host)
    return BearerToken(inner, token)


def serve(server, root: str | os.PathLike, host: str = "127.0.0.1", port: int = 8765) -> None:
    import uvicorn

    asgi = app(server, root, host)
    shown = f"[{host}]" if ":" in host else host
    sys.stderr.write(f"epimem: MCP over streamable HTTP at http://{shown}:{port}/mcp "
                     f"(bearer token in {token_path(root)})\n")
    sys.stderr.flush()
    uvicorn.run(asgi, host=host, port=port, log_level="warning", lifespan="on")
