"""Random histories on two and three clones of one bare remote, synced in random orders.

Every clone converges to the same files, `validate` is clean, no file holds a conflict
marker, every observation is there exactly once, the session counts add up, and each
belief's confidence is its start plus every machine's changes (the histories stay
inside the cap and the floor, where addition is exact).
"""

from __future__ import annotations

import itertools
from datetime import date, timedelta

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from machines import machines, vault_files

from epimem.api import sync as sync_api
from epimem.api.memory import Memory
from epimem.core.errors import EpimemError
from epimem.core.merge import has_conflict_markers, split_log
from epimem.core.notes import edit_frontmatter, parse_note

# The bounds below are the seed's rule numbers, which these vaults pin (convergence is the
# property; the numbers only have to keep every partial sum inside the floor and the cap).
pytestmark = [pytest.mark.slow, pytest.mark.seed_rules]

BELIEFS = (("b1", 0.50), ("b2", 0.50))
START = date(2026, 11, 1)
# Bounds that keep every partial sum inside [floor, cap]: 0.50 + 7 × 0.05 ≤ 0.90, 0.50 − 0.20 − 2 × 0.10 ≥ 0.05.
LIMITS = {"confirm": 7, "reject": 1, "contradict": 2}

op = st.tuples(st.integers(0, 2), st.sampled_from(["confirm", "confirm", "session", "reject", "contradict",
                                                   "retire", "tag", "sync", "sync"]),
               st.sampled_from([b for b, _ in BELIEFS]))


def run(tmp_path, n: int, ops: list) -> None:
    _, mems = machines(tmp_path, n, today=START.isoformat(), beliefs=BELIEFS)
    deltas = {b: 0.0 for b, _ in BELIEFS}
    used = {(k, b): 0 for k in LIMITS for b, _ in BELIEFS}
    observed: list[str] = []
    sessions = 0
    retired: set[str] = set()
    for step, (i, action, bid) in enumerate(ops):
        m = mems[i % n]
        day = (START + timedelta(days=step)).isoformat()
        mem = Memory(m.root, today=day)
        if action in LIMITS:
            if used[(action, bid)] >= LIMITS[action]:
                continue
            used[(action, bid)] += 1
        if action in ("confirm", "contradict"):
            strength = "confirming" if action == "confirm" else "contradicting"
            try:
                rep = mem.observe([{"connects": bid, "strength": strength, "basis": "behavioral",
                                    "evidence": f"step {step} on machine {i % n}", "session": f"s{step}"}])
            except EpimemError:
                continue
            r = rep.results[0]
            observed.append(r.observation.id)
            if r.before is not None and r.after is not None:
                deltas[bid] += r.after - r.before
        elif action == "session":
            mem.session_start()
            sessions += 1
        elif action == "reject":
            before = mem.belief(bid).confidence
            try:  # a belief retired here already is refused, as the user would be
                deltas[bid] += mem.reject(bid, note=f"step {step}").confidence - before
            except EpimemError:
                continue
        elif action == "retire":
            try:
                mem.retire(bid, note=f"step {step}")
            except EpimemError:
                continue
            retired.add(bid)
        elif action == "tag":  # a hand edit in an editor, committed by the next sync
            p = m.root / "beliefs" / f"{bid}.md"
            tags = list(parse_note(p.read_text()).meta.get("tags") or [])
            p.write_text(edit_frontmatter(p.read_text(), {"tags": tags + [f"t{step}"]}))
        else:
            sync_api.sync(mem, index=False)
    for mem in itertools.chain(mems, mems):  # two full rounds: the last clone of the first has everything
        sync_api.sync(mem, index=False)

    files = [vault_files(m.root) for m in mems]
    assert all(f == files[0] for f in files[1:]), "clones did not converge"
    final = Memory(mems[0].root, today=(START + timedelta(days=len(ops))).isoformat())
    assert final.validate() == []
    for name, data in files[0].items():
        assert not has_conflict_markers(data.decode()), name
    ids = [oid for name, data in files[0].items() if name.startswith("observations/")
           for oid, _ in split_log(data.decode())[1]]
    assert sorted(ids) == sorted(observed)
    counter = final.vault.read_sessions()
    assert counter.count == sessions and sum(n for _, n in counter.days) == sessions
    for bid, start in BELIEFS:
        b = final.belief(bid)
        assert b.confidence == pytest.approx(round(start + deltas[bid], 2), abs=1e-9), bid
        assert (b.status == "retired") == (bid in retired)
        tags_added = {f"t{s}" for s, (_, a, x) in enumerate(ops) if a == "tag" and x == bid}
        assert tags_added <= set(b.tags)


# No shrinking: one example takes seconds of real git, and a failure prints its history whole.
SETTINGS = dict(deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])


@settings(max_examples=25, **SETTINGS)
@given(ops=st.lists(op, min_size=4, max_size=18))
def test_two_machines_converge(tmp_path_factory, ops):
    run(tmp_path_factory.mktemp("two"), 2, ops)


@settings(max_examples=18, **SETTINGS)
@given(ops=st.lists(op, min_size=6, max_size=24))
def test_three_machines_converge(tmp_path_factory, ops):
    run(tmp_path_factory.mktemp("three"), 3, ops)
