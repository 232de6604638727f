"""`epimem doctor` on real vaults, healthy and broken one way each: it says what is wrong with the fix,
exits 1 then and 0 when healthy, and changes nothing it looks at (issue 28)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from epimem.api import doctor
from epimem.core import kernel

ROOT = Path(__file__).resolve().parents[2]


def git(root: Path, *args: str) -> str:
    from vaults import IDENTITY

    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **IDENTITY}).stdout


def checks(root: Path, **kw) -> dict[str, doctor.Check]:
    kw.setdefault("hook", False)
    kw.setdefault("remotes", False)
    rep = doctor.run(root, source="flag", **kw)
    return {c.name: c for c in rep.checks}


def untouched(root: Path) -> tuple[str, str, dict[str, bytes]]:
    files = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
             if p.is_file() and p.relative_to(root).parts[0] not in (".git", ".epimem")}
    status = git(root, "status", "--porcelain") if (root / ".git").exists() else ""
    head = git(root, "rev-parse", "HEAD") if (root / ".git").exists() else ""
    return head, status, files


@pytest.fixture
def wired(vault, cli):
    """A vault made by `init`, wired into Claude Code by its own installer, with one belief."""
    vault.add_belief(title="Likes tea", statement="Drinks green tea.", kind="preference", basis="self-report",
                     permanence="durable")
    r = cli("--vault", vault.root, "install", "claude-code")
    assert r.code == 0, r.err
    return vault


def test_a_healthy_vault_wired_into_claude_code_exits_0_and_says_where_and_why(wired, cli, monkeypatch):
    r = cli("--vault", wired.root, "doctor", "--json")
    rep = r.json()
    assert r.code == 0 and rep["healthy"], rep
    by = {c["name"]: c for c in rep["checks"]}
    assert by["vault"]["said"].startswith(f"{wired.root} (given by --vault)")
    assert by["claude-code"]["status"] == "ok" and "current" in by["claude-code"]["said"]
    assert by["folder"]["said"] == "private (mode 0700)" and by["format"]["status"] == "ok"
    assert by["git"]["status"] == "ok" and "merge drivers registered" in by["git"]["said"]
    assert by["hook"]["status"] in ("ok", "note") and " ms" in by["hook"]["said"]
    assert not any(c["status"] == "problem" for c in rep["checks"])
    # Why: $EPIMEM_VAULT, and the default place, are named as such.
    monkeypatch.setenv("EPIMEM_VAULT", str(wired.root))
    assert "from $EPIMEM_VAULT" in cli("doctor").out
    monkeypatch.delenv("EPIMEM_VAULT")
    r = cli("doctor")
    assert r.code == 1 and "the default place" in r.out and "epimem init" in r.out


def test_no_vault_there(tmp_path, cli):
    r = cli("--vault", tmp_path / "nothing", "doctor")
    assert r.code == 1 and "nothing is there" in r.out and f"epimem init {tmp_path / 'nothing'}" in r.out
    assert not (tmp_path / "nothing").exists()


def test_a_loose_folder_and_a_vault_copied_without_git(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "vault", copy, ignore=shutil.ignore_patterns(".epimem"))
    os.chmod(copy, 0o755)
    before = untouched(copy)
    c = checks(copy)
    assert c["folder"].status == "problem" and f"chmod 700 {copy}" in c["folder"].fix
    assert c["git"].status == "problem" and f"epimem init {copy}" in c["git"].fix
    assert untouched(copy) == before


def test_merge_drivers_unregistered_and_gitattributes_missing(vault):
    cfg = vault.root / ".git" / "config"
    text = cfg.read_text()
    cfg.write_text(text[:text.index('[merge "epimem"]')])
    git(vault.root, "rm", "-q", ".gitattributes")
    git(vault.root, "commit", "-qm", "no attributes")
    c = checks(vault.root)
    assert c["git"].status == "problem"
    assert "not registered" in c["git"].said and ".gitattributes lacks" in c["git"].said
    assert f"epimem init {vault.root}" in c["git"].fix


def test_an_unfinished_merge(vault):
    (vault.root / ".git" / "MERGE_HEAD").write_text(git(vault.root, "rev-parse", "HEAD"))
    c = checks(vault.root)
    assert c["git"].status == "problem" and "merge is unfinished" in c["git"].said and "merge --abort" in c["git"].said


def test_a_newer_or_damaged_format_and_an_older_one(vault, sample_vault):
    (vault.root / kernel.FORMAT_FILE).write_text(kernel.format_text(kernel.VAULT_FORMAT + 1))
    c = checks(vault.root)
    assert c["format"].status == "problem" and "newer epimem" in c["format"].said
    (vault.root / kernel.FORMAT_FILE).write_text("{")
    c = checks(vault.root)
    assert c["format"].status == "problem" and "git checkout" in c["format"].fix
    (sample_vault / kernel.FORMAT_FILE).unlink()
    head = git(sample_vault, "rev-parse", "HEAD")
    c = checks(sample_vault)
    assert c["format"].status == "note" and "migrates it" in c["format"].said
    assert git(sample_vault, "rev-parse", "HEAD") == head  # looking migrates nothing


@pytest.mark.seed_rules
def test_parameter_and_file_problems_name_their_line(vault):
    rules = vault.root / "epistemology.md"
    rules.write_text(rules.read_text().replace("confirm_step: 0.05", "confirm_step: lots"))
    (vault.root / "beliefs" / "broken.md").write_text("---\ntitle: [unclosed\n---\nx\n")
    c = checks(vault.root)
    assert c["parameters"].status == "problem" and "epistemology.md:" in c["parameters"].said
    assert "confirm_step" in c["parameters"].said
    assert c["files"].status == "problem" and "beliefs/broken.md" in c["files"].said


def test_hand_edits_are_said_with_what_commit_would_do_and_nothing_is_written(wired):
    root = wired.root
    b = root / "beliefs" / "likes-tea.md"
    b.write_text(b.read_text().replace("title: Likes tea", "title: Likes green tea"))
    other = root / "beliefs" / "too-sure.md"
    other.write_text(b.read_text().replace("confidence: 0.40", "confidence: 0.99")
                     .replace("title: Likes green tea", "title: Too sure"))
    before = untouched(root)
    c = checks(root)
    assert c["refused edits"].status == "problem" and "beliefs/too-sure.md" in c["refused edits"].said
    assert "rule 18" in c["refused edits"].fix
    assert c["hand edits"].status == "note" and "likes-tea" in c["hand edits"].said
    assert "Likes green tea" in c["hand edits"].said and f"epimem --vault {root} commit" in c["hand edits"].said
    assert untouched(root) == before


def test_a_chroma_server_that_cannot_be_reached(vault, monkeypatch):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("EPIMEM_CHROMA_URL", f"http://127.0.0.1:{port}")
    c = checks(vault.root)
    assert c["chroma"].status == "problem" and "cannot be reached" in c["chroma"].said


@pytest.mark.slow
def test_a_chroma_server_that_answers(vault, monkeypatch, tmp_path):
    from recall_support import start_chroma_server, stop

    proc, url = start_chroma_server(tmp_path / "chroma")
    try:
        monkeypatch.setenv("EPIMEM_CHROMA_URL", url)
        c = checks(vault.root)
        assert c["chroma"].status == "ok" and url in c["chroma"].said
    finally:
        stop(proc)


def test_an_agent_wired_by_an_older_epimem_and_one_present_but_not_wired(wired, cli):
    home = Path(os.environ["HOME"])
    skill = home / ".claude" / "skills" / "observe" / "SKILL.md"
    skill.write_text(skill.read_text().replace("observations", "observations (old wording)", 1))
    (home / ".codex").mkdir()
    r = cli("--vault", wired.root, "doctor")
    assert r.code == 1
    line = next(ln for ln in r.out.splitlines() if "claude-code" in ln)
    assert line.startswith("problem") and str(skill) in line
    assert f"fix: `epimem --vault {wired.root} install claude-code` updates it" in r.out
    codex = next(ln for ln in r.out.splitlines() if " codex " in ln)
    assert codex.startswith("note") and "not wired" in codex
    assert cli("--vault", wired.root, "install", "claude-code").code == 0
    assert cli("--vault", wired.root, "doctor").code == 0


def test_remotes_up_to_date_behind_ahead_and_unreachable(wired, tmp_path, cli):
    root = wired.root
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(root, "remote", "add", "origin", str(bare))
    git(root, "push", "-q", "-u", "origin", "main")
    c = checks(root, remotes=True)
    assert c["remote origin"].status == "ok" and "up to date" in c["remote origin"].said
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", "-b", "main", str(bare), str(other))
    tea = other / "beliefs" / "likes-tea.md"
    tea.write_text(tea.read_text() + "- 2026-11-30 · note — x\n")
    git(other, "commit", "-qam", "elsewhere")
    git(other, "push", "-q")
    c = checks(root, remotes=True)
    assert c["remote origin"].status == "problem" and c["remote origin"].fix == f"`epimem --vault {root} sync`"
    assert cli("--vault", root, "sync").code == 0
    wired.set_pinned("likes-tea", True)
    c = checks(root, remotes=True)
    assert c["remote origin"].status == "note" and "1 commit here" in c["remote origin"].said
    git(root, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    c = checks(root, remotes=True)
    assert c["remote origin"].status == "problem" and "cannot be reached" in c["remote origin"].said


# --- the analysis alone -----------------------------------------------------------------------------

def test_the_analysis_is_pure_and_says_each_problem_with_its_fix():
    base = dict(root="/v", source="default", exists=True, is_vault=True, repo=True, mode=0o700, commits=3,
                format=kernel.VAULT_FORMAT, beliefs=2, index={"exists": True, "items": 4, "files": 2,
                                                                "embedder": "wordllama", "stale": False})
    healthy = doctor.diagnose(doctor.Facts(**base, hook_ms=40.0))
    assert healthy.healthy and {c.status for c in healthy.checks} <= {"ok", "note"}
    slow = doctor.diagnose(doctor.Facts(**base, hook_ms=7000.0))
    assert [c.name for c in slow.problems] == ["hook"] and "hook.log" in slow.problems[0].fix
    busy = doctor.diagnose(doctor.Facts(**base, hook_ms=1500.0))
    assert busy.healthy and any(c.name == "hook" and c.status == "note" for c in busy.checks)
    failed = doctor.diagnose(doctor.Facts(**base, hook_error="exit 2"))
    assert [c.name for c in failed.problems] == ["hook"]
    rebuild = doctor.diagnose(doctor.Facts(**{**base, "index": {"exists": True,
                                                                 "needs_rebuild": "the embedder changed"}}))
    assert rebuild.problems[0].fix == "`epimem index rebuild`"
    stale = doctor.diagnose(doctor.Facts(**base, agents=(doctor.AgentWiring("codex", "Codex", "project", True, True,
                                                                             ("AGENTS.md",)),)))
    assert stale.problems[0].fix == "`epimem install codex --scope project` updates it"
    report = json.dumps(healthy.as_json())
    assert '"healthy": true' in report
