"""A session-end pass the vault refuses is not lost: the next session start says so, `epimem
doctor` lists it with the command that records it, and that command takes it off the list.
Driven as Claude Code drives it: the real hook processes, a real transcript, a real vault."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from test_hook import TODAY, run_hook, startup, wait_for

from epimem.store import refused_passes

EPIMEM = str(Path(sys.executable).parent / "epimem")
LOG = f"observations/{TODAY[:7]}.md"


def _epimem(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([EPIMEM, "--vault", str(root), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "EPIMEM_TODAY": TODAY})


def _context(root: Path, project: Path) -> str:
    r = run_hook(startup(project, session_id="s-next"), root)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"] if r.stdout else ""


def test_a_refused_pass_is_told_listed_and_recorded_once_fixed(vault, tmp_path):
    project = tmp_path / "work"
    project.mkdir()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "sessionId": "s-9", "uuid": "u1",
                                      "message": {"role": "user", "content": "I prefer small commits."}}) + "\n")
    log = vault.root / LOG
    log.parent.mkdir(exist_ok=True)
    log.write_bytes(b"\xff\xfe typed in a hurry\n")  # a hand edit that breaks this month's log
    r = run_hook({"session_id": "s-9", "transcript_path": str(transcript), "cwd": str(project),
                  "hook_event_name": "SessionEnd", "reason": "logout"}, vault.root, event="session-end")
    assert r.returncode == 0 and r.stdout == ""
    assert wait_for(lambda: refused_passes.read(vault.root), 30), (vault.root / ".epimem/hook.log").read_text()
    [kept] = refused_passes.read(vault.root)
    assert kept["transcript"] == str(transcript) and kept["session"] == "s-9"
    assert LOG in kept["why"] and "UTF-8" in kept["why"]

    ctx = _context(vault.root, project)
    assert "The session-end pass of" in ctx and "recorded nothing" in ctx and LOG in ctx
    assert f"`epimem transcript {shlex.quote(str(transcript))}`" in ctx

    doctor = json.loads(_epimem(vault.root, "doctor", "--json").stdout)
    [check] = [c for c in doctor["checks"] if c["name"] == "session-end passes"]
    assert check["status"] == "problem" and str(transcript) in check["fix"]

    # Refused again by hand, it stays listed once; fixed, the same command records it.
    again = _epimem(vault.root, "transcript", str(transcript))
    assert again.returncode == 1 and LOG in again.stderr
    assert len(refused_passes.read(vault.root)) == 1
    log.unlink()
    done = _epimem(vault.root, "transcript", str(transcript))
    assert done.returncode == 0, done.stderr
    assert "I prefer small commits" in log.read_text(encoding="utf-8")
    assert refused_passes.read(vault.root) == []
    assert not (vault.root / refused_passes.NAME).exists()
    assert "recorded nothing" not in _context(vault.root, project)
    assert not [c for c in json.loads(_epimem(vault.root, "doctor", "--json").stdout)["checks"]
                if c["name"] == "session-end passes"]


def test_the_list_survives_damage_and_never_blocks_a_session(vault, tmp_path):
    project = tmp_path / "work"
    project.mkdir()
    path = vault.root / refused_passes.NAME
    path.parent.mkdir(exist_ok=True)
    path.write_text("{not json", encoding="utf-8")
    assert refused_passes.read(vault.root) == []  # the session start reads past it
    assert "recorded nothing" not in _context(vault.root, project)
    refused_passes.add(vault.root, "/t/a.jsonl", "s-1", TODAY, "why")  # set aside, not overwritten
    assert path.with_name(path.name + ".unreadable").read_text(encoding="utf-8") == "{not json"
    refused_passes.add(vault.root, "/t/b.jsonl", "s-2", TODAY, "why 2")
    ctx = _context(vault.root, project)
    assert "2 session-end passes recorded nothing" in ctx and "why 2" in ctx and "`epimem doctor`" in ctx


def test_a_broken_log_of_last_month_is_named_by_the_cli(vault, cli):
    """The reader of earlier months' logs (rule 9's count) raised "not valid UTF-8 at line 1" with
    the file in the error's path only; every front end now says it."""
    earlier = vault.root / "observations" / "2026-10.md"
    earlier.parent.mkdir(exist_ok=True)
    earlier.write_bytes(b"\xff broken\n")
    subprocess.run(["git", "add", "-A"], cwd=vault.root, check=True)
    subprocess.run(["git", "-c", "user.name=u", "-c", "user.email=u@e", "commit", "-qm", "broken"], cwd=vault.root,
                   check=True)
    r = cli("--vault", vault.root, "observe", "--connects", "new", "--title", "Likes tea", "--evidence", "Made tea.",
            "--strength", "confirming", "--kind", "preference", "--permanence", "durable", "--session", "s-1")
    assert r.code == 1 and r.err.startswith("epimem: error: observations/2026-10.md:1: not valid UTF-8"), r.err
