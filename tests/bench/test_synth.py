"""The synthetic benchmark vault is only useful if it is a valid vault: every
file must parse with the same codec the product uses, every evidence link must
resolve, and the rules' limits must hold."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from epimem.core import notes
from epimem.core.params import DEFAULTS

ROOT = Path(__file__).resolve().parents[2]


def _load_synth():
    spec = importlib.util.spec_from_file_location("bench_synth", ROOT / "bench" / "synth.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


synth = _load_synth()


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    base = tmp_path_factory.mktemp("synth")
    summary = synth.make_vault(base / "v", n_beliefs=200, n_observations=600, seed=3)
    return base / "v", summary


def test_every_file_parses(vault):
    root, summary = vault
    beliefs = {p.stem: notes.parse_belief(p.read_text(encoding="utf-8"), p.stem)
               for p in (root / "beliefs").glob("*.md")}
    assert len(beliefs) == summary["beliefs"] == 200
    obs = {}
    for p in (root / "observations").glob("*.md"):
        parsed, bad = notes.parse_observations(p.read_text(encoding="utf-8"), f"observations/{p.name}")
        assert bad == [], (p.name, bad)
        for o in parsed:
            assert o.id not in obs
            assert o.path == f"observations/{o.date:%Y-%m}.md"
            obs[o.id] = o
    assert len(obs) == summary["observations"] == 600
    tensions = [notes.parse_tension(p.read_text(encoding="utf-8"), p.stem)
                for p in (root / "tensions").glob("*.md")]
    assert len(tensions) == summary["tensions"] >= 1
    assert all(t.belief in beliefs for t in tensions)
    for p in (root / "reviews").glob("*.md"):
        notes.parse_note(p.read_text(encoding="utf-8"))

    # Evidence links resolve, connects point at real beliefs, limits hold.
    for b in beliefs.values():
        assert b.confidence <= 0.90 or b.basis == "fact", b.id
        for e in b.evidence:
            if e.link.startswith("observations/"):
                o = obs[e.link.split("#")[1]]
                assert o.connects == b.id and o.date == e.date
            elif e.link:
                assert e.link.startswith("beliefs/") and e.link[8:] in beliefs
    assert all(o.connects == "new" or o.connects in beliefs for o in obs.values())
    assert any(o.connects == "new" for o in obs.values())
    assert max(Counter(o.session for o in obs.values()).values()) <= DEFAULTS.observations_per_session
    assert all(re.fullmatch(r"obs-\d{8}-[0-9a-f]{4}", o.id) for o in obs.values())

    s = json.loads((root / "state" / "sessions.json").read_text(encoding="utf-8"))
    assert sum(s["days"].values()) == s["count"]
    assert (root / ".gitignore").read_text(encoding="utf-8").count(".epimem/") == 1
    if (ROOT / "epimem" / "templates" / "epistemology.md").exists():
        assert (root / "epistemology.md").exists()


def test_topics_label_the_beliefs(vault):
    root, summary = vault
    labels = json.loads(Path(summary["labels"]).read_text(encoding="utf-8"))
    assert Path(summary["labels"]).parent == root.parent  # beside the vault, not in it
    assert set(labels["topics"]) == set(synth.TOPICS) and len(synth.TOPICS) == 40
    for topic, entry in labels["topics"].items():
        assert entry["query"] == synth.TOPIC_QUERIES[topic]
        for bid in entry["ids"]:
            assert synth.topic_of(bid) == topic
            b = notes.parse_belief((root / "beliefs" / f"{bid}.md").read_text(encoding="utf-8"), bid)
            assert b.status == "active" and b.tags[0] == topic


def test_one_commit_and_a_clean_tree(vault):
    root, _ = vault
    count = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=root, capture_output=True,
                           text=True, check=True).stdout.strip()
    assert count == "1"
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True,
                            text=True, check=True).stdout
    assert status == ""


def test_deterministic_and_refuses_to_overwrite(vault, tmp_path):
    root, _ = vault
    synth.make_vault(tmp_path / "again", n_beliefs=200, n_observations=600, seed=3, commit=False)
    for p in (root / "beliefs").glob("*.md"):
        assert (tmp_path / "again" / "beliefs" / p.name).read_text() == p.read_text()
    with pytest.raises(FileExistsError):
        synth.make_vault(root, n_beliefs=10, n_observations=20)
