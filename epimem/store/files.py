"""Writing files safely: atomic replacement and the vault lock.

Standard library only, because the session-start hook uses it too and must
start in a few milliseconds. `epimem.store.vault` builds on it for everything else.
"""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from pathlib import Path

from ..core.errors import Busy, StorageError, VaultError


class FileError(StorageError):
    """A write that could not be done safely; the message says why."""


class ConcurrentEdit(FileError, Busy):
    """A file changed on disk between our read and our write."""


class LockTimeout(FileError, Busy, TimeoutError):
    """Another process held the vault lock for too long."""


class NotUTF8(VaultError, ValueError):
    """A vault file whose bytes are not UTF-8: reported with its line, never rewritten."""


class NotAFile(VaultError, IsADirectoryError):
    """A folder where the vault has a file (`observations/2026-11.md/`): named, never a traceback.
    Still an OSError, so a reader that reports unreadable files as problems goes on doing so."""


def read_text(path: str | os.PathLike, rel: str | None = None) -> str:
    """A vault file's text, with universal newlines as `open()` reads it: CRLF and CR become
    "\n" (Obsidian on Windows saves CRLF; the writer puts the file's own endings back, see
    `keep_line_endings`). Bytes that are not UTF-8 are a NotUTF8 naming the line, so every
    reader reports the file instead of raising UnicodeDecodeError; a folder in a file's place is
    a NotAFile naming it."""
    try:
        data = Path(path).read_bytes()
    except IsADirectoryError:
        raise NotAFile(folder_in_place(rel or str(path)), path=rel) from None
    return text_of(data, rel)


def folder_in_place(name: str) -> str:
    """What to say of a folder named like one of the vault's files (`observations/2026-11.md/`)."""
    return f"{name} is a folder where the vault keeps a file: move it out (or rename it), then run the command again"


def text_of(data: bytes, rel: str | None = None) -> str:
    """A vault file's bytes as `read_text` reads them (universal newlines; NotUTF8 naming the line)."""
    try:
        text = data.decode("utf-8")
        return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise NotUTF8(f"not valid UTF-8 at line {line} (byte {e.start}); re-save the file as UTF-8",
                      path=rel, line=line) from None


def stat_key(path: str | os.PathLike) -> tuple[int, int] | None:
    """(mtime_ns, size), or None when the file does not exist."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size)


def contained(root: Path, rel: str) -> Path:
    """`root / rel`, refused when it would resolve outside `root` ("../x", a symlink out) or
    into `.git/` or `.epimem/` from a path that does not name them: a symlink a remote
    committed (`observations/2026-12.md -> ../.git/config`) would have had the next
    observation written into git's config (`store.paths.PRIVATE_DIRS`)."""
    from .paths import PRIVATE_DIRS, in_notes

    p = (root / rel).resolve()
    r = root.resolve()
    inside = p == r or r in p.parents
    named = rel.replace(os.sep, "/").lstrip("/").split("/", 1)[0] in PRIVATE_DIRS
    if not inside or (not named and not in_notes(str(p), str(r))):
        from ..core.errors import VaultError

        raise VaultError(f"{rel!r} is outside the vault", path=rel)
    return p


def lock_path(root: str | os.PathLike) -> Path:
    """The vault lock's file: one place, so every writer takes the same lock."""
    return Path(root) / ".epimem" / "lock"


def keep_line_endings(text: str, old: bytes | None) -> str:
    """`text` with the line endings of the file it replaces.

    epimem reads with universal newlines and composes with "\n"; a log or belief written on
    Windows (Obsidian there saves CRLF) would otherwise turn LF whole at the next append, and
    `git diff` would show every line changed.
    """
    if not old or b"\r\n" not in old:
        return text
    if old.count(b"\r\n") * 2 < old.count(b"\n"):
        return text  # mostly LF already: a stray CRLF is not the file's convention
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


# Files epimem creates are readable by others at most (0644), and the user's
# umask can only narrow that: a umask of 000 must not make a description of a
# person world-writable. `.epimem/` (caches of the vault, the lock, soon a
# token) is the owner's alone. Decided in docs/decisions.md (issue 17/19).
FILE_MODE = 0o644
DIR_MODE = 0o755
PRIVATE_DIR_MODE = 0o700
INTERNAL_DIR = ".epimem"
TMP_SUFFIX = ".epimem-tmp"


JOURNAL_NAME = "journal.json"


def tmp_dir(root: str | os.PathLike) -> Path:
    """Where a transaction's temp files live: inside `.epimem/` (never committed,
    never listed as notes), on the vault's filesystem so a rename is atomic."""
    return Path(root) / INTERNAL_DIR / "tmp"


PURGE_NAME = "purge.json"


