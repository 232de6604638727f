"""`export` and `import jsonl` when a file of the vault is bad: the file is named, nothing is lost
(found by the bad-input sweep)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

TERSE = "beliefs/terse-answers.md"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def state(root: Path) -> tuple[str, str, bytes]:
    return git(root, "rev-parse", "HEAD"), git(root, "status", "--porcelain"), (root / TERSE).read_bytes()


def test_export_of_a_belief_that_is_not_utf8_shows_it_as_last_committed(sample_vault, cli, tmp_path):
    p = sample_vault / TERSE
    p.write_bytes(p.read_bytes().replace(b"terse answers for", b"terse r\xe9ponses for"))
    r = cli("--vault", sample_vault, "export", "--out", tmp_path / "x.jsonl")
    assert r.code == 0 and "Traceback" not in r.err, r.err
    rec = next(json.loads(ln) for ln in (tmp_path / "x.jsonl").read_text().splitlines() if '"terse-answers"' in ln)
    assert rec["title"] == "Wants terse answers for routine code"  # as `belief show` shows it
    assert "not valid UTF-8" in rec["refused"]


@pytest.mark.parametrize("rel", ["beliefs/never-committed.md", "tensions/2026-11-01-x.md", "observations/2026-12.md"])
def test_export_refuses_a_file_it_cannot_carry_naming_it(sample_vault, cli, tmp_path, rel):
    (sample_vault / rel).write_bytes(b"---\ntitle: caf\xe9\n---\n")
    r = cli("--vault", sample_vault, "export", "--out", tmp_path / "x.jsonl")
    assert r.code == 1 and "Traceback" not in r.err
    assert r.err.startswith(f"epimem: error: {rel}:2: not valid UTF-8"), r.err
    assert "nothing was exported" in r.err
    assert not (tmp_path / "x.jsonl").exists() and list(tmp_path.glob("*.epimem-tmp")) == []


@pytest.mark.parametrize("old,new,line,says", [
    (b"terse answers for", b"terse r\xe9ponses for", 2, "not valid UTF-8"),
    (b"tags: [communication]", b"tags: 5", 11, "'tags' must be a list"),        # was coerced to ["5", …]
    (b"confidence: 0.25", b"confidence: -0.3", 5, "between 0.00 and 1.00"),   # was a git "nothing to commit"
    (b"pinned: false", b"pinned: maybe", 13, "'pinned' must be true or false"),
    (b"title: Wants terse answers for routine code", b"title: [unclosed", 3, "invalid YAML"),  # was committed
])
def test_import_into_a_vault_with_a_bad_hand_edit_names_it_and_writes_nothing(sample_vault, cli, tmp_path,
                                                                               old, new, line, says):
    assert cli("--vault", sample_vault, "export", "--out", tmp_path / "x.jsonl").code == 0
    p = sample_vault / TERSE
    p.write_bytes(p.read_bytes().replace(old, new))
    before = state(sample_vault)
    r = cli("--vault", sample_vault, "import", "jsonl", tmp_path / "x.jsonl")
    assert r.code == 1 and "Traceback" not in r.err, r.err
    assert r.err.startswith(f"epimem: error: {TERSE}:{line}: "), r.err
    assert says in r.err and "nothing was recorded" in r.err
    assert state(sample_vault) == before  # the hand edit as the user left it, uncommitted


def test_import_commits_a_valid_hand_edit_as_the_users_own_first(sample_vault, cli, tmp_path):
    assert cli("--vault", sample_vault, "export", "--out", tmp_path / "x.jsonl").code == 0
    p = sample_vault / TERSE
    p.write_text(p.read_text().replace("tags: [communication]", "tags: [communication, brevity]"))
    r = cli("--vault", sample_vault, "import", "jsonl", tmp_path / "x.jsonl")
    assert r.code == 0, r.err
    assert git(sample_vault, "log", "--format=%s", "-1").startswith("edit: terse-answers tags")
    assert "brevity" in p.read_text() and git(sample_vault, "status", "--porcelain") == ""


def test_import_of_an_older_export_into_a_vault_that_moved_on_changes_nothing(sample_vault, cli, tmp_path):
    # The merge keeps the vault's own file: there is nothing to write, where git's own
    # "nothing to commit, working tree clean" was the error before.
    assert cli("--vault", sample_vault, "export", "--out", tmp_path / "x.jsonl").code == 0
    p = sample_vault / TERSE
    p.write_text(p.read_text().replace("tags: [communication]", "tags: [communication, brevity]"))
    git(sample_vault, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qam", "my own edit")
    before = state(sample_vault)
    r = cli("--vault", sample_vault, "import", "jsonl", tmp_path / "x.jsonl")
    assert r.code == 0 and "git commit failed" not in r.err, r.err
    assert "nothing new to import" in r.out and state(sample_vault) == before


def test_import_dry_run_names_a_file_that_is_not_utf8(sample_vault, cli, tmp_path):
    assert cli("--vault", sample_vault, "export", "--out", tmp_path / "x.jsonl").code == 0
    p = sample_vault / TERSE
    p.write_bytes(p.read_bytes().replace(b"terse answers for", b"terse r\xe9ponses for"))
    r = cli("--vault", sample_vault, "import", "jsonl", "--dry-run", tmp_path / "x.jsonl")
    assert r.code == 1 and r.err.startswith(f"epimem: error: {TERSE}:2: not valid UTF-8"), r.err


def test_import_after_a_file_was_deleted_by_hand_records_the_deletion_then_the_import(sample_vault, cli, tmp_path):
    # The import wrote the file back as HEAD had it, and git's "nothing to commit" was the error.
    assert cli("--vault", sample_vault, "export", "--out", tmp_path / "x.jsonl").code == 0
    (sample_vault / "state" / "sessions.json").unlink()
    r = cli("--vault", sample_vault, "import", "jsonl", tmp_path / "x.jsonl")
    assert r.code == 0 and "git commit failed" not in r.err, r.err
    subjects = git(sample_vault, "log", "--format=%s", "-2").splitlines()
    assert subjects[0].startswith("import: ") and subjects[1].startswith("edit: state/sessions.json")
    assert (sample_vault / "state" / "sessions.json").is_file() and git(sample_vault, "status", "--porcelain") == ""
