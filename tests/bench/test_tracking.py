"""The belief-tracking benchmark (bench/bench_tracking.py) is only worth its figures if its
fast path is the product: the two backends must show the same session contexts and end in the
same beliefs, and a person who changes must be followed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import tracking_sim as ts  # noqa: E402


def _person(days: int = 70) -> ts.Person:
    """Lives in one place until day 15, then another; a habit that rests on it follows on day
    18; one that rests on it too does not; a steady habit; a pattern that was never there."""
    traits = (ts.Trait("p0-t0", "holds", "durable", strength=0.9),
              ts.Trait("p0-t1", "abrupt", "durable", change=15, strength=0.9),
              ts.Trait("p0-t2", "dependent", "durable", change=18, base="p0-t1", follows=True, strength=0.9),
              ts.Trait("p0-t3", "dependent", "durable", change=18, base="p0-t1", follows=False, strength=0.85),
              ts.Trait("p0-t4", "spurious", "unknown", strength=0.1))
    return ts.Person("p0", traits, tuple(range(days)))


class _Always(ts.Quality):
    pass


SHARP = ts.Quality("sharp", record=0.9, false_confirm=0.0, miss=0.0, successor=1.0, self_report=0.0,
                   self_report_wrong=0.0, form=1.0, answer_error=0.0, ask=1.0, review=1.0)


def _run(backend, days=70, quality=SHARP):
    sim = ts.Simulation(_person(days), quality, backend, seed=3)
    fig = sim.run()
    return sim, fig


def test_a_person_who_changes_is_followed_on_the_fast_path():
    old = ts.VISIBLE
    ts.VISIBLE = 0.9
    try:
        b = ts.CoreBackend()
        sim, fig = _run(b)
    finally:
        ts.VISIBLE = old
    s = fig.summary()
    assert s["changes"] >= 1 and s["unfollowed"] == 0 and s["detection_rate"] == 1.0
    assert s["wrong_retired_auto"] == 0  # nothing is retired without the user
    old_id = "pattern-p0-t1-form-a"
    assert b.beliefs[old_id].status == "superseded"
    assert any(x.title == "Pattern p0 t1 form B" and x.status == "active" for x in b.beliefs.values())
    # A dependant was asked about at a session start, and never lowered by the flag itself.
    assert any("It rests on [pattern-p0-t1-form-a]" in text for text in sim.context_log)


@pytest.mark.slow
def test_the_fast_path_shows_what_the_product_shows():
    old = ts.VISIBLE
    ts.VISIBLE = 0.9
    try:
        core_sim, core_fig = _run(ts.CoreBackend(), days=45)
        api = ts.ApiBackend()
        try:
            api_sim, api_fig = _run(api, days=45)
            api_final = {b.id: (b.status, b.confidence, b.confirmed, b.depends_on) for b in api.all_beliefs()}
        finally:
            api.close()
    finally:
        ts.VISIBLE = old
    core_final = {b.id: (b.status, b.confidence, b.confirmed, b.depends_on)
                  for b in core_sim.b.all_beliefs()}
    assert core_sim.context_log == api_sim.context_log
    assert core_final == api_final
    assert core_fig.summary() == api_fig.summary()


def test_the_ece_decomposition_adds_up_to_the_ece():
    """The parts by band, by kind of belief and by period each sum to the ECE they explain (so a
    table of them says where the error is, not a second measure), and the stale serves counted
    by cause are the stale session starts."""
    from epimem.core import calibration as cal

    fig = ts.run(2, "middle", days=200)
    ece = cal.ece(fig.pairs)
    assert ece is not None and ece > 0
    for parts in (ts.decompose_bands(fig.tagged), ts.decompose(fig.tagged, 2), ts.decompose(fig.tagged, 3)):
        assert sum(r.get("ece_part", 0.0) for r in parts) == pytest.approx(ece, abs=1e-3)
        assert sum(r["share"] for r in parts) == pytest.approx(1.0, abs=1e-2)
    assert len(fig.stale_causes) == fig.stale_sessions
    assert {r["group"] for r in ts.decompose(fig.tagged, 2)} <= {
        "never there", "left by the person", "real, never confirmed", "real, at the cap",
        "real, at the cap (decayed)", "real, decayed to the floor", "real, below the cap",
        "real, below the cap (decayed)"}


def test_the_sweep_grid_sets_each_lever_and_refuses_an_unknown_one():
    import bench_tracking as bt

    from epimem.core.params import DEFAULTS

    points = bt.grid("start=0.55;step=0.08;challenge=0.15;fast=2;list=0.4")
    (params, listing), = points.values()
    assert params.start["behavioral"] == 0.55 and params.confirm_step == 0.08 and params.challenge_step == 0.15
    assert params.decay["situational"] == DEFAULTS.decay["situational"] * 2
    assert params.decay["durable"] == DEFAULTS.decay["durable"] and listing == 0.4
    assert len(bt.grid("start=0.3,0.5;step=0.05,0.1")) == 4
    with pytest.raises(SystemExit, match="unknown lever 'steps'"):
        bt.grid("steps=0.1")


def test_a_lever_not_named_keeps_the_seeds_value_so_published_commands_reproduce():
    import bench_tracking as bt

    from epimem.core.params import DEFAULTS

    # the seed is read from the sample vault, which pins SPEC §2's first numbers
    assert (bt.SEED.start["behavioral"], bt.SEED.confirm_step, bt.SEED.challenge_step) == (0.30, 0.05, 0.10)
    assert bt.SEED != DEFAULTS
    (params, _), = bt.grid("start=0.4").values()
    assert params.start["behavioral"] == 0.4
    assert (params.confirm_step, params.challenge_step) == (bt.SEED.confirm_step, bt.SEED.challenge_step)
    assert {(p.confirm_step, p.challenge_step) for p in bt.candidates().values()} <= {
        (st, bt.SEED.challenge_step) for st in (0.05, 0.08, 0.10)}


def test_the_base_rate_knob_sets_the_one_offs_and_the_verdict_knob_changes_the_answers():
    import random

    for n in (0, 6, 24):
        person = ts.make_person(random.Random(1), 0, 365, spurious=n)
        assert sum(t.pattern == "spurious" for t in person.traits) == n
    # A habit that fits 60 % of sessions holds every day: "holds" always says so (before answer
    # error), "fit" says so about as often as it fits.
    habit = ts.Trait("p0-t0", "holds", "durable", strength=0.6)
    person = ts.Person("p0", (habit,), tuple(range(10)))
    q = ts.Quality(name="test", record=1, false_confirm=0, miss=0, successor=1, self_report=0, self_report_wrong=0,
                   form=1, answer_error=0, ask=1, review=1)
    answers = {}
    for model in ("holds", "fit"):
        sim = ts.Simulation(person, q, ts.CoreBackend(ts.DEFAULTS, True), 3, verdicts=model)
        sim.of_belief["b"] = ("p0-t0", "A")
        answers[model] = sum(sim.says_true("b", 5) for _ in range(2000)) / 2000
    assert answers["holds"] == 1.0
    assert abs(answers["fit"] - habit.fit("A", 5)) < 0.05
