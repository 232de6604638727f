"""bench/recall_public_models.py on hand-made values: a candidate's lists rank the items by
cosine for both query forms, and the rows the paired tests take are those of its lists."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import recall_public_models as rm  # noqa: E402
import recall_public_tried as tr  # noqa: E402

# Three items on three axes; a query is the axis of the word it names.
AXES = {"red": [1.0, 0, 0], "green": [0, 1.0, 0], "blue": [0, 0, 1.0]}


def embed(texts):
    return rm._unit([[sum(AXES[w][i] for w in t.lower().split() if w in AXES) + 1e-3 for i in range(3)]
                     for t in texts])


def conversation(monkeypatch):
    # The "common words out" form drops the word "red" here, so the two forms must differ.
    monkeypatch.setattr(tr, "semq", lambda c, q: q.replace("red", ""))
    texts = ["a red car", "a green tree", "a blue sea"]
    qs = [{"question": "red or blue", "category": 1, "evidence": {"D1:3"}},
          {"question": "green", "category": 4, "evidence": {"D1:2"}}]
    return {"texts": texts, "questions": qs, "keys": ["b/0", "b/1", "b/2"],
            "evidence": {"b/0": {"D1:1"}, "b/1": {"D1:2"}, "b/2": {"D1:3"}}}


def test_unit_rows_have_length_one():
    x = rm._unit([[3.0, 4.0], [0.0, 0.0]])
    assert np.allclose(x[0], [0.6, 0.8])
    assert np.allclose(x[1], [0.0, 0.0])            # a zero row stays zero, no division by zero


def test_lists_rank_items_by_cosine_for_both_query_forms(monkeypatch):
    c = conversation(monkeypatch)
    rate = rm.add_lists([c], "toy", embed, embed)
    assert rate > 0
    typed = c["cand"][("toy", "typed")]
    semq = c["cand"][("toy", "semq")]
    assert typed["green"][0] == 1
    assert set(typed["red or blue"][:2]) == {0, 2}  # both colours named: both items first
    assert semq["red or blue"][0] == 2              # "red" out: blue alone leads
    assert semq["red or blue"][-1] != 2


def test_the_paired_rows_are_the_candidates_lists(monkeypatch):
    c = conversation(monkeypatch)
    rm.add_lists([c], "toy", embed, embed)
    monkeypatch.setattr(tr, "kw_plain", lambda c, q: [0, 1, 2])     # a keyword list that ranks red first
    alone, fused = rm.got_of([c], "toy")
    kw_rows, sem_rows = alone
    # The candidate puts blue (the evidence of question 1, "red" dropped) and green first: R@5 1 each.
    assert [s["R@5"] for _, s in sem_rows[0]] == [1.0, 1.0]
    assert set(fused) == {(k, w) for k in tr.GRID_K for w in tr.GRID_W}
    assert [cat for cat, _ in kw_rows[0]] == [1, 4]
