"""Git as the audit log: one commit per mutation, and the views built on it.

Like `pass`, every operation is one commit of plain files. Commits carry
machine-readable trailers (`Epimem-Op`, `Epimem-Session`, `Epimem-Beliefs`)
so history and undo can tell epimem's commits from the user's own.

GitPython's `Repo.git` is used as a thin wrapper over the git binary: its
pure-Python index writer would rewrite a 10,000-entry index on every commit.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TypeVar

from ..core.errors import StorageError
from ..core.model import Belief, Tension
from ..core.notes import NoteError, parse_belief, parse_note, parse_tension

FALLBACK_NAME = "epimem"
FALLBACK_EMAIL = "epimem@localhost"
_identity_checked: dict[str, bool] = {}
_Note = TypeVar("_Note", Belief, Tension)


class HistoryError(StorageError):
    """git refused or failed; the message carries what git said."""


def _git(root: Path):
    import git  # GitPython, imported lazily: the hook path never needs it

    return git.Repo(root).git


def _env(root: Path) -> dict[str, str]:
    """Author identity: the user's git config when set, else a neutral fallback,
    so a fresh machine or CI without `user.email` can still commit."""
    key = str(root)
    if key not in _identity_checked:
        try:
            _git(root).config("--get", "user.email")
            _identity_checked[key] = True
        except Exception:
            _identity_checked[key] = False
    if _identity_checked[key]:
        return {}
    return {"GIT_AUTHOR_NAME": FALLBACK_NAME, "GIT_AUTHOR_EMAIL": FALLBACK_EMAIL,
            "GIT_COMMITTER_NAME": FALLBACK_NAME, "GIT_COMMITTER_EMAIL": FALLBACK_EMAIL}


def _wait_index_lock(root: Path, timeout: float = 10.0) -> None:
    # git's own lock: another git process (the user's `git commit`, an editor's
    # git plugin) holds `.git/index.lock`; wait for it rather than fail.
    lock = root / ".git" / "index.lock"
    deadline = time.monotonic() + timeout
    while lock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def run(root: Path, *args: str, retries: int = 3, env: dict[str, str] | None = None) -> str:
    import git

    for attempt in range(retries):
        _wait_index_lock(root)
        try:
            return _git(root).execute(["git", *args], env={**os.environ, **_env(root), **(env or {})})
        except git.GitCommandError as e:
            if "index.lock" in str(e.stderr) and attempt + 1 < retries:
                time.sleep(0.2)
                continue
            raise HistoryError(f"git {args[0]} failed: {str(e.stderr).strip() or e}") from None
    raise HistoryError(f"git {args[0]} failed")


# --- setting up ------------------------------------------------------------------

def is_repo_root(root: Path) -> bool:
    return (root / ".git").exists()


def init(root: Path) -> bool:
    """`git init` unless the vault is already its own repository."""
    if is_repo_root(root):
        return False
    import git

    git.Repo.init(root, initial_branch="main") if _supports_initial_branch() else git.Repo.init(root)
    return True


def _supports_initial_branch() -> bool:
    import git

    return tuple(git.Git().version_info[:2]) >= (2, 28)


def require_repo(root: Path) -> None:
    if not is_repo_root(root):
        raise HistoryError(
            f"{root} is not a git repository of its own; every change is a commit, "
            "so run `epimem init` on it first")


# --- committing --------------------------------------------------------------------

def message(subject: str, *, op: str, beliefs: Iterable[str] = (), session: str | None = None,
            body: str = "", extra: dict[str, str] | None = None) -> str:
    trailers = [f"Epimem-Op: {op}"]
    if session:
        trailers.append(f"Epimem-Session: {session}")
    beliefs = list(dict.fromkeys(beliefs))
    if beliefs:
        trailers.append(f"Epimem-Beliefs: {', '.join(beliefs)}")
    for k, v in (extra or {}).items():
        trailers.append(f"{k}: {v}")
    parts = [subject.strip().replace("\n", " ")]
    if body.strip():
        parts.append(body.strip())
    parts.append("\n".join(trailers))
    return "\n\n".join(parts) + "\n"


def dated(when: date | None) -> dict[str, str]:
    """Commit dates for a replayed clock (EPIMEM_TODAY): the day given, the time now,
    so `epimem diff --since DATE` agrees with the dates in the files."""
    if when is None:
        return {}
    stamp = f"{when.isoformat()}T{datetime.now():%H:%M:%S}"
    return {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}


def commit(root: Path, paths: Iterable[str], subject: str, *, op: str,
           beliefs: Iterable[str] = (), session: str | None = None, body: str = "",
           extra: dict[str, str] | None = None, when: date | None = None) -> str:
    """Commit exactly `paths` (relative to the vault) as one commit; return its sha.

    Only the named paths are committed (`git commit --only`), so a hand edit the
    user has not asked to commit stays out of epimem's commit.
    """
    require_repo(root)
    paths = sorted(set(paths))
    if not paths:
        raise HistoryError("nothing to commit")
    msg = message(subject, op=op, beliefs=beliefs, session=session, body=body, extra=extra)
    run(root, "add", "--all", "--", *paths)
    run(root, "commit", "--quiet", "--no-verify", "-m", msg, "--only", "--", *paths, env=dated(when))
    return run(root, "rev-parse", "HEAD")


def unstage(root: Path, paths: Iterable[str]) -> None:
    """Take `paths` out of the index again after a failed commit (best effort:
    the commit already failed, and its error is the one worth reporting)."""
    try:
        if has_commits(root):
            run(root, "reset", "--quiet", "--", *sorted(set(paths)), retries=1)
        else:
            run(root, "rm", "--cached", "--quiet", "--ignore-unmatch", "-r", "--", *sorted(set(paths)), retries=1)
    except HistoryError:
        pass


def has_commits(root: Path) -> bool:
    try:
        run(root, "rev-parse", "--verify", "--quiet", "HEAD", retries=1)
        return True
    except HistoryError:
        return False


# --- reading history ---------------------------------------------------------------

@dataclass(frozen=True)
class CommitInfo:
    sha: str
    when: datetime
    subject: str
    trailers: dict[str, str]


_SEP = "\x1f"
_END = "\x1e"


def log(root: Path, *paths: str, grep: str | None = None, limit: int | None = None,
        since: str | None = None) -> list[CommitInfo]:
    """Commits newest first, with their Epimem trailers."""
    if not has_commits(root):
        return []
    args = ["log", f"--format=%H{_SEP}%aI{_SEP}%s{_SEP}%b{_END}"]
    if grep:
        args.append(f"--grep={grep}")
    if limit:
        args.append(f"-n{limit}")
    if since:
        args.append(since)
    if paths:
        args += ["--", *paths]
    out = run(root, *args)
    commits = []
    for rec in out.split(_END):
        rec = rec.strip("\n")
        if not rec:
            continue
        sha, when, subject, body = rec.split(_SEP, 3)
        trailers = {}
        for line in body.splitlines():
            if line.startswith("Epimem-") and ":" in line:
                k, v = line.split(":", 1)
                trailers[k.strip()] = v.strip()
        commits.append(CommitInfo(sha, datetime.fromisoformat(when), subject, trailers))
    return commits


def show_many(root: Path, specs: list[str]) -> list[str | None]:
    """Contents of many `rev:path` blobs in one `git cat-file --batch` process."""
    if not specs:
        return []
    import subprocess

    proc = subprocess.run(["git", "cat-file", "--batch"], cwd=root, check=False,
                          input=("\n".join(specs) + "\n").encode(), capture_output=True)
    data, pos = proc.stdout, 0
    out: list[str | None] = []
    for _ in specs:
        nl = data.index(b"\n", pos)
        header = data[pos:nl].decode()
        pos = nl + 1
        if header.endswith("missing") or header.endswith("ambiguous"):
            out.append(None)
            continue
        size = int(header.split()[-1])
        out.append(data[pos:pos + size].decode("utf-8", "replace"))
        pos += size + 1
    return out


@dataclass(frozen=True)
class HistoryPoint:
    sha: str
    when: datetime
    subject: str
    op: str
    confidence: float | None
    status: str | None


def belief_history(root: Path, belief_id: str) -> list[HistoryPoint]:
    """Confidence and status of a belief at every commit that touched it, oldest first."""
    path = f"beliefs/{belief_id}.md"
    commits = list(reversed(log(root, path)))
    blobs = show_many(root, [f"{c.sha}:{path}" for c in commits])
    points = []
    for c, text in zip(commits, blobs):
        conf = status = None
        if text is not None:
            try:
                meta = parse_note(text).meta
                v = meta.get("confidence")
                conf = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
                status = meta.get("status") or "active"
            except NoteError:
                status = "malformed"
        else:
            status = "deleted"
        points.append(HistoryPoint(c.sha, c.when, c.subject, c.trailers.get("Epimem-Op", "manual"),
                                   conf, status))
    return points


def resolve_since(root: Path, since: str) -> str | None:
    """A revision to diff from: `since` itself when it names a commit, else the
    last commit before that date (None: the vault's whole history)."""
    try:
        return run(root, "rev-parse", "--verify", "--quiet", f"{since}^{{commit}}", retries=1)
    except HistoryError:
        pass
    try:
        d = date.fromisoformat(since)
    except ValueError:
        from ..core.errors import InputError

        raise InputError(f"'since' {since!r} is neither a revision nor a date YYYY-MM-DD", field="since") from None
    out = run(root, "rev-list", "-1", f"--before={d.isoformat()} 00:00:00", "HEAD")
    return out.strip() or None


def changed_paths(root: Path, base: str | None, head: str = "HEAD") -> list[tuple[str, str]]:
    """(status letter, path) between two revisions; base None = the empty tree."""
    if base is None:
        base = run(root, "hash-object", "-t", "tree", "/dev/null")
    out = run(root, "diff", "--name-status", "--no-renames", base, head, "--")
    rows = []
    for line in out.splitlines():
        if "\t" in line:
            st, path = line.split("\t", 1)
            rows.append((st[0], path))
    return rows


def dirty_paths(root: Path) -> list[tuple[str, str]]:
    """Uncommitted changes in the vault: (status, path), untracked included."""
    out = run(root, "status", "--porcelain", "-z", "--untracked-files=all")
    rows = []
    for item in out.split("\0"):
        if len(item) > 3:
            rows.append((item[:2].strip() or "?", item[3:]))
    return rows


def _parse_blob(parse: Callable[[str, str], _Note], text: str | None, ident: str) -> _Note | None:
    """A note as it was at a revision: None when it did not exist or did not parse then."""
    if text is None:
        return None
    try:
        return parse(text, ident)
    except NoteError:
        return None


def parse_belief_blob(text: str | None, belief_id: str) -> Belief | None:
    return _parse_blob(parse_belief, text, belief_id)


def parse_tension_blob(text: str | None, tension_id: str) -> Tension | None:
    return _parse_blob(parse_tension, text, tension_id)


def last_epimem_commit(root: Path) -> CommitInfo | None:
    commits = log(root, grep="^Epimem-Op:", limit=1)
    return commits[0] if commits else None


def revert(root: Path, sha: str, keep: Iterable[str] = ()) -> None:
    """Apply the inverse of `sha` to the index and work tree (no commit).

    Paths in `keep` are left as they are: a session count that rode along with
    a commit is never what an undo takes back (SPEC §4), and an uncommitted
    count in the work tree survives the revert.
    """
    # The revert is committed from the index, so anything the user staged by
    # hand would ride along in epimem's commit: refuse instead.
    if run(root, "diff", "--cached", "--name-only").strip():
        raise HistoryError("there are staged changes in the vault; commit them (`epimem commit`) "
                           "or unstage them before undoing")
    touched = set(run(root, "show", "--format=", "--name-only", sha).splitlines())
    kept = [p for p in keep if p in touched]
    saved: dict[str, bytes] = {}
    for p in kept:
        if run(root, "status", "--porcelain", "--", p).strip():
            saved[p] = (root / p).read_bytes()
            run(root, "checkout", "--", p)
    try:
        run(root, "revert", "--no-commit", "--no-edit", sha, retries=1)
    except HistoryError as e:
        abort_revert(root)
        _put_back(root, saved)
        raise HistoryError(
            f"cannot undo {sha[:8]}: later changes touch the same lines, or there are "
            f"uncommitted edits (commit them with `epimem commit` first). git said: {e}") from None
    for p in kept:
        run(root, "checkout", "HEAD", "--", p)
    _put_back(root, saved)


def uncommitted_sessions(root: Path, path: str = "state/sessions.json") -> str | None:
    """"sessions: …" naming an uncommitted change to the session counter, or None when
    there is none (or the file is not a counter: a broken one is not carried along)."""
    import json

    from ..core.changes import sessions_changes

    if not run(root, "status", "--porcelain", "--", path).strip():
        return None
    try:
        new = json.loads((root / path).read_text(encoding="utf-8"))
        old_text = show_many(root, [f"HEAD:{path}"])[0] if has_commits(root) else None
        old = json.loads(old_text) if old_text else {}
    except (OSError, ValueError):
        return None
    if not isinstance(new, dict) or not isinstance(old, dict):
        return None
    return "sessions: " + ("; ".join(sessions_changes(old, new)) or "counter rewritten")


def _put_back(root: Path, saved: dict[str, bytes]) -> None:
    from .files import atomic_write

    for p, data in saved.items():
        atomic_write(root / p, data)


@dataclass(frozen=True)
class EpimemCommit:
    info: CommitInfo
    paths: tuple[str, ...]

    @property
    def op(self) -> str:
        return self.info.trailers.get("Epimem-Op", "")


def epimem_log(root: Path) -> list[EpimemCommit]:
    """epimem's commits, newest first, each with the paths it changed (one git process)."""
    if not has_commits(root):
        return []
    out = run(root, "log", "--grep=^Epimem-Op:", f"--format={_END}%H{_SEP}%aI{_SEP}%s{_SEP}%b{_SEP}",
              "--name-only")
    commits = []
    for rec in out.split(_END):
        if not rec.strip():
            continue
        sha, when, subject, body, names = rec.split(_SEP, 4)
        trailers = {}
        for line in body.splitlines():
            if line.startswith("Epimem-") and ":" in line:
                k, v = line.split(":", 1)
                trailers[k.strip()] = v.strip()
        commits.append(EpimemCommit(CommitInfo(sha.strip(), datetime.fromisoformat(when), subject, trailers),
                                    tuple(n for n in names.splitlines() if n.strip())))
    return commits


def abort_revert(root: Path) -> None:
    """Put the index and work tree back as they were before `revert` (best effort:
    it runs after a failure, whose error is the one worth reporting). Edits the
    user had not staged stay as they are."""
    try:
        run(root, "revert", "--abort", retries=1)
    except HistoryError:
        pass


def commit_index(root: Path, subject: str, *, op: str, beliefs: Iterable[str] = (),
                 extra: dict[str, str] | None = None, body: str = "", when: date | None = None) -> str:
    msg = message(subject, op=op, beliefs=beliefs, body=body, extra=extra)
    run(root, "commit", "--quiet", "--no-verify", "-m", msg, env=dated(when))
    return run(root, "rev-parse", "HEAD")
