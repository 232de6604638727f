"""Issue 24, item 10: the smaller ways around the rules, each as the issue reproduced it."""

from __future__ import annotations

import json
import subprocess

import pytest


def git(root, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


@pytest.mark.seed_rules
def test_commit_leaves_out_an_invalid_epistemology(vault, cli):
    p = vault.root / "epistemology.md"
    good = p.read_text()
    p.write_text(good.replace("confirm_step: 0.05", "confirm_step: lots"))
    head = git(vault.root, "rev-parse", "HEAD")
    r = cli("--vault", vault.root, "commit")
    assert "confirm_step" in r.out + r.err and "rule 18" in r.out + r.err
    assert git(vault.root, "rev-parse", "HEAD") == head
    assert "confirm_step: lots" in p.read_text()  # the user's edit stays, for them to fix
    assert "confirm_step: 0.05" in git(vault.root, "show", "HEAD:epistemology.md")
    # a valid change of a parameter is committed as before
    p.write_text(good.replace("confirm_step: 0.05", "confirm_step: 0.04"))
    assert cli("--vault", vault.root, "commit").code == 0
    assert "confirm_step: 0.04" in git(vault.root, "show", "HEAD:epistemology.md")


def test_recall_refuses_a_permanence_no_belief_can_have(vault, cli):
    r = cli("--vault", vault.root, "recall", "anything", "--permanence", "forever")
    assert r.code == 2 and "permanence" in r.err and "forever" in r.err
    assert cli("--vault", vault.root, "belief", "list", "--permanence", "forever").code != 0  # as belief list does


def test_undoing_an_import_takes_its_sessions_back(vault, cli, tmp_path):
    d = tmp_path / "profile"
    d.mkdir()
    (d / "profile.md").write_text("# Profile\n\n## Avoids ORMs\n`conf:0.40 | first:2026-03-02 | confirmed:— | "
                                  "challenged:— | perm:stable`\n\nWrites SQL by hand.\n")
    (d / "session-counter.json").write_text(json.dumps({"count": 12, "last_session": "2026-04-01",
                                                        "last_review": None, "next_review_at": 20}))
    before = json.loads((vault.root / "state/sessions.json").read_text())["count"]
    r = cli("--vault", vault.root, "import", "epistemic-memory", d, "--json")
    assert r.code == 0, r.err
    assert r.json()["session_counter"] is True
    counted = json.loads((vault.root / "state/sessions.json").read_text())["count"]
    assert counted > before
    vault.session_start(session="after-the-import")  # a session counted since stays counted
    assert cli("--vault", vault.root, "undo").code == 0
    s = json.loads((vault.root / "state/sessions.json").read_text())
    assert not (vault.root / "beliefs/avoids-orms.md").exists()
    assert s["count"] == before + 1, s
    assert cli("--vault", vault.root, "redo").code == 0
    assert json.loads((vault.root / "state/sessions.json").read_text())["count"] == counted + 1
    assert vault.validate() == []


def test_validate_accepts_a_note_obsidian_made_that_commit_renames(vault, cli):
    (vault.root / "beliefs" / "Untitled 1.md").write_text(
        "---\nkind: preference\nbasis: behavioral\nconfidence: 0.3\npermanence: durable\nfirst: 2026-11-01\n---\n"
        "Drinks tea while reviewing.\n")
    r = cli("--vault", vault.root, "validate")
    assert r.code == 0, r.out + r.err
    assert cli("--vault", vault.root, "commit").code == 0
    assert (vault.root / "beliefs/untitled-1.md").exists()
    # one that breaks a rule is still reported
    (vault.root / "beliefs" / "Untitled 2.md").write_text(
        "---\nkind: preference\nbasis: behavioral\nconfidence: 0.99\npermanence: durable\nfirst: 2026-11-01\n---\n"
        "Too sure.\n")
    assert cli("--vault", vault.root, "validate").code != 0
