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
    # What the README says: a folder Gemini CLI does not trust yet suppresses every server...
    out = _run(agent_env, gemini, "mcp", "list")
    assert re.search(r"epimem: .*epimem --vault .* mcp \(stdio\) - Disabled", out), out
    assert "untrusted" in out
    # ...and in a trusted one the real `epimem mcp` answers.
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


class _GeminiAPI:
    """A Gemini API on loopback that records every request and answers each with "ok"."""

    def __init__(self):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        bodies = self.bodies = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length") or 0)).decode()
                bodies.append(body)
                answer = {"candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"},
                                          "finishReason": "STOP", "index": 0}]}
                data = json.dumps(answer).encode()
                if "alt=sse" in self.path:
                    data = b"data: " + data + b"\r\n\r\n"
                self.send_response(200)
                self.send_header("content-type", "text/event-stream" if "alt=sse" in self.path else "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_a_gemini_session_starts_with_the_vaults_context_and_is_counted(agent_env):
    import os
    import signal
    import time

    gemini = npm_tool(*GEMINI)
    agent_env.run("belief", "add", "--title", "Prefers small commits", "--kind", "preference",
                  "--statement", "Keeps each commit to one change.", "--confidence", "0.6",
                  "--basis", "behavioral", "--permanence", "durable")
    agent_env.run("install", "gemini")
    # An API key login, so that Gemini CLI talks to the mock instead of asking how to log in.
    settings = agent_env.home / ".gemini" / "settings.json"
    settings.write_text(settings.read_text().replace(
        "{\n", '{\n  "security": {"auth": {"selectedType": "gemini-api-key"}},\n', 1))
    api = _GeminiAPI()
    proc = subprocess.Popen([str(gemini), "-p", "hello"], cwd=agent_env.project, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=agent_env.environ(GEMINI_CLI_TRUST_WORKSPACE="true", GEMINI_API_KEY="dummy",
                                                  GOOGLE_GEMINI_BASE_URL=api.url))
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not any("Prefers small commits" in b for b in api.bodies):
            if proc.poll() is not None:
                break
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        api.close()
    seen = [b for b in api.bodies if "Prefers small commits" in b]
    assert seen, f"{len(api.bodies)} requests, none with the hook's context"
    assert "<hook_context>" in seen[0]  # Gemini CLI's wrapping of a SessionStart hook's additionalContext
    count = json.loads((agent_env.vault / "state" / "sessions.json").read_text())["count"]
    assert count == 1  # `gemini -p` is a startup: counted once


def _codex_exec(agent_env, codex, prompt: str, until) -> None:
    """`codex exec PROMPT` with its model unreachable, stopped once `until()` holds (or 90 s)."""
    import os
    import signal
    import time

    provider = ('model_providers.offline={name="offline",base_url="http://127.0.0.1:9/v1",wire_api="responses",'
                'env_key="OPENAI_API_KEY",request_max_retries=0,stream_max_retries=0}')
    proc = subprocess.Popen([str(codex), "exec", "--skip-git-repo-check", "-c", provider,
                             "-c", "model_provider=offline", prompt],
                            cwd=agent_env.project, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=agent_env.environ(OPENAI_API_KEY="dummy"))
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None and not until():
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def _codex_hooks(agent_env, codex) -> list[dict]:
    """The hooks Codex itself discovered for the project, from its app server's `hooks/list`."""
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t",
                                                                                              "version": "1"}}},
                {"jsonrpc": "2.0", "method": "initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(agent_env.project)]}}]
    proc = subprocess.Popen([str(codex), "app-server"], cwd=agent_env.project, env=agent_env.environ(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        proc.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        proc.stdin.flush()
        for line in proc.stdout:
            msg = json.loads(line)
            if msg.get("id") == 2:
                return [h for d in msg["result"]["data"] for h in d["hooks"]]
    finally:
        proc.kill()
        proc.wait(timeout=30)
    return []


def test_a_codex_session_runs_the_trusted_hook_counts_it_and_gets_the_context(agent_env):
    codex = npm_tool(*CODEX)
    agent_env.run("belief", "add", "--title", "Prefers small commits", "--kind", "preference",
                  "--statement", "Keeps each commit to one change.", "--confidence", "0.6",
                  "--basis", "behavioral", "--permanence", "durable")
    agent_env.run("install", "codex")
    hooks = _codex_hooks(agent_env, codex)
    assert sorted(h["matcher"] for h in hooks) == ["clear|compact", "startup"]
    assert all(h["eventName"] == "sessionStart" and h["trustStatus"] == "untrusted" for h in hooks)
    # What the user does under /hooks: trust them (Codex records the hash in config.toml).
    config = agent_env.home / ".codex" / "config.toml"
    config.write_text(config.read_text() + "".join(
        f'\n[hooks.state.{json.dumps(h["key"])}]\ntrusted_hash = "{h["currentHash"]}"\n' for h in hooks))
    sessions = agent_env.vault / "state" / "sessions.json"
    rollouts = agent_env.home / ".codex" / "sessions"

    def context_logged() -> bool:
        return any("Prefers small commits" in p.read_text() for p in rollouts.rglob("rollout-*.jsonl"))

    _codex_exec(agent_env, codex, "hello there", context_logged)
    assert json.loads(sessions.read_text())["count"] == 1
    rollout = next(rollouts.rglob("rollout-*.jsonl"))
    assert "Prefers small commits" in rollout.read_text()  # the hook's context went into the model's input
    from epimem.claude.transcript import read_transcript

    assert [t.text for t in read_transcript(rollout).human] == ["hello there"]  # not the hook's context


def test_a_real_codex_rollout_feeds_the_session_end_pass(agent_env):
    """The rollout a real `codex exec` writes (its model unreachable: the log is written before the
    first answer) is read by the Codex adapter, and the user's stated preference is recorded."""
    codex = npm_tool(*CODEX)
    agent_env.run("install", "codex")  # so that the rollout holds AGENTS.md instructions too
    prompt = "Add a retry to the client. I prefer small commits with one change each."
    rollouts = agent_env.home / ".codex" / "sessions"
    _codex_exec(agent_env, codex, prompt,
                lambda: any(prompt in p.read_text() for p in rollouts.rglob("rollout-*.jsonl")))
    rollout = next(p for p in rollouts.rglob("rollout-*.jsonl") if prompt in p.read_text())
    out = agent_env.run("transcript", str(rollout), "--json").stdout
    report = json.loads(out)
    assert len(report["observations"]) == 1 and report["commit"], out
    log = "".join(p.read_text() for p in (agent_env.vault / "observations").glob("*.md"))
    assert 'Said in a Codex session: "I prefer small commits with one change each."' in log
    assert "AGENTS.md" not in log  # the instructions Codex put in a user message are not the user
