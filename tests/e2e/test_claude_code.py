"""epimem with the real Claude Code (npm, pinned) against a mock Messages API on 127.0.0.1.

What a user does, end to end: `epimem install claude-code` (or `--plugin`) into a temporary HOME,
then `claude -p …`. The mock answers the model's turns, so the tests see exactly what Claude Code
sends (the hook's context, the expanded skills) and what it runs (the Bash calls a skill teaches).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from claude_harness import BEFORE_ARGS, EPIMEM, ClaudeCode, claude_binary
from mock_api import MockAPI, bash, request_text, text

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
# Quotes of both kinds, an apostrophe, a newline and non-ASCII text: what real evidence holds.
EVIDENCE = 'Said "ship it on Friday", then didn\'t;\nasked for a rollback plan first — café naïve ✓ 日本語'


# --- helpers -----------------------------------------------------------------------------------

def install(cc: ClaudeCode, *args: str, vault: Path | None = None) -> str:
    pre = ["--vault", str(vault)] if vault else []
    return cc.epimem(*pre, "install", "claude-code", *args).stdout


def add_belief(cc: ClaudeCode, vault: Path | None, title: str, statement: str) -> None:
    pre = ["--vault", str(vault)] if vault else []
    cc.epimem(*pre, "belief", "add", "--title", title, "--statement", statement, "--kind", "workflow",
              "--basis", "behavioral", "--permanence", "durable", "--confidence", "0.6")


def session_count(vault: Path) -> int:
    return json.loads((vault / "state" / "sessions.json").read_text())["count"]


def first_request(api: MockAPI) -> str:
    reqs = api.main_requests()
    assert reqs, f"Claude Code sent no main request: {[(r.method, r.path) for r in api.requests]}"
    return request_text(reqs[0])


def only_claude_called(api: MockAPI) -> None:
    """Every request the mock saw came from Claude Code itself: epimem never calls the API."""
    agents = {r.headers.get("User-Agent", r.headers.get("user-agent", "")) for r in api.requests}
    assert agents and all(a.startswith("claude-cli/") for a in agents), agents


def sq(value: str) -> str:
    """A value in single quotes, an apostrophe written '\\'' — the quoting the skills teach."""
    return "'" + value.replace("'", "'\\''") + "'"


def taught_command(skill_text: str, title: str, suffix: str = "") -> str:
    """The skill's own new-belief command, as the model read it, with our title and evidence."""
    m = re.search(r"^(\S+ observe --origin skill --session \S+ --source claude-code --json --connects new .*)$",
                  skill_text, re.M)
    assert m, "the /observe skill teaches no `observe --connects new` command:\n" + skill_text[-3000:]
    cmd = m.group(1)
    value = r"'(?:[^']|'\\'')*'"
    cmd = re.sub(rf"--title {value}", lambda _: f"--title {sq(title)}", cmd)
    # (the same evidence twice would be one observation: epimem keeps no duplicates)
    cmd = re.sub(rf"--evidence {value}", lambda _: f"--evidence {sq(EVIDENCE + suffix)}", cmd)
    # What it suggests is the model's own words for each belief; the skill's example, sent three
    # times, would be three copies of one statement, which rule 17 rightly holds back.
    cmd = re.sub(rf"--suggests {value}", lambda _: f"--suggests {sq('The user: ' + title.lower() + '.')}", cmd)
    assert title in cmd and "café" in cmd, cmd
    return cmd


def wait_for(predicate, timeout: float = 30.0, what: str = "") -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def commits(cc: ClaudeCode, vault: Path) -> list[tuple[str, str]]:
    """(subject, body) of the vault's commits, newest first."""
    out = cc.git_log(vault, "--format=%s%x1f%b%x1e")
    return [tuple(c.strip("\n").split("\x1f", 1)) for c in out.split("\x1e") if c.strip()]


# --- the hook ----------------------------------------------------------------------------------

def test_hook_context_reaches_the_model_and_sessions_count_once(claude_code):
    cc = claude_code
    install(cc)
    vault = cc.default_vault
    add_belief(cc, None, "Splits large changes into reviewable steps", "Asks for big changes as a series of PRs.")
    run = cc.claude("-p", "hello")
    assert run.returncode == 0, run.explain()
    starts = run.hook_runs("SessionStart")
    assert [(h.matcher, h.status) for h in starts] == [("startup", 0)], run.explain()
    sent = first_request(cc.api)
    assert "SessionStart hook additional context" in sent
    assert "Splits large changes into reviewable steps" in sent and "session 1" in sent
    # The first count of a day is committed alone; later ones ride along with the next change (SPEC §4).
    wait_for(lambda: any(s.startswith("session: #1 counted") for s, _ in commits(cc, vault)), what="the count's commit")
    # resume and compact give the context again (compact) or not at all (resume), but never count
    resumed = cc.claude("-p", "again", "--resume", run.session_id)
    assert resumed.returncode == 0, resumed.explain()
    compacted = cc.claude("-p", "/compact", "--resume", run.session_id)
    assert compacted.returncode == 0, compacted.explain()
    assert [h.matcher for h in compacted.hook_runs("SessionStart")] == ["compact"], compacted.explain()
    assert all(h.status == 0 for h in resumed.hook_runs() + compacted.hook_runs())
    assert session_count(vault) == 1
    time.sleep(1)
    assert [s for s, _ in commits(cc, vault) if s.startswith("session:")] == ["session: #1 counted"]
    only_claude_called(cc.api)


