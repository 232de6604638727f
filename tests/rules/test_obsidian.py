"""SPEC §1's Obsidian lines (issue 9 point 14): a belief created in Obsidian is accepted
and renamed to its slug; Obsidian's per-device files and root files are never committed."""

import shutil
import subprocess


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


BODY = ("---\nkind: preference\nbasis: behavioral\nconfidence: 0.3\npermanence: unknown\n"
        "first: 2026-11-30\n---\nIndents with tabs.\n")


def test_api_an_obsidian_note_is_renamed_to_its_slug(vault):
    (vault.root / "beliefs" / "Prefers tabs.md").write_text(BODY)
    (vault.root / ".obsidian").mkdir()
    (vault.root / ".obsidian" / "workspace.json").write_text("{}")
    (vault.root / ".obsidian" / "app.json").write_text("{}")
    (vault.root / "Untitled.md").write_text("scratch\n")
    sha, changes, problems = vault.commit_hand_edits()
    assert sha
    [c] = [c for c in changes if c.what == "belief"]
    assert c.ident == "prefers-tabs" and "renamed from beliefs/Prefers tabs.md" in c.sentence()
    assert not (vault.root / "beliefs" / "Prefers tabs.md").exists()
    b = vault.belief("prefers-tabs")
    assert b.title == "Prefers tabs" and b.evidence[-1].note == "added by hand"
    committed = _git(vault.root, "show", "--name-only", "--format=", "HEAD").split()
    assert "beliefs/prefers-tabs.md" in committed and ".obsidian/app.json" in committed
    assert ".obsidian/workspace.json" not in committed and "Untitled.md" not in committed
    assert [p.path for p in problems] == ["Untitled.md"]


def test_cli_commit_says_it_renamed(cli, vault):
    (vault.root / "beliefs" / "Untitled 1.md").write_text(BODY.replace("---\nkind", "---\ntitle: Likes tea\nkind"))
    r = cli("--vault", vault.root, "commit")
    assert r.code == 0, r.err
    assert "renamed from beliefs/Untitled 1.md" in r.out and "likes-tea" in r.out
    assert (vault.root / "beliefs" / "likes-tea.md").exists()


def test_copied_vault_never_commits_workspace_or_root_files(cli, tmp_path):
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "vault"
    dst = tmp_path / "copied"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".epimem"))
    (dst / ".obsidian").mkdir()
    (dst / ".obsidian" / "workspace-mobile.json").write_text("{}")
    (dst / "Scratch.md").write_text("x\n")
    assert cli("init", dst).code == 0
    files = _git(dst, "ls-files").split()
    assert "beliefs/sql-over-orm.md" in files and "epistemology.md" in files
    assert ".obsidian/workspace-mobile.json" not in files and "Scratch.md" not in files
    assert ".obsidian/workspace*.json" in (dst / ".gitignore").read_text()
