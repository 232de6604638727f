"""The Claude Code plugin's files, its bin/epimem, and the rule that it and the settings install
never both count a session (the real `claude` runs them in tests/e2e/test_claude_code.py)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import epimem
from epimem.agents import claude_code as install
from epimem.agents import wiring

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = install.TEMPLATES / "plugin"
WRAPPER = PLUGIN / "bin" / "epimem"
EPIMEM = Path(sys.executable).parent / "epimem"


def test_the_repository_and_the_package_are_marketplaces_of_the_same_plugin():
    for market, base in ((ROOT / ".claude-plugin" / "marketplace.json", ROOT),
                         (install.TEMPLATES / ".claude-plugin" / "marketplace.json", install.TEMPLATES)):
        data = json.loads(market.read_text())
        assert data["name"] == wiring.MARKETPLACE
        (entry,) = data["plugins"]
        assert entry["name"] == wiring.PLUGIN and (base / entry["source"]).resolve() == PLUGIN.resolve()
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "epimem" and manifest["version"] == epimem.__version__


def test_plugin_hooks_are_one_shell_string_and_name_no_vault():
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    handlers = [h for groups in hooks.values() for g in groups for h in g["hooks"]]
    assert [g["matcher"] for g in hooks["SessionStart"]] == ["startup", "clear|compact"]
    for h in handlers:
        assert "args" not in h and "--vault" not in h["command"]
        words = shlex.split(h["command"])
        assert words[0] == "${CLAUDE_PLUGIN_ROOT}/bin/epimem" and words[1:] == ["hook", "session-start", "--via",
                                                                                 "plugin"]
    mcp = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["epimem"]
    assert mcp["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/epimem" and mcp["args"] == ["mcp"]
    assert (PLUGIN / "skills").is_dir() and not (PLUGIN / "skills").is_symlink()


def _wrapper(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["/bin/sh", str(WRAPPER), *args], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": os.environ.get("PYTHONPATH", ""), **env})


def test_bin_epimem_runs_the_epimem_it_is_told_or_finds(tmp_path):
    assert os.access(WRAPPER, os.X_OK)
    told = _wrapper({"PATH": "/usr/bin:/bin", "EPIMEM_BIN": str(EPIMEM)}, "--version")
    assert told.returncode == 0 and told.stdout.startswith("epimem "), told.stderr
    # on PATH, after the plugin's own bin/ (which is where Claude Code puts it)
    found = _wrapper({"PATH": f"{WRAPPER.parent}:{EPIMEM.parent}:/usr/bin:/bin"}, "--version")
    assert found.returncode == 0 and found.stdout.startswith("epimem ")


def test_bin_epimem_without_epimem_says_so_and_exits_0():
    r = _wrapper({"PATH": f"{WRAPPER.parent}:/usr/bin:/bin"}, "skill", "observe")
    assert r.returncode == 0 and "epimem install claude-code --plugin" in r.stdout
    hook = _wrapper({"PATH": f"{WRAPPER.parent}:/usr/bin:/bin"}, "hook", "session-start")
    assert hook.returncode == 0 and hook.stdout == ""  # a hook adds nothing rather than noise


def _settings(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_the_plugin_hook_stands_down_when_settings_hooks_are_installed(vault, tmp_path, monkeypatch):
    home = Path(os.environ["HOME"])
    payload = json.dumps({"session_id": "s1", "source": "startup", "cwd": str(tmp_path)})

    def hook(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(EPIMEM), "hook", "session-start", "--vault", str(vault.vault.root), *extra],
                              input=payload, capture_output=True, text=True, timeout=30)

    _settings(home / ".claude" / "settings.json", {"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [
        {"type": "command", "command": "epimem hook session-start"}]}]}})
    assert hook("--via", "plugin").stdout == ""  # the settings hook runs as well: it alone counts
    count = json.loads((vault.vault.root / "state" / "sessions.json").read_text())["count"] \
        if (vault.vault.root / "state" / "sessions.json").exists() else 0
    assert count == 0
    assert "both installed" in (vault.vault.root / ".epimem" / "hook.log").read_text()
    assert "additionalContext" in hook().stdout  # the settings hook itself
    (home / ".claude" / "settings.json").unlink()
    assert "additionalContext" in hook("--via", "plugin").stdout  # the plugin alone: it counts


def test_detection_reads_every_settings_file(tmp_path, monkeypatch):
    home = Path(os.environ["HOME"])
    proj = tmp_path / "p"
    assert wiring.plugin_enabled(proj) is None and wiring.settings_hook_present(proj) is None
    _settings(proj / ".claude" / "settings.local.json", {"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": "'/opt/my tools/epimem' hook session-start"}]}]}})
    assert wiring.settings_hook_present(proj) == proj / ".claude" / "settings.local.json"
    _settings(home / ".claude" / "settings.json", {"enabledPlugins": {"epimem@epimem": True}})
    assert wiring.plugin_enabled(proj) == home / ".claude" / "settings.json"
    _settings(proj / ".claude" / "settings.json", {"enabledPlugins": {"epimem@epimem": False}})
    assert wiring.plugin_enabled(proj) is None  # the project turned it off
    _settings(home / ".claude" / "settings.json", "not an object")  # type: ignore[arg-type]
    assert wiring.plugin_enabled(None) is None
