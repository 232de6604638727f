"""Each agent's own CLI (from npm, pinned) sees epimem after `epimem install AGENT`, and not after
`--uninstall`; Gemini CLI and opencode start the real `epimem mcp` and report it connected."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from npm_tools import npm_tool

pytestmark = pytest.mark.e2e

# Pinned: the newest releases that run on Node 20 (`npm view PKG version engines`).
CODEX = ("@openai/codex", "0.171.0", "codex")
GEMINI = ("@google/gemini-cli", "0.61.0", "gemini")
OPENCODE = ("opencode-ai", "1.18.33", "opencode")

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _run(agent_env, exe, *args, stdout_only: bool = False, **extra) -> str:
    proc = subprocess.run([str(exe), *args], cwd=agent_env.project, env=agent_env.environ(**extra),
                          capture_output=True, text=True, timeout=180)
    return ANSI.sub("", proc.stdout if stdout_only else proc.stdout + proc.stderr)


def test_codex_lists_the_server_and_forgets_it(agent_env):
    codex = npm_tool(*CODEX)
    config = agent_env.home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('# my settings\nmodel = "o3"\n')
    agent_env.run("install", "codex")
    listed = json.loads(_run(agent_env, codex, "mcp", "list", "--json", stdout_only=True))
    entry = next(s for s in listed if s["name"] == "epimem")
    assert entry["enabled"] is True and entry["transport"]["type"] == "stdio"
    assert entry["transport"]["command"] == str(agent_env.epimem)
    assert entry["transport"]["args"] == ["--vault", str(agent_env.vault), "mcp"]
    # `codex mcp list` does not start servers; `codex mcp get` reads the same entry back
    assert "transport: stdio" in _run(agent_env, codex, "mcp", "get", "epimem")
    agent_env.run("install", "codex", "--uninstall")
    assert "epimem" not in _run(agent_env, codex, "mcp", "list")
    assert config.read_text() == '# my settings\nmodel = "o3"\n'


def test_gemini_connects_to_the_server_and_forgets_it(agent_env):
    gemini = npm_tool(*GEMINI)
    settings = agent_env.home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = '{\n  // my theme\n  "ui": {"theme": "GitHub"}\n}\n'
    settings.write_text(original)
    agent_env.run("install", "gemini")
    out = _run(agent_env, gemini, "mcp", "list", GEMINI_CLI_TRUST_WORKSPACE="true")
    assert re.search(r"epimem: .*epimem --vault .* mcp \(stdio\) - Connected", out), out
    agent_env.run("install", "gemini", "--uninstall")
    out = _run(agent_env, gemini, "mcp", "list", GEMINI_CLI_TRUST_WORKSPACE="true")
    assert "epimem" not in out, out
    assert settings.read_text() == original


def test_opencode_connects_to_the_server_and_forgets_it(agent_env):
    opencode = npm_tool(*OPENCODE)
    config = agent_env.home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    original = '{\n  // mine\n  "$schema": "https://opencode.ai/config.json",\n  "autoupdate": false\n}\n'
    config.write_text(original)
    agent_env.run("install", "opencode")
    out = _run(agent_env, opencode, "mcp", "list")
    assert re.search(r"epimem\s+connected", out), out
    agent_env.run("install", "opencode", "--uninstall")
    assert "epimem" not in _run(agent_env, opencode, "mcp", "list")
    assert config.read_text() == original


def test_project_scope_is_seen_by_the_cli_run_in_that_project(agent_env):
    opencode = npm_tool(*OPENCODE)
    agent_env.run("install", "opencode", "--scope", "project")
    assert (agent_env.project / "opencode.json").is_file()
    out = _run(agent_env, opencode, "mcp", "list")
    assert re.search(r"epimem\s+connected", out), out
    agent_env.run("install", "opencode", "--scope", "project", "--uninstall")
    # opencode adds its own "$schema" to a config it reads: that stays, epimem's entry goes
    assert "epimem" not in (agent_env.project / "opencode.json").read_text()
    assert not (agent_env.project / "AGENTS.md").exists()
