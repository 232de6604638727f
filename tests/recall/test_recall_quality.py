"""Ranking regression: on the evaluation sets (bench/recall_sets.py: several
people and projects with wrong-subject distractors, paraphrases; the sample
vault), fused recall is never below its better ranker, and stays above floors
set a little under today's figures (docs/recall.md). Quality, not timing."""

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import recall_quality  # noqa: E402

pytestmark = pytest.mark.usefixtures("clean_recall_env")

# (set, question type) → floor of fused (R@5, MRR); today's figures are in docs/recall.md.
FLOORS = {
    ("subjects", "all"): (0.66, 0.54),
    ("subjects", "person"): (0.95, 0.85),
    ("subjects", "project"): (0.88, 0.80),
    ("sample vault", "all"): (0.90, 0.85),
}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    sets, _ = recall_quality.build_sets(tmp_path_factory.mktemp("quality"), quick=True, embedder="wordllama")
    return recall_quality.report(sets)


def test_fused_is_never_below_its_better_ranker(report):
    for name, modes in report.items():
        for metric in ("R@5", "R@10", "MRR"):
            best = max(modes["keyword"]["all"][metric], modes["semantic"]["all"][metric])
            assert modes["fused"]["all"][metric] >= best - 1e-9, (name, metric, modes["fused"]["all"], best)


def test_floors(report):
    for (name, qtype), (r5, mrr) in FLOORS.items():
        got = report[name]["fused"][qtype]
        assert got["R@5"] >= r5 and got["MRR"] >= mrr, (name, qtype, got)


def test_the_subject_factor_is_what_fixes_wrong_subject_questions(report):
    s = report["subjects"]
    # Without it, the project questions fall to the rankers' level (they cannot see a scope).
    assert s["fused"]["project"]["MRR"] > s["fused without subject factor"]["project"]["MRR"] + 0.2
    assert s["fused"]["all"]["R@5"] > s["fused (k 60, w 1, before)"]["all"]["R@5"]
