"""Issue 25, ninth round: bench/recall_public_learned.py's pairwise (RankNet) and listwise
(ListNet) fusion on hand-made values — the pairs and lists it learns from, the two objectives
and their fits, the pools it ranks — and, slow, on one LoCoMo conversation: its pool and
features are the shipped fusion's."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import recall_public as rp  # noqa: E402
import recall_public_learned as learned  # noqa: E402


def test_pairs_are_every_positive_less_every_negative_and_each_question_counts_once():
    a = (np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]), np.array([1.0, 0.0, 0.0]))
    b = (np.array([[2.0, 2.0], [1.0, 1.0], [0.0, 3.0], [5.0, 5.0]]), np.array([1.0, 1.0, 0.0, 0.0]))
    none = (np.array([[9.0, 9.0]]), np.array([0.0]))          # no positive: no pair
    only = (np.array([[9.0, 9.0]]), np.array([1.0]))          # no negative: no pair
    d, w = learned.pair_rows([a, none, b, only])
    assert d.tolist() == [[1, -1], [1, 0], [2, -1], [-3, -3], [1, -2], [-4, -4]]
    assert w.tolist() == pytest.approx([0.5, 0.5, 0.25, 0.25, 0.25, 0.25])
    assert w[:2].sum() == pytest.approx(1.0) and w[2:].sum() == pytest.approx(1.0)


def test_a_sample_weight_of_two_is_the_row_twice():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 3))
    y = (x[:, 0] + rng.normal(size=40) > 0).astype(float)
    sw = np.ones(40)
    sw[:10] = 2.0
    twice = learned.fit_logistic(np.vstack([x, x[:10]]), np.concatenate([y, y[:10]]), 1.0)
    assert learned.fit_logistic(x, y, 1.0, sample_weight=sw) == pytest.approx(twice, abs=1e-8)
    assert learned.fit_logistic(x, y, 1.0, sample_weight=np.ones(40)) == pytest.approx(learned.fit_logistic(x, y))


def test_the_listwise_gradient_and_hessian_are_the_losss():
    rng = np.random.default_rng(2)
    lists = [(rng.normal(size=(n, 3)), (rng.random(n) < 0.3).astype(float)) for n in rng.integers(2, 12, size=30)]
    w = rng.normal(size=3)
    loss, g, h = learned.listwise_loss(w, lists, 0.5)
    eps = 1e-6
    for k, e in enumerate(np.eye(3)):
        up, down = learned.listwise_loss(w + eps * e, lists, 0.5), learned.listwise_loss(w - eps * e, lists, 0.5)
        assert (up[0] - down[0]) / (2 * eps) == pytest.approx(g[k], abs=1e-6)
        assert (up[1] - down[1]) / (2 * eps) == pytest.approx(h[k], abs=1e-6)
    # One list, two items, one relevant: −log softmax, by hand.
    x = np.array([[1.0], [0.0]])
    assert learned.listwise_loss(np.array([2.0]), [(x, np.array([1.0, 0.0]))])[0] == pytest.approx(
        -np.log(np.exp(2) / (np.exp(2) + 1)))


def planted(n=300, seed=3):
    """Lists of ten whose one relevant item is the best under (2, −1, 0)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        x = rng.normal(size=(10, 3))
        y = np.zeros(10)
        y[np.argmax(x @ np.array([2.0, -1.0, 0.0]))] = 1.0
        out.append((x, y))
    return out


@pytest.mark.parametrize("fit", [learned.fit_pairwise, learned.fit_listwise])
def test_both_objectives_find_a_planted_ordering(fit):
    w = fit(planted(), 0.1)
    assert w[0] > 0 > w[1]
    assert w[1] / w[0] == pytest.approx(-0.5, abs=0.1) and abs(w[2]) < 0.1 * w[0]
    # A stronger penalty shrinks the weights, not their direction.
    small = fit(planted(), 100.0)
    assert np.linalg.norm(small) < np.linalg.norm(w) and small[0] > 0 > small[1]


def fake_conversation():
    # Six candidate rows; the fused top 3 is rows 10, 11, 12; row 15 is deep but scores best.
    rows = [10, 11, 12, 13, 14, 15]
    x = np.array([[3.0], [2.0], [1.0], [0.0], [0.0], [9.0]])
    q = {"question": "q", "category": 1, "evidence": {"D1:1"}}
    c = {("cand", "q"): (rows, x), ("fused", "q", 3): [11, 10, 12],
         "keys": {r: f"b/{r}" for r in rows}, "evidence": {"b/13": {"D1:1"}, "b/11": {"D1:1"}}}
    return c, q


def test_the_pools_rank_the_fused_top_or_every_candidate():
    c, q = fake_conversation()
    model = (np.array([1.0]), np.zeros(1), np.ones(1))
    assert learned.rank_with(c, q, (0,), model, "top", top=3) == [10, 11, 12]
    assert learned.rank_with(c, q, (0,), model, "union", top=3) == [15, 10, 11, 12, 13, 14]
    # Ties keep the fused order.
    flat = (np.array([0.0]), np.zeros(1), np.ones(1))
    assert learned.rank_with(c, q, (0,), flat, "union", top=3) == [11, 10, 12, 13, 14, 15]


def test_the_training_list_is_the_fused_top_and_every_deep_positive():
    c, q = fake_conversation()
    idx, y = learned.ranked_list(c, q, top=3)
    assert idx.tolist() == [1, 0, 2, 3]          # the fused top in its order, then row 13 (evidence)
    assert y.tolist() == [1.0, 0.0, 0.0, 1.0]    # negatives come from the fused top only


@pytest.mark.slow
@pytest.mark.usefixtures("clean_recall_env")
def test_on_locomo_the_pool_and_the_rank_features_are_the_shipped_fusion():
    """With the rank features at the shipped weight (w, 1) and no scaling, the linear score is
    RRF at k 2: both pools give the shipped fused top 10, and the training list holds every
    candidate that carries evidence."""
    import recall_public_tried as tried

    data = rp.default_data()
    if not (data / "locomo-dev.json").is_file():
        pytest.skip(f"LoCoMo's development half is not beside this checkout ({data}); set EPIMEM_LOCOMO")
    now = rp.settings_now()
    assert now["k"] == 2, "the rank features are 1/(2 + rank): they are RRF only at k 2"
    tmp = Path(tempfile.mkdtemp(prefix="epimem-locomo-test-"))
    try:
        convs = tried.collect(rp.load(data)[1:2], "wordllama", tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c = convs[0]
    assert len(c["questions"]) > 100
    model = (np.array([now["w"], 1.0]), np.zeros(2), np.ones(2))
    for q in c["questions"]:
        shipped = tried.rrf([tried.kw_plain(c, q["question"]), tried.sem_plain(c, q["question"])],
                            now["k"], (now["w"], 1.0))
        for pool in ("top", "union"):
            assert learned.rank_with(c, q, (0, 1), model, pool) == shipped, (pool, q["question"])
        rows, _ = learned.candidates(c, q)
        idx, y = learned.ranked_list(c, q)
        assert set(idx[learned.TOP:].tolist()) == {j for j, v in enumerate(learned.label(c, q, rows)) if v} - set(
            idx[:learned.TOP].tolist())
        assert y[learned.TOP:].all()
