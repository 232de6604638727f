"""The one way epimem runs git: every git process of every command starts in `_spawn` here.

Light on purpose (the standard library and `core.errors`): the session-start hook, the page
cache's key and a sync with nothing to do run git through it, and importing GitPython or the
note parser would cost them more than the git process does. What is asked of git is in
`store.git` (commits, history, blobs); what git is (HEAD, what differs from it) is asked here:

- `run` — one git command in the vault, its output as text, `HistoryError` with git's own words
  when git refuses; it waits for (and, when its owner is gone, removes) git's `index.lock`,
  narrows the umask, names an author when the machine has none, and passes paths literally;
- `call` — the same process without the refusal raised, for the callers that read git's exit
  code (sync's fetch, push and merge); `call_bytes` with git's raw bytes (a purge's streams);
- `head_sha` — HEAD's commit: read from the files on the files backend, asked of git on any
  other (reftable) and whenever the files cannot say;
- `status` — the one `git status`: what differs from HEAD, file by file;
- `init` — a new repository (through GitPython: docs/decisions.md, issue 27).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

from ..core.errors import StorageError

# Paths are names, not patterns: a belief file called `[draft].md` must not match `d.md`.
LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}
FALLBACK_NAME = "epimem"
FALLBACK_EMAIL = "epimem@localhost"


class HistoryError(StorageError):
    """git refused or failed; the message carries what git said."""


class Done(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


_exe: list[str] = []


def executable() -> str:
    """The git binary: `GIT_PYTHON_GIT_EXECUTABLE` when set (the variable GitPython reads, kept
    for the users who set it), else `git` on PATH; a clear error when there is none."""
    import shutil

    if not _exe:
        exe = os.environ.get("GIT_PYTHON_GIT_EXECUTABLE") or shutil.which("git")
        if not exe:
            raise HistoryError("git is not installed or not on PATH; epimem records every change as a git "
                               "commit, so install git (or set GIT_PYTHON_GIT_EXECUTABLE to its path)")
        _exe.append(exe)
    return _exe[0]


def is_repo_root(root: Path) -> bool:
    return (root / ".git").exists()


# A vault has no submodules, but a remote can commit a `.gitmodules` and a gitlink: one whose
# `update = !command` git refuses (rightly: CVE-2019-19604) made every later `git status` and
# `git diff` (and `git fetch`) fail with "invalid value for 'submodule.x.update'", so every
# `epimem sync` after the one that brought it in failed. Told to leave submodules alone, git does
# not read `.gitmodules` there.
_NO_SUBMODULES = {"status": "--ignore-submodules=all", "diff": "--ignore-submodules=all",
                  "fetch": "--recurse-submodules=no", "push": "--recurse-submodules=no"}


def _spawn(cwd: Path, args: tuple[str, ...], env: dict[str, str] | None,
           stdin: bytes | None, timeout: float | None = None) -> subprocess.CompletedProcess:
    """The only place a git process starts (tests/architecture holds it). `timeout`: a
    `subprocess.TimeoutExpired` after that many seconds (a remote that does not answer)."""
    if args and args[0] in _NO_SUBMODULES:
        args = (args[0], _NO_SUBMODULES[args[0]], *args[1:])
    try:
        with narrowed_umask():
            return subprocess.run([executable(), *args], cwd=cwd, input=stdin, capture_output=True, check=False,
                                  timeout=timeout, env={**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})})
    except OSError as e:
        raise HistoryError(f"git {args[0] if args else ''} cannot be run: {e}") from None


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


# The commands that write a commit and so need an author: only they pay the identity's lookup.
_COMMITTING = frozenset({"commit", "merge", "revert", "cherry-pick", "commit-tree", "rebase", "am", "stash"})


def call(root: Path, *args: str, env: dict[str, str] | None = None, stdin: bytes | str | None = None,
         identity: bool = False, timeout: float | None = None) -> Done:
    """`git ARGS` in `root`, whatever its exit code (only a git that cannot run raises).
    `identity`: the command may make a commit (merge, commit), so it needs an author."""
    if isinstance(stdin, str):
        stdin = stdin.encode("utf-8", "surrogateescape")
    if identity:
        env = {**author_env(root), **(env or {})}
    p = _spawn(root, args, env, stdin, timeout)
    return Done(p.returncode, _decode(p.stdout), _decode(p.stderr))


def run(root: Path, *args: str, retries: int = 3, env: dict[str, str] | None = None,
        stdin: bytes | str | None = None) -> str:
    """`git ARGS` in `root`: its output (less the last newline), or `HistoryError` with what git said.
    Git's own `index.lock`, held by another git (the user's, an editor's), is waited for."""
    if isinstance(stdin, str):
        stdin = stdin.encode("utf-8", "surrogateescape")
    if args and args[0] in _COMMITTING:
        env = {**author_env(root), **(env or {})}
    err = ""
    for attempt in range(retries):
        _wait_index_lock(root)
        p = _spawn(root, args, env, stdin)
        if p.returncode == 0:
            out = _decode(p.stdout)
            return out[:-1] if out.endswith("\n") else out  # one line's answer without its newline
        err = _decode(p.stderr).strip() or _decode(p.stdout).strip()
        if "index.lock" in err and attempt + 1 < retries:
            time.sleep(0.2)
            continue
        break
    raise HistoryError(f"git {args[0]} failed: {err or f'exit status {p.returncode}'}")


