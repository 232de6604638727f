"""Rule 15: no basis is exempt from challenge; a divergence opens a tension and still counts."""

import json
from dataclasses import replace

import pytest
from vaults import count_sessions

from epimem.core import rules
from epimem.core.model import Belief, Observation
from epimem.core.params import DEFAULTS


def _obs(i, strength):
    from datetime import date
    return Observation(id=f"obs-2026110{i}-aaaa", date=date(2026, 11, i), evidence=f"e{i}", strength=strength,
                       basis="behavioral", connects="decides-quickly", session=f"s{i}")


def test_rule_lowers_a_self_report_from_the_second_behavioural_contradiction():
    from datetime import date
    b = Belief(id="decides-quickly", title="Decides quickly", kind="trait", basis="self-report",
               confidence=0.40, permanence="unknown", first=date(2026, 11, 1), statement="s")
    seen = []
    for i in range(1, 5):
        e = rules.apply_observation(b, _obs(i, "contradicting"))
        assert e.open_tension and e.divergence and e.evidence.kind == "diverging"
        b = replace(e.after, evidence=e.after.evidence + (e.evidence,))
        seen.append(b.confidence)
    step = DEFAULTS.challenge_step  # the first challenge is free (rule 4), then each lowers a step
    assert seen == [0.40] + [max(0.05, round(0.40 - n * step, 2)) for n in (1, 2, 3)]


def _batch(strength, n, session):
    return [{"connects": "decides-quickly", "strength": strength, "evidence": f"{strength} {n}",
             "basis": "behavioral", "session": session}]


@pytest.mark.seed_rules
def test_api_contradictions_and_confirmations_move_symmetrically(vault):
    vault.add_belief(title="Decides quickly", statement="Makes decisions fast.", kind="trait",
                     basis="self-report", permanence="unknown")
    count_sessions(vault, *(f"c{i}" for i in range(4)), "k0", "k1")
    for i in range(4):
        r = vault.observe(_batch("contradicting", i, f"c{i}"))
        assert r.results[0].tension
    assert vault.belief("decides-quickly").confidence == 0.10
    for i in range(2):
        vault.observe(_batch("confirming", i, f"k{i}"))
    assert vault.belief("decides-quickly").confidence == 0.20


@pytest.mark.seed_rules
def test_cli_self_report_goes_down_too(cli, tmp_path):
    v = tmp_path / "v"
    cli("init", v)
    cli("--vault", v, "belief", "add", "--title", "Decides quickly", "--statement", "Makes decisions fast.",
        "--kind", "trait", "--basis", "self-report", "--permanence", "unknown")
    for i in range(4):  # the sessions the hook counted (rule 19)
        assert cli("--vault", v, "session", "start", "--session", f"c{i}").code == 0
    outs = []
    for i in range(4):
        batch = json.dumps(_batch("contradicting", i, f"c{i}"))
        r = cli("--vault", v, "observe", "--input", "-", "--json", stdin=batch)
        assert r.code == 0, r.err
        outs.append(r.json()["observations"][0])
    assert [o["confidence_after"] for o in outs] == [0.40, 0.30, 0.20, 0.10]
    d = cli("--vault", v, "belief", "show", "decides-quickly", "--json").json()
    assert d["confidence"] == 0.10
    assert "rule 15" in outs[1]["reason"] and outs[1]["tension"]
