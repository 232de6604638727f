"""Rule 14: facts come from the user, never from an observation."""

import json

import pytest

from epimem.core.errors import InputError


def test_api_refuses_an_observed_fact_and_writes_nothing(vault):
    head = (vault.root / "observations").iterdir()
    before = sorted(p.name for p in head)
    with pytest.raises(InputError) as e:
        vault.observe([{"connects": "new", "strength": "single", "basis": "fact", "title": "Is a genius",
                        "kind": "trait", "evidence": "Wrote clever code."}])
    assert e.value.field == "basis"
    assert "only the user records a fact" in str(e.value) and "rule 14" in str(e.value)
    assert vault.beliefs() == []
    assert sorted(p.name for p in (vault.root / "observations").iterdir()) == before


def test_cli_refuses_an_observed_fact(cli, tmp_path):
    v = tmp_path / "v"
    cli("init", v)
    r = cli("--vault", v, "observe", "--connects", "new", "--basis", "fact", "--title", "Is a genius",
            "--kind", "trait", "--strength", "single", "--evidence", "Wrote clever code.")
    assert r.code == 1 and "only the user records a fact" in r.err
    assert cli("--vault", v, "belief", "list", "--json").json()["beliefs"] == []
    # in a batch too, and a fact the user adds is still a fact
    r = cli("--vault", v, "observe", "--input", "-", stdin=json.dumps(
        [{"connects": "new", "strength": "single", "basis": "fact", "evidence": "x", "title": "T"}]))
    assert r.code == 1 and "rule 14" in r.err
    r = cli("--vault", v, "belief", "add", "--title", "Works at Acme", "--statement", "Works at Acme.",
            "--kind", "fact", "--basis", "fact", "--permanence", "durable", "--json")
    assert r.code == 0 and r.json()["confidence"] == 0.95
