"""The cases of the issue, on real clones of a real bare remote: both machines work, then sync."""

from __future__ import annotations

import pytest
from machines import git, machines, vault_files

from epimem.api import sync as sync_api
from epimem.api.memory import Memory
from epimem.core.errors import Conflict, InputError, StorageError, VaultError
from epimem.core.merge import MERGE_HEADING, has_conflict_markers


def confirm(mem: Memory, bid: str, session: str, text: str, today: str):
    return Memory(mem.root, today=today).observe([{"connects": bid, "strength": "confirming", "evidence": text,
                                                   "basis": "behavioral", "session": session}])


def no_markers(mem: Memory) -> None:
    for name, data in vault_files(mem.root).items():
        assert not has_conflict_markers(data.decode()), name


@pytest.mark.seed_rules
def test_the_four_failures_of_the_issue(tmp_path):
    _, (a, b) = machines(tmp_path, 2, beliefs=(("small-prs", 0.30),))
    confirm(a, "small-prs", "s1", "Split a refactor into three PRs.", "2026-11-05")
    confirm(b, "small-prs", "s2", "Asked for the change in two PRs.", "2026-11-06")
    Memory(a.root, today="2026-11-05").session_start()
    Memory(b.root, today="2026-11-06").session_start()
    sync_api.sync(a, index=False)
    rep = sync_api.sync(b, index=False)
    assert rep.merged == "merged" and rep.pushed
    sync_api.sync(a, index=False)
    assert vault_files(a.root) == vault_files(b.root)
    log = (b.root / "observations/2026-11.md").read_text()
    assert log.count("## obs-") == 2 and log.index("three PRs") < log.index("in two PRs")  # date order
    belief = b.belief("small-prs")
    assert belief.confidence == pytest.approx(0.40)  # two confirmations, not one
    assert belief.confirmed.isoformat() == "2026-11-06"
    assert b.vault.read_sessions().count == 2
    assert b.validate() == []
    no_markers(b)


def test_an_unfinished_merge_is_said_by_every_command(tmp_path, cli):
    _, (a, b) = machines(tmp_path, 2, beliefs=(("small-prs", 0.30),))
    for m, word in ((a, "one"), (b, "two")):  # epistemology.md has no merge rule: git stops
        p = m.root / "epistemology.md"
        p.write_text(p.read_text() + f"\nA note from machine {word}.\n")
        git(m.root, "commit", "-qam", f"edit {word}")
    git(a.root, "push", "-q", "origin", "HEAD:main")
    assert git(b.root, "pull", "--no-rebase", "origin", "main", check=False).returncode != 0
    for args in (("belief", "list"), ("validate",), ("sync",), ("tensions",)):
        r = cli("--vault", str(b.root), *args)
        assert r.code != 0, args
        assert "git merge is unfinished" in r.err and "merge --abort" in r.err and "No beliefs yet" not in r.out
    git(b.root, "merge", "--abort")
    assert "Prefers" not in cli("--vault", str(b.root), "belief", "list").err


@pytest.mark.seed_rules
def test_one_retires_while_the_other_confirms(tmp_path):
    _, (a, b) = machines(tmp_path, 2, beliefs=(("small-prs", 0.30),))
    Memory(a.root, today="2026-11-03").retire("small-prs", note="not true any more")
    confirm(b, "small-prs", "s2", "Split the work again.", "2026-11-04")
    sync_api.sync(a, index=False)
    rep = sync_api.sync(b, index=False)
    got = b.belief("small-prs")
    assert got.status == "retired" and got.confidence == pytest.approx(0.35)
    assert any("retired" in n for n in rep.notes)
    kinds = [e.kind for e in got.evidence]
    assert "retired" in kinds and "confirming" in kinds
    assert b.validate() == []


def test_both_open_a_tension_on_the_same_belief_the_same_day(tmp_path):
    _, (a, b) = machines(tmp_path, 2, beliefs=(("small-prs", 0.60),))
    for m, s, text in ((a, "s1", "Pushed one huge PR."), (b, "s2", "Merged a 3000-line change at once.")):
        Memory(m.root, today="2026-11-07").observe([{"connects": "small-prs", "strength": "contradicting",
                                                     "evidence": text, "basis": "behavioral", "session": s}])
    sync_api.sync(a, index=False)
    sync_api.sync(b, index=False)
    sync_api.sync(a, index=False)
    tensions = b.tensions()
    assert len(tensions) == 1
    t = tensions[0]
    assert t.status == "watching" and len(t.evidence) == 2
    assert b.validate() == [] and vault_files(a.root) == vault_files(b.root)
    no_markers(b)


def test_both_record_a_review_the_same_day(tmp_path):
    _, (a, b) = machines(tmp_path, 2)
    Memory(a.root, today="2026-11-08").record_review("audit", "Audit from the laptop.")
    Memory(b.root, today="2026-11-08").record_review("gut-check", "Gut-check from the desktop.")
    sync_api.sync(a, index=False)
    sync_api.sync(b, index=False)
    text = (b.root / "reviews/2026-11-08.md").read_text()
    assert "Audit from the laptop." in text and "Gut-check from the desktop." in text
    assert "## gut-check" in text or "## audit" in text
    assert b.vault.read_sessions().last_review.isoformat() == "2026-11-08"
    assert b.validate() == []


