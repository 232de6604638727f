"""Which embedder, which Chroma store and which ranking weights a vault's recall uses."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..store.vault import Vault
from .embed import DEFAULT, normalize_name
from .errors import RecallIndexError
from .rank import CONF_WEIGHT, RRF_K, rrf_k_for


@dataclass(frozen=True)
class Config:
    embedder: str = DEFAULT
    chroma_url: str | None = None
    ollama_url: str | None = None
    rrf_k: int = RRF_K     # read_config gives the embedder's (rank.rrf_k_for) when the vault sets none
    confidence_weight: float = CONF_WEIGHT
    keyword_weight: float | None = None   # None: rank.KW_WEIGHT

    @property
    def store(self) -> str:
        return self.chroma_url or "embedded"


def server_url(url: str, where: str = "chroma_url") -> str:
    """A Chroma server's URL, normalised (`http://` when no scheme is given, no trailing
    slash); anything that is not `http(s)://HOST[:PORT]` is refused at once, before a client
    is made or a connection tried, naming where it came from."""
    from urllib.parse import urlparse

    raw = url.strip()
    full = raw if "://" in raw else "http://" + raw
    bad = RecallIndexError(f"{where} {url!r} is not a Chroma server URL like http://HOST:PORT", field="chroma_url")
    try:
        u = urlparse(full)
        port = u.port
    except ValueError:
        raise bad from None
    if (u.scheme not in ("http", "https") or not u.hostname or any(c.isspace() for c in raw)
            or u.query or u.fragment or (port is not None and not 0 < port < 65536)):
        raise bad
    return full.rstrip("/")


def read_config(root: str | os.PathLike, *, embedder: str | None = None,
                chroma_url: str | None = None) -> Config:
    """Explicit arguments, else `$EPIMEM_EMBEDDER` / `$EPIMEM_CHROMA_URL`, else
    the `embedder:` / `chroma_url:` / `ollama_url:` keys of epistemology.md's
    frontmatter (top level or under `recall:`), else the defaults."""
    try:
        # A broken rules file reads as {} here: the commands that own it report it.
        raw = Vault(root).settings()
    except (OSError, UnicodeDecodeError):
        raw = {}
    meta = dict(raw)
    if isinstance(raw.get("recall"), dict):
        meta.update(raw["recall"])

    def pick(arg, env, key):
        for v in (arg, os.environ.get(env), meta.get(key)):
            if isinstance(v, str) and v.strip():
                return v.strip()
        return None

    emb = pick(embedder, "EPIMEM_EMBEDDER", "embedder") or DEFAULT
    url = pick(chroma_url, "EPIMEM_CHROMA_URL", "chroma_url")
    if url and url.lower() in ("embedded", "local", "none"):
        url = None
    if url:
        where = ("--chroma-url" if url == (chroma_url or "").strip()
                 else "$EPIMEM_CHROMA_URL" if url == os.environ.get("EPIMEM_CHROMA_URL", "").strip()
                 else "chroma_url in epistemology.md")
        url = server_url(url, where)
    k = meta.get("rrf_k", meta.get("recall_rrf_k"))
    w = meta.get("confidence_weight", meta.get("recall_confidence_weight"))
    kw = meta.get("keyword_weight")
    # An invalid number keeps the default, like every other rule parameter.
    emb = normalize_name(emb)
    k = k if isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= 1000 else rrf_k_for(emb)
    w = float(w) if isinstance(w, (int, float)) and not isinstance(w, bool) and 0 <= w <= 1 else CONF_WEIGHT
    kw = float(kw) if isinstance(kw, (int, float)) and not isinstance(kw, bool) and 0 < kw <= 100 else None
    return Config(embedder=emb, chroma_url=url,
                  ollama_url=pick(None, "OLLAMA_HOST", "ollama_url"), rrf_k=k, confidence_weight=w,
                  keyword_weight=kw)

