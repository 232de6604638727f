"""Every rule of SPEC §2, with its numbers, on plain values."""

from dataclasses import replace
from datetime import date, timedelta

import pytest
from vaults import seed_params

from epimem.core import rules
from epimem.core.model import Belief, Evidence, Observation, Sessions
from epimem.core.params import DEFAULTS, params_from_meta

D = date(2026, 11, 30)


def belief(**kw) -> Belief:
    base = dict(id="b", title="B", kind="trait", basis="behavioral", confidence=0.40,
                permanence="durable", first=date(2026, 11, 1))
    base.update(kw)
    return Belief(**base)


def obs(strength="confirming", basis="behavioral", session="s1", d=D, **kw) -> Observation:
    return Observation(id=kw.pop("id", "obs-20261130-aaaa"), date=d, evidence=kw.pop("evidence", "did a thing"),
                       strength=strength, basis=basis, connects="b", session=session, **kw)


# The numbers below are the rules' parameters (DEFAULTS, what a fresh vault gets); the
# behavioural start and the two steps moved from SPEC §2's first numbers (issue 26), which a
# vault pinning them still gets (SEED, read from the sample vault's epistemology.md).
P = DEFAULTS
SEED = seed_params()
STEP, CHALLENGE = P.confirm_step, P.challenge_step


def r2(x: float) -> float:
    return round(x, 2)


# rule 1
@pytest.mark.parametrize("basis,start", [("behavioral", 0.55), ("self-report", 0.40),
                                         ("interpretive", 0.20), ("fact", 0.95)])
def test_start_values(basis, start):
    assert rules.start_confidence(basis) == start


@pytest.mark.parametrize("basis,start", [("behavioral", 0.30), ("self-report", 0.40),
                                         ("interpretive", 0.20), ("fact", 0.95)])
def test_a_vault_pinning_the_seeds_rules_starts_where_spec_2_first_said(basis, start):
    assert rules.start_confidence(basis, SEED) == start
    assert (SEED.confirm_step, SEED.challenge_step) == (0.05, 0.10)


def test_new_belief_from_one_observation_starts_at_basis_value():
    o = obs(strength="single", evidence="compared three designs aloud")
    b = rules.new_belief_from_observation(o, "thinks-aloud", title="Thinks aloud", kind="trait",
                                          basis="behavioral", permanence="unknown")
    assert b.confidence == P.start["behavioral"] and b.first == D and b.confirmed is None
    assert b.evidence[0].kind == "single" and b.evidence[0].link == "observations/2026-11#obs-20261130-aaaa"


# rule 2
def test_caps_by_basis():
    rules.check_confidence(0.95, "fact")
    rules.check_confidence(0.90, "behavioral")
    for basis in ("behavioral", "self-report", "interpretive"):
        with pytest.raises(rules.RuleError, match="above the cap"):
            rules.check_confidence(0.91, basis)
    with pytest.raises(rules.RuleError):
        rules.check_confidence(1.2, "fact")


def test_confirmation_never_exceeds_cap():
    b = belief(confidence=0.88, confirmed_session="s0")
    e = rules.apply_observation(b, obs())
    assert e.after.confidence == 0.90
    e2 = rules.apply_observation(e.after, obs(session="s2"))
    assert e2.after.confidence == 0.90


# rule 3
@pytest.mark.parametrize("params", [P, SEED], ids=["defaults", "seed"])
def test_behavioral_confirmation_from_new_session_adds_a_step_and_sets_confirmed(params):
    e = rules.apply_observation(belief(confirmed_session="s0"), obs(session="s1"), params)
    after = r2(0.40 + params.confirm_step)
    assert (e.before.confidence, e.after.confidence) == (0.40, after)
    assert e.after.confirmed == D and e.after.confirmed_session == "s1"
    assert e.evidence.kind == "confirming" and f"(0.40 → {after:.2f})" in e.evidence.note


