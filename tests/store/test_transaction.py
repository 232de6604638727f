"""The one write path: typed writes, all or nothing, in an order that never dangles,
one lock, and caches that follow every commit without ever failing one."""

from __future__ import annotations

import logging
import subprocess

import pytest

from epimem.core.errors import Conflict, EpimemError, StorageError
from epimem.store import context_cache, git
from epimem.store import transaction as tx
from epimem.store.files import ConcurrentEdit, stat_key


def log(root) -> list[str]:
    return subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True).stdout.splitlines()


def status(root) -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout


BELIEF = ("---\ntitle: Likes tea\nkind: preference\nbasis: behavioral\nconfidence: 0.30\npermanence: durable\n"
          "first: 2026-11-30\n---\nDrinks tea.\n\n## Evidence\n- 2026-11-30 single "
          "[[observations/2026-11#obs-20261130-abcd]] — tea\n")
OBS = "# Observations 2026-11\n\n## obs-20261130-abcd\n- date: 2026-11-30\n- evidence: tea\n"


def test_create_refuses_an_existing_file_and_writes_nothing(vault):
    (vault.root / "beliefs/likes-tea.md").write_text("mine")
    with pytest.raises(Conflict) as e:
        tx.apply(vault.root, [tx.create("observations/2026-11.md", OBS), tx.create("beliefs/likes-tea.md", BELIEF)],
                 tx.Commit("add", "add"))
    assert e.value.path == "beliefs/likes-tea.md"
    assert (vault.root / "beliefs/likes-tea.md").read_text() == "mine"
    assert not (vault.root / "observations/2026-11.md").exists()


def test_replace_is_compare_and_swap(vault):
    p = vault.root / "state/sessions.json"
    key = stat_key(p)
    p.write_text(p.read_text() + " ")  # a hand edit lands after epimem read the file
    with pytest.raises(ConcurrentEdit):
        tx.apply(vault.root, [tx.replace("state/sessions.json", "{}", key)], tx.Commit("s", "session"))
    assert p.read_text().endswith(" ")


def test_links_are_written_before_what_links_to_them(vault, monkeypatch):
    order: list[str] = []
    real = tx.atomic_write

    def spy(path, data, expect=None, **kw):
        order.append(str(path.relative_to(vault.root.resolve())))
        return real(path, data, expect, **kw)
    monkeypatch.setattr(tx, "atomic_write", spy)
    old = vault.add_belief(title="Old habit", statement="Old.", kind="trait", basis="behavioral", permanence="durable")
    order.clear()
    vault.add_belief(title="New habit", statement="New.", kind="trait", basis="behavioral", permanence="durable",
                     supersedes=[old.id])
    assert order == ["beliefs/new-habit.md", "beliefs/old-habit.md"]  # the successor exists before it is named
    order.clear()
    tx.apply(vault.root, [tx.create("tensions/2026-11-30-likes-tea.md", "t"), tx.create("beliefs/likes-tea.md", BELIEF),
                          tx.create("observations/2026-11.md", OBS)], tx.Commit("x", "observe"))
    assert order == ["observations/2026-11.md", "beliefs/likes-tea.md", "tensions/2026-11-30-likes-tea.md"]


def test_a_failed_commit_puts_every_file_back(vault, monkeypatch):
    p = vault.root / "state/sessions.json"
    before = p.read_text()

    def boom(*a, **k):
        raise git.HistoryError("git commit failed: disk full")
    monkeypatch.setattr(git, "commit", boom)
    with pytest.raises(StorageError, match="nothing was written"):
        tx.apply(vault.root, [tx.replace("state/sessions.json", "{}", stat_key(p)),
                              tx.create("beliefs/likes-tea.md", BELIEF)], tx.Commit("x", "session"))
    assert p.read_text() == before and not (vault.root / "beliefs/likes-tea.md").exists()
    assert status(vault.root) == ""


