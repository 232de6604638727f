"""An older vault is migrated in one commit named for what changed; a newer one is refused by every
reader, the hook included (SPEC §1.4, issue 28). Real vaults, real git, the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from epimem.core import kernel

ROOT = Path(__file__).resolve().parents[2]


def git(root: Path, *args: str) -> str:
    from vaults import IDENTITY

    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **IDENTITY}).stdout


@pytest.fixture
def old_vault(sample_vault):
    """The sample vault as an epimem before formats were recorded wrote it: no state/vault.json,
    beliefs that carry `confirmed_session`, the counter's per-day `days` map, no .gitattributes."""
    root = sample_vault
    (root / kernel.FORMAT_FILE).unlink()
    (root / ".gitattributes").unlink()
    b = root / "beliefs" / "small-pull-requests.md"
    b.write_text(b.read_text().replace("supersedes: []\n", "supersedes: []\nconfirmed_session: cb95da\n"))
    s = json.loads((root / "state" / "sessions.json").read_text())
    from epimem.store import sessions as sessions_file

    s["days"] = sessions_file.loads(json.dumps(s))["days"]
    del s["count_at_day_start"]
    (root / "state" / "sessions.json").write_text(json.dumps(s, indent=2) + "\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "an older epimem's vault")
    return root


def test_the_sample_vault_in_the_repository_is_in_this_epimems_format():
    assert kernel.vault_format((ROOT / "vault" / kernel.FORMAT_FILE).read_text()) == kernel.VAULT_FORMAT
    for p in (ROOT / "vault" / "beliefs").glob("*.md"):
        assert "confirmed_session" not in p.read_text(), p.name
    assert "days" not in json.loads((ROOT / "vault" / "state" / "sessions.json").read_text())


def test_the_first_change_migrates_an_older_vault_in_one_commit_of_its_own(old_vault, cli):
    head = git(old_vault, "rev-parse", "HEAD").strip()
    assert cli("--vault", old_vault, "belief", "list").code == 0  # reading changes nothing
    assert git(old_vault, "rev-parse", "HEAD").strip() == head
    r = cli("--vault", old_vault, "belief", "pin", "terse-answers")
    assert r.code == 0, r.err
    subjects = git(old_vault, "log", "--format=%s", f"{head}..HEAD").splitlines()
    assert len(subjects) == 2 and "terse-answers" in subjects[0]
    assert subjects[1] == ("migrate: vault format 1 → 3 (confirmed_session dropped from 1 belief; the session "
                           "counter's days as count_at_day_start; .gitattributes names every merge driver; "
                            "sessions counted per machine and by id; forgotten beliefs kept as tombstones)")
    migrated = git(old_vault, "show", "--name-only", "--format=", "HEAD~1").split()
    assert sorted(migrated) == [".gitattributes", "beliefs/small-pull-requests.md", "state/sessions.json",
                                "state/vault.json"]
    assert "confirmed_session" not in (old_vault / "beliefs" / "small-pull-requests.md").read_text()
    assert kernel.vault_format((old_vault / kernel.FORMAT_FILE).read_text()) == kernel.VAULT_FORMAT
    assert git(old_vault, "status", "--porcelain") == ""
    assert cli("--vault", old_vault, "validate").code == 0
    # Undo takes back the change the user made, never the migration.
    assert cli("--vault", old_vault, "undo").code == 0
    r = cli("--vault", old_vault, "undo")
    assert "migrate" not in r.out and kernel.FORMAT_FILE in git(old_vault, "ls-files")


def test_init_migrates_an_older_vault_and_a_second_init_changes_nothing(old_vault, cli):
    r = cli("init", old_vault)
    assert r.code == 0 and "Created" in r.out
    assert git(old_vault, "log", "-1", "--format=%s").startswith("migrate: vault format 1 → 3")
    head = git(old_vault, "rev-parse", "HEAD")
    assert "Already a vault" in cli("init", old_vault).out
    assert git(old_vault, "rev-parse", "HEAD") == head


def test_a_file_with_an_uncommitted_edit_is_left_as_it_is_and_the_commit_says_so(old_vault, vault):
    from epimem.api.memory import Memory

    b = old_vault / "beliefs" / "small-pull-requests.md"
    b.write_text(b.read_text().replace("Splits work", "Always splits work"))
    mem = Memory(old_vault, today="2026-11-30")
    mem.set_pinned("terse-answers", True)
    body = git(old_vault, "log", "-1", "--format=%b", "HEAD~1")
    assert "beliefs/small-pull-requests.md" in body and "epimem commit" in body
    assert "Always splits work" in b.read_text() and "confirmed_session" in b.read_text()  # the hand edit kept


def test_an_older_epimem_refuses_a_newer_vault_everywhere_and_writes_nothing(vault, cli, tmp_path):
    root = vault.root
    (root / kernel.FORMAT_FILE).write_text(kernel.format_text(kernel.VAULT_FORMAT + 1))
    git(root, "commit", "-qam", "a newer epimem's vault")
    head, sessions = git(root, "rev-parse", "HEAD"), (root / "state" / "sessions.json").read_text()
    for args in (("belief", "list"), ("belief", "add", "--title", "x", "--statement", "y", "--kind", "fact",
                                      "--basis", "fact", "--permanence", "stable"),
                 ("observe", "--connects", "new", "--strength", "single", "--evidence", "e"),
                 ("mirror", "audit"), ("session", "start"), ("commit",), ("init",)):
        full = ("--vault", root, *args) if args != ("init",) else ("init", root)
        r = cli(*full)
        assert r.code == 1, (args, r.out, r.err)
        said = r.err
        assert f"format {kernel.VAULT_FORMAT + 1}" in said and "newer epimem" in said, said
        assert "state/vault.json" in said, said  # a hand edit of it reads like a newer epimem's vault
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    hook = subprocess.run([sys.executable, "-m", "epimem", "--vault", str(root), "hook", "session-start"],
                          input=json.dumps({"source": "startup", "cwd": str(tmp_path)}), capture_output=True,
                          text=True, env=env)
    assert hook.returncode == 0 and "newer epimem" in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    assert git(root, "rev-parse", "HEAD") == head and (root / "state" / "sessions.json").read_text() == sessions


def test_a_damaged_format_file_is_named_not_guessed(vault, cli):
    (vault.root / kernel.FORMAT_FILE).write_text("{oops")
    r = cli("--vault", vault.root, "belief", "list")
    assert r.code == 1 and "state/vault.json" in r.err and "git checkout" in r.err