def test_confirmation_from_the_same_session_changes_nothing():
    e = rules.apply_observation(belief(confirmed_session="s1"), obs(session="s1"))
    assert e.after.confidence == 0.40 and e.evidence.kind == "reinforcing"


def test_self_report_restating_is_reinforcement_not_confirmation():
    b = belief(confirmed_session="s0")
    e = rules.apply_observation(b, obs(basis="self-report", session="s9"))
    assert e.after == b and e.evidence.kind == "reinforcing"
    assert "reinforcement" in e.reason


def test_missing_session_counts_once_per_day():
    b = belief()
    e1 = rules.apply_observation(b, obs(session=""))
    e2 = rules.apply_observation(e1.after, obs(session="", evidence="again"))
    assert e1.after.confidence == r2(0.40 + STEP) and e2.after.confidence == r2(0.40 + STEP)


# rule 4
def test_first_challenge_opens_tension_and_keeps_confidence():
    e = rules.apply_observation(belief(confidence=0.60), obs("contradicting"))
    assert e.after.confidence == 0.60 and e.after.challenged == D
    assert e.open_tension and e.evidence.kind == "contradicting"


@pytest.mark.parametrize("params", [P, SEED], ids=["defaults", "seed"])
def test_second_challenge_without_confirmation_lowers_by_a_step_then_each_further(params):
    step = params.challenge_step
    b = belief(confidence=0.60)
    e1 = rules.apply_observation(b, obs("contradicting"), params)
    assert e1.after.confidence == 0.60
    b1 = replace(e1.after, evidence=e1.after.evidence + (e1.evidence,))
    e2 = rules.apply_observation(b1, obs("contradicting"), params)
    assert e2.after.confidence == r2(0.60 - step)
    b2 = replace(e2.after, evidence=b1.evidence + (e2.evidence,))
    e3 = rules.apply_observation(b2, obs("contradicting"), params)
    assert e3.after.confidence == r2(0.60 - 2 * step)


def test_a_confirmation_between_challenges_resets_the_count():
    evs = (Evidence(D, "contradicting"), Evidence(D, "confirming"))
    e = rules.apply_observation(belief(confidence=0.60, evidence=evs), obs("contradicting"))
    assert e.after.confidence == 0.60
    assert rules.challenges_since_confirmation(belief(evidence=evs)) == 0


def test_reinforcement_does_not_reset_the_challenge_count():
    evs = (Evidence(D, "contradicting"), Evidence(D, "reinforcing"))
    e = rules.apply_observation(belief(confidence=0.60, evidence=evs), obs("contradicting"))
    assert e.after.confidence == r2(0.60 - CHALLENGE)


def test_confidence_never_drops_below_005_by_rule():
    evs = (Evidence(D, "contradicting"),)
    e = rules.apply_observation(belief(confidence=0.12, evidence=evs), obs("contradicting"))
    assert e.after.confidence == 0.05
    e = rules.apply_observation(belief(confidence=0.05, evidence=evs), obs("contradicting"))
    assert e.after.confidence == 0.05
    # a value the user set below the floor is not raised by a challenge
    e = rules.apply_observation(belief(confidence=0.02, evidence=evs), obs("contradicting"))
    assert e.after.confidence == 0.02


def test_complicating_is_recorded_and_changes_no_number():
    b = belief(confidence=0.60)
    e = rules.apply_observation(b, obs("complicating"))
    assert e.after.confidence == 0.60 and not e.open_tension and e.after.challenged == D


def test_contradiction_of_a_belief_at_070_or_more_alerts():
    assert rules.apply_observation(belief(confidence=0.70), obs("contradicting")).alert
    assert not rules.apply_observation(belief(confidence=0.69), obs("contradicting")).alert


