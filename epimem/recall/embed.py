"""Embedders: text → unit vectors, with no network unless the user asks for one.

The default is WordLlama's `l2_supercat_256` static word embeddings, which
ship inside the `wordllama` wheel: loading reads two files from the installed
package (their sha256 checked against the values pinned below), and
embedding is a table lookup and a mean, tens of microseconds per text. On this
project's measurements it loses little quality to MiniLM once fused with BM25
(docs/embeddings.md) and costs a fraction of the time at index and at query.

Others are chosen by name (`embedder:` in epistemology.md's frontmatter, or
`$EPIMEM_EMBEDDER`, or `--embedder`):

- `wordllama`            the default, offline;
- `chroma-minilm`        Chroma's ONNX all-MiniLM-L6-v2 (downloads ~80 MB once
                         into ~/.cache/chroma; Chroma checks its sha256);
- `ollama:MODEL`         an Ollama server's embedding model (`$OLLAMA_HOST`
                         or `ollama_url:`; default http://127.0.0.1:11434).

An embedder's `fingerprint` names the model exactly; the index records it and
is rebuilt when it changes, so vectors of two models never mix.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from pathlib import Path
from typing import Protocol, Sequence

DEFAULT = "wordllama"

WORDLLAMA_VERSION = "0.4.0.post1"
WORDLLAMA_FILES = {
    # relative to the installed `wordllama` package: (path, sha256)
    "weights": ("weights/l2_supercat_256.safetensors",
                "64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5"),
    "tokenizer": ("tokenizers/l2_supercat_tokenizer_config.json",
                  "93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68"),
}
# Mean pooling over a whole book says nothing more than over its start; the
# cap also bounds the memory of one padded batch.
MAX_CHARS = 4000
BATCH = 256


class EmbedderError(RuntimeError):
    """The configured embedder cannot be used; the message says why and what to do."""


class Embedder(Protocol):
    name: str
    fingerprint: str

    def embed(self, texts: Sequence[str]):  # -> numpy float32 array (n, dim), unit rows
        ...


def _unit_rows(x):
    """L2-normalise rows; an all-zero row (empty text) becomes a fixed unit vector
    so the cosine space never sees a NaN."""
    import numpy as np

    x = np.asarray(x, dtype=np.float32)
    if x.ndim == 1:
        x = x.reshape(1, -1)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    zero = (norms[:, 0] == 0) | ~np.isfinite(norms[:, 0])
    if zero.any():
        x = x.copy()
        x[zero] = 0.0
        x[zero, 0] = 1.0
        norms[zero] = 1.0
    return x / norms


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- WordLlama (default) ---------------------------------------------------------------

class WordLlamaEmbedder:
    name = "wordllama"

    def __init__(self) -> None:
        package = _import_wordllama()
        folder = Path(package.__file__).parent
        for what, (rel, expected) in WORDLLAMA_FILES.items():
            path = folder / rel
            if not path.is_file():
                raise EmbedderError(
                    f"the wordllama package has no {what} file {rel}; reinstall it "
                    f"(pip install 'wordllama=={WORDLLAMA_VERSION}')")
            actual = sha256_file(path)
            if actual != expected:
                raise EmbedderError(
                    f"wordllama {what} file {rel} has sha256 {actual[:16]}…, expected {expected[:16]}…: "
                    f"the installed model is not the pinned one; reinstall 'wordllama=={WORDLLAMA_VERSION}'")
        from wordllama import WordLlama

        # cache_dir is the package itself and downloads are off, so a missing
        # file is an error here rather than a silent fetch from the network.
        self._model = WordLlama.load(config="l2_supercat", dim=256, cache_dir=folder,
                                     disable_download=True)
        self.dim = 256
        self.fingerprint = f"wordllama-l2_supercat_256-{WORDLLAMA_FILES['weights'][1][:12]}"

    def embed(self, texts: Sequence[str]):
        import numpy as np

        texts = [(t or "")[:MAX_CHARS] for t in texts]
        out = np.zeros((len(texts), self.dim), np.float32)
        if not texts:
            return out
        # Batches of similar length: padding costs what the longest text costs.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for s in range(0, len(order), BATCH):
            idx = order[s:s + BATCH]
            out[idx] = self._model.embed([texts[i] for i in idx], norm=False, batch_size=BATCH)
        return _unit_rows(out)


def _import_wordllama():
    # wordllama calls logging.basicConfig(level=INFO) at import, which would
    # make every library's INFO chatter appear on the user's terminal.
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama
    except ImportError as e:
        raise EmbedderError(f"the default embedder needs the wordllama package "
                            f"(pip install 'wordllama=={WORDLLAMA_VERSION}'): {e}") from None
    finally:
        for h in list(root.handlers):
            if h not in handlers:
                root.removeHandler(h)
        root.setLevel(level)
    return wordllama


# --- Chroma's ONNX MiniLM (downloads once) ---------------------------------------------------

class ChromaMiniLMEmbedder:
    name = "chroma-minilm"

    def __init__(self) -> None:
        try:
            from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2
        except ImportError as e:
            raise EmbedderError(f"chroma-minilm needs chromadb with onnxruntime: {e}") from None
        self._fn = ONNXMiniLM_L6_V2()
        self.dim = 384
        self.fingerprint = f"chroma-onnx-all-MiniLM-L6-v2-{ONNXMiniLM_L6_V2._MODEL_SHA256[:12]}"

    def embed(self, texts: Sequence[str]):
        import numpy as np

        texts = [(t or " ")[:MAX_CHARS] for t in texts]
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        try:
            vecs = self._fn(texts)
        except Exception as e:  # the first call downloads the model
            raise EmbedderError(f"chroma-minilm could not embed (it downloads its model on first use, "
                                f"which needs network): {e}") from None
        return _unit_rows(np.asarray(vecs, np.float32))


# --- Ollama ------------------------------------------------------------------------------------

class OllamaEmbedder:
    def __init__(self, model: str, url: str | None = None) -> None:
        if not model:
            raise EmbedderError("give the Ollama model as ollama:MODEL (e.g. ollama:nomic-embed-text)")
        self.model = model
        self.url = (url or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434").rstrip("/")
        if "://" not in self.url:
            self.url = "http://" + self.url
        self.name = f"ollama:{model}"
        self.fingerprint = f"ollama-{model}"
        self.dim = None

    def embed(self, texts: Sequence[str]):
        import httpx
        import numpy as np

        texts = [(t or " ")[:MAX_CHARS] for t in texts]
        rows = []
        for s in range(0, len(texts), 64):
            try:
                r = httpx.post(f"{self.url}/api/embed", json={"model": self.model, "input": texts[s:s + 64]},
                               timeout=120)
                r.raise_for_status()
                rows.extend(r.json()["embeddings"])
            except (httpx.HTTPError, KeyError, ValueError) as e:
                raise EmbedderError(f"Ollama at {self.url} could not embed with {self.model}: {e}") from None
        if not rows:
            return np.zeros((0, self.dim or 1), np.float32)
        out = _unit_rows(np.asarray(rows, np.float32))
        self.dim = out.shape[1]
        return out


# --- choosing one ---------------------------------------------------------------------------------

_CACHE: dict[tuple[str, str], Embedder] = {}
_LOCK = threading.Lock()


def normalize_name(spec: str | None) -> str:
    spec = (spec or DEFAULT).strip()
    low = spec.lower()
    if low in ("wordllama", "default", ""):
        return "wordllama"
    if low in ("chroma-minilm", "minilm", "chroma", "onnx-minilm", "all-minilm-l6-v2"):
        return "chroma-minilm"
    if low.startswith("ollama:"):
        return "ollama:" + spec.split(":", 1)[1].strip()
    raise EmbedderError(f"unknown embedder {spec!r}: use wordllama, chroma-minilm or ollama:MODEL")


def get_embedder(spec: str | None = None, *, ollama_url: str | None = None) -> Embedder:
    """The embedder named by `spec`, loaded once per process."""
    name = normalize_name(spec)
    key = (name, ollama_url or "")
    with _LOCK:
        emb = _CACHE.get(key)
        if emb is None:
            if name == "wordllama":
                emb = WordLlamaEmbedder()
            elif name == "chroma-minilm":
                emb = ChromaMiniLMEmbedder()
            else:
                emb = OllamaEmbedder(name.split(":", 1)[1], ollama_url)
            _CACHE[key] = emb
        return emb
