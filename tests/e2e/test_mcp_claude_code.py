"""The MCP server with the real Claude Code: registered by `epimem install claude-code --mcp`,
listed as connected by `claude mcp list`, and a model's `mcp__epimem__recall` call answered
from the vault (the model is the mock Messages API on 127.0.0.1)."""

from __future__ import annotations

import json

import pytest
from mock_api import text, tool_use

pytestmark = pytest.mark.e2e


def seeded(cc):
    vault = cc.home / "vault"
    cc.epimem("--vault", str(vault), "init")
    cc.epimem("--vault", str(vault), "belief", "add", "--title", "Prefers small pull requests",
              "--statement", "Splits work into small, reviewable PRs.", "--kind", "workflow",
              "--basis", "behavioral", "--permanence", "durable")
    return vault


@pytest.mark.parametrize("scope", ["user", "project"])
def test_claude_mcp_list_shows_epimem_connected(claude_code, scope):
    cc = claude_code
    vault = seeded(cc)
    cc.epimem("--vault", str(vault), "install", "claude-code", "--scope", scope, "--mcp")
    if scope == "project":
        # The project's own server, in its entry of ~/.claude.json (Claude Code's local scope): nothing
        # committed, no approval to wait for, and this machine's vault (not the default one) reached.
        assert not (cc.project / ".mcp.json").exists()
    r = cc.run_binary("mcp", "list", timeout=120)
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("epimem:")), "")
    assert "Connected" in line, r.stdout + r.stderr


def test_a_model_calls_mcp_epimem_recall_and_gets_the_vault(claude_code):
    cc = claude_code
    vault = seeded(cc)
    cc.epimem("--vault", str(vault), "install", "claude-code", "--mcp")
    cc.api.add(tool_use("mcp__epimem__recall", {"query": "small pull requests", "limit": 3}),
               text("You prefer small PRs."))
    run = cc.claude("-p", "what do you know about how I like PRs?", "--allowedTools", "mcp__epimem__recall")
    assert run.returncode == 0, run.explain()
    results = cc.api.tool_results()
    assert len(results) == 1 and not results[0].get("is_error"), results
    body = json.dumps(results[0]["content"])
    assert "prefers-small-pull-requests" in body
    assert run.result == "You prefer small PRs."
