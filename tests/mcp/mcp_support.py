"""Helpers of the MCP tests: the real SDK client in process, and `epimem mcp` as a real process
(stdio and HTTP). (Not `conftest`: tests/e2e has a conftest module too.)"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

TODAY = "2026-11-30"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def tree_state(root: Path) -> tuple[str, str, dict[str, bytes]]:
    """HEAD, `git status`, and every vault file's bytes: what "the vault is untouched" compares."""
    files = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if p.is_file() and rel.parts[0] not in (".git", ".epimem"):
            files[str(rel)] = p.read_bytes()
    return git(root, "rev-parse", "HEAD").strip(), git(root, "status", "--porcelain"), files


def seed(vault) -> None:
    """Three beliefs and one contradiction on record: the vault the MCP tests work on."""
    vault.add_belief(title="Prefers small pull requests", statement="Splits work into small, reviewable PRs.",
                     kind="workflow", basis="behavioral", permanence="durable", tags=["code-review"])
    vault.add_belief(title="Thinks out loud before deciding", statement="Talks options through at length.",
                     kind="trait", basis="interpretive", permanence="unknown", tags=["decision-making"])
    vault.add_belief(title="Writes SQL by hand", statement="Prefers hand-written SQL over an ORM.",
                     kind="preference", basis="self-report", permanence="stable", scope="billing")
    vault.observe([{"connects": "thinks-out-loud-before-deciding", "strength": "contradicting",
                    "evidence": "Decided on the schema in one minute without discussion.", "session": "s0"}])


def env() -> dict[str, str]:
    return {**os.environ, "EPIMEM_TODAY": TODAY}


def stdio_params(root: Path):
    from mcp import StdioServerParameters

    return StdioServerParameters(command=sys.executable, args=["-m", "epimem", "--vault", str(root), "mcp"],
                                 env=env())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    def __init__(self, root: Path, host: str = "127.0.0.1"):
        self.root, self.host, self.port = root, host, free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "epimem", "--vault", str(root), "mcp", "--http", "--host", host,
             "--port", str(self.port)],
            env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"epimem mcp --http exited: {self.proc.stderr.read()}")
            try:
                with socket.create_connection((host, self.port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("epimem mcp --http did not listen within 60 s")

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/mcp"

    @property
    def token(self) -> str:
        return (self.root / ".epimem" / "mcp-token").read_text().strip()

    def stop(self) -> str:
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err


@asynccontextmanager
async def http_client(url: str, token: str | None):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with create_mcp_http_client(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http)) as c:
            yield c


@asynccontextmanager
async def connect(kind: str, root: Path, server=None):
    """A real SDK client over `kind`: "memory" (in process), "stdio" or "http" (real subprocesses)."""
    from mcp import Client

    if kind == "memory":
        from epimem.mcp.server import build

        async with Client(server or build(root, today=TODAY)) as c:
            yield c
    elif kind == "stdio":
        import sys

        from mcp.client.stdio import stdio_client

        # The server's stderr goes where this test's does now: the SDK's default is the sys.stderr
        # of the moment it was first imported, and a test run under capsys (the `cli` fixture) that
        # imported it left a capture buffer there, with no fileno for the next test's subprocess.
        async with Client(stdio_client(stdio_params(root), errlog=sys.stderr)) as c:
            yield c
    else:
        srv = server or HttpServer(root)
        try:
            async with http_client(srv.url, srv.token) as c:
                yield c
        finally:
            if server is None:
                srv.stop()