@pytest.mark.seed_rules
def test_a_plain_git_pull_in_a_fresh_clone_merges_the_same_way(tmp_path, cli):
    remote, (a,) = machines(tmp_path, 1, beliefs=(("small-prs", 0.30),))
    c = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", "-b", "main", str(remote), str(c))
    assert cli("--vault", str(c), "belief", "list").code == 0  # any command registers the driver
    assert "merge-driver" in git(c, "config", "--get", "merge.epimem.driver").stdout
    confirm(a, "small-prs", "s1", "Split a refactor into three PRs.", "2026-11-05")
    sync_api.sync(a, index=False)
    confirm(Memory(c), "small-prs", "s2", "Asked for two PRs.", "2026-11-06")
    git(c, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    mem = Memory(c)
    assert mem.belief("small-prs").confidence == pytest.approx(0.40)
    assert (c / "observations/2026-11.md").read_text().count("## obs-") == 2
    assert mem.validate() == []


@pytest.mark.seed_rules
def test_git_pull_rebase_merges_the_same_way(tmp_path):
    _, (a, b) = machines(tmp_path, 2, beliefs=(("small-prs", 0.30),))
    confirm(a, "small-prs", "s1", "Split a refactor into three PRs.", "2026-11-05")
    Memory(a.root, today="2026-11-05").session_start()
    sync_api.sync(a, index=False)
    confirm(b, "small-prs", "s2", "Asked for two PRs.", "2026-11-06")
    Memory(b.root, today="2026-11-06").session_start()
    git(b.root, "pull", "-q", "--rebase", "origin", "main")
    assert b.belief("small-prs").confidence == pytest.approx(0.40)
    assert b.vault.read_sessions().count == 2
    assert len(git(b.root, "log", "--merges", "--oneline").stdout.strip()) == 0  # a straight line
    assert b.validate() == []
    no_markers(b)


def test_prose_changed_on_both_sides_is_kept_twice_until_the_user_edits(tmp_path, cli):
    _, (a, b) = machines(tmp_path, 2, beliefs=(("small-prs", 0.30),))
    Memory(a.root).edit_belief("small-prs", statement="Likes PRs under 200 lines.", note="laptop")
    Memory(b.root).edit_belief("small-prs", statement="Likes one PR per concern.", note="desktop")
    sync_api.sync(a, index=False)
    rep = sync_api.sync(b, index=False)
    assert any("both versions are kept" in n for n in rep.notes)
    p = b.root / "beliefs/small-prs.md"
    text = p.read_text()
    assert MERGE_HEADING in text and "under 200 lines" in text and "one PR per concern" in text
    problems = b.validate()
    assert [pr.path for pr in problems] == ["beliefs/small-prs.md"] and "kept two machines' versions" in \
        problems[0].message
    # The audit, where a person looks at the vault, says it too (as text, as JSON, over MCP alike).
    shown = cli("--vault", str(b.root), "mirror", "audit")
    assert "Kept in both versions by a merge" in shown.out and "beliefs/small-prs.md" in shown.out
    assert [x["path"] for x in cli("--vault", str(b.root), "mirror", "audit", "--json").json()["merge_leftovers"]] \
        == ["beliefs/small-prs.md"]
    p.write_text(text[:text.index(MERGE_HEADING)].rstrip("\n") + "\n")  # the user settles it
    assert Memory(b.root).validate() == []
    assert "Kept in both versions" not in cli("--vault", str(b.root), "mirror", "audit").out


def test_an_observation_id_with_two_texts_is_kept_twice_and_reported(tmp_path):
    _, (a, b) = machines(tmp_path, 2)
    for m, text in ((a, "said X"), (b, "said Y")):
        p = m.root / "observations/2026-11.md"
        p.write_text(f"# Observations 2026-11\n\n## obs-20261102-abcd\n- date: 2026-11-02\n- evidence: {text}\n"
                     "- connects: new\n- strength: single\n- source: cli\n- basis: behavioral\n")
    sync_api.sync(a, index=False)
    sync_api.sync(b, index=False)
    text = (b.root / "observations/2026-11.md").read_text()
    assert "said X" in text and "said Y" in text
    assert any("twice with different texts" in p.message for p in b.validate())
    from epimem.mirror.audit import audit

    a_ = audit(b.snapshot(), b.params, b.today, tuple(b.merge_leftovers()))
    assert [p.path for p in a_.merge_leftovers] == ["observations/2026-11.md"]


def test_nothing_to_do_and_clear_errors(tmp_path):
    _, (a, b) = machines(tmp_path, 2)
    rep = sync_api.sync(a, index=False)
    assert (rep.merged, rep.pushed, rep.incoming) == ("up to date", False, 0)
    git(a.root, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    with pytest.raises(StorageError, match="cannot reach the remote 'origin'"):
        sync_api.sync(a, index=False)
    with pytest.raises(InputError, match="no remote 'backup'"):
        sync_api.sync(b, "backup", index=False)
    other, _ = Memory.init(tmp_path / "other")
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "other.git"))
    git(other.root, "push", "-q", str(tmp_path / "other.git"), "HEAD:main")
    git(b.root, "remote", "add", "other", str(tmp_path / "other.git"))
    with pytest.raises(Conflict, match="shares no history"):
        sync_api.sync(b, "other", index=False)
    assert git(b.root, "status", "--porcelain").stdout == ""


