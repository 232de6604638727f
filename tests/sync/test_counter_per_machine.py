"""Issue 24, item 9: the session counter per machine (SPEC §1.4). Two machines that each count a
session on the same day used to write byte-identical `state/sessions.json` files, so git never
called the merge driver and `sync` lost one session. Each clone now counts on its own entry of a
grow-only map whose sum is the count, and an older file takes the map on its next write."""

from __future__ import annotations

import json

from machines import git, machines

from epimem.api import sync as sync_api
from epimem.api.memory import Memory
from epimem.core import merge
from epimem.store import sessions as sessions_file


def counter(mem: Memory) -> dict:
    return json.loads((mem.root / sessions_file.PATH).read_text())


def test_two_machines_one_session_each_the_same_day_count_two(tmp_path):
    _, (a, b) = machines(tmp_path, 2)
    before = a.vault.read_sessions().count
    Memory(a.root, today="2026-11-05").session_start()
    Memory(b.root, today="2026-11-05").session_start()
    assert (a.root / sessions_file.PATH).read_bytes() != (b.root / sessions_file.PATH).read_bytes()
    sync_api.sync(a, index=False)
    sync_api.sync(b, index=False)
    sync_api.sync(a, index=False)
    for m in (a, b):
        c = counter(m)
        assert c["count"] == before + 2, c
        assert sessions_file.machine_id(a.root) != sessions_file.machine_id(b.root)
        assert sum(c["machines"].values()) == c["count"]
        assert m.vault.read_sessions().days[-1] == ("2026-11-05", 2)
        assert m.validate() == []
    assert counter(a) == counter(b)


def test_a_plain_git_pull_merges_the_counters_the_same_way(tmp_path):
    _, (a, b) = machines(tmp_path, 2)
    Memory(a.root, today="2026-11-05").session_start(session="on-a")
    Memory(b.root, today="2026-11-05").session_start(session="on-b")
    Memory(b.root, today="2026-11-05").session_start()
    for m in (a, b):  # the day's first count is committed by itself; a later one rides along
        git(m.root, "commit", "-qam", "sessions", check=False)
    git(a.root, "push", "-q", "origin", "main")
    git(b.root, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    c = counter(b)
    assert c["count"] == 3 and set(c["counted"]) == {"on-a", "on-b"}


def test_an_older_counter_takes_the_map_on_its_next_write(vault):
    old = {"count": 7, "last_session": "2026-11-05", "last_review": None, "next_review_at": 10,
           "created": "2026-10-01", "count_at_day_start": {"2026-11-05": 6}}
    (vault.root / sessions_file.PATH).write_text(json.dumps(old, indent=2) + "\n")
    assert vault.vault.read_sessions().count == 7  # read as it is, nothing written
    assert "machines" not in counter(vault)
    vault.session_start()
    c = counter(vault)
    me = sessions_file.machine_id(vault.root)
    assert c["count"] == 8 and c["machines"] == {"earlier": 7, me: 1}


def test_two_machines_that_migrate_one_old_counter_count_it_once():
    old = sessions_file.dump(sessions_file.load({"count": 10, "count_at_day_start": {"2026-11-01": 9}}))
    raw = json.loads(old)
    raw.pop("machines")
    base = json.dumps(raw)
    ours = json.loads(base)
    ours.update(count=11, machines={"earlier": 10, "aaaa": 1})
    theirs = json.loads(base)
    theirs.update(count=12, machines={"earlier": 10, "bbbb": 2})
    m = merge.merge_json_counter(base, json.dumps(ours), json.dumps(theirs), sessions_file.loads,
                                 sessions_file.dump)
    got = sessions_file.loads(m.text)
    assert got["count"] == 13 and got["machines"] == {"aaaa": 1, "bbbb": 2, "earlier": 10}
    # an older epimem on one side, still counting on the whole: those add up as before
    older = json.loads(base)
    older["count"] = 11
    got = sessions_file.loads(merge.merge_json_counter(base, json.dumps(ours), json.dumps(older),
                                                       sessions_file.loads, sessions_file.dump).text)
    assert got["count"] == 12
