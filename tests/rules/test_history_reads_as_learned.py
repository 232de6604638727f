"""SPEC §4 and §3 (issue 9, points 10–13): sessions ride along, undo/redo walk epimem's
commits, messages name what changed in epistemology.md and sessions.json, and an invalid
parameter is reported by every command that reads it."""

import subprocess

import pytest

from epimem.core.params import DEFAULTS


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _subjects(root):
    return _git(root, "log", "--format=%s").splitlines()


@pytest.fixture
def v(cli, tmp_path):
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    r = cli("--vault", root, "belief", "add", "--title", "Likes tabs", "--statement", "Indents with tabs.",
            "--kind", "preference", "--basis", "behavioral", "--permanence", "durable")
    assert r.code == 0
    return root


def _obs(cli, root, session, strength="confirming", day=None):
    args = ["--vault", root] + (["--today", day] if day else []) + [
        "observe", "--connects", "likes-tabs", "--strength", strength, "--evidence", f"tabs in {session}",
        "--session", session]
    r = cli(*args)
    assert r.code == 0, r.err
    return r


# --- point 10 ----------------------------------------------------------------------------

def test_sessions_ride_along_and_commit_alone_at_most_once_a_day(cli, v):
    for _ in range(3):
        assert cli("--vault", v, "session", "start").code == 0
    assert sum(s.startswith("session:") for s in _subjects(v)) == 1  # the day's first, alone
    assert _subjects(v)[0] == "session: #1 counted"
    assert "state/sessions.json" in _git(v, "status", "--porcelain")
    _obs(cli, v, "s1")
    assert _git(v, "status", "--porcelain").strip() == ""  # the count rode along
    body = _git(v, "log", "-1", "--format=%B")
    assert body.startswith("observe: confirming → likes-tabs") and "sessions: count 1 → 3" in body
    # the next day, the first session that finds the count uncommitted commits it
    assert cli("--vault", v, "--today", "2026-12-01", "session", "start").code == 0
    assert _subjects(v)[0] == "session: #4 counted"


def test_api_session_start_makes_no_commit_of_its_own_the_same_day(vault):
    vault.session_start()
    n = len(_subjects(vault.root))
    r = vault.session_start()
    assert r.commit is None and r.count == 2 and len(_subjects(vault.root)) == n


# --- point 11 ----------------------------------------------------------------------------

@pytest.mark.seed_rules
def test_undo_walks_back_and_redo_reapplies(cli, v):
    _obs(cli, v, "s1")                           # 0.30 → 0.35
    cli("--vault", v, "session", "start")
    count = _git(v, "show", "HEAD:state/sessions.json")
    r = cli("--vault", v, "undo", "--json")
    assert r.code == 0 and r.json()["undone"].startswith("observe: confirming")
    show = lambda: cli("--vault", v, "belief", "show", "likes-tabs", "--json").json()  # noqa: E731
    assert show()["confidence"] == 0.30
    assert _git(v, "show", "HEAD:state/sessions.json") == count  # a session count is never undone
    r = cli("--vault", v, "undo", "--json")      # one further back, not a redo
    assert r.json()["undone"].startswith("belief: add likes-tabs")
    assert cli("--vault", v, "belief", "show", "likes-tabs").code == 1
    r = cli("--vault", v, "undo")
    assert r.code == 1 and "nothing to undo" in r.err
    assert cli("--vault", v, "redo", "--json").json()["redone"].startswith("belief: add likes-tabs")
    assert cli("--vault", v, "redo").out.startswith("Redid: observe: confirming")
    assert show()["confidence"] == 0.35
    assert "nothing to redo" in cli("--vault", v, "redo").err


