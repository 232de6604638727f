"""The Chroma client: embedded in `.epimem/chroma/` or a server by URL, with telemetry off.

chromadb is imported only inside these functions, on the first query or
build: importing epimem.recall must not cost its start-up time.
"""

from __future__ import annotations

import hashlib
import secrets
import socket
from pathlib import Path

from .config import Config
from .errors import Corrupt, RecallIndexError
from .items import BELIEF, OBSERVATION
from .manifest import Paths


def settings():
    from chromadb.config import Settings

    # SPEC §8: epimem sends nothing anywhere unless asked; Chroma's telemetry is off.
    return Settings(anonymized_telemetry=False)


# Embedded clients, one per store path for the whole process: Chroma keeps one
# "system" per path (with the HNSW index in memory) and every client and
# collection object refers to it. When another process has rewritten the
# store, the only way to see its vectors is to drop that cache, which breaks
# every object made before; `generation` tells holders to fetch new ones.
_EMBEDDED: dict[str, tuple] = {}   # store path -> (client, inode of its sqlite file)
_SEEN_STAMP: dict[str, str] = {}
generation = 0


def release_embedded(force: bool = False) -> None:
    """Forget every embedded Chroma system of this process."""
    global generation
    if not _EMBEDDED and not force:
        return
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()
    _EMBEDDED.clear()
    generation += 1


def unreachable(url: str, timeout: float = 1.0) -> str:
    """Why nothing answers at a server URL (config.server_url's form), or "" when something
    accepts a connection there: a socket, not chromadb, so a command that only needs to know
    can say it without importing Chroma."""
    from urllib.parse import urlparse

    u = urlparse(url)
    port = u.port or (443 if u.scheme == "https" else 8000)
    try:
        socket.create_connection((u.hostname, port), timeout=timeout).close()
    except OSError as e:
        from ..core.redact import redact

        return redact(f"cannot reach the Chroma server at {url}: {e.strerror or e}")  # a password in the URL
    return ""


def open_client(config: Config, paths: Paths, fresh: bool = False):
    """A Chroma client: embedded at .epimem/chroma, or a server by URL."""
    import chromadb

    if config.chroma_url:
        from urllib.parse import urlparse

        u = urlparse(config.chroma_url if "://" in config.chroma_url else "http://" + config.chroma_url)
        if not u.hostname:
            raise RecallIndexError(f"chroma_url {config.chroma_url!r} is not a URL like http://HOST:PORT")
        ssl = u.scheme == "https"
        try:
            client = chromadb.HttpClient(host=u.hostname, port=u.port or (443 if ssl else 8000), ssl=ssl,
                                         settings=settings())
            client.heartbeat()
        except Exception as e:
            raise RecallIndexError(f"cannot reach the Chroma server at {config.chroma_url}: {e}") from None
        return client
    key = str(paths.chroma)
    db = paths.chroma / "chroma.sqlite3"
    cached = _EMBEDDED.get(key)
    if cached is not None and not fresh and _inode(db) != cached[1]:
        fresh = True  # the store was deleted or replaced under this process
    if fresh:
        release_embedded()
        cached = None
    if cached is None:
        paths.chroma.mkdir(parents=True, exist_ok=True)
        try:
            client = chromadb.PersistentClient(path=key, settings=settings())
        except Exception as e:
            release_embedded(force=True)  # Chroma caches even a system that failed to start
            raise Corrupt(f"the Chroma store in .epimem/chroma cannot be opened: {e}") from None
        cached = _EMBEDDED[key] = (client, _inode(db))
    return cached[0]


def _inode(path: Path):
    try:
        st = path.stat()
        return (st.st_dev, st.st_ino)
    except OSError:
        return None


def seen(paths: Paths, stamp: str) -> None:
    """Note that this process wrote (or has opened) the store as of `stamp`."""
    _SEEN_STAMP[str(paths.chroma)] = stamp


def reopen_if_written(config: Config, paths: Paths, stamp: str) -> None:
    """Reopen the embedded store when another process wrote it since this
    process last opened or wrote it: `stamp` is the state's, as just read."""
    if config.chroma_url:
        return  # a server serves every writer's vectors
    key = str(paths.chroma)
    before = _SEEN_STAMP.get(key)
    if key in _EMBEDDED and before is not None and before != stamp:
        open_client(config, paths, fresh=True)
    _SEEN_STAMP[key] = stamp


def wipe_embedded(paths: Paths) -> None:
    """Delete a damaged embedded store (it is rebuilt from the files)."""
    import shutil  # not at the top: it imports bz2, lzma and zlib, which every sync would pay for

    release_embedded()  # let go of the old files
    shutil.rmtree(paths.chroma, ignore_errors=True)


# --- collections -----------------------------------------------------------------------------------

def vault_tag(root: Path) -> str:
    """Names this vault's collections on a shared server: the same vault
    directory on the same machine gets the same names, so a rebuild after
    deleting .epimem/ replaces its old collections instead of orphaning them."""
    ident = f"{socket.gethostname()}:{root.resolve()}"
    return hashlib.sha1(ident.encode("utf-8")).hexdigest()[:10]


def collection_names(root: Path, fingerprint: str) -> tuple[str, dict[str, str]]:
    prefix = f"epimem-{vault_tag(root)}-"
    gen = f"{hashlib.sha1(fingerprint.encode()).hexdigest()[:6]}-{secrets.token_hex(3)}"
    return prefix, {BELIEF: f"{prefix}{gen}-b", OBSERVATION: f"{prefix}{gen}-o"}


def create_collection(client, name: str):
    return client.create_collection(name, metadata={"hnsw:space": "cosine", "epimem": "recall"},
                                    embedding_function=None)


def get_collection(client, name: str):
    try:
        return client.get_collection(name, embedding_function=None)
    except Exception as e:
        raise Corrupt(f"the Chroma collection {name} is missing ({type(e).__name__})") from None


def drop_collections(client, prefix: str, keep: set[str]) -> None:
    """Remove this vault's older generations (a finished or crashed rebuild)."""
    try:
        cols = client.list_collections()
    except Exception:
        return  # best effort: an orphan generation is dropped by the next rebuild
    for c in cols:
        name = c if isinstance(c, str) else getattr(c, "name", "")
        if name.startswith(prefix) and name not in keep:
            try:
                client.delete_collection(name)
            except Exception:
                pass  # another process dropped it first, or the server refused: harmless