def test_hook_runs_on_a_version_that_ignores_args(api, tmp_path):
    """Before 2.1.139 Claude Code drops a handler's "args": the one shell string works there too."""
    cc = ClaudeCode(claude_binary(BEFORE_ARGS), tmp_path, api)
    vault = tmp_path / "elsewhere" / "vault"
    install(cc, vault=vault)
    add_belief(cc, vault, "Reads the diff before the summary", "Checks the artifact, not the description.")
    run = cc.claude("-p", "hello")
    assert run.returncode == 0, run.explain()
    assert [h.status for h in run.hook_runs("SessionStart")] == [0], run.explain()
    sent = first_request(api)
    assert "Reads the diff before the summary" in sent  # the vault came from settings' "env"
    assert session_count(vault) == 1
    # What the "args" form did on this version: the bare program ran, and nothing reached the model.
    settings = cc.home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    for group in data["hooks"]["SessionStart"]:
        group["hooks"] = [{"type": "command", "command": str(EPIMEM), "args": ["hook", "session-start"]}]
    settings.write_text(json.dumps(data))
    before = len(api.main_requests())
    old = cc.claude("-p", "hello again")
    assert [h.status for h in old.hook_runs("SessionStart")] == [1], old.explain()  # `epimem` printed usage
    assert "Reads the diff before the summary" not in request_text(api.main_requests()[before])
    assert session_count(vault) == 1


# --- the skills --------------------------------------------------------------------------------

def test_skills_are_listed_and_expand_with_their_data(claude_code):
    cc = claude_code
    install(cc)
    add_belief(cc, None, "Wants tests before the fix", "Asks for a failing test first.")
    run = cc.claude("-p", "hello")
    assert run.returncode == 0, run.explain()
    listing = first_request(cc.api)
    assert re.search(r"- observe: Records what this session showed", listing), listing[-2000:]
    assert re.search(r"- mirror: Shows the user what epimem believes", listing)
    audit = cc.claude("-p", "/mirror audit")
    assert audit.returncode == 0, audit.explain()
    sent = request_text(cc.api.main_requests()[-1])
    assert "The data above is computed by epimem" in sent
    assert "Wants tests before the fix" in sent and "!`epimem skill" not in sent  # the `!` line ran
    observe = cc.claude("-p", "/observe")
    sent = request_text(cc.api.main_requests()[-1])
    assert observe.returncode == 0 and observe.session_id in sent  # ${CLAUDE_SESSION_ID} substituted
    assert "0 observation(s) recorded" in sent


@pytest.mark.parametrize("n", [1, 3])
def test_the_command_observe_teaches_records_observations(claude_code, n):
    cc = claude_code
    install(cc)
    vault = cc.default_vault
    # Three different beliefs: near-duplicate titles would be held back by rule 17, as they should.
    titles = ["Wants a rollback plan before shipping", "Reads the changelog of every dependency bump",
              "Names branches after the ticket"][:n]
    cc.api.add(*[lambda body, i=i, t=t: bash(taught_command(request_text(body), t, f" (#{i})"), "Record")
                 for i, t in enumerate(titles, 1)], text("Recorded."))
    run = cc.claude("-p", "/observe")
    assert run.returncode == 0, run.explain()
    assert run.denials == [], run.denials
    results = cc.api.tool_results()
    assert len(results) == n and not any(r.get("is_error") for r in results), results
    recorded = [(s, b) for s, b in commits(cc, vault) if s.startswith("observe:")]
    assert len(recorded) == n, commits(cc, vault)
    assert all(f"Epimem-Session: {run.session_id}" in b for _, b in recorded)
    notes = "\n".join(p.read_text() for p in (vault / "observations").rglob("*.md"))
    assert EVIDENCE.split("\n")[0] in notes and "日本語" in notes and "didn't" in notes
    only_claude_called(cc.api)


