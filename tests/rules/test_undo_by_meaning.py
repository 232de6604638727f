"""`epimem undo COMMIT` of an older change whose lines a later change touched (issue 9,
point 11): git's line revert refuses, so epimem takes it back by its own three-way rules
(core/merge: base = the commit, ours = now, theirs = before it). Only that change's effect
goes; when only a person could settle it, the undo is refused naming the file."""

import subprocess

import pytest
from vaults import count_sessions


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _confirm(mem, session, evidence):
    rep = mem.observe([{"connects": "likes-tabs", "strength": "confirming", "evidence": evidence,
                        "session": session}])
    assert rep.commit
    return rep.commit


@pytest.mark.seed_rules
def test_api_undo_an_older_confirmation_reverts_just_its_effect(tabs):
    count_sessions(tabs, "s1", "s2")
    first = _confirm(tabs, "s1", "Tabs in the Makefile.")           # 0.30 → 0.35
    _confirm(tabs, "s2", "Tabs in the Go code.")                     # 0.35 → 0.40
    sha, subject = tabs.undo(first)
    assert subject.startswith("observe: confirming → likes-tabs (0.30 → 0.35)")
    b = tabs.belief("likes-tabs")
    assert b.confidence == 0.35                                      # the later step stays
    notes = [e.note for e in b.evidence]
    assert not any("Makefile" in n for n in notes) and any("Go code" in n for n in notes)
    log = (tabs.root / "observations" / f"{tabs.today:%Y-%m}.md").read_text()
    assert "Makefile" not in log and "Go code" in log               # the log lost only that entry
    assert _git(tabs.root, "status", "--porcelain").strip() == ""
    assert _git(tabs.root, "log", "-1", "--format=%(trailers:key=Epimem-Reverts,valueonly)").strip() == first
    # redo puts it back, by the same rules
    _, redone = tabs.redo()
    assert redone == subject
    assert tabs.belief("likes-tabs").confidence == 0.40
    assert "Makefile" in (tabs.root / "observations" / f"{tabs.today:%Y-%m}.md").read_text()


def test_api_undo_refuses_when_prose_changed_on_both_sides_and_writes_nothing(tabs):
    from epimem.core.errors import Conflict

    p = tabs.root / "beliefs" / "likes-tabs.md"
    p.write_text(p.read_text().replace("Indents with tabs.", "Indents with tabs in every file."))
    tabs.commit_hand_edits()
    older = _git(tabs.root, "rev-parse", "HEAD").strip()
    p.write_text(p.read_text().replace("Indents with tabs in every file.", "Uses tabs, except in YAML."))
    tabs.commit_hand_edits()
    head = _git(tabs.root, "rev-parse", "HEAD").strip()
    with pytest.raises(Conflict) as e:
        tabs.undo(older)
    assert e.value.path == "beliefs/likes-tabs.md" and "beliefs/likes-tabs.md" in e.value.message
    assert _git(tabs.root, "rev-parse", "HEAD").strip() == head
    assert _git(tabs.root, "status", "--porcelain").strip() == ""


@pytest.mark.seed_rules
def test_cli_undo_an_older_observe(cli, tabs):
    count_sessions(tabs, "s1", "s2")
    first = _confirm(tabs, "s1", "Tabs in the Makefile.")
    _confirm(tabs, "s2", "Tabs in the Go code.")
    r = cli("--vault", tabs.root, "undo", first[:10], "--json")
    assert r.code == 0, r.err
    assert cli("--vault", tabs.root, "belief", "show", "likes-tabs", "--json").json()["confidence"] == 0.35


@pytest.mark.seed_rules
def test_api_undo_of_a_creation_changed_since_is_refused_naming_the_file(tabs):
    from epimem.core.errors import Conflict

    created = _git(tabs.root, "rev-parse", "HEAD").strip()          # belief: add likes-tabs
    _confirm(tabs, "s1", "Tabs in the Makefile.")
    with pytest.raises(Conflict, match="beliefs/likes-tabs.md") as e:
        tabs.undo(created)
    assert e.value.path == "beliefs/likes-tabs.md" and "undo that one first" in e.value.message
    assert tabs.belief("likes-tabs").confidence == 0.35


@pytest.mark.seed_rules
def test_api_undo_an_older_observation_of_another_belief_in_the_same_log(tabs):
    tabs.add_belief(title="Plans first", statement="Writes a plan first.", kind="workflow",
                    basis="behavioral", permanence="durable")
    first = _confirm(tabs, "s1", "Tabs in the Makefile.")
    tabs.observe([{"connects": "plans-first", "strength": "confirming", "evidence": "A plan before the code.",
                   "session": "s1"}])
    tabs.undo(first)
    assert tabs.belief("likes-tabs").confidence == 0.30 and tabs.belief("plans-first").confidence == 0.35
    log = (tabs.root / "observations" / f"{tabs.today:%Y-%m}.md").read_text()
    assert "Makefile" not in log and "A plan before the code." in log and log.startswith("# Observations")