def test_clone_refuses_what_is_not_a_vault(tmp_path):
    bare = tmp_path / "plain.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    with pytest.raises(VaultError, match="not an epimem vault"):
        sync_api.clone(str(bare), tmp_path / "x", index=False)
    with pytest.raises(StorageError, match="cannot clone"):
        sync_api.clone(str(tmp_path / "nowhere.git"), tmp_path / "y", index=False)


def test_init_adds_the_attributes_to_an_older_vault(tmp_path):
    mem, _ = Memory.init(tmp_path / "v")
    (mem.root / ".gitattributes").write_text("*.png binary\n")
    git(mem.root, "commit", "-qam", "an older vault")
    Memory.init(mem.root)
    text = (mem.root / ".gitattributes").read_text()
    assert text.startswith("*.png binary\n") and "beliefs/*.md merge=epimem" in text
    assert git(mem.root, "status", "--porcelain").stdout == ""


@pytest.mark.seed_rules
def test_a_rejected_push_is_retried_once(tmp_path):
    """Machine A pushes while machine B is between its fetch and its push (a pre-push hook
    does it), so B's first push is rejected; sync fetches, merges and pushes again."""
    _, (a, b) = machines(tmp_path, 2, beliefs=(("small-prs", 0.30),))
    confirm(a, "small-prs", "s1", "Split a refactor into three PRs.", "2026-11-05")
    confirm(b, "small-prs", "s2", "Asked for two PRs.", "2026-11-06")
    flag = tmp_path / "raced"
    hook = b.root / ".git" / "hooks" / "pre-push"
    hook.write_text(f"#!/bin/sh\nif [ ! -e '{flag}' ]; then touch '{flag}'; "
                    f"git -C '{a.root}' push -q origin HEAD:main; fi\nexit 0\n")
    hook.chmod(0o755)
    rep = sync_api.sync(b, index=False)
    assert flag.exists() and rep.retried and rep.pushed
    sync_api.sync(a, index=False)
    assert vault_files(a.root) == vault_files(b.root)
    assert a.belief("small-prs").confidence == pytest.approx(0.40)


def test_sync_and_clone_through_the_cli_with_the_index(tmp_path, cli):
    """A second machine from `epimem clone` (index built), then a sync that brings a new belief in:
    recall on that machine finds it, because the index follows the merge."""
    remote, (a,) = machines(tmp_path, 1, beliefs=(("small-prs", 0.30),))
    r = cli("clone", str(remote), str(tmp_path / "b"))
    assert r.code == 0 and "1 beliefs" in r.out
    assert (tmp_path / "b" / ".epimem" / "recall").is_dir()
    a.add_belief(title="Drinks green tea", statement="Drinks green tea while reviewing code.", kind="preference",
                 basis="behavioral", permanence="durable", belief_id="green-tea")
    sync_api.sync(a, index=False)
    Memory(tmp_path / "b").add_belief(title="Uses vim", statement="Edits everything in vim.", kind="preference",
                                      basis="behavioral", permanence="durable", belief_id="vim")
    r = cli("--vault", str(tmp_path / "b"), "sync", "--json")
    assert r.code == 0, r.err
    out = r.json()
    assert out["merged"] == "merged" and out["pushed"] and out["incoming"] == 1
    r = cli("--vault", str(tmp_path / "b"), "recall", "green tea", "--json")
    assert r.code == 0 and "green-tea" in [h["id"] for h in r.json()["results"]]


@pytest.mark.seed_rules
def test_git_pull_and_epimem_sync_merge_to_the_same_files(tmp_path):
    """git's per-file driver (a plain pull) and sync's in-process merge apply one set of rules."""
    import shutil

    _, (a, b) = machines(tmp_path, 2, beliefs=(("small-prs", 0.30), ("tea", 0.50)))
    for m, day, s in ((a, "2026-11-07", "s1"), (b, "2026-11-07", "s2")):
        mem = Memory(m.root, today=day)
        mem.session_start()
        mem.observe([{"connects": "small-prs", "strength": "confirming", "evidence": f"{s}: split it",
                      "basis": "behavioral", "session": s},
                     {"connects": "tea", "strength": "contradicting", "evidence": f"{s}: coffee today",
                      "basis": "behavioral", "session": s}])
        mem.record_review("audit", f"An audit on {s}.")
    sync_api.sync(a, index=False)
    shutil.copytree(b.root, tmp_path / "b-pull", symlinks=True)
    sync_api.sync(b, index=False)
    git(tmp_path / "b-pull", "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert vault_files(tmp_path / "b-pull") == vault_files(b.root)
    assert b.belief("small-prs").confidence == pytest.approx(0.40) and b.validate() == []
