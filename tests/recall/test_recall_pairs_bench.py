"""Issue 25, round 5: the tried harness's adjacent-pair bonus (the one copy of its formula,
bench/recall_public_tried.py) and the paired tests of bench/recall_public_pairs.py, on
hand-made values."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import recall_public_pairs as pairs  # noqa: E402
import recall_public_tried as tried  # noqa: E402

from epimem.core.text import tokenize  # noqa: E402


def test_adjacent_pairs_are_distinct_unordered_and_skip_repeats():
    assert tried.adjacent_pairs(["trip", "paris", "trip"]) == [("paris", "trip")]
    assert tried.adjacent_pairs(["b", "a", "c"]) == [("a", "b"), ("a", "c")]
    assert tried.adjacent_pairs(["x", "x"]) == []          # a word next to itself is no pair
    assert tried.adjacent_pairs(["one"]) == [] and tried.adjacent_pairs([]) == []


def docs():
    return [tokenize(t) for t in (
        "Caroline went on a road trip to the coast",        # road trip, adjacent
        "the trip was long and the road was rough",          # both words, apart
        "a road",                                            # one word only
        "filler about gardening", "filler about cooking")]


def test_the_pair_bonus_lifts_the_item_holding_the_words_side_by_side():
    b = tried.BM25(docs())
    q = tokenize("road trip")
    plain, bonus = b.scores(q), b.scores(q, pair_beta=1.0)
    want = tried.pair_weight(1.0, b.idf("road"), b.idf("trip"))
    assert bonus[0] == pytest.approx(plain[0] + want)
    assert bonus[1] == plain[1] and bonus[2] == plain[2]   # apart, or one word: no bonus
    assert b.top(q, pair_beta=1.0)[0] == 0
    # In either order, and stopwords between the words do not count as a gap ("trip to the coast").
    assert b.scores(tokenize("trip road"), pair_beta=1.0)[0] == pytest.approx(bonus[0])
    assert b.scores(tokenize("trip coast"), pair_beta=1.0)[0] > b.scores(tokenize("trip coast"))[0]
    # β 0 is plain BM25; a one-word query has no pair.
    assert b.scores(q, pair_beta=0.0) == plain
    assert b.scores(tokenize("road"), pair_beta=1.0) == b.scores(tokenize("road"))


def test_the_pair_bonus_on_other_scripts():
    # Spaceless scripts are character bigrams: neighbouring bigrams of the query pair up too.
    b = tried.BM25([tokenize("我喜欢北京烤鸭"), tokenize("北京很大，我不喜欢烤鸭"), tokenize("天气")])
    q = tokenize("北京烤鸭")
    bonus, plain = b.scores(q, pair_beta=1.0), b.scores(q)
    assert bonus[0] > plain[0] and bonus[1] == plain[1]
    b = tried.BM25([tokenize("Привет мир"), tokenize("мир, привет вам"), tokenize("мир вам")])
    assert b.scores(tokenize("привет мир"), pair_beta=1.0)[1] > b.scores(tokenize("привет мир"))[1]
    assert b.scores(tokenize("привет вам"), pair_beta=1.0)[0] == b.scores(tokenize("привет вам"))[0]


def rows(values, cats=None):
    cats = cats or [1] * len(values)
    return [[(c, {"R@5": v}) for c, v in zip(cats, values)]]


def test_paired_tests_say_nothing_moved_when_nothing_moved():
    a = rows([0.0, 0.5, 1.0, 1.0])
    r = pairs.paired(a, a)
    assert r["diff"] == 0 and r["ci"] == (0.0, 0.0) and r["p"] == 1.0
    assert r["better"] == r["worse"] == 0


def test_paired_tests_find_a_consistent_gain_and_not_a_lone_one():
    n = 60
    a = rows([0.0] * n, [1, 2] * (n // 2))
    r = pairs.paired(a, rows([1.0] * n, [1, 2] * (n // 2)))
    assert r["diff"] == pytest.approx(100.0) and r["ci"][0] > 0 and r["p"] < 0.001
    assert r["per_cat"][1] == (100.0, n // 2, 0)
    # One question of sixty better: the same mean could come from either sign.
    lone = pairs.paired(a, rows([1.0] + [0.0] * (n - 1)))
    assert lone["diff"] == pytest.approx(100 / n)
    assert lone["p"] > 0.5 and lone["ci"][0] <= 0.0
    # Mixed: 12 better by one, 8 worse by one, rest equal — two-sided p as a sign-flip test gives.
    mixed = pairs.paired(rows([0.5] * 40), rows([1.0] * 12 + [0.0] * 8 + [0.5] * 20))
    assert mixed["better"] == 12 and mixed["worse"] == 8
    exact = sum(math.comb(20, k) for k in range(21) if abs(k - (20 - k)) >= 4) / 2 ** 20
    assert mixed["p"] == pytest.approx(exact, abs=0.02)


def test_each_bench_fuses_at_the_measured_embedders_shipped_k(monkeypatch):
    # A MiniLM run of the tried harness fused its first pass at k 2, WordLlama's k, after MiniLM
    # got its own (rank.RRF_K_BY_EMBEDDER): every bench's main names the embedder it measures.
    import recall_public as rp

    from epimem.recall.rank import rrf_k_for

    monkeypatch.setattr(rp, "EMBEDDER", rp.EMBEDDER)
    seen = []
    monkeypatch.setattr(tried, "kw_plain", lambda c, q: [0, 1, 2])
    monkeypatch.setattr(tried, "sem_plain", lambda c, q: [2, 1, 0])
    monkeypatch.setattr(tried, "rrf", lambda lists, k, weights, limit=10: seen.append((k, weights)) or [])
    for name in ("wordllama", "minilm"):
        assert rp.use_embedder(name) == name
        tried.first_pass({}, "q", 3)
        assert seen[-1][0] == rp.settings_now()["k"] == rrf_k_for(name)
    assert seen[0][0] != seen[1][0]
