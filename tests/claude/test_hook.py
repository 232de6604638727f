"""The session-start hook as Claude Code runs it: a real process, real JSON on
stdin, a real vault (a git repository) and a temporary HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import pytest

from epimem.api import context as session_context
from epimem.claude import hook
from epimem.core.model import Belief
from epimem.core.params import DEFAULTS
from epimem.store import context_cache as context

TODAY = "2026-11-30"  # as in conftest.py

EPIMEM = str(Path(sys.executable).parent / "epimem")
ROOT = Path(__file__).resolve().parents[2]


def run_hook(payload, vault, *args, env=None, event="session-start", timeout=20):
    stdin = payload if isinstance(payload, str) else json.dumps(payload)
    e = {**os.environ, **(env or {})}
    return subprocess.run([EPIMEM, "hook", event, "--vault", str(vault), *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout, env=e)


def wait_for(pred, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def git_subjects(root):
    out = subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True)
    return out.stdout.splitlines()


def quiet(root):
    """No background refresh or commit still running (they hold these)."""
    marker = Path(root) / ".epimem" / "context.refreshing"
    return not marker.exists()


@pytest.fixture
def project(tmp_path):
    p = tmp_path / "work" / "webshop"
    (p / ".git").mkdir(parents=True)
    (p / "src").mkdir()
    return p


@pytest.fixture
def filled(vault, project):
    vault.add_belief(title="Prefers small pull requests", statement="Splits work into small reviewable PRs. "
                     "Big-bang changes make them uneasy.", kind="preference", basis="behavioral",
                     permanence="durable", confidence=0.75)
    vault.add_belief(title="Thinks out loud before deciding", statement="Talks through options first.",
                     kind="trait", basis="interpretive", permanence="unknown", confidence=0.45)
    vault.add_belief(title="A wild guess", statement="Might like jazz.", kind="trait",
                     basis="interpretive", permanence="unknown", confidence=0.15)
    vault.add_belief(title="Webshop uses Postgres 16", statement="The webshop's database is Postgres 16.",
                     kind="fact", basis="fact", permanence="durable", scope="webshop")
    vault.add_belief(title="Other project convention", statement="Tabs in the other project.",
                     kind="convention", basis="self-report", permanence="durable", scope="elsewhere")
    return vault


def startup(project, **kw):
    return {"session_id": "s-1", "transcript_path": "/nonexistent.jsonl", "cwd": str(project / "src"),
            "hook_event_name": "SessionStart", "source": "startup", **kw}


def test_startup_counts_and_injects_project_context(filled, project):
    root = filled.root
    r = run_hook(startup(project), root)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    text = out["additionalContext"]
    assert "session 1 recorded" in text
    assert "For this project (webshop):" in text
    assert "(factual) Webshop uses Postgres 16" in text
    assert "(established) Prefers small pull requests" in text
    assert "(tentative) Thinks out loud before deciding" in text
    assert "A wild guess" not in text            # speculative: not put in front of the model
    assert "Other project convention" not in text  # another project's scope
    assert text.index("Webshop uses") < text.index("In general:") < text.index("Prefers small")
    assert len(text) <= hook.DEFAULT_BUDGET
    s = json.loads((root / "state" / "sessions.json").read_text())
    assert s["count"] == 1 and s["last_session"] == TODAY
    # the commit happens in the background, with the trailers of every epimem commit
    assert wait_for(lambda: "session: #1 counted" in git_subjects(root))
    body = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=root, capture_output=True, text=True).stdout
    assert "Epimem-Op: session" in body and "Epimem-Session: s-1" in body


@pytest.mark.parametrize("source", ["resume", "clear", "compact"])
def test_only_startup_counts(filled, project, source):
    r = run_hook(startup(project, source=source), filled.root)
    assert r.returncode == 0
    text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "a continued session; 0 sessions" in text
    assert "Prefers small pull requests" in text
    assert json.loads((filled.root / "state" / "sessions.json").read_text())["count"] == 0


def test_dormancy_and_review_due(filled, project):
    root = filled.root
    s = json.loads((root / "state" / "sessions.json").read_text())
    s.update(count=9, last_session="2026-09-01", next_review_at=10)
    (root / "state" / "sessions.json").write_text(json.dumps(s))
    r = run_hook(startup(project), root)
    text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "session 10 recorded" in text
    assert "Returning from dormancy: the previous session was 90 days ago" in text
    assert "review of what epimem believes about the user is due (10 sessions counted" in text


def test_decay_is_applied_with_todays_date(filled, project):
    # A year on, the durable 0.75 belief has decayed below "established".
    later = (date.fromisoformat(TODAY) + timedelta(days=120)).isoformat()
    r = run_hook(startup(project, source="resume"), filled.root, env={"EPIMEM_TODAY": later})
    text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "(established) Prefers small" not in text
    assert "Prefers small pull requests" in text


def test_budget_is_respected(vault, project):
    for i in range(40):
        (vault.root / f"beliefs/b{i:02d}.md").write_text(_belief_text(f"Belief number {i} with a long title",
                                                                     "word " * 60))
    context.refresh_context(vault.root)
    r = run_hook(startup(project), vault.root, "--budget-tokens", "200")
    text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert 300 < len(text) <= 600
    r = run_hook(startup(project), vault.root, env={"EPIMEM_HOOK_BUDGET_TOKENS": "100000"})
    text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert len(text) <= 10_000
    assert text.count("\n- (") == session_context.MAX_BELIEFS


def _belief_text(title, statement, conf=0.6, scope="global"):
    return (f"---\ntitle: {title}\nkind: trait\nbasis: behavioral\nconfidence: {conf}\npermanence: durable\n"
            f"first: {TODAY}\nconfirmed:\nchallenged:\nstatus: active\ntags: []\nscope: {scope}\n"
            f"pinned: false\nsupersedes: []\n---\n{statement}\n\n## Evidence\n")


@pytest.mark.parametrize("stdin", ["", "not json {", "[1, 2]", '{"source": 5, "cwd": []}'])
def test_bad_stdin_exits_zero_and_logs(filled, stdin):
    r = run_hook(stdin, filled.root)
    assert r.returncode == 0
    if r.stdout:
        json.loads(r.stdout)  # whatever it prints is well-formed
    assert json.loads((filled.root / "state" / "sessions.json").read_text())["count"] == 0
    if stdin.strip() and stdin != '{"source": 5, "cwd": []}':
        assert "stdin" in (filled.root / ".epimem" / "hook.log").read_text()


def test_no_vault_prints_nothing(tmp_path, project):
    r = run_hook(startup(project), tmp_path / "nowhere")
    assert r.returncode == 0 and r.stdout == ""
    assert "no epimem vault" in r.stderr
    assert not (tmp_path / "nowhere").exists()


def test_a_vault_without_its_rules_file_is_a_vault_to_the_hook_too(filled, project):
    # `store.paths.is_vault`: every command accepts it (on the default parameters), so the hook does.
    (filled.root / "epistemology.md").unlink()
    r = run_hook(startup(project), filled.root)
    assert r.returncode == 0, r.stderr
    assert "Prefers small pull requests" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]


def test_broken_counter_is_never_overwritten(filled, project):
    p = filled.root / "state" / "sessions.json"
    p.write_text('{"count": 3, oops')
    r = run_hook(startup(project), filled.root)
    assert r.returncode == 0
    assert p.read_text() == '{"count": 3, oops'
    text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Prefers small pull requests" in text  # the context still comes
    assert "not a valid session counter" in (filled.root / ".epimem" / "hook.log").read_text()


def test_broken_or_missing_cache_is_rebuilt_in_the_background(filled, project):
    cache = filled.root / ".epimem" / "context.json"
    cache.write_text("{broken")
    r = run_hook(startup(project, source="resume"), filled.root)
    assert r.returncode == 0
    text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Prefers small" not in text   # no cache: the session line only, still fast
    assert wait_for(lambda: context.read_context_cache(filled.root) is not None and quiet(filled.root))
    r = run_hook(startup(project, source="resume"), filled.root)
    assert "Prefers small pull requests" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]


def test_stale_cache_is_used_then_refreshed(filled, project):
    root = filled.root
    # A belief written by something other than epimem (a sync, a script): the
    # folder's mtime moves, the cache does not.
    tmp = root / "beliefs" / ".new.tmp"
    tmp.write_text(_belief_text("Reads the changelog first", "Always reads the changelog.", 0.8))
    os.replace(tmp, root / "beliefs" / "reads-the-changelog-first.md")
    r = run_hook(startup(project, source="resume"), root)
    assert "Reads the changelog" not in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert wait_for(lambda: context.read_context_cache(root)["signature"] == context.signature(root)
                    and quiet(root))
    r = run_hook(startup(project, source="resume"), root)
    assert "Reads the changelog first" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_belief_retired_or_superseded_by_hand_is_never_served_as_current_from_the_cache(filled, project):
    """SPEC §14: the cache is read as it is while a refresh runs in the background, but a belief
    whose file now says it is no longer held is not listed as current in the meantime."""
    root = filled.root
    text = json.loads(run_hook(startup(project), root).stdout)["hookSpecificOutput"]["additionalContext"]
    assert "[prefers-small-pull-requests]" in text and "[thinks-out-loud-before-deciding]" in text
    folder_mtime = os.stat(root / "beliefs").st_mtime_ns
    # Retired in place (Obsidian: the folder's mtime, the cache's signature, does not move) ...
    small = root / "beliefs" / "prefers-small-pull-requests.md"
    small.write_text(small.read_text().replace("status: active", "status: retired"))
    os.utime(root / "beliefs", ns=(folder_mtime, folder_mtime))
    # ... superseded by an editor that saves by rename, and one renamed away in the file manager.
    thinks = root / "beliefs" / "thinks-out-loud-before-deciding.md"
    tmp = root / "beliefs" / ".thinks.tmp"
    tmp.write_text(thinks.read_text().replace("status: active", 'status: "superseded"  # by hand'))
    os.replace(tmp, thinks)
    os.replace(root / "beliefs" / "webshop-uses-postgres-16.md", root / "beliefs" / "postgres.md")
    for args in ((), ("--budget-tokens", "120")):
        r = run_hook(startup(project, source="resume"), root, *args)
        text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
        for bid in ("prefers-small-pull-requests", "thinks-out-loud-before-deciding", "webshop-uses-postgres-16"):
            assert f"[{bid}]" not in text, (args, text)
    assert wait_for(lambda: quiet(root))


def test_old_cache_is_refreshed_after_an_in_place_save(filled, project):
    root = filled.root
    # One the context lists (glob's first file is the file system's order: on tmpfs, a belief too
    # weak or out of scope to be shown at all).
    target = root / "beliefs" / "prefers-small-pull-requests.md"
    cache_file = Path(context.cache_path(root))
    # Obsidian and VS Code save in place: the folder's mtime (the signature) does not move.
    folder_mtime = os.stat(root / "beliefs").st_mtime_ns
    text = target.read_text()
    title = next(line for line in text.splitlines() if line.startswith("title:"))
    target.write_text(text.replace(title, "title: Edited in place by hand"))
    os.utime(root / "beliefs", ns=(folder_mtime, folder_mtime))
    assert context.read_context_cache(root)["signature"] == context.signature(root)
    old = time.time() - 3600
    os.utime(cache_file, (old, old))
    run_hook(startup(project, source="resume"), root)
    assert wait_for(lambda: os.stat(cache_file).st_mtime > old + 60 and quiet(root))
    r = run_hook(startup(project, source="resume"), root)
    assert "Edited in place by hand" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]


def test_hook_path_imports_nothing_heavy(filled, project):
    # Of the CLI only its parser and the hook's declaration: no other command's module.
    code = ("import sys, io, runpy; sys.argv=['epimem','hook','session-start','--vault',sys.argv[1]];\n"
            "from epimem.__main__ import main; main();\n"
            "heavy=[m for m in ('typer','yaml','git','chromadb','anthropic','httpx','epimem.core.model',"
            "'epimem.store.vault','dataclasses') if m in sys.modules];\n"
            "heavy+=[m for m in sys.modules if m.startswith('epimem.cli.') and m not in "
            "('epimem.cli.dispatch','epimem.cli.registry','epimem.cli.spec','epimem.cli.hook')];\n"
            "print('\\nHEAVY', heavy)")
    r = subprocess.run([sys.executable, "-c", code, str(filled.root)], input=json.dumps(startup(project)),
                       capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("HEAVY []"), r.stdout


def test_session_end_starts_the_transcript_pass(vault, tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "sessionId": "s-9", "uuid": "u1",
                                      "message": {"role": "user", "content": "I prefer small commits."}}) + "\n")
    r = run_hook({"session_id": "s-9", "transcript_path": str(transcript), "cwd": str(tmp_path),
                  "hook_event_name": "SessionEnd", "reason": "logout"}, vault.root, event="session-end")
    assert r.returncode == 0 and r.stdout == ""
    assert wait_for(lambda: any(s.startswith("observe:") for s in git_subjects(vault.root)), 30)
    log = (vault.root / "observations" / f"{TODAY[:7]}.md").read_text()
    assert "I prefer small commits" in log and "session s-9" in log


def test_session_end_without_transcript_is_quiet(vault):
    r = run_hook({"session_id": "x", "hook_event_name": "SessionEnd"}, vault.root, event="session-end")
    assert r.returncode == 0 and r.stdout == ""
    assert "no readable transcript_path" in (vault.root / ".epimem" / "hook.log").read_text()


# --- the context cache, the scope, the dispatch --------------------------------------------

def test_cache_keeps_the_best_per_scope():
    today = date.fromisoformat(TODAY)
    bs = [Belief(id=f"b{i:03d}", title=f"B{i}", kind="trait", basis="behavioral", confidence=round(i / 200, 2),
                 permanence="stable", first=today, scope="global" if i % 2 else "proj") for i in range(180)]
    bs.append(replace(bs[-1], id="retired", status="retired", confidence=0.9))
    cache = context.build_context_cache(bs, DEFAULTS, today, per_scope=10)
    assert [r["id"] for r in cache["global"]][:3] == ["b179", "b177", "b175"]
    assert len(cache["global"]) == 10 and len(cache["scopes"]["proj"]) == 10
    assert cache["counts"]["active"] == 180
    assert "retired" not in json.dumps(cache)


def test_scope_matching(tmp_path):
    proj = str(tmp_path / "webshop")
    assert session_context.scope_matches("webshop", proj + "/src", proj)
    assert session_context.scope_matches("WebShop", proj, proj)
    assert session_context.scope_matches(proj, proj + "/src/x", proj)
    assert not session_context.scope_matches(proj + "2", proj, proj)
    assert not session_context.scope_matches("global", proj, proj)
    assert not session_context.scope_matches("other", proj, proj)


def test_global_options_before_hook_take_the_fast_path(filled, project):
    # `epimem --vault X hook session-start` takes the same path as the other spelling: the parser
    # and the hook's module, nothing else of the CLI.
    code = ("import sys; sys.argv=['epimem','--vault',sys.argv[1],'--today','2027-01-15','hook','session-start'];\n"
            "from epimem.__main__ import main; main();\n"
            "print('\\nCLI', sorted(m for m in sys.modules if m.startswith('epimem.cli.')))")
    r = subprocess.run([sys.executable, "-c", code, str(filled.root)], input=json.dumps(startup(project)),
                       capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("CLI ['epimem.cli.dispatch', 'epimem.cli.hook', 'epimem.cli.registry', "
                                    "'epimem.cli.spec']"), r.stdout
    assert "session 1 recorded" in r.stdout
    # --today reached the hook: the counter's day is the one given
    assert json.loads((filled.root / "state" / "sessions.json").read_text())["last_session"] == "2027-01-15"


def test_render_without_anything_is_one_line():
    text = session_context.render_context(None, None, cwd="/", today=date.fromisoformat(TODAY))
    assert text == "epimem: the user's epimem vault."
    assert session_context.render_context(None, None, cwd="/", today=date.fromisoformat(TODAY), budget=0) == ""


def test_a_hook_never_fails(monkeypatch, capsys, cli):
    monkeypatch.setattr(hook, "_log_root", None)  # no vault known yet: the log line goes to stderr
    monkeypatch.setattr(hook, "session_start", lambda **kw: 1 / 0)
    r = cli("hook", "session-start")
    assert r.code == 0 and "ZeroDivisionError" in r.err
    # An event this epimem does not know (a newer settings.json), an option it does not take, a
    # value that is not a number: said, and exit 0.
    r = cli("hook", "no-such-event")
    assert r.code == 0 and "no command 'no-such-event' in epimem hook" in r.err
    monkeypatch.undo()
    r = cli("--today", "someday", "hook", "session-start", "--frob", "x", "--budget-tokens", "lots")
    assert r.code == 0 and "Traceback" not in r.err


def test_an_unfinished_merge_is_said_and_the_session_not_counted(filled, project):
    # A `git pull` that stopped half way leaves MERGE_HEAD: the files may hold both sides.
    root = filled.root
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout
    (root / ".git" / "MERGE_HEAD").write_text(head, encoding="utf-8")
    counter = root / "state" / "sessions.json"
    before = counter.read_bytes() if counter.exists() else None
    r = run_hook({"session_id": "s-merge", "source": "startup", "cwd": str(project)}, root)
    assert r.returncode == 0
    text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "a git merge is unfinished" in text and "record nothing now" in text
    assert (counter.read_bytes() if counter.exists() else None) == before


def test_skills_an_older_epimem_installed_are_said_until_installed_again(filled, project, tmp_path):
    """After an upgrade the skills `install claude-code` copied are the old epimem's, and so is the
    hook's command beside them (`--skills`): the session is told in one line what updates them, run
    as settings.json says. The plugin's hook, whose skills are its own, has no such stamp."""
    from epimem.agents.wiring import SKILLS_VERSION

    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home), "PATH": os.path.dirname(EPIMEM) + os.pathsep + os.environ["PATH"]}
    env.pop("CLAUDE_CONFIG_DIR", None)
    settings = home / ".claude" / "settings.json"

    def install():
        r = subprocess.run([EPIMEM, "--vault", str(filled.root), "install", "claude-code"], cwd=project, env=env,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr

    def said() -> str:
        [command] = {h["command"] for g in json.loads(settings.read_text())["hooks"]["SessionStart"]
                     for h in g["hooks"]}
        r = subprocess.run(command, shell=True, input=json.dumps(startup(project, source="resume")),
                           env={**env, **json.loads(settings.read_text()).get("env", {})},  # as Claude Code runs it
                           capture_output=True, text=True, timeout=20)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]

    install()
    assert f"--skills {SKILLS_VERSION}" in settings.read_text() and "skills installed" not in said()
    settings.write_text(settings.read_text().replace(f"--skills {SKILLS_VERSION}", "--skills 1"))  # an older install's
    first, *rest = said().split("\n")
    assert first == ("epimem: the /observe and /mirror skills installed beside this hook are another epimem's "
                     f"(skills version 1, this epimem's {SKILLS_VERSION}), so their commands may be refused: tell "
                     "the user `epimem install claude-code` (`--scope project` for a project's) updates them.")
    assert "Prefers small pull requests" in "\n".join(rest)
    install()
    assert "skills installed" not in said()
    plugin = json.loads((ROOT / "epimem" / "templates" / "claude" / "plugin" / "hooks" / "hooks.json").read_text())
    assert "--skills" not in json.dumps(plugin)
