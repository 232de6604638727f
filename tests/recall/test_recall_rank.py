"""Ranking as pure functions: filters, fusion, confidence weighting, budgeted
markdown, and the vectorised filter agreeing with the scalar one."""

import random
from datetime import date

import pytest

from epimem.core.params import DEFAULTS
from epimem.recall.items import BELIEF, OBSERVATION, Item, to_row
from epimem.recall.rank import (
    KW_WEIGHT,
    RRF_K,
    Filters,
    Hit,
    QueryError,
    Ranked,
    estimate_tokens,
    fuse,
    make_hit,
    passes,
    render_markdown,
    rrf,
    scope_matches,
    weight_of,
)
from epimem.recall.table import Table

TODAY = date(2026, 11, 30)


def belief(id, **kw):
    d = dict(id=id, type=BELIEF, title=id.replace("-", " "), text=id, kind="preference",
             basis="behavioral", permanence="durable", confidence=0.6, first=date(2026, 6, 1))
    d.update(kw)
    return Item(**d)


def obs(id, connects="new", d=date(2026, 9, 1)):
    return Item(id=id, type=OBSERVATION, title=id, text=id, basis="behavioral", date=d, connects=connects)


# --- filters ---------------------------------------------------------------------------------

def test_filters_make_validates_and_normalises():
    f = Filters.make(kind="trait", tag=["a", "b"], since="2026-01-01", min_confidence="0.5")
    assert f.kinds == ("trait",) and f.tags == ("a", "b") and f.since == date(2026, 1, 1)
    assert f.min_confidence == 0.5 and f.scope is None
    assert Filters.make(kind=[], scope="  ").kinds == () and Filters.make(scope=" ").scope is None
    for bad in (dict(min_confidence=2), dict(min_confidence="high"), dict(since="yesterday"),
                dict(since="2026-02-01", until="2026-01-01")):
        with pytest.raises(QueryError):
            Filters.make(**bad)


def test_scope_matches_project_plus_global():
    assert scope_matches("global", "billing") and scope_matches("billing", None)
    assert scope_matches("billing", "billing") and not scope_matches("ledger", "billing")
    # by name or by path
    assert scope_matches("billing", "/home/me/code/billing/")
    assert scope_matches("/home/me/code/billing", "billing")
    assert not scope_matches("/a/billing", "/b/billing")


def test_passes_each_filter():
    b = belief("x", kind="trait", permanence="stable", tags=("git",), scope="billing",
               confirmed=date(2026, 11, 1))
    yes = lambda **kw: passes(b, Filters.make(**kw), TODAY)  # noqa: E731
    assert yes() and yes(kind=["trait", "value"]) and not yes(kind="value")
    assert yes(permanence="stable") and not yes(permanence="durable")
    assert yes(tag=["x", "git"]) and not yes(tag="nope")
    assert yes(scope="billing") and not yes(scope="ledger")
    assert yes(min_confidence=0.55) and not yes(min_confidence=0.7)
    assert yes(since="2026-11-01") and not yes(since="2026-11-02")
    assert yes(until="2026-11-01") and not yes(until="2026-10-31")
    retired = belief("r", status="retired")
    assert not passes(retired, Filters(), TODAY) and passes(retired, Filters.make(include_inactive=True), TODAY)


def test_observations_inherit_belief_filters_from_what_they_connect():
    b = belief("b", kind="trait", scope="billing")
    o = obs("obs-1", "b")
    assert not passes(o, Filters(), TODAY, belief=b)  # observations only when asked
    f = Filters.make(include_observations=True, kind="trait")
    assert passes(o, f, TODAY, belief=b)
    assert not passes(o, Filters.make(include_observations=True, kind="value"), TODAY, belief=b)
    assert not passes(o, Filters.make(include_observations=True, scope="ledger"), TODAY, belief=b)
    lone = obs("obs-2")
    assert passes(lone, Filters.make(include_observations=True, scope="ledger"), TODAY)
    assert not passes(lone, f, TODAY)  # a belief-level filter needs a belief
    assert weight_of(lone, TODAY) == 0.5
    assert weight_of(o, TODAY, belief=b) == pytest.approx(weight_of(b, TODAY))


