"""Writes are prepared outside the vault lock and committed with compare-and-swap keys
(issue 18): the lock is free while a change is prepared, a change that another one beat
is prepared again and both land, and what must stay exact (a resubmission recorded once,
rule 9's limit per session, a new belief's id) still is.

The "other writer" is a second Memory on the same vault, run from inside the first one's
preparation: it takes the flock through its own file descriptor, so it could not run at all
if the first one held the lock while preparing."""

from __future__ import annotations

import subprocess

import pytest

from epimem.api import beliefs as beliefs_api
from epimem.api import common
from epimem.api import observe as observe_api
from epimem.api.memory import Memory
from epimem.core.errors import Conflict
from epimem.store.files import ConcurrentEdit, VaultLock, lock_path


def commits(mem) -> list[str]:
    return subprocess.run(["git", "log", "--format=%s"], cwd=mem.root, capture_output=True,
                          text=True).stdout.splitlines()


def add(mem, title):
    return mem.add_belief(title=title, statement=f"{title}, as a habit.", kind="preference", basis="behavioral",
                          permanence="durable")


def ob(connects, session="s1", evidence="did it"):
    return {"connects": connects, "strength": "confirming", "session": session, "evidence": evidence}


def log_text(mem) -> str:
    return "".join(p.read_text() for p in sorted((mem.root / "observations").glob("*.md")))


@pytest.fixture
def during_prepare(monkeypatch):
    """Run `fn` once at the end of the next observe's preparation (after every read, before
    the commit), and count the preparations."""
    state = {"prepared": 0, "fn": None}
    real = observe_api.message

    def spy(results):
        state["prepared"] += 1
        fn, state["fn"] = state["fn"], None
        if fn is not None:
            fn()
        return real(results)
    monkeypatch.setattr(observe_api, "message", spy)

    def arm(fn):
        state["fn"] = fn
        return state
    return arm


def test_the_lock_is_free_while_a_change_is_prepared(vault, during_prepare):
    b = add(vault, "Prefers small PRs")
    took = []

    def other_writer():
        lock = VaultLock(lock_path(vault.root), timeout=0)  # no wait: fails at once if the lock is held
        with lock:
            took.append(True)
    during_prepare(other_writer)
    assert vault.observe([ob(b.id)]).commit is not None
    assert took == [True]


def test_two_preparers_race_the_second_prepares_again_and_both_land(vault, during_prepare):
    b = add(vault, "Prefers small PRs")
    other = Memory(vault.root, today=vault.today)
    state = during_prepare(lambda: other.observe([ob(b.id, session="s2", evidence="split the work")]))
    rep = vault.observe([ob(b.id, session="s1", evidence="kept it small")])
    assert rep.commit is not None
    # The first preparation read the belief before the other writer changed it: it was thrown
    # away (nothing written) and prepared again; the inner observe counts one preparation too.
    assert state["prepared"] == 3
    text = (vault.root / f"beliefs/{b.id}.md").read_text()
    assert "kept it small" in text and "split the work" in text
    logged = log_text(vault)
    assert logged.count("kept it small") == 1 and logged.count("split the work") == 1
    assert [c for c in commits(vault) if c.startswith("observe")] and len(
        [c for c in commits(vault) if c.startswith("observe")]) == 2
    assert subprocess.run(["git", "status", "--porcelain"], cwd=vault.root, capture_output=True,
                          text=True).stdout == ""


def test_an_append_to_the_log_by_another_writer_is_followed_without_preparing_again(vault, during_prepare):
    a, b = add(vault, "Prefers small PRs"), add(vault, "Reads the docs first")
    other = Memory(vault.root, today=vault.today)
    state = during_prepare(lambda: other.observe([ob(b.id, session="s2", evidence="read the manual")]))
    assert vault.observe([ob(a.id, session="s1", evidence="kept it small")]).commit is not None
    assert state["prepared"] == 2  # ours once, the other writer's once: the log was rebased under the lock
    logged = log_text(vault)
    assert logged.index("read the manual") < logged.index("kept it small")  # ours after theirs
    assert "kept it small" in (vault.root / f"beliefs/{a.id}.md").read_text()


def test_a_resubmission_landing_during_preparation_is_recorded_once(vault, during_prepare):
    b = add(vault, "Prefers small PRs")
    batch = [ob(b.id, session="s1", evidence="kept it small")]
    other = Memory(vault.root, today=vault.today)
    during_prepare(lambda: other.observe(batch))
    rep = vault.observe(batch)
    assert rep.commit is None and rep.results[0].duplicate
    assert log_text(vault).count("kept it small") == 1
    assert (vault.root / f"beliefs/{b.id}.md").read_text().count("kept it small") == 1


def test_rule_9_counts_what_landed_during_preparation(vault, during_prepare):
    a, b = add(vault, "Prefers small PRs"), add(vault, "Reads the docs first")
    vault.observe([ob(a.id, session="s1", evidence="one"), ob(a.id, session="s1", evidence="two")])
    other = Memory(vault.root, today=vault.today)
    # Each alone fits (2 + 1 = 3); together they would make four observations in session s1.
    during_prepare(lambda: other.observe([ob(b.id, session="s1", evidence="three")]))
    with pytest.raises(Conflict, match="rule 9"):
        vault.observe([ob(a.id, session="s1", evidence="four")])
    logged = log_text(vault)
    assert "three" in logged and "four" not in logged


def test_a_new_belief_racing_for_the_same_id_gets_the_next_one(vault, during_prepare):
    other = Memory(vault.root, today=vault.today)
    new = {"connects": "new", "strength": "single", "session": "s1", "title": "Likes tea", "evidence": "tea"}
    during_prepare(lambda: other.observe([{**new, "session": "s2", "evidence": "green tea"}]))
    # Prepared again, it would be held back beside the other's (rule 17): the user says go ahead.
    rep = vault.observe([{**new, "new_despite_similar": True}])
    assert rep.results[0].created and rep.results[0].belief == "likes-tea-2"
    assert (vault.root / "beliefs/likes-tea.md").exists()


def test_an_add_racing_an_identical_add_is_refused_under_the_lock(vault, monkeypatch):
    other = Memory(vault.root, today=vault.today)
    real = beliefs_api.render_belief
    fired = []

    def spy(b):
        if not fired:
            fired.append(True)
            other.add_belief(title="Drinks tea", statement="Likes tea.", kind="preference", basis="behavioral",
                             permanence="durable")
        return real(b)
    monkeypatch.setattr(beliefs_api, "render_belief", spy)
    with pytest.raises(Conflict, match="identical belief already exists: drinks-tea"):
        vault.add_belief(title="Tea person", statement="Likes tea.", kind="preference", basis="behavioral",
                         permanence="durable")
    assert not (vault.root / "beliefs/tea-person.md").exists()


def test_a_file_that_keeps_changing_gives_up_and_says_so(vault, monkeypatch):
    b = add(vault, "Prefers small PRs")
    p = vault.root / f"beliefs/{b.id}.md"
    real = observe_api.message
    n = []

    def spy(results):
        n.append(1)
        p.write_text(p.read_text() + "\n" + "x" * len(n))  # an editor saving, which takes no lock
        return real(results)
    monkeypatch.setattr(observe_api, "message", spy)
    with pytest.raises(ConcurrentEdit, match=f"prepared {common.OPTIMISTIC_ATTEMPTS + 1} times"):
        vault.observe([ob(b.id)])
    assert len(n) == common.OPTIMISTIC_ATTEMPTS + 1
    assert "did it" not in log_text(vault)
