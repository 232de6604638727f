"""`epimem mcp [--http [--host H] [--port P]]`: serve the vault over MCP (SPEC §9).

Over stdio (the default) stdout belongs to the protocol: every message of
ours goes to stderr, and an error before the server starts is one line there
and a non-zero exit, which clients show as "failed to connect".
"""

from __future__ import annotations

from .common import echo, fail, usage
from .spec import Opt, command

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@command("mcp",
         Opt("--http", type=bool, help="Serve streamable HTTP (one daemon for many clients) instead of stdio."),
         Opt("--host", default="127.0.0.1", metavar="ADDRESS",
             help="With --http: the address to bind. Anything but loopback is reachable from other machines "
                  "(the token is still required)."),
         Opt("--port", type=int, default=8765, min=1, max=65535, metavar="PORT", help="With --http: the port."))
def mcp_cmd(ctx, http, host, port):
    """Serve the vault to MCP clients (Claude Desktop, Cursor, Codex, Gemini CLI, opencode, Claude Code)."""
    if not http:
        if host != "127.0.0.1":
            usage("--host goes with --http")
        from ..mcp import stdio

        # A client waits for the handshake at its own start-up: stdio answers discovery before the
        # SDK has even loaded.
        raise SystemExit(stdio.main(ctx.vault, ctx.today))
    from ..core.errors import VaultError
    from ..store.paths import resolve_root
    from ..store.vault import Vault

    root = resolve_root(ctx.vault)
    try:
        Vault(root).require()
    except VaultError as e:
        fail(str(e))
    from ..mcp import server

    srv = server.build(root, today=ctx.today)
    if host not in LOOPBACK:
        echo(f"epimem: binding {host}: reachable beyond this machine; every request still needs the token",
             err=True)
    from ..mcp import http as http_transport

    try:
        http_transport.serve(srv, root, host=host, port=port)
    except OSError as e:
        fail(f"cannot serve on {host}:{port}: {e.strerror or e}")
