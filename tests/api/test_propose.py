"""`Memory.propose`: an assistant's proposal of what only the user decides (rule 22) is an open
question on the belief, never applied; the user's answer settles it."""

from __future__ import annotations

import pytest

from epimem.core.errors import Conflict, InputError, NotFound


@pytest.fixture
def mem(vault):
    for bid, title in (("prefers-tabs", "Prefers tabs"), ("prefers-spaces", "Prefers spaces")):
        vault.add_belief(title=title, statement=title + ".", kind="preference", basis="behavioral",
                         permanence="durable", belief_id=bid)
    return vault


def _files(mem):
    return {p.name: p.read_bytes() for p in (mem.root / "beliefs").glob("*.md")}


def test_each_proposal_is_an_open_question_and_changes_no_belief(mem):
    before = _files(mem)
    retire, opened = mem.propose("prefers-tabs", "retire", source="An assistant")
    assert opened and retire.status == "unresolved" and retire.belief == "prefers-tabs"
    assert retire.title == "Retire “Prefers tabs”?"
    assert "An assistant proposed retiring it" in retire.what_happened
    assert "`epimem belief retire prefers-tabs`" in retire.suggests
    sup, _ = mem.propose("prefers-tabs", "supersede", by="prefers-spaces")
    assert "epimem belief supersede prefers-tabs --by prefers-spaces" in sup.suggests and not sup.successor
    word, _ = mem.propose("prefers-tabs", "rename", title="Prefers tabs except in YAML")
    assert '--now "Prefers tabs except in YAML"' in word.suggests
    assert _files(mem) == before
    assert sorted(t.id for t in mem.tensions("unresolved")) == sorted([retire.id, sup.id, word.id])


def test_the_same_proposal_is_asked_once(mem):
    t1, opened1 = mem.propose("prefers-tabs", "retire")
    t2, opened2 = mem.propose("prefers-tabs", "retire")
    assert opened1 and not opened2 and t1.id == t2.id and len(mem.tensions()) == 1


def test_what_cannot_be_proposed(mem):
    with pytest.raises(InputError, match="action"):
        mem.propose("prefers-tabs", "delete")
    with pytest.raises(InputError, match="itself"):
        mem.propose("prefers-tabs", "supersede", by="prefers-tabs")
    with pytest.raises(NotFound):
        mem.propose("prefers-tabs", "supersede", by="no-such-belief")
    with pytest.raises(InputError, match="'title' is required"):
        mem.propose("prefers-tabs", "rename")
    mem.retire("prefers-spaces")
    with pytest.raises(Conflict, match="retired"):
        mem.propose("prefers-spaces", "retire")
    with pytest.raises(Conflict, match="retired"):
        mem.propose("prefers-tabs", "supersede", by="prefers-spaces")
    assert not [t for t in mem.tensions() if t.belief == "prefers-tabs"]  # nothing was asked


def test_the_users_answer_settles_it(mem):
    from epimem.mirror.gutcheck import answer

    t, _ = mem.propose("prefers-tabs", "retire")
    answer(mem, "prefers-tabs", "true", note="still true")
    [after] = mem.tensions()
    assert after.id == t.id and after.status == "resolved"
    assert mem.belief("prefers-tabs").status == "active"
    t, _ = mem.propose("prefers-tabs", "retire")
    mem.retire("prefers-tabs", note="switched to spaces")
    assert {x.status for x in mem.tensions()} == {"resolved"}


def test_a_proposal_is_redacted_and_one_commit(mem):
    import subprocess

    n = int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=mem.root, capture_output=True,
                           text=True).stdout)
    t, _ = mem.propose("prefers-tabs", "rename", title="Prefers tabs ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8")
    assert "ghp_A1b2" not in (mem.root / t.path).read_text()
    assert int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=mem.root, capture_output=True,
                              text=True).stdout) == n + 1


def test_the_session_context_asks_a_proposal_as_it_was_put(mem):
    from epimem.api.context import render_context
    from epimem.store.context_cache import read_context_cache

    mem.propose("prefers-tabs", "retire", source="An assistant")
    text = render_context(read_context_cache(mem.root), None, cwd="/nowhere", today=mem.today)
    line = next(ln for ln in text.splitlines() if "[prefers-tabs]" in ln)
    assert line.startswith("- Retire “Prefers tabs”? [prefers-tabs] Asked on ")
    assert "An assistant proposed retiring it" in line and "Contradicted" not in line