def test_delete_without_commit_and_its_rollback(vault, monkeypatch):
    rel = ".epimem/gut-check.json"
    tx.apply(vault.root, [tx.upsert(rel, "{}")])
    assert (vault.root / rel).read_text() == "{}"
    tx.apply(vault.root, [tx.delete(rel)])
    assert not (vault.root / rel).exists()
    tx.apply(vault.root, [tx.delete(rel)])  # already gone: nothing to do
    tx.apply(vault.root, [tx.upsert(rel, "{}")])

    real = tx.atomic_write

    def boom(path, *a, **k):
        if path.name == "other.json":
            raise OSError("disk full")
        return real(path, *a, **k)
    monkeypatch.setattr(tx, "atomic_write", boom)
    with pytest.raises(StorageError):
        tx.apply(vault.root, [tx.delete(rel), tx.upsert(".epimem/other.json", "x")])
    monkeypatch.undo()
    assert (vault.root / rel).read_text() == "{}"  # the deletion was undone with the failed write


def test_a_cache_that_cannot_be_updated_never_fails_a_write_that_landed(vault, monkeypatch, caplog):
    def broken(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(context_cache, "update_context", broken)
    monkeypatch.setattr(context_cache, "refresh_context", broken)
    with caplog.at_level(logging.WARNING, logger="epimem"):
        b = vault.add_belief(title="Likes tea", statement="Drinks tea.", kind="preference", basis="behavioral",
                             permanence="durable")
    assert b.id == "likes-tea" and log(vault.root)[0].startswith("belief: add likes-tea")
    assert "context cache could not be updated" in caplog.text and "No space left" in caplog.text
    res = tx.apply(vault.root, [tx.create("beliefs/x.md", BELIEF)], tx.Commit("x", "add"))
    assert res.commit and res.notes and "No space left" in res.notes[0]


def test_a_bug_in_the_cache_update_is_not_swallowed(vault, monkeypatch):
    def bug(*a, **k):
        raise RuntimeError("a bug")
    monkeypatch.setattr(context_cache, "update_context", bug)
    with pytest.raises(RuntimeError):
        tx.apply(vault.root, [tx.create("beliefs/x.md", BELIEF)], tx.Commit("x", "add"))


def test_importers_keep_the_hook_cache_current(vault, tmp_path):
    from epimem.importers.claude_memory import import_claude_memory

    f = tmp_path / "CLAUDE.md"
    f.write_text("- Prefers pnpm over npm.\n")
    import_claude_memory(vault, f)
    cache = context_cache.read_context_cache(vault.root)
    assert cache["signature"] == context_cache.signature(vault.root)
    assert "prefers-pnpm-over-npm" in [r["id"] for r in cache["global"]]


def test_record_commits_what_is_already_there_and_refreshes_the_cache(vault):
    (vault.root / "beliefs/likes-tea.md").write_text(BELIEF)
    res = tx.adopt(vault.root, lambda: tx.Staged(tx.Commit("edit: by hand", "edit"), ("beliefs/likes-tea.md",),
                                                  value=42))
    assert res.commit and res.value == 42 and log(vault.root)[0] == "edit: by hand" and status(vault.root) == ""
    cache = context_cache.read_context_cache(vault.root)
    assert "likes-tea" in [r["id"] for r in cache["global"]]
    assert tx.adopt(vault.root, lambda: None).commit is None


def test_a_failed_undo_commit_leaves_the_work_tree_as_it_was(vault, monkeypatch):
    vault.add_belief(title="Likes tea", statement="Drinks tea.", kind="preference", basis="behavioral",
                     permanence="durable")
    before = log(vault.root)

    def boom(*a, **k):
        raise git.HistoryError("git commit failed: disk full")
    monkeypatch.setattr(git, "commit", boom)
    with pytest.raises(EpimemError, match="nothing was written"):
        vault.undo()
    assert log(vault.root) == before and status(vault.root) == ""
    assert (vault.root / "beliefs/likes-tea.md").exists()


@pytest.mark.seed_rules
def test_an_append_keeps_the_files_own_crlf_line_endings(tmp_path):
    # A user on Windows: Obsidian saves CRLF. An observe must append in CRLF, not turn the file LF.
    from epimem.api.memory import Memory

    mem, _ = Memory.init(tmp_path / "v", today="2026-11-01")
    mem.add_belief(title="Prefers small PRs", statement="Splits work into small PRs.", kind="preference",
                   basis="behavioral", permanence="durable")
    mem.observe([{"connects": "prefers-small-prs", "strength": "confirming", "evidence": "split it", "session": "a"}])
    root = mem.root
    for rel in ("observations/2026-11.md", "beliefs/prefers-small-prs.md"):
        p = root / rel
        p.write_bytes(p.read_bytes().replace(b"\n", b"\r\n"))
    subprocess.run(["git", "commit", "-qam", "edited on Windows"], cwd=root, check=True,
                   env={**__import__("os").environ, "GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@e",
                        "GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@e"})
    Memory(root, today="2026-11-02").observe([{"connects": "prefers-small-prs", "strength": "confirming",
                                               "evidence": "split another", "session": "b"}])
    for rel in ("observations/2026-11.md", "beliefs/prefers-small-prs.md"):
        data = (root / rel).read_bytes()
        assert data.count(b"\r\n") == data.count(b"\n"), rel
    stat = subprocess.run(["git", "diff", "--numstat", "HEAD~1", "--", "observations/2026-11.md"], cwd=root,
                          capture_output=True, text=True, check=True).stdout.split()
    assert stat[1] == "0", "the append rewrote existing lines"
    assert Memory(root).belief("prefers-small-prs").confidence == pytest.approx(0.40)


def test_keep_line_endings():
    from epimem.store.files import keep_line_endings

    assert keep_line_endings("a\nb\n", b"x\r\ny\r\n") == "a\r\nb\r\n"
    assert keep_line_endings("a\nb\n", b"x\ny\n") == "a\nb\n"
    assert keep_line_endings("a\nb\n", None) == "a\nb\n"
    assert keep_line_endings("a\nb\n", b"x\ny\nz\r\nw\n") == "a\nb\n"


def test_a_file_read_but_not_written_is_a_compare_and_swap_key_too(vault):
    p = vault.root / "state/sessions.json"
    key = stat_key(p)
    p.write_text(p.read_text() + " ")  # changed after the change was computed from it
    with pytest.raises(tx.Stale):
        tx.apply(vault.root, [tx.create("beliefs/likes-tea.md", BELIEF)], tx.Commit("add", "add"),
                 reads=[("state/sessions.json", key)])
    assert not (vault.root / "beliefs/likes-tea.md").exists() and log(vault.root)[0] != "add"


def test_a_rebase_follows_a_file_that_grew_and_can_refuse(vault):
    rel = "observations/2026-11.md"
    tx.apply(vault.root, [tx.create(rel, OBS)], tx.Commit("first", "observe"))
    key = stat_key(vault.root / rel)
    theirs = OBS + "\n## obs-20261130-beef\n- date: 2026-11-30\n- evidence: coffee\n"
    tx.apply(vault.root, [tx.replace(rel, theirs, key)], tx.Commit("theirs", "observe"))
    mine = "\n## obs-20261130-cafe\n- date: 2026-11-30\n- evidence: water\n"
    seen = []

    def rebase(now: str) -> str:
        seen.append(now)
        return now + mine
    tx.apply(vault.root, [tx.replace(rel, OBS + mine, key, rebase)], tx.Commit("mine", "observe"))
    assert seen == [theirs] and (vault.root / rel).read_text() == theirs + mine

    def refuse(now: str) -> str:
        raise tx.Stale("no", path=rel)
    with pytest.raises(tx.Stale):
        tx.apply(vault.root, [tx.replace(rel, OBS, key, refuse)], tx.Commit("never", "observe"))
    assert (vault.root / rel).read_text() == theirs + mine and log(vault.root)[0] == "mine"
