"""The visual mirror's page cache: is the page built last still this vault's page?

The finished page is kept in `.epimem/page.html` under a key of everything it is
built from: HEAD, today, the options and the templates, and what differs from
HEAD among the notes (beliefs, observations, tensions, reviews),
`epistemology.md` and the session counter — as `git status` says (it compares
every file's stat with the index in C, and hashes when the stat cannot tell),
with each differing file's size and mtime, so a file edited again while it
differs changes the key too. A hand edit, committed or not, changes the key;
directory mtimes would not do (an editor that saves in place leaves its
folder's mtime alone). Outside git the key has every file's size and mtime.

Standard library and the store's light modules only (tests/architecture): an
unchanged vault's page is copied from here (`copy_cached`) before Jinja2, the
note parser or the snapshot are imported, in a few tens of milliseconds.
"""

from __future__ import annotations

import hashlib
import os
from datetime import date
from pathlib import Path

from ..store.files import INTERNAL_DIR, journal_pending, write_cache
from ..store.gitrun import Changed, HistoryError, head_sha, status
from ..store.paths import is_vault, note_entries

TOP = 30          # cards with a timeline per tier
PAGE_SIZE = 200   # rows per page for the rest of a tier
BUILD_VERSION = "4"  # 4: what readers are shown (SPEC rules 21, 23)
CACHE_FILE = "page.html"
CACHE_KEY_FILE = "page.key"
TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "page"
NOTE_FOLDERS = ("beliefs", "observations", "tensions", "reviews")
OTHER_FILES = ("epistemology.md", "state/sessions.json")


def key(root: Path, today: date, top: int = TOP, page_size: int = PAGE_SIZE) -> str:
    """The key of the page `root` has today: any change to what it is built from changes it."""
    head = head_sha(root)
    differ = _differ(root) if head else None
    rows = _git_rows(root, differ) if differ is not None else _stat_rows(root)
    for t in sorted(TEMPLATES.iterdir()):  # a changed template is a changed page
        rows.append(f"{t.name}|{t.stat().st_mtime_ns}")
    rows.insert(0, f"{BUILD_VERSION}|{today.isoformat()}|{head or ''}|{top}|{page_size}")
    return hashlib.sha256("\n".join(rows).encode("utf-8", "surrogateescape")).hexdigest()


def _stat(root: Path, rel: str) -> str:
    try:
        st = os.stat(root / rel)
        return f"{st.st_mtime_ns}|{st.st_size}"
    except OSError:
        return "-"


def _differ(root: Path) -> list[Changed] | None:
    """What differs from HEAD among the page's files (ignored ones included), or None when git
    cannot say. With git's optional lock, as a plain `git status`: when the index's stat data
    is stale (a vault copied or restored), git hashes every file once and refreshes the index,
    instead of hashing them all again on every build."""
    try:
        return status(root, NOTE_FOLDERS + OTHER_FILES, ignored=True, refresh=True)
    except HistoryError:
        return None


def _git_rows(root: Path, differ: list[Changed]) -> list[str]:
    """HEAD's files are the committed ones; what `git status` lists differs from them (changed,
    new, deleted, ignored), and its size and mtime say when it changes again while it differs."""
    return ["git status"] + sorted(f"{c.code} {c.path}|{_stat(root, c.path)}" for c in differ)


def _stat_rows(root: Path) -> list[str]:
    """Outside git (or when git cannot say): the size and mtime of every file."""
    rows = []
    for folder in NOTE_FOLDERS:
        for e in note_entries(root / folder):
            try:
                st = e.stat()
            except FileNotFoundError:
                continue  # deleted while listed: not part of the page either way
            rows.append(f"{folder}/{e.name}|{st.st_mtime_ns}|{st.st_size}")
    rows.extend(f"{rel}|{_stat(root, rel)}" for rel in OTHER_FILES)
    return sorted(rows)


def read(root: Path, page_key: str) -> str | None:
    """The cached page when it was built under `page_key`, else None."""
    path = _valid(root, page_key)
    try:
        return path.read_text(encoding="utf-8") if path is not None else None
    except (OSError, UnicodeDecodeError):
        return None


def _valid(root: Path, page_key: str) -> Path | None:
    internal = root / INTERNAL_DIR
    try:
        if (internal / CACHE_KEY_FILE).read_text(encoding="utf-8").strip() == page_key:
            return internal / CACHE_FILE
    except (OSError, UnicodeDecodeError):
        pass
    return None


def write(root: Path, page_key: str, html: str) -> None:
    internal = root / INTERNAL_DIR
    try:
        internal.mkdir(parents=True, exist_ok=True)
        write_cache(internal / CACHE_FILE, html)
        write_cache(internal / CACHE_KEY_FILE, page_key)
    except OSError:
        pass  # a read-only sidecar: the page is built, only not kept


def cached_file(root: Path, today: date, top: int = TOP, page_size: int = PAGE_SIZE) -> Path | None:
    """The file of an unchanged vault's page, found without building anything (a copy of it
    is the page: no need to read it); None when the page must be built, or when the vault
    needs what only a full command does (a change a killed process left, a merge half done,
    the merge driver to register)."""
    from ..store import drivers

    if not is_vault(root) or journal_pending(root) or drivers.unfinished(root) is not None \
            or not drivers.registered(root):
        return None
    return _valid(root, key(root, today, top, page_size))


def copy_cached(root: Path, today: date, top: int, out: Path) -> int | None:
    """Write an unchanged vault's page to `out` from the cache (its bytes as they are: nothing
    to decode); the bytes written, or None when the page must be built (`cached_file`) or the
    copy failed (the build that follows says why)."""
    import shutil

    cache = cached_file(root, today, top)
    if cache is None:
        return None
    try:
        shutil.copyfile(cache, out)
        return out.stat().st_size
    except OSError:
        return None


def default_out(today: date) -> Path:
    return Path(f"mirror-{today.isoformat()}.html")


def wrote(path: Path, size: int, from_cache: bool) -> str:
    """What `epimem mirror page` says when it has written `size` bytes of page to `path`."""
    return f"Wrote {path} ({size // 1024} KB{', from the cache' if from_cache else ''})."
