"""`epimem install claude-code --mcp` as a real process: what `claude mcp add` would write (the
user's entry, or a project's, in ~/.claude.json), keeping every other key of Claude Code's file,
idempotent, and removed by --uninstall."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

from mcp_support import env


def epimem(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    e = {**env(), "HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share")}
    e.pop("CLAUDE_CONFIG_DIR", None)
    return subprocess.run([sys.executable, "-m", "epimem", *args], cwd=cwd, env=e, capture_output=True, text=True,
                          timeout=120)


CLAUDE_JSON = {"firstStartTime": "2026-11-01T10:00:00.000Z", "userID": "abc",
               "projects": {"/p": {"allowedTools": []}},
               "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": [], "env": {}}}}


def test_user_scope_writes_claude_json_like_claude_mcp_add(tmp_path, mvault):
    home, proj = tmp_path / "h", tmp_path / "p"
    home.mkdir()
    proj.mkdir()
    cj = home / ".claude.json"
    cj.write_text(json.dumps(CLAUDE_JSON, indent=2))
    cj.chmod(0o600)
    r = epimem(home, proj, "--vault", str(mvault), "install", "claude-code", "--mcp")
    assert r.returncode == 0, r.stderr
    data = json.loads(cj.read_text())
    e = data["mcpServers"]["epimem"]
    assert e["type"] == "stdio" and e["args"] == ["--vault", str(mvault), "mcp"] and e["env"] == {}
    assert Path(e["command"]).name == "epimem"
    assert {k: v for k, v in data.items() if k != "mcpServers"} == {k: v for k, v in CLAUDE_JSON.items()
                                                                    if k != "mcpServers"}
    assert data["mcpServers"]["github"] == CLAUDE_JSON["mcpServers"]["github"]
    assert stat.S_IMODE(cj.stat().st_mode) == 0o600  # it holds the account: it stays private
    backups = list(home.glob(".claude.json.epimem-backup-*"))
    assert len(backups) == 1 and stat.S_IMODE(backups[0].stat().st_mode) == 0o600
    # Twice changes nothing.
    again = epimem(home, proj, "--vault", str(mvault), "install", "claude-code", "--mcp")
    assert f"unchanged {cj} — already as wanted" in again.stdout
    assert len(list(home.glob(".claude.json.epimem-backup-*"))) == 1
    # --uninstall removes exactly the entry (even without --mcp).
    r = epimem(home, proj, "--vault", str(mvault), "install", "claude-code", "--uninstall")
    assert r.returncode == 0, r.stderr
    assert json.loads(cj.read_text()) == CLAUDE_JSON


def test_project_scope_writes_the_projects_own_entry_and_commits_nothing(tmp_path, mvault):
    """A project's server is personal, like its hooks: it goes to the project's entry in
    ~/.claude.json (`claude mcp add --scope local`), never to the committed .mcp.json."""
    home, proj = tmp_path / "h", tmp_path / "p"
    home.mkdir()
    proj.mkdir()
    cj = home / ".claude.json"
    cj.write_text(json.dumps(CLAUDE_JSON, indent=2))
    r = epimem(home, proj, "--vault", str(mvault), "install", "claude-code", "--scope", "project", "--mcp")
    assert r.returncode == 0, r.stderr
    assert not (proj / ".mcp.json").exists()
    data = json.loads(cj.read_text())
    e = data["projects"][str(proj.resolve())]["mcpServers"]["epimem"]
    assert e["args"] == ["--vault", str(mvault), "mcp"] and Path(e["command"]).name == "epimem"
    assert "epimem" not in data["mcpServers"]  # not the user's: this project's only
    # nothing of epimem's is left in what a project commits
    committed = [p for p in proj.rglob("*") if p.is_file() and p.name != "settings.local.json"]
    assert all(str(tmp_path) not in p.read_text() for p in committed), committed
    r = epimem(home, proj, "--vault", str(mvault), "install", "claude-code", "--scope", "project", "--uninstall")
    assert r.returncode == 0, r.stderr
    assert json.loads(cj.read_text()) == CLAUDE_JSON


def test_an_older_installs_mcp_json_entry_moves_out_of_the_committed_file(tmp_path, mvault):
    home, proj = tmp_path / "h", tmp_path / "p"
    home.mkdir()
    proj.mkdir()
    old = {"mcpServers": {"epimem": {"type": "stdio", "command": "/home/someone/.venv/bin/epimem",
                                     "args": ["--vault", "/home/someone/vault", "mcp"], "env": {}},
                          "docs": {"type": "stdio", "command": "docs-mcp", "args": [], "env": {}}}}
    (proj / ".mcp.json").write_text(json.dumps(old, indent=2) + "\n")
    r = epimem(home, proj, "--vault", str(mvault), "install", "claude-code", "--scope", "project", "--mcp")
    assert r.returncode == 0, r.stderr
    assert json.loads((proj / ".mcp.json").read_text()) == {"mcpServers": {"docs": old["mcpServers"]["docs"]}}
    assert not list(proj.glob(".mcp.json.epimem-backup-*"))  # committed: given back, not backed up


def test_someone_elses_epimem_entry_and_broken_json_are_left_alone(tmp_path, mvault):
    home, proj = tmp_path / "h", tmp_path / "p"
    home.mkdir()
    proj.mkdir()
    theirs = {"mcpServers": {"epimem": {"type": "http", "url": "https://example.invalid/mcp"}}}
    cj = home / ".claude.json"
    cj.write_text(json.dumps(theirs))
    r = epimem(home, proj, "--vault", str(mvault), "install", "claude-code", "--mcp")
    assert r.returncode == 1 and "not `epimem mcp`" in r.stdout
    assert json.loads(cj.read_text()) == theirs
    (proj / ".mcp.json").write_text(json.dumps(theirs))  # a project's own `epimem` is not moved either
    r = epimem(home, proj, "--vault", str(mvault), "install", "claude-code", "--scope", "project", "--mcp")
    assert json.loads((proj / ".mcp.json").read_text()) == theirs
    cj.write_text("{ broken")
    r = epimem(home, proj, "--vault", str(mvault), "install", "claude-code", "--mcp")
    assert r.returncode == 1 and "invalid JSON" in r.stderr and "line 1" in r.stderr and "Traceback" not in r.stderr
    assert cj.read_text() == "{ broken"
