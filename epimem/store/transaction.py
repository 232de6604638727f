"""The one write path: every change to a vault file goes through here.

A change is a list of typed `Write`s and, usually, the `Commit` that records
them, prepared by the caller without the lock (`api.common.attempts`). `apply`
redacts before it takes the vault lock; under it, it checks every write's
precondition before touching anything (compare-and-swap against what the
caller read: `Stale` or `Exists` when another change landed first, and the
caller prepares again), writes each file atomically with fsync, commits
exactly those paths and puts every file back if any step fails; after the
lock it brings the caches up to date. Like `pass`,
one operation is one commit; unlike a bare `git commit`, a failure leaves the
vault as it was.

`adopt` is the same discipline for a change that is already in the work tree
or the index (an undo that git staged, files the user edited by hand): the
lock, the commit and the cache update, with nothing to write.

Standard library only at import time: the session-start hook counts sessions
through here, and GitPython and the YAML parser are loaded only when a commit
is made or a belief's cache entry must be refreshed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from contextlib import nullcontext, suppress
from datetime import date
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ..core.errors import Conflict, EpimemError, StorageError
from .files import (
    ConcurrentEdit,
    VaultLock,
    atomic_write,
    contained,
    journal_pending,
    keep_line_endings,
    lock_path,
    stat_key,
    text_of,
    tmp_dir,
    write_cache,
)

Mode = Literal["create", "replace", "upsert", "delete"]


class Write(NamedTuple):  # not dataclasses: importing them costs the hook ~5 ms
    """One file's new text (None: remove it) and what must hold for it to be written.

    - `create`: the file must not exist (a new belief never overwrites one);
    - `replace`: the file must still be as the caller read it (`expect` is its
      (mtime_ns, size), or None for "did not exist"), so a hand edit saved
      while epimem computed is never overwritten;
    - `upsert`: write whatever is there (caches of state the caller owns);
    - `delete`: remove the file if it is there.

    `rebase` (replace only) says how the change still applies to a file that
    changed since it was read: given the file's text now, it returns the text
    to write, or raises `Stale`. An observation log that another writer appended
    to is the case: the new entries go after theirs, with no new preparation.
    """

    path: str  # relative to the vault
    text: str | None
    mode: Mode = "replace"
    expect: tuple[int, int] | None = None
    rebase: Callable[[str], str] | None = None


def create(path: str, text: str) -> Write:
    return Write(path, text, "create")


def replace(path: str, text: str, expect: tuple[int, int] | None,
            rebase: Callable[[str], str] | None = None) -> Write:
    return Write(path, text, "replace", expect, rebase)


def upsert(path: str, text: str) -> Write:
    return Write(path, text, "upsert")


def delete(path: str) -> Write:
    return Write(path, None, "delete")


class Commit(NamedTuple):
    """The commit that records a change: a subject a person reads, trailers a program reads."""

    subject: str
    op: str
    beliefs: tuple[str, ...] = ()
    session: str | None = None
    body: str = ""
    extra: tuple[tuple[str, str], ...] = ()
    # Extra paths committed with the change but not written by it (a session
    # count the hook left uncommitted rides along; "." commits a copied vault whole).
    also: tuple[str, ...] = ()
    when: date | None = None  # a replayed clock (EPIMEM_TODAY): commit dates follow it


class Staged(NamedTuple):
    """What `adopt` commits: changes already in the work tree (`paths`) or, with
    `paths=None`, exactly what is staged in the index (a revert git prepared).
    `abort` puts the work tree back if the commit fails."""

    commit: Commit
    paths: tuple[str, ...] | None
    abort: Callable[[], None] | None = None
    value: Any = None  # whatever the caller computed under the lock and wants back


class Result(NamedTuple):
    commit: str | None
    written: tuple[str, ...] = ()
    changed_beliefs: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # a cache that could not be updated (the change itself landed)
    value: Any = None


class Caches(NamedTuple):
    """What the post-commit cache update needs and the caller already knows
    (else it is read from the vault and the clock)."""

    today: date | None = None
    params: Any = None  # epimem.core.params.Params


# Interrupted between two renames, the vault keeps the files written so far:
# write what is linked to before what links to it, so a crash never leaves a
# belief's evidence pointing at an observation that is not there, or a
# superseded belief naming a successor that was never written.
_ORDER = ("observations/", "beliefs/", "tensions/")


def _rank(w: Write) -> tuple[int, int]:
    top = next((i for i, d in enumerate(_ORDER) if w.path.startswith(d)), len(_ORDER))
    return top, 0 if w.mode == "create" else 1


class Stale(ConcurrentEdit):
    """What the change was prepared from has changed since (a file it read or
    replaces): nothing was written, and preparing it again from the vault as it
    is now will do (`api.common.attempts`)."""


class Exists(Conflict):
    """A file the change creates appeared since the change was prepared. Raised as a
    Conflict (a caller that does not retry says so as before); one that prepares
    again decides afresh, with the file there: another id, or a refusal of its own."""


# What a retry loop catches: the change met another one that landed first.
RACES = (Stale, Exists)


def _recover(root: Path, lock: VaultLock) -> None:
    from .journal import recover

    recover(root, lock)


def _check(root: Path, w: Write) -> Path:
    p = contained(root, w.path)
    if w.text is not None:
        try:
            w.text.encode("utf-8")
        except UnicodeEncodeError as e:
            from ..core.errors import InputError

            raise InputError(f"{w.path}: the text holds a character that cannot be written "
                             f"({w.text[e.start]!r}, a lone surrogate); nothing was written", path=w.path) from None
    if w.mode == "create" and p.exists():
        raise Exists(f"{w.path} already exists; epimem will not overwrite it", path=w.path)
    if w.mode == "replace" and stat_key(p) != w.expect:
        raise Stale(f"{Path(w.path).name} changed on disk while epimem was updating it; "
                    "nothing was written — run the command again", path=w.path)
    return p


def _check_reads(root: Path, reads: Iterable[tuple[str, tuple[int, int] | None]]) -> None:
    """The files a change was computed from but does not write (last month's log, which
    rule 9 counts): each must still be as it was read."""
    for rel, key in reads:
        if stat_key(root / rel) != key:
            raise Stale(f"{Path(rel).name} changed while epimem was preparing a change from it; "
                        "nothing was written — run the command again", path=rel)


def _restore(done: list[tuple[Path, bytes | None]], tmpdir: Path | None = None) -> None:
    # Every file gets its chance to be put back, and the error that stopped the
    # change is the one raised: a disk that filled up may refuse one restore too.
    for p, old in reversed(done):
        try:
            if old is None:
                p.unlink(missing_ok=True)
            else:
                atomic_write(p, old, tmpdir=tmpdir)
        except OSError:
            continue


def _storage_error(e: BaseException) -> BaseException:
    """What a failed change raises: a refusal the user can act on (a conflict, a
    file edited meanwhile, a bad input) as it is; a disk or git failure as a
    StorageError that says nothing was written."""
    if isinstance(e, (ConcurrentEdit, Conflict)) or not isinstance(e, (OSError, StorageError)):
        return e
    return StorageError(f"could not record the change: {e}; nothing was written")


def _read_old(p: Path) -> tuple[tuple[int, int] | None, bytes | None]:
    """A file's stat key and bytes, the key taken first: if the file changes between the
    two, the key is the older one, and the check under the lock sees the change."""
    key = stat_key(p)
    if key is None:
        return None, None
    try:
        return key, p.read_bytes()
    except FileNotFoundError:
        return None, None


def _prepared(root: Path, writes: list[Write], caches: Caches | None
              ) -> list[tuple[Write, Path, tuple[int, int] | None, bytes | None]]:
    """Each write redacted against the file as it is now, before the lock is taken:
    the lock then only confirms, with one stat a file, that the file is still the one
    the text was redacted against."""
    olds = []
    keys = []
    for w in writes:
        p = contained(root, w.path)
        key, old = _read_old(p)
        olds.append((w, p, old))
        keys.append(key)
    red = _redacted(root, olds, caches)
    return [(w, p, key, old) for (w, p, old), key in zip(red, keys, strict=True)]


def _under_lock(root: Path, prepared, caches: Caches | None) -> list[tuple[Write, Path, bytes | None]]:
    """Check every precondition against the files as they are now (under the lock) and
    return what to write: the prepared text where the file is as it was read, the rebased
    (and again redacted) text where a write knows how to follow a file that grew."""
    out = []
    for w, p, key, old in prepared:
        now = stat_key(p)
        again = now != key
        if again:
            now, old = _read_old(p)
        if w.mode == "replace" and w.rebase is not None and now != w.expect and old is not None:
            w, again = w._replace(text=w.rebase(text_of(old, w.path)), expect=now), True
        if again:
            (w, _, old), = _redacted(root, [(w, p, old)], caches)
        _check(root, w)
        out.append((w, p, old))
    return out


def apply(root: str | os.PathLike, writes: Iterable[Write], commit: Commit | None = None, *,
          lock: VaultLock | None = None, caches: Caches | None = None,
          reads: Iterable[tuple[str, tuple[int, int] | None]] = (),
          check: Callable[[], None] | None = None) -> Result:
    """Write and commit as one all-or-nothing change.

    What does not depend on the files being still as read is done before the
    lock is taken (the redaction of the texts and of the message); under the
    lock, only the compare-and-swap checks, the journal, the writes and the
    commit. A change that met another one raises `Stale` (or `Exists`): nothing
    is written, and the caller may prepare it again (`api.common.attempts`).
    `reads` are (path, stat key) of files the change was computed from but does
    not write; `check` runs under the lock after every other check, for a rule
    that must hold against the vault as it is at the commit.

    `commit=None` writes without committing (the hook's session count, which
    rides along with the next commit; the open gut-check in `.epimem/`), and
    leaves the caches alone: nothing they are built from was recorded.
    Pass the `lock` the caller already holds (`Vault.lock()`): the lock is
    reentrant per object, and a second flock on the same file would wait on
    ourselves. The caches are updated after the vault lock is let go (under a
    lock of their own), unless the caller holds it.
    """
    root = Path(root).absolute()
    writes = sorted(writes, key=_rank)
    lock = lock or VaultLock(lock_path(root))
    if commit is not None:
        commit = _redacted_commit(root, commit, caches)
        _warm(root)
    prepared = _prepared(root, writes, caches)
    sig_before = sig_after = None
    with lock:
        clock = _Clock(lock)
        if journal_pending(root):  # a change a killed process left half-made (one stat)
            _recover(root, lock)
        if commit is not None:
            sig_before = _signature(root)
        _check_reads(root, reads)
        olds = _under_lock(root, prepared, caches)  # every precondition before any write
        if check is not None:
            check()
        writes = [w for w, _, _ in olds]
        clock.lap("check")
        # One file without a commit (the hook's session count, the open gut-check)
        # is already atomic; anything more is journalled first, so that a kill -9
        # between two renames, or before the commit, is undone by the next command.
        journalled = commit is not None or len(writes) > 1
        tmpdir = tmp_dir(root)
        if journalled:
            from . import journal  # not on the hook's one-file path

            try:
                journal.begin(root, [(w.path, old) for w, _, old in olds],
                              subject=commit.subject if commit is not None else None, commit=commit is not None)
            except OSError as e:  # a full disk meets the journal first: nothing is written yet
                raise _storage_error(e) from None
            clock.lap("journal")
        done: list[tuple[Path, bytes | None]] = []
        sha = None
        try:
            for w, p, old in olds:
                if w.text is None:
                    if old is not None:
                        p.unlink()
                        done.append((p, old))
                    continue
                atomic_write(p, keep_line_endings(w.text, old), expect=stat_key(p) if w.mode != "upsert" else None,
                             tmpdir=tmpdir)
                done.append((p, old))
            clock.lap("write")
            if commit is not None:
                # Created (or upserted) files, and what rides along, may be new to git; replaced and
                # deleted ones are tracked, so `git add` runs only when something is new.
                new = [w.path for w in writes if w.mode in ("create", "upsert")] + list(commit.also)
                sha = _commit(root, [w.path for w in writes] + list(commit.also), commit, new=new)
                clock.lap("git")
        except BaseException as e:
            _restore(done, tmpdir)
            if journalled:
                journal.end(root)
            err = _storage_error(e)
            if err is e:
                raise
            raise err from None
        if journalled:
            journal.end(root)
            clock.lap("journal")
        if commit is not None:
            sig_after = _signature(root)
    written = tuple(w.path for w in writes)
    notes: tuple[str, ...] = ()
    if commit is not None:
        texts = {w.path: w.text for w in writes}
        notes = _update_caches(root, written, texts, sig_before, caches or Caches(), lock, sig_after)
    return Result(sha, written, tuple(p for p in written if p.startswith("beliefs/") and p.endswith(".md")), notes)


def _warm(root: Path) -> None:
    from . import git

    with suppress(EpimemError):  # no git, or not a repository: the commit under the lock says so
        git.warm(root)


class _Clock:
    """Seconds of the hold spent in each phase, noted on the lock (EPIMEM_LOCK_STATS)."""

    def __init__(self, lock: VaultLock):
        import time

        self._lock, self._now = lock, time.perf_counter
        self._t = self._now()

    def lap(self, name: str) -> None:
        t = self._now()
        self._lock.phase(name, t - self._t)
        self._t = t


# Texts that hold no free text, or hold the patterns themselves, are not redacted:
# the session counter (numbers and dates, and the hook must stay fast) and the
# rules file (its `redact:` patterns must be written as typed).
_NOT_REDACTED = ("state/sessions.json", "epistemology.md")


def _patterns(root: Path, caches: Caches | None):
    if caches is not None and caches.params is not None:
        return caches.params.redact
    return _params(root).redact


def _redacted(root: Path, olds: list[tuple[Write, Path, bytes | None]],
              caches: Caches | None) -> list[tuple[Write, Path, bytes | None]]:
    """The one choke point for secrets on their way to a file: every text written
    through the transaction, whatever service built it, is redacted here
    (a note's frontmatter value by value, so the YAML stays valid).

    An append (an observation log, a tension's new evidence) redacts only what it
    adds: the month's log can be large, and what is already there was written."""
    if not any(w.text and w.path not in _NOT_REDACTED for w, _, _ in olds):
        return olds
    from ..core.scrub import lines, scrub

    patterns = _patterns(root, caches)
    out = []
    for w, p, old in olds:
        text = w.text
        if text and w.path not in _NOT_REDACTED:
            prev = old.decode("utf-8", "replace") if old is not None else None
            if prev and not w.path.endswith(".json") and text.startswith(prev) and prev.endswith("\n"):
                w = w._replace(text=prev + lines(text[len(prev):], patterns))
            else:
                w = w._replace(text=scrub(w.path, text, patterns))
        out.append((w, p, old))
    return out


def _redacted_commit(root: Path, c: Commit, caches: Caches | None) -> Commit:
    """A commit message is history that is pushed: its subject, body and trailers are redacted too."""
    from ..core.redact import redact

    patterns = _patterns(root, caches)
    r = lambda s: redact(s, patterns) if s else s  # noqa: E731
    return c._replace(subject=r(c.subject), body=r(c.body), session=r(c.session),
                      extra=tuple((k, r(v)) for k, v in c.extra))


def adopt(root: str | os.PathLike, prepare: Callable[[], Staged | None], *,
           lock: VaultLock | None = None, caches: Caches | None = None) -> Result:
    """Commit a change that is already made, under the same lock and with the same
    cache update as `apply`. `prepare` runs under the lock (so what it looks at
    cannot change before the commit) and returns what to commit, or None."""
    root = Path(root).absolute()
    lock = lock or VaultLock(lock_path(root))
    _warm(root)
    with lock:
        if journal_pending(root):
            _recover(root, lock)
        staged = prepare()
        if staged is None:
            return Result(None)
        clock = _Clock(lock)
        try:
            if staged.paths is None:
                from . import git

                c = staged.commit
                sha = git.commit_index(root, c.subject, op=c.op, beliefs=c.beliefs, extra=dict(c.extra),
                                       body=c.body, when=c.when)
            else:
                sha = _commit(root, list(staged.paths) + list(staged.commit.also), staged.commit)
        except BaseException as e:
            if staged.abort is not None:
                staged.abort()
            err = _storage_error(e)
            if err is e:
                raise
            raise err from None
        clock.lap("git")
        paths = staged.paths
        sig_after = _signature(root)
    notes = _update_caches(root, paths, None, None, caches or Caches(), lock, sig_after)
    return Result(sha, paths or (), (), notes, staged.value)


SESSIONS = "state/sessions.json"


# The digest of the session counter as last committed. Asking git whether the counter changed
# costs two git processes, under the vault lock, on every commit; the digest answers without one
# in the common case (nothing counted since), and a missing or stale digest just asks git.
SESSIONS_COMMITTED = ".epimem/sessions-committed"


def _digest(root: Path, rel: str) -> str | None:
    import hashlib

    try:
        return hashlib.sha256((root / rel).read_bytes()).hexdigest()
    except OSError:
        return None


def _commit(root: Path, paths: list[str], c: Commit, new: list[str] | None = None) -> str:
    from . import git

    counter = _digest(root, SESSIONS)
    settled = SESSIONS in paths  # after this commit, is the counter on disk the committed one?
    if SESSIONS not in paths and counter is not None:
        try:
            known = (root / SESSIONS_COMMITTED).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            known = ""
        # The session-start hook counts without committing (SPEC §4): its change
        # rides along with the next commit, named in the body, so the history is
        # what was learned rather than a list of sessions.
        note = git.uncommitted_sessions(root) if known != counter else None
        settled = True  # committed already (git saw no change), or carried along below
        if note:
            paths = [*paths, SESSIONS]
            new = None if new is None else [*new, SESSIONS]
            c = c._replace(body=(c.body + "\n\n" if c.body else "") + note)
    try:
        sha = git.commit(root, paths, c.subject, op=c.op, beliefs=c.beliefs, session=c.session, body=c.body,
                         extra=dict(c.extra), when=c.when, new=new)
    except BaseException:
        git.unstage(root, paths)
        raise
    if counter is not None and settled:
        with suppress(OSError):
            write_cache(root / SESSIONS_COMMITTED, counter + "\n")
    return sha


# --- the caches, after the commit --------------------------------------------------------

def _signature(root: Path) -> dict | None:
    from .context_cache import signature

    return signature(root)


# What a cache update can meet: a full disk or a read-only `.epimem/` (OSError),
# a cache file damaged by hand (ValueError, KeyError, TypeError), a malformed
# `epistemology.md` or a bad EPIMEM_TODAY (EpimemError). Anything else is a bug
# and is raised.
_CACHE_ERRORS = (OSError, ValueError, KeyError, TypeError, EpimemError)


def _update_caches(root: Path, written: Iterable[str] | None, texts: dict[str, str | None] | None,
                   sig_before: dict | None, caches: Caches, lock: VaultLock | None = None,
                   sig_after: dict | None = None) -> tuple[str, ...]:
    """Keep the session-start context cache current, so the hook never parses the vault.

    A write that knows which beliefs it changed folds just those in; anything
    else (undo, hand edits) re-reads the files it names, or every changed file.
    A cache must never fail a change that landed: a failure is a warning, and
    the cache is rebuilt by the next write or session.

    This runs after the vault lock is let go, under the caches' own lock: two
    writers' updates never interleave, and neither makes the next writer wait. The
    fold stamps the cache with the signature taken under the vault lock right after
    this write (`sig_after`), so a write that landed in between, and whose own update
    has not run yet (or never will: a killed process), leaves the cache visibly stale
    (the hook and the next write rebuild it) rather than wrongly current.
    """
    if written is not None and not any(p.startswith(("beliefs/", "tensions/")) or p == "epistemology.md"
                                       for p in written):
        return ()  # nothing the context is built from (the hook's session counter)
    from . import context_cache
    from .clock import today

    try:
        changed = _changed_beliefs(texts) if texts is not None else None
        with _cache_lock(root, lock):
            if changed is not None and sig_before is not None:
                params = caches.params if caches.params is not None else _params(root)
                context_cache.update_context(root, changed, params, today(caches.today), sig_before,
                                             sig_after=sig_after)
            else:
                context_cache.refresh_context(root, caches.today, changed=tuple(written) if written else None,
                                              sig=sig_after)
    except _CACHE_ERRORS as e:
        import logging

        note = f"the session context cache could not be updated ({e}); it is rebuilt at the next write or session"
        logging.getLogger("epimem").warning("epimem: %s", note)
        return (note,)
    return ()


def _cache_lock(root: Path, vault_lock: VaultLock | None):
    """The caches' lock: none needed while this process still holds the vault's (a caller's
    outer change), which already keeps every other writer out."""
    if vault_lock is not None and vault_lock.held:
        return nullcontext()
    return VaultLock(root / ".epimem" / "cache.lock", timeout=10.0, stats=False)


def _changed_beliefs(texts: dict[str, str | None]) -> list | None:
    """The beliefs a write leaves on disk, or None when one cannot be read back
    (a deletion, or text that does not parse): then the cache is re-read instead."""
    from ..core.notes import NoteError, parse_belief

    out = []
    for path, text in texts.items():
        if not (path.startswith("beliefs/") and path.endswith(".md")):
            continue
        if text is None:
            return None
        try:
            out.append(parse_belief(text, Path(path).stem))
        except NoteError:
            return None
    return out


def _params(root: Path):
    from .vault import Vault

    return Vault(root).params()[0]