# rule 5
def test_explicit_rejection_lowers_by_020_or_retires():
    b = belief(confidence=0.60)
    r = rules.reject(b, D)
    assert r.confidence == 0.40 and r.status == "active" and r.evidence[-1].kind == "rejected"
    assert rules.reject(belief(confidence=0.15), D).confidence == 0.05
    t = rules.reject(b, D, retire=True)
    assert t.status == "retired" and t.confidence == 0.60


# rule 6
def test_self_report_against_behaviour_keeps_both_and_opens_tension():
    e = rules.apply_observation(belief(basis="behavioral", confidence=0.60),
                                obs("contradicting", basis="self-report"))
    assert e.after.confidence == 0.60 and e.open_tension and e.divergence
    assert e.evidence.kind == "diverging"
    # rule 15: after a prior challenge a divergence lowers like any challenge (rule 4 still holds)
    evs = (Evidence(D, "contradicting"),)
    e = rules.apply_observation(belief(basis="behavioral", confidence=0.60, evidence=evs),
                                obs("contradicting", basis="self-report"))
    assert e.after.confidence == r2(0.60 - CHALLENGE) and e.open_tension and e.divergence
    e = rules.apply_observation(belief(basis="self-report", confidence=0.60), obs("contradicting"))
    assert e.divergence and e.after.confidence == 0.60


# rule 7
@pytest.mark.parametrize("perm,days,expected", [
    ("stable", 30, 0.728), ("stable", 90, 0.685), ("stable", 180, 0.626),
    ("durable", 30, 0.646), ("durable", 90, 0.478), ("durable", 180, 0.305),
    ("situational", 30, 0.478), ("situational", 90, 0.200), ("situational", 180, 0.200),
    ("unknown", 30, 0.556), ("unknown", 90, 0.305), ("unknown", 180, 0.200),
])
def test_decay_table_of_the_spec(perm, days, expected):
    b = belief(confidence=0.75, permanence=perm, confirmed=D - timedelta(days=days))
    assert round(rules.effective_confidence(b, D), 3) == expected


def test_decay_counts_from_first_when_never_confirmed_and_spares_pinned_and_low():
    b = belief(confidence=0.75, permanence="durable", first=D - timedelta(days=90))
    assert round(rules.effective_confidence(b, D), 3) == 0.478
    assert rules.effective_confidence(replace(b, pinned=True), D) == 0.75
    low = belief(confidence=0.12, permanence="situational", first=D - timedelta(days=400))
    assert rules.effective_confidence(low, D) == 0.12


# rule 8
def test_dormancy_after_30_days():
    s = Sessions(count=3, last_session=D - timedelta(days=30))
    assert rules.dormancy(s, D) == 30
    assert rules.dormancy(Sessions(count=3, last_session=D - timedelta(days=29)), D) is None
    r = rules.start_session(s, "startup", D)
    assert r.dormant_days == 30 and r.counted and r.sessions.count == 4 and r.sessions.last_session == D


# rule 9 lives in Memory.observe (it counts the log); see test_memory.

# rule 10
def test_session_counting_only_on_startup():
    s = Sessions(count=5, next_review_at=10)
    for src in ("resume", "clear", "compact", "fork"):
        r = rules.start_session(s, src, D)
        assert not r.counted and r.sessions == s
    r = rules.start_session(s, "startup", D)
    assert r.sessions.count == 6 and dict(r.sessions.days) == {"2026-11-30": 1}


def test_review_due_by_count_or_by_30_days():
    assert rules.review_due(Sessions(count=10, next_review_at=10, last_review=D), D)
    assert rules.review_due(Sessions(count=9, next_review_at=10, last_review=D), D) is None
    assert "30 days" in rules.review_due(Sessions(count=1, last_review=D - timedelta(days=30)), D)
    assert rules.review_due(Sessions(count=1, created=D - timedelta(days=30)), D)
    s = rules.record_review(Sessions(count=17, next_review_at=10), D)
    assert s.last_review == D and s.next_review_at == 27


