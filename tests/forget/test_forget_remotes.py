"""A purge and the other clones, through a real bare remote: nothing forgotten comes back by a sync."""

from __future__ import annotations

import pytest
from forgetting import SECRET, all_objects, assert_no_trace, git, rich_vault

from epimem.api.memory import Memory


@pytest.fixture
def two(vault, tmp_path, cli):
    """Machine A (the vault) and machine B (a clone of it), both synced through a bare remote."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    a = rich_vault(vault)
    git(a.root, "remote", "add", "origin", str(remote))
    assert cli("--vault", a.root, "sync", "--no-index").code == 0
    assert cli("clone", remote, tmp_path / "b", "--no-index").code == 0
    return a, Memory(tmp_path / "b"), remote


def _commits(root) -> set[str]:
    return set(git(root, "rev-list", "--all").stdout.decode().split())


def test_a_purge_with_remotes_needs_the_users_word_on_them(two, cli):
    a, _, remote = two
    r = cli("--vault", a.root, "forget", "prefers-tabs", "--purge", "--yes")
    assert r.code == 1 and "--remotes push" in r.err and "--remotes later" in r.err
    assert SECRET.encode() in all_objects(a.root)  # nothing was done


def test_the_other_clone_is_refused_the_old_history_then_follows(two, cli, tmp_path):
    a, b, remote = two
    old = _commits(a.root)
    r = cli("--vault", a.root, "forget", "prefers-tabs", "--purge", "--remotes", "push", "--yes")
    assert r.code == 0, r.err
    assert "Sent to origin with a lease" in r.out
    assert_no_trace(a.root, SECRET, old_commits=old)
    assert git(remote, "rev-parse", "main").stdout == git(a.root, "rev-parse", "HEAD").stdout
    # B made an observation before it heard of the purge
    b.observe([{"connects": "short-prs", "strength": "confirming", "evidence": "Asked for two small PRs.",
                "basis": "behavioral", "session": "b1"}])
    head_b = git(b.root, "rev-parse", "HEAD").stdout.decode().strip()
    r = cli("--vault", b.root, "sync", "--no-index")
    assert r.code == 1
    assert "rewritten" in r.err and "epimem clone" in r.err and "--adopt-purge" in r.err
    assert git(b.root, "rev-parse", "HEAD").stdout.decode().strip() == head_b  # nothing was merged
    assert "prefers-tabs" in [x.id for x in Memory(b.root).beliefs()]
    # Following the first way: a new clone holds nothing of it (not even what the remote keeps unreachable)
    assert cli("clone", remote, tmp_path / "b2", "--no-index").code == 0
    assert_no_trace(tmp_path / "b2", SECRET, old_commits=old)
    # ... or the second: the same purge, here; B's own observation is carried over
    r = cli("--vault", b.root, "sync", "--no-index", "--adopt-purge")
    assert r.code == 0, r.err
    assert_no_trace(b.root, SECRET, old_commits=old)
    assert "Asked for two small PRs." in (b.root / "observations/2026-11.md").read_text()
    assert Memory(b.root).belief("prefers-tabs").kind == "forgotten"
    assert not _commits(a.root) - _commits(b.root)  # B has A's purged history, commit for commit
    assert cli("--vault", a.root, "sync", "--no-index").code == 0
    assert git(a.root, "rev-parse", "HEAD").stdout == git(b.root, "rev-parse", "HEAD").stdout
    assert_no_trace(a.root, SECRET, old_commits=old)


def test_a_purge_sent_later_carries_what_another_machine_pushed_meanwhile(two, cli):
    a, b, remote = two
    old = _commits(a.root)
    assert cli("--vault", a.root, "forget", "prefers-tabs", "--purge", "--remotes", "later", "--yes").code == 0
    # meanwhile B, on the old history, confirms both beliefs and pushes
    for bid, ev, s in (("prefers-tabs", f"Tabs again, {SECRET}.", "b1"), ("short-prs", "Two small PRs.", "b2")):
        b.observe([{"connects": bid, "strength": "confirming", "evidence": ev, "basis": "behavioral", "session": s}])
    assert cli("--vault", b.root, "sync", "--no-index").code == 0
    r = cli("--vault", a.root, "sync", "--no-index")
    assert r.code == 1 and "--adopt-purge" in r.err and "pushed on it since" in r.err
    assert SECRET.encode() not in all_objects(a.root)  # what was fetched was not kept
    r = cli("--vault", a.root, "sync", "--no-index", "--adopt-purge")
    assert r.code == 0, r.err
    assert_no_trace(a.root, SECRET, old_commits=old)
    log = (a.root / "observations/2026-11.md").read_text()
    assert "Two small PRs." in log and "Tabs again" not in log and log.count("- forgotten:") == 3
    assert Memory(a.root).belief("prefers-tabs").kind == "forgotten"
    # B follows; it lands on the very commits A made of its own work
    r = cli("--vault", b.root, "sync", "--no-index", "--adopt-purge")
    assert r.code == 0, r.err
    assert git(a.root, "rev-parse", "HEAD").stdout == git(b.root, "rev-parse", "HEAD").stdout
    assert_no_trace(b.root, SECRET, old_commits=old)


def test_a_plain_forget_travels_and_a_merge_does_not_bring_it_back(two, cli):
    a, b, _ = two
    assert cli("--vault", a.root, "forget", "prefers-tabs", "--yes").code == 0
    assert cli("--vault", a.root, "sync", "--no-index").code == 0
    # B, before it syncs, confirms the belief and observes it again
    b.observe([{"connects": "prefers-tabs", "strength": "confirming", "evidence": "Used tabs in a new repo.",
                "basis": "behavioral", "session": "b7"}])
    r = cli("--vault", b.root, "sync", "--no-index")
    assert r.code == 0, r.err
    belief = Memory(b.root).belief("prefers-tabs")
    assert belief.kind == "forgotten" and belief.status == "retired"
    text = "\n".join((b.root / p).read_text() for p in ("beliefs/prefers-tabs.md", "observations/2026-11.md"))
    assert "Used tabs in a new repo." not in text and SECRET not in text
    assert cli("--vault", a.root, "sync", "--no-index").code == 0
    assert (a.root / "observations/2026-11.md").read_text() == (b.root / "observations/2026-11.md").read_text()


def test_the_lease_refuses_to_overwrite_what_another_machine_pushed_meanwhile(two, cli):
    a, b, remote = two
    old = _commits(a.root)
    b.observe([{"connects": "short-prs", "strength": "confirming", "evidence": "Kept one PR to 40 lines.",
                "basis": "behavioral", "session": "b3"}])
    assert cli("--vault", b.root, "sync", "--no-index").code == 0  # A has not fetched this
    pushed_by_b = git(remote, "rev-parse", "main").stdout
    r = cli("--vault", a.root, "forget", "prefers-tabs", "--purge", "--remotes", "push", "--yes")
    assert r.code == 0, r.err
    assert "changed since the purge" in r.out  # the lease: nothing was sent over B's work
    assert git(remote, "rev-parse", "main").stdout == pushed_by_b
    r = cli("--vault", a.root, "sync", "--no-index")  # B's commit sits on the old history: not merged
    assert r.code == 1 and "pushed on it since" in r.err and "--adopt-purge" in r.err
    assert SECRET.encode() not in all_objects(a.root)
    r = cli("--vault", a.root, "sync", "--no-index", "--adopt-purge")
    assert r.code == 0, r.err
    assert "Kept one PR to 40 lines." in (a.root / "observations/2026-11.md").read_text()
    assert git(remote, "rev-parse", "main").stdout == git(a.root, "rev-parse", "HEAD").stdout
    assert_no_trace(a.root, SECRET, old_commits=old)


def test_a_purge_left_for_the_next_sync_is_sent_by_it(two, cli):
    a, b, remote = two
    old = _commits(a.root)
    assert cli("--vault", a.root, "forget", "prefers-tabs", "--purge", "--remotes", "later", "--yes").code == 0
    assert SECRET.encode() in all_objects(remote)  # not sent yet
    r = cli("--vault", a.root, "sync", "--no-index")
    assert r.code == 0, r.err
    assert "purged history was sent" in r.out
    assert git(remote, "rev-parse", "main").stdout == git(a.root, "rev-parse", "HEAD").stdout
    assert_no_trace(a.root, SECRET, old_commits=old)  # nothing of the old history was fetched back
    assert cli("--vault", b.root, "sync", "--no-index").code == 1


def test_a_clone_that_follows_a_purge_keeps_the_sessions_it_counted(two, cli):
    """B counted sessions the hook has not committed yet (they ride along with the next commit):
    adopting A's purge rewrites B's history and work tree, and neither loses B's entry of the counter."""
    import json

    a, b, _ = two
    assert cli("--vault", a.root, "forget", "prefers-tabs", "--purge", "--remotes", "push", "--yes").code == 0
    b.session_start(session="b-first")
    b.session_start(session="b-second")  # the day's second count waits for a commit
    mid = (b.root / ".epimem/machine").read_text().strip()
    assert git(b.root, "status", "--porcelain").stdout  # uncommitted
    r = cli("--vault", b.root, "sync", "--no-index", "--adopt-purge")
    assert r.code == 0, r.err
    counter = json.loads((b.root / "state/sessions.json").read_text())
    assert counter["machines"].get(mid) == 2 and (b.root / ".epimem/machine").read_text().strip() == mid
    assert {"b-first", "b-second"} <= set(counter.get("counted", {}))
    assert cli("--vault", a.root, "sync", "--no-index").code == 0
    assert json.loads((a.root / "state/sessions.json").read_text())["machines"].get(mid) == 2