@pytest.mark.seed_rules
def test_undo_a_named_commit(cli, v):
    # Not the last change: a later one, in other files, stays. (A later change to the same
    # lines makes git refuse, and nothing is written: test_git.py.)
    _obs(cli, v, "s1", day="2026-10-15")
    first = _git(v, "rev-parse", "HEAD").strip()
    cli("--vault", v, "belief", "add", "--title", "Plans first", "--statement", "Writes a plan first.",
        "--kind", "workflow", "--basis", "behavioral", "--permanence", "durable")
    r = cli("--vault", v, "undo", first[:10], "--json")
    assert r.code == 0, r.err
    assert r.json()["undone"].startswith("observe: confirming")
    assert cli("--vault", v, "belief", "show", "likes-tabs", "--json").json()["confidence"] == 0.30
    assert cli("--vault", v, "belief", "show", "plans-first").code == 0  # the later change stays
    again = cli("--vault", v, "undo", first)
    assert again.code == 1 and "already undone" in again.err
    assert "not a commit" in cli("--vault", v, "undo", "nope").err


def test_api_undo_skips_session_commits(vault):
    vault.add_belief(title="Likes tabs", statement="Indents with tabs.", kind="preference",
                     basis="behavioral", permanence="durable")
    vault.session_start()                    # the day's session commit
    sha = _git(vault.root, "rev-parse", "HEAD").strip()
    with pytest.raises(Exception, match="session count is never what undo reverts"):
        vault.undo(sha)
    _, subject = vault.undo()
    assert subject.startswith("belief: add likes-tabs")


# --- point 12 ----------------------------------------------------------------------------

@pytest.mark.seed_rules
def test_commit_and_diff_name_parameters_sessions_and_unknown_keys(cli, v):
    base = _git(v, "rev-parse", "HEAD").strip()
    ep = v / "epistemology.md"
    ep.write_text(ep.read_text().replace("confirm_step: 0.05", "confirm_step: 0.1"))
    b = v / "beliefs" / "likes-tabs.md"
    b.write_text(b.read_text().replace("pinned: false", "pinned: false\naliases: [tabs]"))
    r = cli("--vault", v, "commit", "--json")
    assert r.code == 0, r.err
    texts = [c["text"] for c in r.json()["changes"]]
    assert "epistemology.md: confirm_step 0.05 → 0.1" in texts
    assert any("aliases added ([tabs])" in t for t in texts)
    assert "epistemology.md confirm_step 0.05 → 0.1" in _subjects(v)[0]
    cli("--vault", v, "session", "start")
    cli("--vault", v, "session", "start")
    r = cli("--vault", v, "commit", "--json")
    assert any(t.startswith("state/sessions.json: count") for t in [c["text"] for c in r.json()["changes"]])
    words = cli("--vault", v, "diff", "--since", base).out
    assert "epistemology.md: confirm_step 0.05 → 0.1" in words and "aliases added" in words


# --- point 13 ----------------------------------------------------------------------------

@pytest.mark.parametrize("cmd", [("belief", "list"), ("belief", "show", "likes-tabs"), ("mirror", "audit"),
                                 ("observe", "--connects", "likes-tabs", "--strength", "confirming",
                                  "--evidence", "tabs again", "--session", "z")])
@pytest.mark.seed_rules
def test_an_invalid_parameter_is_reported_by_every_command(cli, v, cmd):
    ep = v / "epistemology.md"
    text = ep.read_text().replace("confirm_step: 0.05", "confirm_step: lots")
    ep.write_text(text)
    line = text.splitlines().index("confirm_step: lots") + 1
    r = cli("--vault", v, *cmd)
    assert r.code == 0, r.err
    assert f"epistemology.md:{line}: parameter 'confirm_step'" in r.err


@pytest.mark.seed_rules
def test_api_reports_through_the_vaults_hook(vault):
    ep = vault.root / "epistemology.md"
    ep.write_text(ep.read_text().replace("confirm_step: 0.05", "confirm_step: lots"))
    seen = []
    vault.vault.on_rules_problems = seen.extend
    assert vault.params.confirm_step == DEFAULTS.confirm_step  # epimem's default, not the value it replaced
    assert seen and seen[0].path == "epistemology.md" and "confirm_step" in seen[0].message