def test_review_proposals_soften_and_raise():
    s = Sessions(count=20, days=(("2026-11-10", 10), ("2026-11-20", 10)))
    strong = belief(confidence=0.80, confirmed=date(2026, 11, 5))
    assert rules.should_soften(strong, s)
    assert not rules.should_soften(replace(strong, basis="fact", confidence=0.95), s)
    assert not rules.should_soften(replace(strong, pinned=True), s)
    assert not rules.should_soften(replace(strong, confirmed=date(2026, 11, 25)), s)
    weak = belief(confidence=0.35, evidence=(Evidence(D, "confirming"),) * 3)
    assert rules.should_raise(weak)
    assert not rules.should_raise(belief(confidence=0.35, evidence=(Evidence(D, "confirming"),) * 2))


# rule 11
def test_permanence_suggestions():
    s = Sessions(count=12, days=(("2026-11-20", 12),))
    stable = belief(permanence="stable", evidence=(Evidence(D, "contradicting"),) * 2)
    assert rules.permanence_suggestion(stable, s, D).suggested == "durable"
    sit = belief(permanence="situational", first=date(2026, 11, 1))
    assert rules.permanence_suggestion(sit, s, D).suggested == "durable"
    unk = belief(permanence="unknown", first=D - timedelta(days=30))
    sug = rules.permanence_suggestion(unk, s, D)
    assert sug.suggested == "" and "30 days" in sug.reason
    assert rules.permanence_suggestion(belief(permanence="unknown", first=D - timedelta(days=29)), s, D) is None


# rule 13: parameters come from epistemology.md
def test_parameters_are_read_and_bad_ones_reported_with_key():
    p, problems = params_from_meta({"confirm_step": 0.10, "decay": {"stable": 0.002},
                                    "caps": {"behavioral": 1.5}, "dormancy_days": "soon"},
                                   "epistemology.md", {"caps": 4, "dormancy_days": 9})
    assert p.confirm_step == 0.10 and p.decay["stable"] == 0.002 and p.decay["durable"] == 0.005
    assert p.caps["behavioral"] == 0.90 and p.dormancy_days == 30
    msgs = [str(x) for x in problems]
    assert any(m.startswith("epistemology.md:4:") and "caps.behavioral" in m for m in msgs)
    assert any(m.startswith("epistemology.md:9:") and "dormancy_days" in m for m in msgs)
    e = rules.apply_observation(belief(), obs(), p)
    assert e.after.confidence == 0.50


def test_tiers():
    assert [DEFAULTS.tier(x, "fact") for x in (0.95, 0.9, 0.89, 0.7, 0.5, 0.3, 0.29, 0.0)] == [
        "factual", "factual", "established", "established", "developing", "tentative",
        "speculative", "speculative"]


def test_factual_is_for_facts_alone():
    # Every other basis is capped at 0.90, the factual tier's floor: at its cap it is established.
    for basis in ("behavioral", "self-report", "interpretive", ""):
        assert DEFAULTS.tier(0.90, basis) == "established"
        assert DEFAULTS.tier(0.70, basis) == "established"
        assert DEFAULTS.tier(0.50, basis) == "developing"


def test_sessions_since_counts_sessions_strictly_after_a_date():
    s = Sessions(days=(("2026-11-01", 2), ("2026-11-05", 3), ("2026-11-10", 1)))
    assert [rules.sessions_since(s, d) for d in (None, date(2026, 10, 1), date(2026, 11, 1),
                                                 date(2026, 11, 4), date(2026, 11, 5), date(2026, 11, 10))] \
        == [6, 6, 4, 4, 1, 0]
    assert rules.sessions_since(Sessions(), None) == 0


# --- the kernel: one home of decay, tiers, sessions and scope -------------------------------