def purge_pending(root: str | os.PathLike) -> bool:
    """One stat: did a killed `forget --purge` leave its history half moved (`store.rewrite`)?"""
    return os.path.exists(os.path.join(root, INTERNAL_DIR, PURGE_NAME))


def journal_pending(root: str | os.PathLike) -> bool:
    """One stat: did a killed process leave a change half-made (`store.journal`)?
    Here, not in the journal module, so the hook pays for the module only when it must."""
    return os.path.exists(os.path.join(root, INTERNAL_DIR, JOURNAL_NAME))


def make_dirs(path: Path) -> None:
    """`mkdir -p` with epimem's modes: 0755 (narrowed by the umask), `.epimem` 0700.
    `Path.mkdir(parents=True)` would create the parents with 0777 & ~umask."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        private = d.name == INTERNAL_DIR
        try:
            os.mkdir(d, PRIVATE_DIR_MODE if private else DIR_MODE)
        except FileExistsError:
            continue
        if private:
            os.chmod(d, PRIVATE_DIR_MODE)  # the umask only narrows; this is the one mode wanted
    if not path.is_dir():
        raise FileExistsError(errno.EEXIST, "exists and is not a folder", str(path))


def private_dir(path: str | os.PathLike) -> Path:
    """`.epimem/` created 0700, and narrowed to 0700 when an older epimem left it wider."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        make_dirs(path)
        return path
    if st.st_mode & 0o077:
        os.chmod(path, PRIVATE_DIR_MODE)
    return path


def current_umask() -> int:
    """The process's umask, read without changing it where Linux says it (`/proc`)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


_tmp_seq = [0]


def _tmp_for(path: Path, tmpdir: Path | None) -> Path:
    # Never named like the file it replaces: no `.md` in the name, and within a
    # transaction not even in the same folder (`.epimem/tmp/`, which git ignores),
    # so neither the vault reader, a watcher nor `git add` can mistake it for a note.
    _tmp_seq[0] += 1
    name = f".{os.getpid()}-{threading.get_ident()}-{_tmp_seq[0]}{TMP_SUFFIX}"
    return (tmpdir or path.parent) / name


def is_temp(name: str) -> bool:
    """A temp file of epimem's (this version's or an older one's `.x.md.epimem-….tmp`)."""
    return name.endswith(TMP_SUFFIX) or (name.startswith(".") and ".epimem-" in name and name.endswith(".tmp"))


def atomic_write(path: str | os.PathLike, data: str | bytes,
                 expect: tuple[int, int] | None = None, *, sync: bool = True,
                 tmpdir: str | os.PathLike | None = None) -> None:
    """Write so that readers see the old file or the new one, never half of either.

    `expect` is the (mtime_ns, size) the caller read: if the file changed since
    (an editor saved while epimem computed), raise ConcurrentEdit instead of
    overwriting the user's edit. `sync=False` skips the fsync, for caches that
    can always be rebuilt. `tmpdir` (on the same filesystem) holds the temp file
    instead of the target's folder.

    A new file is created 0644 narrowed by the umask; a replaced one keeps its
    mode, narrowed to 0644.
    """
    path = Path(path)
    make_dirs(path.parent)
    tdir = Path(tmpdir) if tmpdir is not None else None
    if tdir is not None:
        make_dirs(tdir)
    tmp = _tmp_for(path, tdir)
    try:
        old_mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        old_mode = None
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        with open(fd, "wb") as fh:
            if old_mode is not None:
                os.fchmod(fh.fileno(), old_mode & FILE_MODE)
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        if expect is not None and stat_key(path) != expect:
            raise ConcurrentEdit(f"{path.name} changed on disk while epimem was updating it")
        try:
            os.replace(tmp, path)
        except OSError as e:
            if tdir is None or e.errno != errno.EXDEV:
                raise
            # `.epimem/` on another filesystem (a symlinked sidecar): fall back to the folder itself.
            tmp.unlink()
            atomic_write(path, data, expect, sync=sync)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_cache(path: str | os.PathLike, data: str | bytes) -> None:
    """A file under `.epimem/`: atomic, so a reader (the hook) sees the old one or
    the new one, and not fsynced, because it can always be rebuilt from the vault."""
    atomic_write(path, data, sync=False)