def test_observe_works_with_the_vault_elsewhere_and_epimem_off_path(api, claude_bin, tmp_path):
    cc = ClaudeCode(claude_bin, tmp_path, api, epimem_on_path=False)
    vault = tmp_path / "somewhere" / "else"
    install(cc, vault=vault)
    assert cc.settings()["env"] == {"EPIMEM_VAULT": str(vault)}
    add_belief(cc, vault, "Wants tests before the fix", "Asks for a failing test first.")
    api.add(lambda body: bash(taught_command(request_text(body), "Keeps a rollback plan"), "Record"), text("ok"))
    run = cc.claude("-p", "/observe")
    assert run.returncode == 0 and run.denials == [], run.explain()
    sent = request_text(api.main_requests()[0])
    assert "Wants tests before the fix" in sent  # the `!` line found both epimem and the vault
    assert "command not found" not in sent
    assert [s for s, _ in commits(cc, vault) if s.startswith("observe:")], commits(cc, vault)
    assert not cc.default_vault.exists()
    # /mirror audit too: answered, not dropped
    audit = cc.claude("-p", "/mirror audit")
    assert audit.returncode == 0 and "Wants tests before the fix" in request_text(api.main_requests()[-1])


def test_mirror_interview_teaches_a_command_that_passes(claude_code):
    cc = claude_code
    install(cc)
    vault = cc.default_vault

    def interview_answer(body):
        sent = request_text(body)
        m = re.search(r"^\s*(\S+ observe --origin skill --session \S+ --source mirror-interview --json .*)$", sent,
                      re.M)
        assert m, sent[-3000:]
        cmd = m.group(1).replace("--connects 'BELIEF-ID' --strength confirming",
                                 "--connects new --strength single --title 'Plans rollbacks first' "
                                 "--kind workflow --permanence unknown")
        cmd = re.sub(r"--evidence '[^']*'", lambda _: f"--evidence {sq('Said: ' + EVIDENCE)}", cmd)
        return bash(cmd, "Record the answer")

    cc.api.add(interview_answer, text("Thanks."))
    run = cc.claude("-p", "/mirror interview")
    assert run.returncode == 0 and run.denials == [], run.explain()
    recorded = [b for s, b in commits(cc, vault) if s.startswith("observe:")]
    assert recorded and f"Epimem-Session: {run.session_id}" in recorded[0]


def test_a_broken_vault_gives_the_skill_a_readable_line(claude_code, tmp_path):
    cc = claude_code
    install(cc)
    cc.extra_env["EPIMEM_VAULT"] = str(tmp_path / "no-such-vault")  # as a wrong settings "env" would
    run = cc.claude("-p", "/mirror audit")
    assert run.returncode == 0, run.explain()
    sent = request_text(cc.api.main_requests()[0])  # the skill was not dropped: the model was asked
    assert "no vault at" in sent and "epimem --vault PATH install claude-code" in sent


def test_project_scope_keeps_personal_paths_out_of_the_committed_settings(claude_code, tmp_path):
    cc = claude_code
    vault = tmp_path / "v"
    install(cc, "--scope", "project", vault=vault)
    claude_dir = cc.project / ".claude"
    assert not (claude_dir / "settings.json").exists()
    for p in (claude_dir / "skills").rglob("*"):
        assert p.is_dir() or str(tmp_path) not in p.read_text()
    add_belief(cc, vault, "Names things after what they do", "Renames helpers to verbs.")
    run = cc.claude("-p", "hello")
    assert run.returncode == 0 and [h.status for h in run.hook_runs("SessionStart")] == [0], run.explain()
    assert "Names things after what they do" in first_request(cc.api)
    install(cc, "--scope", "project", "--uninstall")
    assert not claude_dir.exists() or not any(claude_dir.rglob("*.json*")), list(claude_dir.rglob("*"))


# --- the session-end pass ----------------------------------------------------------------------

def test_auto_observe_records_from_the_transcript(claude_code):
    cc = claude_code
    install(cc, "--auto-observe")
    vault = cc.default_vault
    run = cc.claude("-p", "I prefer small commits with clear messages.")
    assert run.returncode == 0, run.explain()
    assert [h.status for h in run.hook_runs("SessionEnd")] == [0], run.explain()
    wait_for(lambda: any(s.startswith("observe:") for s, _ in commits(cc, vault)), timeout=60,
             what="the session-end pass's commit")
    body = next(b for s, b in commits(cc, vault) if s.startswith("observe:"))
    assert f"Epimem-Session: {run.session_id}" in body
    notes = "\n".join(p.read_text() for p in (vault / "observations").rglob("*.md"))
    assert "small commits" in notes
    only_claude_called(cc.api)


# --- the plugin --------------------------------------------------------------------------------

