"""`epimem mcp [--http [--host H] [--port P]]`: serve the vault over MCP (SPEC §9).

Over stdio (the default) stdout belongs to the protocol: every message of
ours goes to stderr, and an error before the server starts is one line there
and a non-zero exit, which clients show as "failed to connect".
"""

from __future__ import annotations

import typer

from .common import fail, state

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def mcp_cmd(ctx: typer.Context,
            http: bool = typer.Option(False, "--http", help="Serve streamable HTTP (one daemon for many "
                                                            "clients) instead of stdio."),
            host: str = typer.Option("127.0.0.1", "--host", help="With --http: the address to bind. Anything "
                                                                 "but loopback is reachable from other machines "
                                                                 "(the token is still required)."),
            port: int = typer.Option(8765, "--port", min=1, max=65535, help="With --http: the port.")):
    """Serve the vault to MCP clients (Claude Desktop, Cursor, Codex, Gemini CLI, opencode, Claude Code)."""
    st = state(ctx)
    if not http:
        if host != "127.0.0.1":
            fail("--host goes with --http", code=2)
        from ..mcp import stdio

        raise typer.Exit(stdio.main(st.vault, st.today))
    from ..core.errors import VaultError
    from ..store.paths import resolve_root
    from ..store.vault import Vault

    root = resolve_root(st.vault)
    try:
        Vault(root).require()
    except VaultError as e:
        fail(str(e))
    from ..mcp import server

    srv = server.build(root, today=st.today)
    if host not in LOOPBACK:
        typer.echo(f"epimem: binding {host}: reachable beyond this machine; every request still needs the token",
                   err=True)
    from ..mcp import http as http_transport

    try:
        http_transport.serve(srv, root, host=host, port=port)
    except OSError as e:
        fail(f"cannot serve on {host}:{port}: {e.strerror or e}")


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp_cmd)