def compact_json(obj: object) -> str:
    """How every JSON cache is written: no spaces, non-ASCII kept (half the size of the defaults)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class _Expired(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Expired


class VaultLock:
    """An flock on `<vault>/.epimem/lock`: exclusive across processes, reentrant within one.

    The wait is a blocking `flock`, woken by the kernel the moment the holder lets go. It used
    to poll every 10 ms, and under 8 writers on 2 cores a poller kept losing the race to the
    others: p99 30 s and a LockTimeout in a 400-operation soak, with a median of 2.5 s. The
    timeout of a blocking wait needs SIGALRM, which only the main thread can receive; other
    threads (a server's workers) poll as before.

    With `EPIMEM_LOCK_STATS=FILE` each hold appends `{"wait": s, "hold": s, "pid": n}` to FILE
    (bench/soak.py reads it for docs/benchmarks.md), and with it the seconds of each phase the
    holder noted (`phase`): what the hold is made of, measured where it is spent. `stats=False`
    for a lock that is not the vault's (the caches' lock), so its holds are not counted as the
    vault's.
    """

    def __init__(self, path: str | os.PathLike, timeout: float = 30.0, *, stats: bool = True):
        self.path = Path(path)
        self.timeout = timeout
        self.stats = stats
        self.phases: dict[str, float] = {}
        self._fd: int | None = None
        self._depth = 0
        self._owner: int | None = None
        self._mutex = threading.RLock()
        self._since = 0.0
        self._waited = 0.0

    def acquire(self) -> None:
        self._mutex.acquire()
        if self._depth == 0:
            t = time.monotonic()
            try:
                self._fd = self._take()
            except BaseException:
                self._mutex.release()
                raise
            self._since = time.monotonic()
            self._waited = self._since - t
            self.phases = {}
            self._owner = threading.get_ident()
        self._depth += 1

    @property
    def held(self) -> bool:
        """Whether the calling thread holds the lock (through this object)."""
        return self._depth > 0 and self._owner == threading.get_ident()

    def phase(self, name: str, seconds: float) -> None:
        """Count `seconds` of the current hold as spent in `name` (for EPIMEM_LOCK_STATS)."""
        self.phases[name] = self.phases.get(name, 0.0) + seconds

    def _open(self) -> int:
        try:
            private_dir(self.path.parent)
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as e:
            # A read-only mount, a vault of another user, a full disk: say which, not a traceback.
            raise FileError(f"cannot take the vault lock {self.path}: {e.strerror}; nothing was changed "
                            "(a vault epimem may write needs a writable .epimem/ folder)",
                            path=str(self.path)) from None

    def _busy(self) -> LockTimeout:
        return LockTimeout(f"the vault is locked by another epimem process ({self.path}); try again in a moment")

    def _take(self) -> int:
        import fcntl

        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd  # the common case: nobody holds it
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES):
                os.close(fd)
                raise
        if self.timeout <= 0:  # "don't wait": a zero itimer would mean no alarm, a wait for ever
            os.close(fd)
            raise self._busy()
        try:
            if threading.current_thread() is threading.main_thread():
                self._wait_blocking(fd)
            else:
                self._wait_polling(fd)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _wait_blocking(self, fd: int) -> None:
        import fcntl
        import signal

        old = signal.signal(signal.SIGALRM, _on_alarm)
        prev = signal.setitimer(signal.ITIMER_REAL, self.timeout)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except _Expired:
            raise self._busy() from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
            if prev[0]:
                signal.setitimer(signal.ITIMER_REAL, *prev)  # someone else's alarm, put back

    def _wait_polling(self, fd: int) -> None:
        import fcntl

        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() > deadline:
                    raise self._busy() from None
                time.sleep(0.005)

    def release(self) -> None:
        import fcntl

        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
            stats = stats_file() if self.stats else None
            if stats:
                _record_hold(stats, self._waited, time.monotonic() - self._since, self.phases)
        self._mutex.release()

    def __enter__(self) -> VaultLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


_refused_stats: set[str] = set()


def stats_file() -> str | None:
    """Where EPIMEM_LOCK_STATS asks the lock's holds to be recorded, if it names a path.

    `EPIMEM_LOCK_STATS=1` (a switch, as other tools' variables are) once left a file named `1` in
    whatever folder the command ran from, and one was committed at a checkout's root: a value
    with no folder in it is refused, said once on stderr, and nothing is recorded.
    """
    value = os.environ.get("EPIMEM_LOCK_STATS")
    if not value:
        return None
    if os.sep in value or value.startswith("~"):
        return os.path.expanduser(value)
    if value not in _refused_stats:
        _refused_stats.add(value)
        import sys

        print(f"epimem: EPIMEM_LOCK_STATS={value!r} is not a path; set it to a file such as "
              "/tmp/lock-stats.jsonl (nothing is recorded)", file=sys.stderr)
    return None


def _record_hold(path: str, waited: float, held: float, phases: dict[str, float] | None = None) -> None:
    rec: dict[str, object] = {"wait": round(waited, 4), "hold": round(held, 4), "pid": os.getpid()}
    if phases:
        rec["phases"] = {k: round(v, 4) for k, v in phases.items()}
    line = json.dumps(rec) + "\n"
    try:
        with open(path, "a", encoding="utf-8") as fh:  # one short append: atomic on POSIX
            fh.write(line)
    except OSError:
        pass  # a measurement must never fail a write