def test_params_defaults_are_the_kernels():
    from epimem.core import kernel

    assert DEFAULTS.decay == kernel.DECAY and DEFAULTS.decay_floor == kernel.DECAY_FLOOR
    assert DEFAULTS.tiers == kernel.TIERS and DEFAULTS.dormancy_days == kernel.DORMANCY_DAYS
    assert (DEFAULTS.review_every_sessions, DEFAULTS.review_every_days) == (
        kernel.REVIEW_EVERY_SESSIONS, kernel.REVIEW_EVERY_DAYS)
    assert Sessions().next_review_at == kernel.REVIEW_EVERY_SESSIONS


def test_the_decay_formula_evaluates_on_arrays_too():
    np = pytest.importorskip("numpy")
    from epimem.core import kernel

    stored = np.array([0.75, 0.75, 0.12, 0.9])
    rate = np.array([0.005, 0.015, 0.015, 0.001])
    days = np.array([90, 400, 400, -3])   # a date in the future counts as today
    pinned = np.array([False, False, False, True])
    arr = kernel.effective(stored, rate, days, pinned, 0.20, exp=np.exp, maximum=np.maximum,
                           minimum=np.minimum, where=np.where)
    one = [kernel.effective(float(s), float(r), int(d), bool(p), 0.20)
           for s, r, d, p in zip(stored, rate, days, pinned)]
    assert arr.tolist() == pytest.approx(one, abs=1e-15)
    assert round(one[0], 3) == 0.478 and one[1] == 0.20 and one[2] == 0.12 and one[3] == 0.9


@pytest.mark.parametrize("scope,project,expected", [
    ("global", "billing", True), ("", "billing", True), ("billing", None, True),
    ("billing", "billing", True), ("Billing", "billing", True), ("ledger", "billing", False),
    ("billing", "/home/me/code/billing/", True), ("/home/me/code/billing", "billing", True),
    ("/home/me/code/billing", "/home/me/code/billing/src/app", True),   # a session in a subfolder
    ("/home/me/code/billing/src", "/home/me/code/billing", False),
    ("/home/me/code/billing", "/home/me/code/billing2", False),
    ("/a/billing", "/b/billing", False),
    ("~/code/billing", "/home/me/code/billing/src", True),
])
def test_one_scope_rule(scope, project, expected):
    from epimem.core import kernel

    assert kernel.scope_matches(scope, project, home="/home/me") is expected


def test_belief_list_recall_and_the_hook_share_the_scope_rule(tmp_path):
    from epimem.api import context
    from epimem.api.memory import Filters
    from epimem.recall import items, rank

    proj = str(tmp_path / "code" / "billing")
    for scope in ("global", "billing", proj, proj + "/api", "ledger", "/elsewhere/billing"):
        b = belief(scope=scope)
        wanted = rules.scope_matches(scope, proj)
        assert Filters(scope=proj).match(b, 0.5) is wanted, scope
        assert rank.scope_matches(items.from_belief(b).scope, proj) is wanted, scope
        if scope != "global":
            assert context.scope_matches(scope, proj, proj) is wanted, scope


def test_the_record_is_the_models_fields_in_order():
    from dataclasses import fields

    from epimem.core import record

    assert record.FIELDS == tuple(f.name for f in fields(Belief))
    b = belief(confirmed=D, tags=("a", "b"), supersedes=("old",), statement="S.",
               evidence=(Evidence(D, "confirming", "observations/2026-11#x", "did it"),
                         Evidence(None, "added", "", "")))
    assert record.from_row(record.to_row(b)) == b
    v = record.view(b, D, DEFAULTS)
    assert list(v) == list(record.FULL_JSON_FIELDS)
    assert v["evidence"][0] == {"date": "2026-11-30", "kind": "confirming", "link": "observations/2026-11#x",
                                "note": "did it"}
    assert v["effective_confidence"] == round(rules.effective_confidence(b, D), 3)
    assert list(record.view(b, D, DEFAULTS, full=False)) == list(record.JSON_FIELDS)