@pytest.mark.parametrize("folder", [".", "epimem/templates/claude", "epimem/templates/claude/plugin"])
def test_plugin_and_marketplaces_validate_strictly(claude_code, folder):
    r = claude_code.run_binary("plugin", "validate", "--strict", str(ROOT / folder))
    assert r.returncode == 0 and "Validation passed" in r.stdout, r.stdout + r.stderr


def test_plugin_installs_runs_its_hook_and_uninstalls(claude_code, tmp_path):
    cc = claude_code
    cc.path = f"{cc.binary.parent}:{cc.path}"  # `epimem install --plugin` runs `claude plugin …`
    vault = tmp_path / "v"
    out = install(cc, "--plugin", vault=vault)
    assert "claude plugin install epimem@epimem" in out, out
    listed = json.loads(cc.run_binary("plugin", "list", "--json").stdout)
    assert any(p["id"] == "epimem@epimem" and p["enabled"] for p in listed), listed
    assert "hooks" not in cc.settings() and cc.settings()["env"] == {"EPIMEM_VAULT": str(vault)}
    add_belief(cc, vault, "Asks before deleting anything", "Wants a confirmation before rm.")
    run = cc.claude("-p", "hello")
    assert run.returncode == 0, run.explain()
    starts = run.hook_runs("SessionStart")
    assert [(h.plugin, h.status) for h in starts] == [("epimem@epimem", 0)], run.explain()
    assert "/bin/epimem" in starts[0].command
    sent = first_request(cc.api)
    assert "Asks before deleting anything" in sent
    assert "epimem:observe" in sent or "- observe:" in sent
    assert session_count(vault) == 1
    # its skills find epimem through the plugin's bin/ and the vault through "env"
    audit = cc.claude("-p", "/epimem:mirror audit")
    assert audit.returncode == 0 and "Asks before deleting anything" in request_text(cc.api.main_requests()[-1])
    # the settings install refuses while the plugin is on
    refused = cc.epimem("--vault", str(vault), "install", "claude-code", check=False)
    assert refused.returncode == 1 and "plugin is enabled" in refused.stderr
    install(cc, "--plugin", "--uninstall")
    listed = json.loads(cc.run_binary("plugin", "list", "--json").stdout)
    assert not any(p["id"].startswith("epimem@") for p in listed)
    assert "env" not in cc.settings() and "enabledPlugins" not in json.dumps(cc.settings()).replace(
        '"enabledPlugins": {}', "")


def test_plugin_and_settings_hooks_never_count_a_session_twice(claude_code):
    cc = claude_code
    install(cc)  # settings.json hooks, then the plugin by hand, as a user might
    for argv in (["plugin", "marketplace", "add", str(ROOT)], ["plugin", "install", "epimem@epimem"]):
        r = cc.run_binary(*argv)
        assert r.returncode == 0, r.stdout + r.stderr
    run = cc.claude("-p", "hello")
    assert run.returncode == 0, run.explain()
    starts = run.hook_runs("SessionStart")
    assert sorted(h.plugin for h in starts) == ["", "epimem@epimem"] and all(h.status == 0 for h in starts)
    assert session_count(cc.default_vault) == 1
    assert first_request(cc.api).count("SessionStart hook additional context") == 1
    log = (cc.default_vault / ".epimem" / "hook.log").read_text()
    assert "both installed" in log
    # and `epimem install --plugin` refuses while the settings hooks are there
    cc.path = f"{cc.binary.parent}:{cc.path}"
    r = cc.epimem("install", "claude-code", "--plugin", check=False)
    assert r.returncode == 1 and "counted twice" in r.stderr


def test_plugin_with_epimem_off_path_records_what_its_observe_teaches(api, claude_bin, tmp_path):
    cc = ClaudeCode(claude_bin, tmp_path, api, epimem_on_path=False)
    cc.path = f"{cc.binary.parent}:{cc.path}"
    vault = tmp_path / "v"
    install(cc, "--plugin", vault=vault)
    assert cc.settings()["env"] == {"EPIMEM_VAULT": str(vault), "EPIMEM_BIN": str(EPIMEM)}
    add_belief(cc, vault, "Asks before deleting anything", "Wants a confirmation before rm.")
    api.add(lambda body: bash(taught_command(request_text(body), "Keeps a rollback plan"), "Record"), text("ok"))
    run = cc.claude("-p", "/epimem:observe")
    assert run.returncode == 0 and run.denials == [], run.explain()
    sent = request_text(api.main_requests()[0])
    assert "Asks before deleting anything" in sent  # the `!` line ran the plugin's bin/epimem
    results = api.tool_results()
    assert results and not results[0].get("is_error"), results  # so did the model's plain `epimem`
    recorded = [b for s, b in commits(cc, vault) if s.startswith("observe:")]
    assert recorded and f"Epimem-Session: {run.session_id}" in recorded[0]
