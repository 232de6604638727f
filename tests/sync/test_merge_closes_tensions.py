"""Issue 24, item 10: after a merge, a belief retired on one machine kept the `watching` tension the
other machine opened on it. `epimem sync` closes it, as retiring it here would have."""

from __future__ import annotations

from machines import machines

from epimem.api import sync as sync_api
from epimem.api.memory import Memory


def test_a_merge_closes_the_tension_of_a_belief_retired_on_the_other_side(tmp_path):
    _, (a, b) = machines(tmp_path, 2, beliefs=(("small-prs", 0.50),))
    Memory(a.root, today="2026-11-05").reject("small-prs", retire=True, note="Not true any more.")
    Memory(b.root, today="2026-11-05").observe([{"connects": "small-prs", "strength": "contradicting",
                                                 "evidence": "Opened one big PR.", "session": "s-b"}])
    assert [t.status for t in b.tensions()] == ["watching"]
    sync_api.sync(a, index=False)
    rep = sync_api.sync(b, index=False)
    assert b.belief("small-prs").status == "retired"
    assert [t.status for t in b.tensions()] == ["resolved"], rep.notes
    sync_api.sync(a, index=False)
    assert [t.status for t in a.tensions()] == ["resolved"]
    assert b.validate() == []
