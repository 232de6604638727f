"""`epimem install claude-code` as a real process against a temporary HOME whose
settings.json already holds other hooks and keys; the skills' frontmatter."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from epimem.agents import base, claude_code, hooks, wiring

ROOT = Path(__file__).resolve().parents[2]
EPIMEM = str(Path(sys.executable).parent / "epimem")

SETTINGS = """{
    "model": "opus",
    "permissions": {
        "allow": ["Bash(npm test)", "Read(~/notes/**)"],
        "deny": []
    },
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh", "timeout": 5}]}
        ],
        "SessionStart": [
            {
                "matcher": "startup",
                "hooks": [
                    {
                        "type": "command",
                        "command": "direnv export json"
                    }
                ]
            }
        ]
    },
    "statusLine": {"type": "command", "command": "~/bin/status.sh"}
}
"""
CLAUDE_MD = "# My global instructions\n\nAnswer in British English.\n"


@pytest.fixture
def home(tmp_path):
    h = tmp_path / "home"
    (h / ".claude").mkdir(parents=True)
    (h / ".claude" / "settings.json").write_text(SETTINGS)
    (h / ".claude" / "CLAUDE.md").write_text(CLAUDE_MD)
    return h


def run(home, *args, vault=None, cwd=None, stdin=None):
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "EPIMEM_VAULT")}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / ".local" / "share"),
               PATH=os.path.dirname(EPIMEM) + os.pathsep + env.get("PATH", ""))  # epimem on PATH, as usual
    pre = ["--vault", str(vault)] if vault else []
    return subprocess.run([EPIMEM, *pre, *args], capture_output=True, text=True, env=env, cwd=cwd or home,
                          input=stdin, timeout=60)


def files(home):
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*"))
            if p.is_file() and ".local" not in p.parts}


def test_install_merges_and_uninstall_restores(home):
    r = run(home, "install", "claude-code")
    assert r.returncode == 0, r.stderr
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    # everything that was there is still there
    assert data["model"] == "opus" and data["statusLine"]["command"] == "~/bin/status.sh"
    assert data["permissions"]["allow"] == ["Bash(npm test)", "Read(~/notes/**)"]
    assert data["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "~/bin/guard.sh"
    groups = data["hooks"]["SessionStart"]
    assert groups[0]["hooks"][0]["command"] == "direnv export json"
    ours = [g for g in groups if any(hooks.is_ours(h) for h in g["hooks"])]
    assert [g["matcher"] for g in ours] == ["startup", "clear|compact"]
    handler = ours[0]["hooks"][0]
    # one shell string: "args" is dropped by Claude Code before 2.1.139 (docs/claude-code.md)
    assert "args" not in handler
    words = shlex.split(handler["command"])
    assert words[1:] == ["hook", "session-start", "--skills", wiring.SKILLS_VERSION]
    assert os.path.basename(words[0]) == "epimem"
    assert "env" not in data  # the default vault: nothing to tell the skills
    assert "SessionEnd" not in data["hooks"]  # auto-observe is off by default
    # formatting kept: the original text is still there, line for line, up to our insertion
    text = settings.read_text()
    assert text.startswith(SETTINGS[:SETTINGS.index('            }\n        ]\n    },')])
    assert text.endswith('    "statusLine": {"type": "command", "command": "~/bin/status.sh"}\n}\n')
    backups = list((home / ".claude").glob("settings.json.epimem-backup-*"))
    assert len(backups) == 1 and backups[0].read_text() == SETTINGS
    # skills and CLAUDE.md
    for name in ("observe", "mirror"):
        assert (home / ".claude" / "skills" / name / "SKILL.md").read_text() == \
            (ROOT / "skills" / name / "SKILL.md").read_text()
    md = (home / ".claude" / "CLAUDE.md").read_text()
    assert md.startswith(CLAUDE_MD) and base.BEGIN in md and base.END in md
    # the vault exists, with the context cache the hook reads
    vault = home / ".local" / "share" / "epimem" / "vault"
    assert (vault / "epistemology.md").exists() and (vault / ".epimem" / "context.json").exists()

    # twice changes nothing
    before = files(home)
    r = run(home, "install", "claude-code")
    assert r.returncode == 0 and "update" not in r.stdout
    assert files(home) == before

    # uninstall removes exactly what was added, and the install's backup with it
    r = run(home, "install", "claude-code", "--uninstall")
    assert r.returncode == 0, r.stderr
    assert settings.read_text() == SETTINGS
    assert (home / ".claude" / "CLAUDE.md").read_text() == CLAUDE_MD
    assert not (home / ".claude" / "skills" / "observe").exists()
    assert not (home / ".claude" / "skills").exists()  # created by the install, empty again
    assert not list((home / ".claude").glob("settings.json.epimem-backup-*"))
    assert (vault / "epistemology.md").exists()  # the vault is the user's: never removed


def test_dry_run_changes_nothing(home):
    before = files(home)
    r = run(home, "install", "claude-code", "--auto-observe", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "Dry run" in r.stdout and "SessionEnd" in r.stdout and "would create" in r.stdout
    assert files(home) == before
    assert not (home / ".local" / "share" / "epimem").exists()


def test_auto_observe_is_declarative(home, tmp_path):
    vault = tmp_path / "v"
    assert run(home, "install", "claude-code", "--auto-observe", "--llm", vault=vault).returncode == 0
    data = json.loads((home / ".claude" / "settings.json").read_text())
    end = data["hooks"]["SessionEnd"][0]["hooks"][0]
    assert shlex.split(end["command"])[1:] == ["hook", "session-end", "--llm"]
    # the vault is in "env", which reaches the hooks, the skills' `!` lines and the model's commands
    assert data["env"] == {"EPIMEM_VAULT": str(vault)}
    assert "--vault" not in data["hooks"]["SessionStart"][1]["hooks"][0]["command"]
    # the same command without --auto-observe turns it off again
    assert run(home, "install", "claude-code", vault=vault).returncode == 0
    data = json.loads((home / ".claude" / "settings.json").read_text())
    assert "SessionEnd" not in data["hooks"]


def test_installed_hook_runs(home, tmp_path):
    vault = tmp_path / "v"
    assert run(home, "install", "claude-code", vault=vault).returncode == 0
    run(home, "belief", "add", "--title", "Likes tight summaries", "--statement", "Asks for one-paragraph "
        "summaries.", "--kind", "preference", "--basis", "behavioral", "--permanence", "durable",
        "--confidence", "0.6", vault=vault)
    data = json.loads((home / ".claude" / "settings.json").read_text())
    h = next(h for g in data["hooks"]["SessionStart"] if g["matcher"] == "startup" for h in g["hooks"]
             if hooks.is_ours(h))
    env = {**os.environ, "HOME": str(home), **data["env"],  # Claude Code passes settings' "env" on
           "PATH": os.path.dirname(EPIMEM) + os.pathsep + os.environ["PATH"]}
    r = subprocess.run(h["command"], shell=True, input=json.dumps(
        {"session_id": "x1", "source": "startup", "cwd": str(tmp_path), "hook_event_name": "SessionStart",
         "transcript_path": str(tmp_path / "t.jsonl")}), capture_output=True, text=True, env=env, timeout=20)
    assert r.returncode == 0
    ctx = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "session 1 recorded" in ctx and "(developing) Likes tight summaries" in ctx


def test_project_scope(home, tmp_path):
    proj = tmp_path / "proj"
    (proj / ".claude").mkdir(parents=True)
    (proj / ".claude" / "settings.json").write_text('{"env": {"FOO": "1"}}')
    vault = tmp_path / "elsewhere" / "v"
    r = run(home, "install", "claude-code", "--scope", "project", cwd=proj, vault=vault)
    assert r.returncode == 0, r.stderr
    # the committed settings.json gets nothing personal; the hooks and the vault go to the local file
    assert (proj / ".claude" / "settings.json").read_text() == '{"env": {"FOO": "1"}}'
    local = json.loads((proj / ".claude" / "settings.local.json").read_text())
    assert local["env"] == {"EPIMEM_VAULT": str(vault)}
    assert [g["matcher"] for g in local["hooks"]["SessionStart"]] == ["startup", "clear|compact"]
    for name in ("observe", "mirror"):  # committed: plain `epimem`, no path of this machine
        skill = (proj / ".claude" / "skills" / name / "SKILL.md").read_text()
        assert skill == (ROOT / "skills" / name / "SKILL.md").read_text() and str(tmp_path) not in skill
    assert base.BEGIN in (proj / "CLAUDE.md").read_text()
    assert (home / ".claude" / "settings.json").read_text() == SETTINGS  # user scope untouched
    assert run(home, "install", "claude-code", "--scope", "project", "--uninstall", cwd=proj).returncode == 0
    assert (proj / ".claude" / "settings.json").read_text() == '{"env": {"FOO": "1"}}'
    assert sorted(p.name for p in (proj / ".claude").iterdir()) == ["settings.json"]  # no {} and no backup
    assert not (proj / "CLAUDE.md").exists()


def test_project_scope_moves_an_older_install_out_of_the_committed_file(home, tmp_path):
    proj = tmp_path / "proj"
    (proj / ".claude").mkdir(parents=True)
    old = {"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [
        {"type": "command", "command": "/home/someone/.venv/bin/epimem", "args": ["hook", "session-start"]}]}]}}
    (proj / ".claude" / "settings.json").write_text(json.dumps(old))
    r = run(home, "install", "claude-code", "--scope", "project", cwd=proj)
    assert r.returncode == 0, r.stderr
    assert not (proj / ".claude" / "settings.json").exists()  # it held only epimem's hooks
    assert (proj / ".claude" / "settings.local.json").exists()
    assert run(home, "install", "claude-code", "--scope", "project", "--uninstall", cwd=proj).returncode == 0
    assert not (proj / ".claude" / "settings.local.json").exists()
    assert not list((proj / ".claude").glob("*epimem-backup*"))


def test_uninstall_leaves_no_empty_settings_file(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    assert run(home, "install", "claude-code", vault=tmp_path / "v").returncode == 0
    settings = home / ".claude" / "settings.json"
    assert json.loads(settings.read_text())["env"] == {"EPIMEM_VAULT": str(tmp_path / "v")}
    r = run(home, "install", "claude-code", "--uninstall")
    assert r.returncode == 0, r.stderr
    assert not settings.exists() and not (home / ".claude").exists()  # the install made it; empty again
    # a `{}` the user had is theirs, and stays
    settings.parent.mkdir()
    settings.write_text("{}\n")
    assert run(home, "install", "claude-code").returncode == 0
    assert run(home, "install", "claude-code", "--uninstall").returncode == 0
    assert settings.read_text() == "{}\n"


def test_env_merge_keeps_the_users_variables():
    text = '{\n  "env": {\n    "FOO": "1"\n  }\n}\n'
    merged = claude_code.merge_env(text, {"EPIMEM_VAULT": "/v"})
    assert json.loads(merged)["env"] == {"FOO": "1", "EPIMEM_VAULT": "/v"}
    assert json.loads(claude_code.merge_env(merged, {"EPIMEM_VAULT": "/w"}))["env"]["EPIMEM_VAULT"] == "/w"
    assert claude_code.merge_env(merged, {}) == text
    assert claude_code.merge_env('{"a": 1}', {}) == '{"a": 1}'


def test_skills_name_the_epimem_the_user_has_when_it_is_off_path(tmp_path):
    src = (ROOT / "skills" / "observe" / "SKILL.md").read_text()
    cmd = str(tmp_path / "my tools" / "epimem")
    out = claude_code.render_skill(src, cmd)
    quoted = shlex.quote(cmd)
    assert f"allowed-tools: Bash({quoted} skill observe *) Bash({quoted} observe --origin skill *)" in out
    assert f"!`{quoted} skill observe --session ${{CLAUDE_SESSION_ID}}`" in out
    assert f"\n{quoted} observe --origin skill --session" in out and f"`{quoted} skill recall" in out
    assert "epimem vault" in out or "epimem believes" in out  # prose keeps the name
    assert claude_code.render_skill(src, "epimem") == src


@pytest.mark.parametrize("handler,role", [
    ({"type": "command", "command": "epimem hook session-start"}, "session-start"),
    ({"type": "command", "command": "'/a b/epimem' hook session-end --llm"}, "session-end"),
    ({"type": "command", "command": "/x/epimem", "args": ["hook", "session-start"]}, "session-start"),
    ({"type": "command", "command": "epimem-other hook session-start"}, None),
    ({"type": "command", "command": "echo epimem hook session-start"}, None),
    ({"type": "command", "command": "epimem 'unbalanced"}, None),
])
def test_what_is_ours(handler, role):
    from epimem.agents import wiring

    assert wiring.hook_role(handler) == role


def test_someone_elses_skill_is_never_overwritten(home):
    mine = home / ".claude" / "skills" / "observe" / "SKILL.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("---\nname: observe\ndescription: my own\n---\nMine.\n")
    r = run(home, "install", "claude-code")
    assert r.returncode == 1 and "refused" in r.stdout
    assert mine.read_text().endswith("Mine.\n")
    assert (home / ".claude" / "skills" / "mirror" / "SKILL.md").exists()
    run(home, "install", "claude-code", "--uninstall")
    assert mine.exists()


def test_broken_settings_are_left_alone(home):
    settings = home / ".claude" / "settings.json"
    settings.write_text('{"model": "opus",,}')
    r = run(home, "install", "claude-code")
    assert r.returncode == 1 and "line 1" in r.stderr and "nothing was changed" in r.stderr
    assert settings.read_text() == '{"model": "opus",,}'
    assert not (home / ".claude" / "skills").exists()


@pytest.mark.parametrize("text,back", [
    ("{}", "{}"), ("{}\n", "{}\n"),
    ('{\n\t"a": [1, 2]\n}\n', None),
    ('{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "x"}]}]}}', None),
    # a container epimem emptied is removed, even one that was empty before
    ('{\n\t"a": [1, 2],\n\t"hooks": {}\n}\n', '{\n\t"a": [1, 2]\n}\n'),
])
def test_merge_round_trips(text, back):
    specs = claude_code.hook_specs(["epimem"], auto_observe=True)
    merged = hooks.merge_hooks(text, specs)
    assert hooks.merge_hooks(merged, specs) == merged
    assert json.loads(merged)["hooks"]["SessionEnd"][0]["hooks"][0]["command"] == "epimem hook session-end"
    assert hooks.merge_hooks(merged, []) == (text if back is None else back)
    if "\t" in text:
        assert '\n\t\t"SessionStart": [\n\t\t\t{' in merged  # the file's own indentation


def test_claude_md_block_round_trips():
    block = claude_code.instruction_text([], "")
    for text in ("", "# Mine\n", "# Mine\n\n", "# Mine"):
        added = base.add_block(text, block)
        assert base.add_block(added, block) == added
        assert base.remove_block(added).rstrip("\n") == text.rstrip("\n")


# --- the skills -------------------------------------------------------------------------------

PORTABLE = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
CLAUDE_ONLY_USED = {"argument-hint"}


@pytest.mark.parametrize("name", ["observe", "mirror"])
def test_skill_frontmatter_is_valid(name):
    text = (ROOT / "skills" / name / "SKILL.md").read_text()
    m = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert m, "frontmatter between --- lines"
    meta = yaml.safe_load(m.group(1))
    assert meta["name"] == name and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", meta["name"])
    desc = meta["description"]
    assert isinstance(desc, str) and 50 < len(desc) <= 1024 and "Use " in desc
    assert set(meta) <= PORTABLE | CLAUDE_ONLY_USED, set(meta) - PORTABLE
    # Rule 22: narrow prefixes of what the skill runs, never the whole CLI (tests/rules/test_rule22_user_decides.py).
    assert "Bash(epimem *)" not in meta["allowed-tools"] and meta["allowed-tools"].startswith("Bash(epimem skill ")
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in meta["metadata"].items())
    assert meta["metadata"]["package"] == "epimem"
    # The stamp the settings install writes into the hook's command: bumped with the skill's.
    assert meta["metadata"]["version"] == wiring.SKILLS_VERSION
    body = text[m.end():]
    assert re.search(r"^!`epimem [^`]+`$", body, re.M), "hands the model fresh data"


def test_observe_skill_carries_the_method():
    body = (ROOT / "skills" / "observe" / "SKILL.md").read_text()
    for phrase in ("Behaviour over self-report", "One interpretive step only", "0 to 3 observations",
                   "Never task outcomes", "passing opinions about tools", "feel like surveillance",
                   "epimem observe --origin skill --session ${CLAUDE_SESSION_ID} --source claude-code --json "
                   "--connects",
                   "alerts", "0.70", "'\\''",
                   "Judgment calls", "Pushback", "Process signals", "Contradictions of the profile",
                   "Unprompted personal reveals"):
        assert phrase in body, phrase


def test_skill_observe_says_what_the_session_has_recorded(home, tmp_path):
    """The count /observe is told before it records is rule 9's, for a session the hook counted and
    for a name it never did (those share the day's three)."""
    vault = tmp_path / "v"
    assert run(home, "init", vault=vault).returncode == 0
    assert run(home, "session", "start", "--session", "counted-1", vault=vault).returncode == 0
    for i, sess in enumerate(("counted-1", "counted-1", "made-up-a")):
        r = run(home, "observe", "--origin", "skill", "--session", sess, "--connects", "new", "--strength", "single",
                "--evidence", f"Sign {i}.", vault=vault)
        assert r.returncode == 0, r.stderr
    assert "2 observation(s) recorded" in run(home, "skill", "observe", "--session", "counted-1", vault=vault).stdout
    assert "1 observation(s) recorded" in run(home, "skill", "observe", "--session", "made-up-b", vault=vault).stdout


def test_mirror_skill_has_every_mode():
    body = (ROOT / "skills" / "mirror" / "SKILL.md").read_text()
    for phrase in ("/mirror audit", "/mirror gut-check", "/mirror interview", "one question at a time",
                   "epimem mirror audit --record", "epimem mirror answer ID --verdict",
                   "epimem mirror interview --record", "!`epimem skill mirror $ARGUMENTS`"):
        assert phrase.lower() in body.lower(), phrase


def test_skill_data_commands_run(home, tmp_path):
    vault = tmp_path / "v"
    assert run(home, "init", vault=vault).returncode == 0
    r = run(home, "skill", "observe", "--session", "abc", vault=vault)
    assert r.returncode == 0, r.stderr
    assert "epimem vault" in r.stdout and "0 observation(s) recorded" in r.stdout
    for mode in ("", "audit", "gut-check", "interview please", "nonsense"):
        r = run(home, "skill", "mirror", *mode.split(), vault=vault)
        assert r.returncode == 0, (mode, r.stderr)
        assert r.stdout.strip()


def test_package_ships_what_the_repo_shows():
    assert (ROOT / "skills").resolve() == claude_code.SKILLS_DIR.resolve()
    assert not claude_code.SKILLS_DIR.is_symlink()  # a plugin loads no folder linked from outside it
    assert (ROOT / "CLAUDE.md.example").read_text() == (claude_code.TEMPLATES / "CLAUDE.md.example").read_text()


def test_uninstall_keeps_a_skills_folder_with_the_users_own_skills(home):
    own = home / ".claude" / "skills" / "mine" / "SKILL.md"
    own.parent.mkdir(parents=True)
    own.write_text("---\nname: mine\ndescription: my own skill\n---\nHello.\n")
    assert run(home, "install", "claude-code").returncode == 0
    assert run(home, "install", "claude-code", "--uninstall").returncode == 0
    assert own.exists() and not (home / ".claude" / "skills" / "observe").exists()


@pytest.mark.parametrize("name", ["observe", "mirror"])
def test_skills_teach_no_shape_claude_code_refuses(name):
    """Heredocs and JSON on the command line are refused by Claude Code's Bash safety check
    whatever allowed-tools say (docs/decisions.md); the e2e suite runs what the skills teach."""
    body = (ROOT / "skills" / name / "SKILL.md").read_text()
    commands = [line.strip() for line in body.splitlines() if re.match(r"\s*epimem observe ", line)]
    assert commands or name == "mirror" and "epimem mirror answer" in body
    for cmd in commands:
        bare = cmd.replace("${CLAUDE_SESSION_ID}", "S")  # substituted by Claude Code before the model sees it
        assert "<<" not in bare and "|" not in bare and "{" not in bare and "$(" not in bare, cmd
        shlex.split(cmd)  # well-formed shell words
    assert "<<'JSON'" not in body


def _fake_claude(tmp_path, code: int) -> Path:
    """A `claude` on PATH that logs its arguments, says a line and exits `code`."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir(exist_ok=True)
    claude = bin_dir / "claude"
    claude.write_text(f'#!/bin/sh\necho "$@" >> "{tmp_path}/claude.log"\necho "claude says: $2 done"\nexit {code}\n')
    claude.chmod(0o755)
    return bin_dir


def run_with(home, bin_dir, *args, vault):
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "EPIMEM_VAULT")}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / ".local" / "share"),
               PATH=os.pathsep.join((str(bin_dir), os.path.dirname(EPIMEM), env.get("PATH", ""))))
    return subprocess.run([EPIMEM, "--vault", str(vault), *args], capture_output=True, text=True, env=env,
                          cwd=home, timeout=60)


def test_the_plugin_install_runs_claude_plugin_and_says_what_it_said(home, tmp_path):
    bin_dir = _fake_claude(tmp_path, 0)
    r = run_with(home, bin_dir, "install", "claude-code", "--plugin", vault=tmp_path / "v")
    assert r.returncode == 0, r.stderr
    log = (tmp_path / "claude.log").read_text().splitlines()
    assert [line.split()[:2] for line in log] == [["plugin", "marketplace"], ["plugin", "install"]]
    assert "claude says: marketplace done" in r.stdout and "claude says: install done" in r.stdout
    assert r.stdout.index("run       claude plugin marketplace add") < r.stdout.index("claude says")
    (tmp_path / "claude.log").unlink()
    bad = _fake_claude(tmp_path, 3)
    r = run_with(home, bad, "install", "claude-code", "--plugin", vault=tmp_path / "v")
    assert r.returncode == 1 and "claude plugin marketplace add" in r.stderr and "failed: claude says" in r.stderr
    assert len((tmp_path / "claude.log").read_text().splitlines()) == 1  # it stopped at the first failure


def test_in_the_home_folder_the_project_scope_is_the_users_and_doctor_does_not_offer_it(home):
    """`epimem doctor` run from ~ (where a new user is) saw ~/.claude/skills as a project's and
    said to run `install claude-code --scope project`, which took the hooks out of
    ~/.claude/settings.json as a project's old file."""
    assert run(home, "init").returncode == 0
    assert run(home, "install", "claude-code").returncode == 0
    doc = run(home, "doctor", "--json")
    rows = [c for c in json.loads(doc.stdout)["checks"] if c["name"].startswith("claude-code")]
    assert [(c["name"], c["status"]) for c in rows] == [("claude-code", "ok")], rows
    before = files(home)
    for extra in ((), ("--uninstall",)):
        r = run(home, "install", "claude-code", "--scope", "project", *extra)
        assert r.returncode == 1 and "are its user files" in r.stderr and "without --scope project" in r.stderr
        assert files(home) == before
