"""`epimem install AGENT` as a real process in a temporary HOME: files against each agent's
documented schema, idempotence, dry runs, backups, byte-for-byte uninstall, the shared AGENTS.md,
and the session-start hook giving Codex and Gemini CLI what Claude Code's gives."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import tomllib

import pytest
import yaml

from epimem.agents import jsonc

AGENTS = ("codex", "gemini", "opencode", "cursor", "claude-desktop")


def _files(root):
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and "vault" not in p.relative_to(root).parts and ".gitconfig" != p.name}


def _config(env, agent):
    h = env.home
    return {"codex": h / ".codex" / "config.toml", "gemini": h / ".gemini" / "settings.json",
            "opencode": h / ".config" / "opencode" / "opencode.json", "cursor": h / ".cursor" / "mcp.json",
            "claude-desktop": h / ".config" / "Claude" / "claude_desktop_config.json"}[agent]


ORIGINALS = {
    "codex": '# my Codex settings\nmodel = "gpt-5-codex"   # the fast one\n\n[mcp_servers.docs]\n'
             'command = "docs-mcp"\nargs = []\n',
    "gemini": '{\n    // keep the dark theme\n    "ui": { "theme": "GitHub" },\n    "mcpServers": {\n'
              '        "docs": { "command": "docs-mcp" }\n    }\n}\n',
    "opencode": '{\n  "$schema": "https://opencode.ai/config.json",\n  /* my model */\n  "model": "x/y",\n}\n',
    "cursor": '{"mcpServers": {"docs": {"command": "docs-mcp", "args": []}}}\n',
    "claude-desktop": '{\n\t"globalShortcut": "Ctrl+Space"\n}',
}


@pytest.mark.parametrize("agent", AGENTS)
def test_install_is_idempotent_and_uninstall_gives_back_every_byte(agent_env, agent):
    cfg = _config(agent_env, agent)
    cfg.parent.mkdir(parents=True)
    cfg.write_text(ORIGINALS[agent])
    before = _files(agent_env.home)
    dry = agent_env.run("install", agent, "--dry-run")
    assert "Dry run: nothing was changed." in dry.stdout
    assert _files(agent_env.home) == before
    first = agent_env.run("install", agent)
    assert f"backup of {cfg}" in first.stdout
    after = _files(agent_env.home)
    second = agent_env.run("install", agent)
    assert not re.search(r"^(create|update|remove)", second.stdout, re.M), second.stdout
    assert {k: v for k, v in _files(agent_env.home).items() if "epimem-backup" not in str(k)} == \
        {k: v for k, v in after.items() if "epimem-backup" not in str(k)}
    backups = sorted(cfg.parent.glob(cfg.name + ".epimem-backup-*"))
    assert len(backups) == 1 and backups[0].read_text() == ORIGINALS[agent]
    agent_env.run("install", agent, "--uninstall")
    # every byte back, and the backup with nothing of the user's left in it gone
    assert _files(agent_env.home) == before


def _tree(root):
    return sorted(str(p.relative_to(root)) + ("/" if p.is_dir() else "") for p in root.rglob("*")
                  if "vault" not in p.relative_to(root).parts)


@pytest.mark.slow  # six agents, an install and an uninstall each as processes: ~5 s an agent
@pytest.mark.parametrize("agent", [*AGENTS, "claude-code"])
def test_an_uninstall_leaves_no_backup_and_no_folder_it_made(agent_env, agent, tmp_path):
    """Installed, upgraded (another vault: every part changes) and uninstalled, at both scopes:
    the home and the project are as they were, folder for folder, with no `*.epimem-backup-*`."""
    if agent != "claude-code":
        cfg = _config(agent_env, agent)
        cfg.parent.mkdir(parents=True, exist_ok=True)
        cfg.write_text(ORIGINALS[agent])
    other = tmp_path / "other-vault"
    agent_env.run("init", str(other))
    scopes = ["user", "project"] if agent not in ("claude-desktop",) else ["user"]
    for scope in scopes:
        before = _tree(agent_env.home), _files(agent_env.home)
        agent_env.run("install", agent, "--scope", scope)
        subprocess.run([str(agent_env.epimem), "--vault", str(other), "install", agent, "--scope", scope],
                       cwd=agent_env.project, env=agent_env.environ(), check=True, capture_output=True)
        assert any("epimem-backup" in p for p in _tree(agent_env.home)) or scope == "project" or agent == "claude-code"
        agent_env.run("install", agent, "--scope", scope, "--uninstall")
        assert (_tree(agent_env.home), _files(agent_env.home)) == before, scope


def test_the_mcp_entries_follow_each_documented_schema(agent_env):
    for agent in AGENTS:
        agent_env.run("install", agent)
    v, exe = str(agent_env.vault), str(agent_env.epimem)
    codex = tomllib.loads(_config(agent_env, "codex").read_text())["mcp_servers"]["epimem"]
    assert codex == {"command": exe, "args": ["--vault", v, "mcp"]}
    gemini = json.loads(jsonc_strip(_config(agent_env, "gemini").read_text()))["mcpServers"]["epimem"]
    assert gemini == {"command": exe, "args": ["--vault", v, "mcp"]}
    opencode = json.loads(_config(agent_env, "opencode").read_text())["mcp"]["epimem"]
    assert opencode == {"type": "local", "command": [exe, "--vault", v, "mcp"], "enabled": True}
    # Cursor: {"mcpServers": {name: {"type"?: "stdio", "command", "args"?, "env"?}}}
    cursor = json.loads(_config(agent_env, "cursor").read_text())
    assert set(cursor) == {"mcpServers"} and set(cursor["mcpServers"]["epimem"]) <= {"type", "command", "args", "env"}
    assert cursor["mcpServers"]["epimem"]["type"] == "stdio"
    # Claude Desktop: stdio servers only, {"command", "args"?, "env"?}
    desktop = json.loads(_config(agent_env, "claude-desktop").read_text())
    assert desktop == {"mcpServers": {"epimem": {"command": exe, "args": ["--vault", v, "mcp"]}}}


def jsonc_strip(text: str) -> str:
    return json.dumps(jsonc.value_of(jsonc.parse_spans(text, comments=True)))


def test_cursor_rule_is_an_always_applied_mdc_in_the_project(agent_env):
    agent_env.run("install", "cursor", "--scope", "project")
    rule = (agent_env.project / ".cursor" / "rules" / "epimem.mdc").read_text()
    fm = yaml.safe_load(rule.split("---")[1])
    assert fm["alwaysApply"] is True and fm["description"]
    assert "describe" in rule and "<!-- epimem:begin -->" in rule
    assert json.loads((agent_env.project / ".cursor" / "mcp.json").read_text())["mcpServers"]["epimem"]
    agent_env.run("install", "cursor", "--scope", "project", "--uninstall")
    cursor = agent_env.project / ".cursor"
    left = [p.name for p in cursor.rglob("*")] if cursor.exists() else []
    assert [n for n in left if "epimem-backup" not in n] == []


@pytest.mark.parametrize("agent", ["codex", "opencode"])
def test_skills_follow_the_agent_skills_rules(agent_env, agent):
    agent_env.run("install", agent)
    folder = agent_env.home / (".agents/skills" if agent == "codex" else ".config/opencode/skills")
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["mirror", "observe"]
    for name in names:
        text = (folder / name / "SKILL.md").read_text()
        fm = yaml.safe_load(text.split("---")[1])
        assert fm["name"] == name and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name) and len(name) <= 64
        assert 1 <= len(fm["description"]) <= 1024
        assert set(fm) <= {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
        assert fm["metadata"]["package"] == "epimem"
        assert "!`" not in text and "CLAUDE_SESSION_ID" not in text  # Claude Code's syntax only
        assert str(agent_env.vault) in text  # the CLI fallback names the vault


def test_a_shared_agents_md_keeps_the_lines_while_another_agent_reads_them(agent_env):
    agent_env.run("install", "codex", "--scope", "project")
    agent_env.run("install", "opencode", "--scope", "project")
    md = agent_env.project / "AGENTS.md"
    assert md.read_text().count("<!-- epimem:begin -->") == 1
    out = agent_env.run("install", "codex", "--scope", "project", "--uninstall").stdout
    assert "opencode still reads them" in out and "<!-- epimem:begin -->" in md.read_text()
    agent_env.run("install", "opencode", "--scope", "project", "--uninstall")
    assert not md.exists()


def test_list_shows_present_wired_and_the_files_version(agent_env):
    (agent_env.home / ".cursor").mkdir()
    agent_env.run("install", "codex")
    rows = {(r["agent"], r["scope"]): r for r in json.loads(agent_env.run("install", "--list", "--json").stdout)}
    assert rows[("codex", "user")]["wired"] and rows[("codex", "user")]["version"] == "1"
    assert rows[("codex", "user")]["parts"] == {"instructions": True, "skills": True, "mcp": True, "hook": True}
    assert rows[("cursor", "user")]["present"] and not rows[("cursor", "user")]["wired"]
    assert {a for a, _ in rows} >= {"claude-code", *AGENTS}


def test_all_wires_every_present_agent_and_unwires_them(agent_env):
    (agent_env.home / ".gemini").mkdir()
    (agent_env.home / ".cursor").mkdir()
    before = _files(agent_env.home)
    out = agent_env.run("install", "--all").stdout
    assert "== Gemini CLI" in out and "== Cursor" in out and "== opencode" not in out
    rows = {(r["agent"], r["scope"]): r for r in json.loads(agent_env.run("install", "--list", "--json").stdout)}
    assert rows[("gemini", "user")]["wired"] and rows[("cursor", "user")]["wired"]
    agent_env.run("install", "--all", "--uninstall")
    assert _files(agent_env.home) == before


def test_a_broken_config_is_refused_with_its_line_and_left_alone(agent_env):
    cfg = _config(agent_env, "codex")
    cfg.parent.mkdir(parents=True)
    cfg.write_text('model = "o3"\n[mcp_servers\n')
    proc = agent_env.run("install", "codex", check=False)
    assert proc.returncode != 0 and str(cfg) in proc.stderr and "line 2" in proc.stderr
    assert cfg.read_text() == 'model = "o3"\n[mcp_servers\n'
    assert not (agent_env.home / ".codex" / "AGENTS.md").exists()  # nothing half-done


def _hook_command(env, agent) -> str:
    path = env.home / (".codex/hooks.json" if agent == "codex" else ".gemini/settings.json")
    doc = jsonc.value_of(jsonc.parse_spans(path.read_text(), comments=True))
    group = next(g for g in doc["hooks"]["SessionStart"] if g["matcher"] == "startup")
    return group["hooks"][0]["command"]


def _fire(env, command: str, payload: dict) -> dict:
    proc = subprocess.run(["sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                          env=env.environ(), cwd=env.project, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


def test_codex_and_gemini_start_with_the_context_claude_code_gets_counting_real_starts_only(agent_env):
    agent_env.run("belief", "add", "--title", "Prefers small commits", "--kind", "preference",
                  "--statement", "Keeps each commit to one change.", "--confidence", "0.6",
                  "--basis", "behavioral", "--permanence", "durable")
    agent_env.run("install", "codex")
    agent_env.run("install", "gemini")
    codex_cmd, gemini_cmd = _hook_command(agent_env, "codex"), _hook_command(agent_env, "gemini")
    assert shlex.split(codex_cmd)[-2:] == ["hook", "session-start"]
    sessions = agent_env.vault / "state" / "sessions.json"
    base = {"session_id": "s1", "transcript_path": None, "cwd": str(agent_env.project),
            "hook_event_name": "SessionStart"}
    codex = _fire(agent_env, codex_cmd, {**base, "source": "startup", "model": "gpt-5-codex",
                                         "permission_mode": "default"})
    assert json.loads(sessions.read_text())["count"] == 1
    gemini = _fire(agent_env, gemini_cmd, {**base, "source": "startup", "timestamp": "2026-11-30T09:00:00Z"})
    assert json.loads(sessions.read_text())["count"] == 2
    _fire(agent_env, gemini_cmd, {**base, "source": "resume"})
    _fire(agent_env, codex_cmd, {**base, "source": "clear", "model": "m", "permission_mode": "default"})
    assert json.loads(sessions.read_text())["count"] == 2  # resume and clear are not new sessions
    # what Claude Code's own hook prints for the same start
    claude = _fire(agent_env, shlex.join([str(agent_env.epimem), "--vault", str(agent_env.vault), "hook",
                                          "session-start"]), {**base, "source": "resume"})

    def ctx(out):
        text = out["hookSpecificOutput"]["additionalContext"]
        return re.sub(r"session #?\d+", "session N", text)

    assert "Prefers small commits" in ctx(codex)
    assert ctx(codex).split("\n", 1)[1] == ctx(gemini).split("\n", 1)[1] == ctx(claude).split("\n", 1)[1]
    assert codex["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert set(codex) == {"hookSpecificOutput"}  # Codex's schema allows no other top-level keys we do not set
