"""SPEC §14, issue 26 item 3: the pure figures of calibration — the verdict tag, Wilson
intervals, Brier, bands that say nothing from a handful, and the parameter changes the
verdicts support (only from enough of them, only when they fit better)."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from datetime import date

import pytest

from epimem.core import calibration as cal
from epimem.core.model import Belief
from epimem.core.params import DEFAULTS

D = date(2026, 6, 1)


def test_the_tag_records_the_belief_as_it_was_asked_and_reads_back():
    b = Belief("x", "X", "trait", "behavioral", 0.75, "durable", date(2026, 1, 1), confirmed=date(2026, 4, 21))
    t = cal.tag(b, "false", "gut-check", D)
    assert t == "(gut-check verdict false at 0.61; stored 0.75 behavioral, durable, 41 days)"
    v = cal.parse("x", D, f"gut-check: false; moved {t} (0.75 → 0.55)")
    assert (v.outcome, v.confidence, v.stored, v.basis, v.permanence, v.days, v.source) == (
        "false", 0.61, 0.75, "behavioral", "durable", 41, "gut-check")
    assert cal.strip_tag(f"gut-check: false {t}") == "gut-check: false"
    assert cal.parse("x", D, "gut-check: false (0.75 → 0.55)") is None
    with pytest.raises(ValueError):
        cal.tag(b, "maybe", "answer", D)


def test_wilson_and_brier():
    lo, hi = cal.wilson(8, 10)
    assert (round(lo, 3), round(hi, 3)) == (0.490, 0.943)  # the textbook 95 % interval of 8 in 10
    assert cal.wilson(0, 0) == (0.0, 1.0)
    assert cal.brier([(0.8, True), (0.8, False)]) == pytest.approx((0.04 + 0.64) / 2)
    assert cal.brier([]) is None and cal.ece([]) is None
    assert cal.ece([(0.85, True)] * 10) == pytest.approx(0.15)


def _v(conf: float, outcome: str, *, stored: float | None = None, days: int = 0, perm: str = "durable",
       basis: str = "behavioral") -> cal.Verdict:
    return cal.Verdict("b", D, outcome, conf, conf if stored is None else stored, basis, perm, days, "gut-check")


def test_a_band_is_judged_only_from_enough_verdicts():
    few = [_v(0.8, "false")] * (cal.BAND_MIN - 1)
    c = cal.calibrate(few)
    est = next(b for b in c.bands if b.name == "established")
    assert (est.n, est.judgement) == (cal.BAND_MIN - 1, "too few verdicts") and not c.proposals
    many = [_v(0.8, "false")] * 8 + [_v(0.8, "true")] * 4
    est = next(b for b in cal.calibrate(many).bands if b.name == "established")
    assert est.judgement == "over-confident" and est.rate == pytest.approx(4 / 12, abs=1e-3)
    assert est.interval[1] < 0.8
    fits = [_v(0.8, "true")] * 8 + [_v(0.8, "false")] * 2
    assert next(b for b in cal.calibrate(fits).bands if b.name == "established").judgement == "fits"
    unsure = cal.calibrate([_v(0.5, "unsure")] * 3)
    assert (unsure.verdicts, unsure.unsure, unsure.brier) == (0, 3, None)


def test_decay_too_fast_is_proposed_slower_with_the_numbers():
    # Beliefs stored at 0.80, asked 120 days after confirmation (decayed to 0.44 at 0.005 a day),
    # and nearly always still true: decay is too fast for this person.
    rate = DEFAULTS.decay["durable"]
    eff = round(max(0.2, 0.8 * math.exp(-rate * 120)), 2)
    vs = [_v(eff, "true" if i % 10 else "false", stored=0.8, days=120) for i in range(40)]
    props = {p.key: p for p in cal.propose(vs)}
    p = props["decay.durable"]
    assert p.proposed < p.current and p.verdicts == 40 and p.brier_after < p.brier_before - cal.PROPOSE_GAIN
    assert "slower" in p.reason and "40 verdicts" in p.reason
    # Under PROPOSE_MIN verdicts, nothing is proposed, however clear they look.
    assert cal.propose(vs[:cal.PROPOSE_MIN - 1]) == []
    # A rate changed on D is judged on the verdicts given after D only.
    assert "decay.durable" not in {p.key for p in cal.propose(vs, since={"decay.durable": D})}
    assert "decay.durable" in {p.key for p in cal.propose(vs, since={"decay.stable": D})}


def test_an_under_confident_start_and_step_are_proposed_together():
    rng = random.Random(3)
    vs = [_v(c, "true" if rng.random() < 0.95 else "false", stored=c)
          for c in (0.30, 0.35, 0.40, 0.45, 0.50) for _ in range(10)]
    keys = {p.key: p for p in cal.propose(vs)}
    assert keys["start.behavioral"].proposed > 0.30 or keys["confirm_step"].proposed > 0.05
    meta = cal.apply_to_meta({"start": dict(DEFAULTS.start), "decay": dict(DEFAULTS.decay)}, list(keys.values()))
    if "start" in meta:
        assert meta["start"]["self-report"] == 0.40  # the other bases keep their values


def test_a_well_calibrated_user_gets_no_proposal():
    rng = random.Random(5)
    vs = []
    for _ in range(200):
        c = rng.choice((0.3, 0.5, 0.7, 0.9))
        vs.append(_v(c, "true" if rng.random() < c else "false", stored=c, days=0))
    assert cal.propose(vs) == []


def test_verdicts_are_read_from_every_belief_active_or_not():
    b = Belief("x", "X", "trait", "behavioral", 0.75, "durable", date(2026, 1, 1))
    from epimem.core.model import Evidence

    tagged = replace(b, status="superseded", evidence=(
        Evidence(D, "superseded", "", "replaced " + cal.tag(b, "false", "supersession", D)),
        Evidence(D, "reinforcing", "", "no tag here")))
    assert [v.source for v in cal.verdicts([tagged])] == ["supersession"]
