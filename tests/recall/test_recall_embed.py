"""The default embedder loads offline from the installed package, pinned by sha256."""

import logging
import shutil

import numpy as np
import pytest

from epimem.recall import embed
from epimem.recall.embed import EmbedderError, WordLlamaEmbedder, get_embedder, normalize_name


@pytest.fixture(scope="module")
def wl():
    return get_embedder("wordllama")


def test_loads_offline_and_embeds_unit_vectors(wl):
    v = wl.embed(["Keeps pull requests small", "Splits work into small reviewable PRs", "Deploys on Fridays",
                  "", "日本語のテキスト"])
    assert v.shape == (5, 256) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert np.isfinite(v).all()  # an empty text is not a NaN
    assert v[0] @ v[1] > v[0] @ v[2]
    assert wl.fingerprint.startswith("wordllama-l2_supercat_256-64b47a2d")
    assert get_embedder("default") is wl  # one load per process
    assert wl.embed([]).shape == (0, 256)


def test_long_and_mixed_length_batches(wl):
    texts = ["short"] + ["word " * 50_000] + ["medium text about tests"] * 3
    v = wl.embed(texts)
    assert v.shape == (5, 256) and np.isfinite(v).all()
    assert np.allclose(v[2], v[3]) and np.allclose(wl.embed(["short"])[0], v[0], atol=1e-6)


def test_same_vectors_as_the_wordllama_package(wl):
    """Reading the files directly must compute what WordLlama.load(...).embed does."""
    pkg = embed._import_wordllama()
    model = pkg.WordLlama.load(cache_dir=embed.wordllama_folder(), disable_download=True)
    texts = ["Keeps pull requests small", "日本語のテキスト", "word " * 300, "Prefers SQL over an ORM"]
    ref = model.embed(texts, norm=True)
    assert np.allclose(wl.embed(texts), ref, atol=1e-5)


def test_a_modified_model_file_is_refused(monkeypatch, tmp_path):
    fake = tmp_path / "wordllama"
    src = embed.wordllama_folder()
    (fake / "weights").mkdir(parents=True)
    (fake / "tokenizers").mkdir()
    shutil.copy(src / "tokenizers" / "l2_supercat_tokenizer_config.json", fake / "tokenizers")
    (fake / "weights" / "l2_supercat_256.safetensors").write_bytes(b"not the pinned weights")
    monkeypatch.setattr(embed, "wordllama_folder", lambda: fake)
    with pytest.raises(EmbedderError, match="not the pinned one"):
        WordLlamaEmbedder()
    (fake / "weights" / "l2_supercat_256.safetensors").unlink()
    with pytest.raises(EmbedderError, match="reinstall"):
        WordLlamaEmbedder()


def test_importing_wordllama_leaves_logging_alone():
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    embed._import_wordllama()
    assert (list(root.handlers), root.level) == before


def test_names():
    assert normalize_name(None) == "wordllama" and normalize_name("MiniLM") == "minilm"
    assert normalize_name("chroma-minilm") == "chroma-minilm"
    assert normalize_name("ollama: nomic-embed-text") == "ollama:nomic-embed-text"
    with pytest.raises(EmbedderError, match="unknown embedder"):
        normalize_name("bert")
    with pytest.raises(EmbedderError):
        get_embedder("ollama:")