# --- fusion ---------------------------------------------------------------------------------

def test_rrf_sums_reciprocal_ranks():
    s = rrf([["a", "b"], ["b", "c"]], k=60)
    assert s["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert s["a"] == pytest.approx(1 / 61) and s["c"] == pytest.approx(1 / 62)


def test_fuse_prefers_agreement_and_weights_confidence():
    kw = [("a", 5.0, ["x"]), ("b", 4.0, ["y"])]
    sem = [("b", 0.9), ("c", 0.8)]
    conf = {"a": 0.5, "b": 0.5, "c": 0.5}
    out = fuse(kw, sem, conf, limit=3)
    assert [r.key for r in out] == ["b", "a", "c"]
    assert out[0].keyword_rank == 2 and out[0].semantic_rank == 1 and out[0].keyword_terms == ("y",)
    # Confidence breaks a near tie, but does not outrank relevance found by both rankers.
    conf2 = {"a": 0.9, "b": 0.2, "c": 0.2}
    out2 = fuse(kw, sem, conf2, limit=3)
    assert out2[0].key == "b"
    tie = fuse([("a", 1.0, []), ("z", 1.0, [])], [("z", 0.5), ("a", 0.5)], {"a": 0.9, "z": 0.2}, limit=2,
               kw_weight=1.0)
    assert tie[0].key == "a"
    # Single-ranker modes, for evaluation.
    assert [r.key for r in fuse(kw, sem, conf, limit=5, mode="keyword")] == ["a", "b"]
    assert [r.key for r in fuse(kw, sem, conf, limit=5, mode="semantic")] == ["b", "c"]
    assert fuse(kw, sem, conf, limit=0) == []
    with pytest.raises(QueryError):
        fuse(kw, sem, conf, limit=1, mode="magic")


def test_rrf_weights_each_ranking():
    s = rrf([["a", "b"], ["b"]], k=10, weights=(0.5, 1.0))
    assert s["a"] == pytest.approx(0.5 / 11)
    assert s["b"] == pytest.approx(0.5 / 12 + 1 / 11)


def test_fuse_is_plain_reciprocal_rank_fusion_at_the_defaults():
    # No per-query factor: each list counts 1 / (RRF_K + rank), the keyword list × KW_WEIGHT,
    # whatever its scores look like (a flat top, a steep one).
    flat = [(f"copy{i}", 2.0, ["bug"]) for i in range(10)]
    steep = [("copy0", 9.0, ["bug"])] + [(f"copy{i}", 0.5, ["bug"]) for i in range(1, 10)]
    sem = [("right", 0.6), ("copy0", 0.5)]
    for kw in (flat, steep):
        rrf_of = {r.key: r.rrf for r in fuse(kw, sem, {}, limit=20)}
        assert rrf_of["copy0"] == pytest.approx(KW_WEIGHT / (RRF_K + 1) + 1 / (RRF_K + 2))
        assert rrf_of["right"] == pytest.approx(1 / (RRF_K + 1))
        assert rrf_of["copy1"] == pytest.approx(KW_WEIGHT / (RRF_K + 2))
    # The weight and k a vault sets are used as given.
    rrf_of = {r.key: r.rrf for r in fuse(flat, sem, {}, limit=20, k=60, kw_weight=2.0)}
    assert rrf_of["copy1"] == pytest.approx(2.0 / 62)
    # Single-ranker modes use one list only.
    assert [r.key for r in fuse(flat, sem, {}, limit=2, mode="keyword")] == ["copy0", "copy1"]
    assert [r.key for r in fuse(flat, sem, {}, limit=2, mode="semantic")] == ["right", "copy0"]


def test_make_hit_and_json_say_why():
    b = belief("small-prs", confidence=0.75, permanence="stable", confirmed=date(2026, 10, 31))
    r = Ranked("b/small-prs", 0.02, 0.03, 0.7, keyword_rank=1, keyword_score=3.0,
               keyword_terms=("small",), semantic_rank=2, semantic_similarity=0.61)
    h = make_hit(r, b, TODAY, DEFAULTS, "Keeps PRs small.")
    assert h.effective_confidence == pytest.approx(0.75 * pow(2.718281828, -0.001 * 30), rel=1e-3)
    assert h.tier == "established"
    j = h.as_json()
    assert j["id"] == "small-prs" and j["why"]["keyword_terms"] == ["small"]
    assert j["why"]["semantic_rank"] == 2 and "keyword rank 1" in j["why"]["text"]


# --- markdown within a budget ------------------------------------------------------------------

def _hits(n):
    return [Hit(id=f"belief-{i}", type=BELIEF, title=f"Belief number {i} about review habits",
                score=1.0 / (i + 1), effective_confidence=0.5, tier="developing",
                snippet=("Keeps every pull request small enough to review in one sitting, " * 3).strip())
            for i in range(n)]


def test_estimate_tokens_is_conservative():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1 and estimate_tokens("abcd") == 2
    assert estimate_tokens("日本") == 3  # 6 UTF-8 bytes
    text = "Keeps pull requests small and reviewable. " * 10
    assert estimate_tokens(text) >= len(text.split()) * 1.3  # above any real tokenizer's count


@pytest.mark.parametrize("budget", [0, 5, 12, 20, 30, 45, 60, 90, 150, 400, 5000])
def test_markdown_never_exceeds_the_budget(budget):
    md = render_markdown(_hits(8), budget)
    assert estimate_tokens(md) <= budget
    if md:
        assert md.startswith("## ") and "[belief-0]" in md


def test_markdown_clips_statements_before_dropping_items():
    full = render_markdown(_hits(2), None)
    assert full.count("\n- ") == 2 and "…" not in full
    tight = render_markdown(_hits(2), estimate_tokens(full) - 10)
    assert "…" in tight and estimate_tokens(tight) <= estimate_tokens(full) - 10
    assert render_markdown([], 100) == ""
    o = Hit(id="obs-1", type=OBSERVATION, title="Asked for tests", score=1, effective_confidence=None,
            connects="small-prs", date=date(2026, 9, 1), snippet="Asked for tests first.")
    assert "- Observed 2026-09-01 (about small-prs): Asked for tests first." in render_markdown([o])
    cjk = [Hit(id="x", type=BELIEF, title="日本語のテキスト" * 5, score=1, effective_confidence=0.5,
               tier="developing", snippet="漢字" * 200)]
    for budget in (40, 80, 200):
        assert estimate_tokens(render_markdown(cjk, budget)) <= budget


# --- the vectorised filter agrees with the scalar one ----------------------------------------------

def test_table_mask_equals_passes_on_random_items():
    rng = random.Random(7)
    kinds, perms, scopes, tags = ["trait", "value", "fact"], ["stable", "durable", "situational", "unknown"], \
        ["global", "billing", "/w/ledger"], ["git", "tests", "naming"]
    items = []
    for i in range(300):
        first = date(2025, 1, 1).fromordinal(date(2025, 1, 1).toordinal() + rng.randrange(600))
        conf = None if rng.random() < 0.3 else first.fromordinal(first.toordinal() + rng.randrange(60))
        items.append(belief(f"b{i}", kind=rng.choice(kinds), permanence=rng.choice(perms),
                            scope=rng.choice(scopes), tags=tuple(rng.sample(tags, rng.randrange(3))),
                            confidence=round(rng.random(), 2), first=first, confirmed=conf,
                            pinned=rng.random() < 0.1, status=rng.choice(["active"] * 4 + ["retired"])))
    for i in range(200):
        items.append(obs(f"obs-{i}", rng.choice(["new", "missing"] + [f"b{j}" for j in range(0, 300, 7)]),
                         date(2026, 1, 1).fromordinal(date(2026, 1, 1).toordinal() + rng.randrange(300))))
    table = Table([to_row(it) for it in items], [""] * len(items))
    cases = [Filters(), Filters.make(include_observations=True), Filters.make(kind="trait"),
             Filters.make(kind=["trait", "fact"], include_observations=True),
             Filters.make(permanence="stable", tag="git", include_inactive=True),
             Filters.make(scope="billing", include_observations=True), Filters.make(scope="/x/y/ledger"),
             Filters.make(min_confidence=0.3, include_observations=True),
             Filters.make(since="2026-03-01", until="2026-08-31", include_observations=True),
             Filters.make(tag=["tests", "naming"], min_confidence=0.2, include_inactive=True,
                          include_observations=True)]
    by_key = {it.key: it for it in items}
    for f in cases:
        mask = table.mask(f, TODAY)
        for row, it in enumerate(items):
            b = by_key.get("b/" + it.connects) if it.type == OBSERVATION else None
            assert bool(mask[row]) == passes(it, f, TODAY, belief=b), (f, it)


def test_table_edits_equal_a_fresh_table():
    rows = [to_row(belief(f"b{i}", tags=tuple(f"t{j}" for j in range(i % 3)))) for i in range(6)]
    t = Table(rows, [f"d{i}" for i in range(6)])
    patched = to_row(belief("b1", tags=("new",), confidence=0.9))
    added = to_row(belief("b9", tags=("x", "y")))
    e = t.edited({1: patched}, {0, 4}, [added], ["d9"])
    want = Table([patched, rows[2], rows[3], rows[5], added], ["d1", "d2", "d3", "d5", "d9"])
    assert [e.row(i) for i in range(len(e))] == [want.row(i) for i in range(len(want))]
    assert e.keys == want.keys and e.text_digests == want.text_digests
    assert e.to_json() == want.to_json() and Table.from_json(e.to_json()).row(0) == patched


@pytest.mark.parametrize("n_drop", [3, 300])   # in-place deletes, and the filtering of a large drop
def test_table_edits_equal_a_fresh_table_at_size(n_drop):
    rng = random.Random(n_drop)
    n = 800
    rows = [to_row(belief(f"b{i}", tags=tuple(f"t{j}" for j in range(rng.randrange(4))))) for i in range(n)]
    t = Table(rows, [f"d{i}" for i in range(n)])
    drop = set(rng.sample(range(n), n_drop))
    patch = {r: to_row(belief(f"b{r}", tags=("p",) * rng.randrange(3), confidence=0.9))
             for r in rng.sample([i for i in range(n) if i not in drop], 5)}
    added = [to_row(belief(f"new{i}", tags=("x",) * i)) for i in range(3)]
    e = t.edited(patch, drop, added, ["a0", "a1", "a2"])
    kept = [i for i in range(n) if i not in drop]
    want = Table([patch.get(i, rows[i]) for i in kept] + added, [f"d{i}" for i in kept] + ["a0", "a1", "a2"])
    assert e.to_json() == want.to_json() and e.keys == want.keys


def test_newer_first_puts_the_newer_of_two_alike_items_first_unless_the_older_was_confirmed_since():
    from epimem.recall.rank import anchor_date, newer_first

    old = belief("uses-tabs", first=date(2026, 1, 5))
    new = belief("uses-spaces", first=date(2026, 6, 1))
    other = belief("likes-tea", first=date(2026, 9, 1))
    alike = {frozenset({"b/uses-tabs", "b/uses-spaces"})}

    def similar(a, b):
        return frozenset({a, b}) in alike

    dates = {it.key: anchor_date(it) for it in (old, new, other)}
    # Fusion ranked the older first: the newer moves just above it; an unrelated newer item does not.
    assert newer_first(["b/uses-tabs", "b/likes-tea", "b/uses-spaces"], dates, similar) == [
        "b/uses-spaces", "b/uses-tabs", "b/likes-tea"]
    # The older confirmed after the newer was first seen: it is the current one, and stays first.
    confirmed = belief("uses-tabs", first=date(2026, 1, 5), confirmed=date(2026, 7, 1))
    dates["b/uses-tabs"] = anchor_date(confirmed)
    assert newer_first(["b/uses-tabs", "b/uses-spaces"], dates, similar) == ["b/uses-tabs", "b/uses-spaces"]
    # Items without a date keep their places.
    assert newer_first(["b/a", "b/b"], {}, lambda a, b: True) == ["b/a", "b/b"]


def test_an_inactive_belief_asked_for_is_never_rendered_as_held():
    b = belief("old-editor", status="superseded")
    h = make_hit(Ranked("b/old-editor", 0.1, 0.1, 0.5), b, TODAY, DEFAULTS, "Edits in Vim.")
    line = render_markdown([h])
    assert "superseded, no longer held" in line and "[old-editor]" in line