def run_bytes(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """`git ARGS`'s raw output (`cat-file --batch`: blobs that need not be UTF-8)."""
    p = _spawn(root, args, None, stdin)
    if p.returncode != 0:
        raise HistoryError(f"git {args[0]} failed: {_decode(p.stderr).strip()}")
    return p.stdout


def call_bytes(root: Path, *args: str, env: dict[str, str] | None = None,
               stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
    """`call` with git's raw output and error, whatever its exit code: a purge's
    `fast-export | fast-import` streams and blobs need not be UTF-8, and hold megabytes
    that a decoding would copy twice. An author is named for the commands that commit."""
    if args and args[0] in _COMMITTING:
        env = {**author_env(root), **(env or {})}
    p = _spawn(root, args, env, stdin)
    return p.returncode, p.stdout, p.stderr


# --- who commits --------------------------------------------------------------------

_identity: dict[str, bool] = {}


def author_env(root: Path) -> dict[str, str]:
    """Author identity: the user's git config when set, else a neutral fallback, so a fresh
    machine or CI without `user.email` can still commit. Asked once per vault and process."""
    key = str(root)
    if key not in _identity:
        try:
            p = _spawn(root if root.is_dir() else Path.cwd(), ("config", "--get", "user.email"), None, None)
            _identity[key] = p.returncode == 0 and bool(p.stdout.strip())
        except HistoryError:
            _identity[key] = False
    if _identity[key]:
        return {}
    return {"GIT_AUTHOR_NAME": FALLBACK_NAME, "GIT_AUTHOR_EMAIL": FALLBACK_EMAIL,
            "GIT_COMMITTER_NAME": FALLBACK_NAME, "GIT_COMMITTER_EMAIL": FALLBACK_EMAIL}


class narrowed_umask:
    """git creates its objects, index and COMMIT_EDITMSG with the umask: under a
    umask of 000 they would be writable by everyone. For the time git runs, the
    umask is narrowed to take write away from group and others (never widened:
    a stricter umask is the user's choice and is kept)."""

    def __enter__(self):
        from .files import current_umask

        self.old = current_umask()
        if self.old & 0o022 != 0o022:
            os.umask(self.old | 0o022)
        return self

    def __exit__(self, *exc):
        if self.old & 0o022 != 0o022:
            os.umask(self.old)


# --- git's own lock -------------------------------------------------------------------

# A lock left by a git that was killed (`kill -9`, a crash, a laptop lid) is never removed by
# git itself: every later `git add` fails with "remove the file manually". It is removed here
# only when no git process works in this repository (seen in /proc) and the lock is older
# than any commit takes to write its index; where /proc cannot tell, only after a minute.
STALE_LOCK_SECONDS = 3.0
STALE_LOCK_SECONDS_UNSEEN = 60.0


def _git_running_in(root: Path) -> bool | None:
    """Whether a git process that may hold the index lock works in `root`; None when unknown."""
    proc = Path("/proc")
    if not (proc / "self" / "cwd").exists():
        return None
    r = root.resolve()
    unknown = False
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            if not (d / "comm").read_text().startswith("git"):
                continue
            argv = (d / "cmdline").read_bytes().split(b"\0")
            if b"cat-file" in argv:
                continue  # a long-lived blob reader never takes the index lock
            cwd = Path(os.readlink(d / "cwd"))
        except FileNotFoundError:
            continue  # it exited while we looked
        except OSError:
            unknown = True  # another user's git: cannot see where it works
            continue
        if cwd == r or r in cwd.parents:
            return True
    return None if unknown else False


def _remove_stale_index_lock(root: Path, lock: Path) -> bool:
    try:
        st = lock.stat()
    except FileNotFoundError:
        return True
    running = _git_running_in(root)
    limit = STALE_LOCK_SECONDS if running is False else STALE_LOCK_SECONDS_UNSEEN
    if running or time.time() - st.st_mtime < limit:
        return False
    try:
        again = lock.stat()
        if (again.st_ino, again.st_mtime_ns) != (st.st_ino, st.st_mtime_ns):
            return False  # a new lock, taken by a git that started while we looked
        lock.unlink()
    except FileNotFoundError:
        return True
    import logging

    logging.getLogger("epimem").warning(
        "epimem: removed %s, left by a git process that is no longer running (%.0f s old)",
        lock, time.time() - st.st_mtime)
    return True


def _wait_index_lock(root: Path, timeout: float = 10.0) -> None:
    # git's own lock: another git process (the user's `git commit`, an editor's
    # git plugin) holds `.git/index.lock`; wait for it rather than fail.
    lock = root / ".git" / "index.lock"
    deadline = time.monotonic() + timeout
    while lock.exists() and time.monotonic() < deadline:
        if _remove_stale_index_lock(root, lock):
            return
        time.sleep(0.05)


# --- what git is: HEAD and what differs from it -------------------------------------------

def _files_backend(git_dir: Path) -> bool:
    """Whether refs are files git's way (loose files and `packed-refs`). A reftable repository
    (git 2.45+: `git init --ref-format=reftable`, `extensions.refStorage`) keeps them in binary
    tables under `reftable/` and its HEAD file names a placeholder: only git can read it."""
    if (git_dir / "reftable").exists():
        return False
    try:
        config = (git_dir / "config").read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False
    return "refstorage" not in config or _ref_storage(config) == "files"


def _ref_storage(config: str) -> str:
    section = ""
    for line in config.splitlines():
        s = line.strip()
        if s.startswith("["):
            section = s.strip("[]").strip()
        elif section == "extensions" and s.replace(" ", "").startswith("refstorage="):
            return s.split("=", 1)[1].strip().strip('"')
    return "files"


def head_sha(root: Path) -> str | None:
    """HEAD's commit, or None (no repository, no commit yet). On the files backend it is read
    from `.git` as git does (one file or two) without a process: the commit path runs it under
    the vault lock, and the page's cache key on every build. Anything else is asked of git."""
    git_dir = root / ".git"
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if _files_backend(git_dir):
            if not head.startswith("ref: "):
                if len(head) == 40:
                    return head  # detached
            else:
                ref = head[5:]
                loose = git_dir / ref
                if loose.is_file():
                    sha = loose.read_text(encoding="utf-8").strip()
                    if len(sha) == 40:
                        return sha
                packed = git_dir / "packed-refs"
                if packed.is_file():
                    for line in packed.read_text(encoding="utf-8").splitlines():
                        if line.endswith(" " + ref) and len(line.split(" ")[0]) == 40:
                            return line.split(" ")[0]
                if not loose.exists():
                    return None  # an unborn branch: no commit yet
    except FileNotFoundError:
        if not git_dir.exists():
            return None
    except (OSError, UnicodeDecodeError):
        pass  # a worktree (.git is a file), a ref git writes its own way: ask git
    if not is_repo_root(root):
        return None
    p = call(root, "rev-parse", "--verify", "--quiet", "HEAD")
    return p.stdout.strip() or None


def lock_files(root: Path) -> list[Path]:
    """The lock files a git that commits holds while it works: the index's, HEAD's, the checked-out
    branch's (files backend) or the ref tables' (reftable)."""
    git_dir = root / ".git"
    out = [git_dir / "index.lock", git_dir / "HEAD.lock", git_dir / "reftable" / "tables.list.lock"]
    try:
        ref = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if ref.startswith("ref: ") and _files_backend(git_dir):
            out.append(git_dir / (ref[5:].strip() + ".lock"))
    except OSError:
        pass
    return out


def ref_lock_files(root: Path, names: list[str] | tuple[str, ...] = ()) -> list[Path]:
    """The lock files a git that moves refs holds while it works: `lock_files`, the packed
    refs' (files backend) and each of `names`' own (a purge moves every ref at once)."""
    git_dir = root / ".git"
    out = lock_files(root)
    if _files_backend(git_dir):
        out += [git_dir / "packed-refs.lock", *(git_dir / (n + ".lock") for n in names)]
    return list(dict.fromkeys(out))


class Changed(NamedTuple):
    """One file `git status` lists: `code` is git's two letters (`XY`: index, work tree —
    `" M"`, `"??"` untracked, `" D"`, `"!!"` ignored), `path` relative to the vault."""
    code: str
    path: str


def status(root: Path, paths: tuple[str, ...] | list[str] = (), *, ignored: bool = False,
           refresh: bool = False) -> list[Changed]:
    """What differs from HEAD under `paths` (the whole vault when empty): every changed, new
    (untracked: each file, never a folder) or deleted file, and with `ignored` the ignored
    ones. `HistoryError` when git cannot say (no repository, no git).

    `refresh` lets git take its optional index lock to store the stat data it had to check
    (git's default): a vault copied or restored is hashed once, not on every call. Without it —
    the default, for what runs under the vault lock or beside a commit — status never writes
    the index, so it can neither fail on a full disk nor make a concurrent commit meet a lock."""
    if not is_repo_root(root):
        raise HistoryError(f"{root} is not a git repository")
    args = ["status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all"]
    if ignored:
        args.append("--ignored")
    # Never waits for git's index lock: a status needs none (and skips its optional refresh
    # when another git holds it).
    env = dict(LITERAL) if refresh else {**LITERAL, "GIT_OPTIONAL_LOCKS": "0"}
    p = _spawn(root, (*args, "--", *paths), env, None)
    if p.returncode != 0:
        raise HistoryError(f"git status failed: {_decode(p.stderr).strip()}")
    return [Changed(item[:2], item[3:]) for item in _decode(p.stdout).split("\0") if len(item) > 3]


# --- a new repository -----------------------------------------------------------------

def init(root: Path) -> bool:
    """`git init` unless the vault is already its own repository. Through GitPython, the library
    the design names for git (docs/decisions.md, issue 27): its `Repo.init` picks the initial
    branch git supports, and its import is paid here once per vault, never by a command."""
    if is_repo_root(root):
        return False
    executable()  # a missing git is said plainly, not as a page of GitPython's advice
    try:
        import git
    except ImportError as e:
        raise HistoryError(f"git cannot be run: {str(e).splitlines()[0]}") from None
    with narrowed_umask():
        if tuple(git.Git().version_info[:2]) >= (2, 28):
            git.Repo.init(root, initial_branch="main")
        else:
            git.Repo.init(root)
    return True
