"""Keyword side of recall: the tokenizer and BM25 over arrays, with plain values."""

import math

import numpy as np

from epimem.recall.bm25 import K1, MAX_QUERY_TERMS, B, LexicalIndex, stem, tokenize, tokens_with_words


def test_tokenizer_folds_case_accents_and_suffixes():
    assert tokenize("The user PREFERS small PRs") == ["prefer", "small", "prs"]
    assert tokenize("preferred preferring prefers") == ["prefer"] * 3
    assert tokenize("Café naïve résumé") == tokenize("cafe naive resume") == ["caf", "naiv", "resum"]
    assert tokenize("snake_case re-use") == ["snak", "cas", "re", "use"]
    assert tokenize("") == [] and tokenize("   ") == []
    # stopwords and single letters carry no keyword signal
    assert tokenize("what does the user want to do with a b") == ["want"]


def test_tokenizer_handles_other_scripts():
    # Cyrillic and Arabic keep their words; no accent stripping outside Latin.
    assert tokenize("Привет мир") == ["привет", "мир"]
    assert tokenize("مرحبا بالعالم") == ["مرحبا", "بالعالم"]
    assert tokenize("йогурт") == ["йогурт"]
    # Scripts without spaces become character bigrams.
    assert tokenize("日本語") == ["日本", "本語"]
    assert tokenize("ภาษาไทย")[:2] == ["ภา", "าษ"]
    assert tokenize("字") == ["字"]
    # A mixed run splits at the script boundary.
    assert tokenize("用户prefers") == ["用户", "prefer"]
    # "why it matched" reports the words, not the stems
    assert tokens_with_words("Messages") == [("messag", "messages")]


def test_stem_is_conservative():
    assert stem("tests") == stem("testing") == stem("tested") == "test"
    assert stem("running") == "run"
    assert stem("class") == "class" and stem("bus") == "bus"
    assert stem("db") == "db"


def _bm25(tf, dl, avgdl, n, df):
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))


def test_bm25_scores_match_the_formula():
    docs = [["apple", "apple", "pear"], ["pear"], ["plum", "kiwi", "fig", "lime"]]
    ix = LexicalIndex.build(docs)
    avgdl = (3 + 1 + 4) / 3
    sc = ix.scores([ix.vocab["apple"], ix.vocab["pear"]])
    want0 = _bm25(2, 3, avgdl, 3, 1) + _bm25(1, 3, avgdl, 3, 2)
    want1 = _bm25(1, 1, avgdl, 3, 2)
    assert np.allclose(sc, [want0, want1, 0.0], rtol=1e-5)
    top = ix.top(["apple", "pear", "unknown"], k=5)
    assert [r for r, _ in top] == [0, 1]
    assert ix.matched_terms(0, ["pear", "apple", "nope", "pear"]) == ["pear", "apple"]


def test_allowed_mask_and_k():
    ix = LexicalIndex.build([["a1", "x"], ["a1"], ["a1", "a1"], ["b2"]])
    assert [r for r, _ in ix.top(["a1"], k=10)] == [2, 1, 0]
    assert [r for r, _ in ix.top(["a1"], allowed=np.array([True, False, True, True]), k=10)] == [2, 0]
    assert len(ix.top(["a1"], k=2)) == 2
    assert ix.top(["zzz"], k=5) == [] and ix.top([], k=5) == []


def test_remove_and_append_equal_a_fresh_build():
    docs = [tokenize(t) for t in ("small pull requests", "tests first", "review the tests",
                                  "日本語のテキスト", "deploy on fridays")]
    ix = LexicalIndex.build(docs)
    keep = np.array([True, False, True, True, False])
    patched = ix.keep_rows(keep).append([tokenize("fridays are for deploys"), tokenize("tests again")])
    fresh = LexicalIndex.build([docs[0], docs[2], docs[3], tokenize("fridays are for deploys"),
                                tokenize("tests again")])
    for q in ("tests", "friday deploy", "日本語", "small requests"):
        a = patched.top(tokenize(q), k=10)
        b = fresh.top(tokenize(q), k=10)
        assert [r for r, _ in a] == [r for r, _ in b]
        assert np.allclose([s for _, s in a], [s for _, s in b], rtol=1e-5)


def test_arrays_round_trip():
    ix = LexicalIndex.build([["a", "b"], ["b", "c", "c"]])
    back = LexicalIndex.from_arrays(list(ix.terms), ix.arrays())
    assert back.top(["c"], k=3) == ix.top(["c"], k=3)
    empty = LexicalIndex.empty()
    assert empty.n_docs == 0 and empty.top(["a"]) == []
    assert LexicalIndex.build([]).n_docs == 0


def test_a_huge_query_is_capped_to_its_rarest_terms():
    docs = [[f"w{i}", "common"] for i in range(600)]
    ix = LexicalIndex.build(docs)
    q = ["common"] + [f"w{i}" for i in range(600)]
    tids = ix.query_terms(q)
    assert len(tids) == MAX_QUERY_TERMS
    assert ix.vocab["common"] not in tids  # the most frequent term is the one dropped
