"""The real Claude Code, offline: a temporary HOME, a mock Messages API, and helpers to read what it did.

    cc = ClaudeCode(claude_binary(), tmp_path, api)    # or the `claude_code` fixture
    cc.epimem("install", "claude-code")                # the epimem CLI, same HOME and PATH
    run = cc.claude("-p", "hello")                      # claude, JSON output, debug log
    run.result, run.session_id, run.denials, run.hook_runs("SessionStart")

`claude_binary(version)` installs `@anthropic-ai/claude-code@version` from npm once
(tests/npm_tools.py) and skips with npm's words when it cannot. Nothing reaches the network: the
API is the mock on 127.0.0.1, and Claude Code's other traffic is switched off by its own
variables (docs/claude-code.md).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mock_api import MockAPI
from npm_tools import cache_dir, npm_tool

# The npm cache is the developer's, not a test's: tests/conftest.py points HOME at a temporary
# folder for every test, and a binary installed there (380 MB) would be installed again each time.
os.environ.setdefault("EPIMEM_TEST_CACHE", str(cache_dir()))

CURRENT = "2.1.332"  # pinned: later versions declare node>=22 and npm on Node 20 would pick another
BEFORE_ARGS = "2.1.138"  # the last version that ignores a hook's "args" (docs/claude-code.md)
EPIMEM = Path(sys.executable).parent / "epimem"  # this environment's console script


def claude_binary(version: str = CURRENT) -> Path:
    return npm_tool("@anthropic-ai/claude-code", version, "claude")


# 2.1.332: "Hooks: SessionStart:startup [COMMAND] (plugin NAME) finished with status 0 (130ms)";
# a SessionEnd hook: "SessionEnd:other [COMMAND] completed with status 0".
_HOOK_RUN = re.compile(r"(?:Hooks?: |\] )([A-Z][A-Za-z]+):(\S*) \[(.*?)\](?: \(plugin (\S+)\))? "
                       r"(?:finished|completed) with status (\d+)(?: \((\d+)ms\))?")
# Older versions log only the outcome: 'Hook SessionStart:startup (SessionStart) success:' / 'error'.
_HOOK_OUTCOME = re.compile(r"\bHook (\w+):(\S+) \(\w+\) (success|error|non-blocking error|blocking error)")


@dataclass
class HookRun:
    event: str
    matcher: str
    command: str
    status: int
    ms: int          # -1: not logged
    plugin: str = ""  # the plugin the hook came from, "" for settings.json


@dataclass
class ClaudeRun:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    debug: str
    data: dict = field(default_factory=dict)

    @property
    def result(self) -> str:
        return self.data.get("result") or ""

    @property
    def session_id(self) -> str:
        return self.data.get("session_id") or ""

    @property
    def denials(self) -> list:
        return self.data.get("permission_denials") or []

    def hook_runs(self, event: str | None = None) -> list[HookRun]:
        runs = [HookRun(m[1], m[2], m[3], int(m[5]), int(m[6] or -1), m[4] or "")
                for m in _HOOK_RUN.finditer(self.debug)]
        if not runs:  # status 1 stands for any failure there; the time is unknown (-1)
            runs = [HookRun(m[1], m[2], "", 0 if m[3] == "success" else 1, -1)
                    for m in _HOOK_OUTCOME.finditer(self.debug)]
        return [r for r in runs if event is None or r.event == event]

    def explain(self) -> str:
        """What to print when an assertion fails."""
        tail = "\n".join(self.debug.splitlines()[-60:])
        return (f"claude {' '.join(self.args)} -> {self.returncode}\nstdout: {self.stdout[-3000:]}\n"
                f"stderr: {self.stderr[-2000:]}\ndebug (tail):\n{tail}")


class ClaudeCode:
    """One user's machine: HOME, a project folder, PATH, and the mock API Claude Code talks to."""

    def __init__(self, binary: Path, base: Path, api: MockAPI, *, epimem_on_path: bool = True):
        self.binary = Path(binary)
        self.api = api
        self.home = base / "home"
        self.project = base / "project"
        self.home.mkdir(parents=True, exist_ok=True)
        self.project.mkdir(parents=True, exist_ok=True)
        (self.home / ".gitconfig").write_text("[user]\n\tname = Test User\n\temail = test@example.invalid\n")
        self._runs = 0
        self.extra_env: dict[str, str] = {}
        # Claude Code itself is a native binary; it needs neither node nor the venv on PATH.
        path = ["/usr/local/bin", "/usr/bin", "/bin"]
        if epimem_on_path:
            path.insert(0, str(EPIMEM.parent))
        self.path = os.pathsep.join(path)

    @property
    def default_vault(self) -> Path:
        return self.home / ".local" / "share" / "epimem" / "vault"

    def env(self) -> dict[str, str]:
        keep = ("PYTHONPATH", "LANG", "LC_ALL", "TMPDIR", "EPIMEM_TEST_CACHE")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env.update({
            "HOME": str(self.home),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "PATH": self.path,
            "GIT_CONFIG_NOSYSTEM": "1",
            "ANONYMIZED_TELEMETRY": "False",
            "EPIMEM_TODAY": "2026-11-30",
            "EPIMEM_TEST_CLOCK": "1",  # rule 20's test-only switch: the replayed day dates writes too
            "ANTHROPIC_BASE_URL": self.api.url,
            "ANTHROPIC_AUTH_TOKEN": "dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "SHELL": "/bin/bash",
        })
        env.update(self.extra_env)
        return env

    def epimem(self, *args: str, check: bool = True, cwd: Path | None = None,
               input: str | None = None) -> subprocess.CompletedProcess:
        """The epimem CLI as this user runs it (by path: it may be off Claude Code's PATH)."""
        proc = subprocess.run([str(EPIMEM), *args], cwd=cwd or self.project, env=self.env(),
                              capture_output=True, text=True, input=input, timeout=120)
        if check:
            assert proc.returncode == 0, f"epimem {' '.join(args)}: {proc.stdout}\n{proc.stderr}"
        return proc

    def run_binary(self, *args: str, timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess:
        """`claude ARGS` as is (plugin and mcp subcommands)."""
        return subprocess.run([str(self.binary), *args], cwd=cwd or self.project, env=self.env(),
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def claude(self, *args: str, timeout: float = 150, cwd: Path | None = None) -> ClaudeRun:
        """`claude ARGS --output-format json --debug-file F`: the parsed result and the debug log."""
        self._runs += 1
        log = self.home / f"debug-{self._runs}.log"
        argv = [*args, "--output-format", "json", "--debug-file", str(log)]
        proc = subprocess.run([str(self.binary), *argv], cwd=cwd or self.project, env=self.env(),
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        debug = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        run = ClaudeRun(list(args), proc.returncode, proc.stdout, proc.stderr, debug)
        try:
            run.data = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else {}
        except (ValueError, IndexError):
            run.data = {}
        return run

    def settings(self) -> dict:
        p = self.home / ".claude" / "settings.json"
        return json.loads(p.read_text()) if p.exists() else {}

    def git_log(self, vault: Path, *args: str) -> str:
        return subprocess.run(["git", "-C", str(vault), "log", *args], capture_output=True, text=True,
                              env=self.env(), check=True).stdout
