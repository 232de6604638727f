"""Git as the audit log: one commit per mutation, and the views built on it.

Like `pass`, every operation is one commit of plain files. Commits carry
machine-readable trailers (`Epimem-Op`, `Epimem-Session`, `Epimem-Beliefs`)
so history and undo can tell epimem's commits from the user's own.

What is asked of git lives here; every git process is started by `store.gitrun`
(the one runner: lock waits, identity, literal paths, HEAD and `git status`).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TypeVar

from ..core.model import Belief, Tension
from ..core.notes import NoteError, parse_belief, parse_note, parse_tension
from .gitrun import (  # noqa: F401 - re-exported: the runner's names, for callers of the history
    LITERAL,
    HistoryError,
    author_env,
    head_sha,
    init,
    is_repo_root,
    run,
    status,
)

_Note = TypeVar("_Note", Belief, Tension)


def warm(root: Path) -> None:
    """What the first commit of a process would otherwise do under the vault lock: ask git for
    the author's identity (a git process of its own). A CLI command is one process and one
    commit, so it paid it, every time, while seven other writers waited."""
    author_env(root)


def require_repo(root: Path) -> None:
    if not is_repo_root(root):
        raise HistoryError(
            f"{root} is not a git repository of its own; every change is a commit, "
            "so run `epimem init` on it first")


# --- committing --------------------------------------------------------------------

def one_line(value: object, limit: int = 500) -> str:
    """A value for a commit's subject or a trailer: one line, no control characters.

    A hook's `session_id` is whatever the client sent; one with a newline in it would
    otherwise start a trailer line of its own (`Epimem-Op: init`) and make history and
    undo read a commit as something it is not.
    """
    text = "".join(ch if ch.isprintable() else " " for ch in str(value))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def message(subject: str, *, op: str, beliefs: Iterable[str] = (), session: str | None = None,
            body: str = "", extra: dict[str, str] | None = None) -> str:
    trailers = [f"Epimem-Op: {one_line(op)}"]
    if session:
        trailers.append(f"Epimem-Session: {one_line(session)}")
    beliefs = list(dict.fromkeys(one_line(b) for b in beliefs))
    if beliefs:
        trailers.append(f"Epimem-Beliefs: {', '.join(beliefs)}")
    for k, v in (extra or {}).items():
        key = "-".join(part for part in "".join(c if c.isalnum() else "-" for c in k).split("-") if part)
        trailers.append(f"{key}: {one_line(v, 20_000)}")
    parts = [one_line(subject)]
    if body.strip():
        parts.append(body.strip())
    parts.append("\n".join(trailers))
    return "\n\n".join(parts) + "\n"


def trailers_of(body: str) -> dict[str, str]:
    """epimem's trailers: the `Epimem-*` lines of the message's last paragraph, the block
    `message` writes. A line that only looks like one in the body above is not read."""
    paragraphs = [p for p in body.strip("\n").split("\n\n") if p.strip()]
    if not paragraphs:
        return {}
    out: dict[str, str] = {}
    for line in paragraphs[-1].splitlines():
        k, sep, v = line.partition(":")
        if not sep or not k.startswith("Epimem-") or " " in k:
            return {}  # not a block of epimem's own format
        out.setdefault(k, v.strip())
    return out


def dated(when: date | None) -> dict[str, str]:
    """Commit dates for a replayed clock (EPIMEM_TODAY): the day given, the time now,
    so `epimem diff --since DATE` agrees with the dates in the files."""
    if when is None:
        return {}
    stamp = f"{when.isoformat()}T{datetime.now():%H:%M:%S}"
    return {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}


def commit(root: Path, paths: Iterable[str], subject: str, *, op: str,
           beliefs: Iterable[str] = (), session: str | None = None, body: str = "",
           extra: dict[str, str] | None = None, when: date | None = None,
           new: Iterable[str] | None = None) -> str:
    """Commit exactly `paths` (relative to the vault) as one commit; return its sha.

    Only the named paths are committed (`git commit --only`), so a hand edit the
    user has not asked to commit stays out of epimem's commit.

    `new` names the paths git may not know yet (files just created); only they need a
    `git add`, since `commit --only` takes tracked paths, changed or deleted, from the
    working tree itself. Each git process counts: this runs under the vault lock, and
    on a busy 2-core machine one costs 50–200 ms. `None` adds every path.
    """
    require_repo(root)
    paths = sorted(set(paths))
    if not paths:
        raise HistoryError("nothing to commit")
    fresh = paths if new is None else sorted(set(new) & set(paths))
    msg = message(subject, op=op, beliefs=beliefs, session=session, body=body, extra=extra)
    env = {**LITERAL, **dated(when)}
    with pathspec_file(root, paths) as spec, _scratch(root, "message", msg.encode("utf-8")) as msg_file:
        if fresh:
            with pathspec_file(root, fresh) as added:
                run(root, "add", "--all", *added, env=LITERAL)
        try:
            run(root, "commit", "--quiet", "--no-verify", "-F", msg_file, "--only", *spec, env=env)
        except HistoryError as e:
            if "did not match any file" not in str(e) or new is None:
                raise
            # A path thought tracked was not (a file the user made by hand and never committed).
            run(root, "add", "--all", *spec, env=LITERAL)
            run(root, "commit", "--quiet", "--no-verify", "-F", msg_file, "--only", *spec, env=env)
    return _committed(root)


def _committed(root: Path) -> str:
    """The sha of the commit just made."""
    sha = head_sha(root)
    if sha is None:
        raise HistoryError("git made no commit")
    return sha




@contextmanager
def pathspec_file(root: Path, paths: Iterable[str]):
    """The arguments that hand `paths` to git through a file, never as one argument list.

    2,000 belief files copied into `beliefs/` by hand made `git add -- PATHS...` fail with
    "Argument list too long" (the kernel's limit on a command line), and nothing was
    committed; a file has no such limit, at 20,000 paths or more.
    """
    data = b"\0".join(p.encode("utf-8", "surrogateescape") for p in paths)
    with _scratch(root, "pathspec", data) as name:
        yield ("--pathspec-from-file=" + name, "--pathspec-file-nul")


@contextmanager
def _scratch(root: Path, what: str, data: bytes):
    """A file in `.git/` for git to read, removed afterwards. The kernel limits one argument to
    128 kB, so a commit message naming 2,000 beliefs goes this way too (`commit -F`)."""
    fd, name = tempfile.mkstemp(prefix=f"epimem-{what}-", dir=root / ".git")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        yield name
    finally:
        with suppress(FileNotFoundError):
            os.unlink(name)


def unstage(root: Path, paths: Iterable[str]) -> None:
    """Take `paths` out of the index again after a failed commit (best effort:
    the commit already failed, and its error is the one worth reporting)."""
    try:
        with pathspec_file(root, sorted(set(paths))) as spec:
            if has_commits(root):
                run(root, "reset", "--quiet", *spec, retries=1, env=LITERAL)
            else:
                run(root, "rm", "--cached", "--quiet", "--ignore-unmatch", "-r", *spec, retries=1, env=LITERAL)
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
        commits.append(CommitInfo(sha, datetime.fromisoformat(when), subject, trailers_of(body)))
    return commits


def show_many(root: Path, specs: list[str]) -> list[str | None]:
    """Contents of many `rev:path` blobs in one `git cat-file --batch` process."""
    if not specs:
        return []
    from .gitrun import run_bytes

    data, pos = run_bytes(root, "cat-file", "--batch", stdin=("\n".join(specs) + "\n").encode()), 0
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
    # The file's basis at that commit, to judge its confidence by (None: a state known valid, read
    # from the vault's reader); not part of the state a history compares.
    basis: str | None = field(default=None, compare=False)
    refused: str = ""  # why that commit's file breaks a rule: the point shows the last valid state (rule 21)


def belief_history(root: Path, belief_id: str) -> list[HistoryPoint]:
    """Confidence and status of a belief at every commit that touched it, oldest first."""
    path = f"beliefs/{belief_id}.md"
    commits = list(reversed(log(root, path)))
    blobs = show_many(root, [f"{c.sha}:{path}" for c in commits])
    return [_point(c, text) for c, text in zip(commits, blobs)]


def _state(text: str | None) -> tuple[float | None, str, str | None]:
    """A belief file's stored confidence, status and basis at one revision (None: the file was gone)."""
    if text is None:
        return None, "deleted", None
    note = parse_note(text, lenient=True)
    if note is None:
        return None, "malformed", None
    meta = note.meta
    v = meta.get("confidence")
    conf = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    basis = meta.get("basis")
    return conf, str(meta.get("status") or "active"), basis if isinstance(basis, str) else None


def _point(c: CommitInfo, text: str | None) -> HistoryPoint:
    conf, status, basis = _state(text)
    return HistoryPoint(c.sha, c.when, c.subject, c.trailers.get("Epimem-Op", "manual"), conf, status, basis)


_NULL_BLOB = "0" * 40


def all_belief_histories(root: Path, since: str | None = None,
                         known: dict[str, tuple[float | None, str]]
                         | Callable[[], dict[str, tuple[float | None, str]]] | None = None,
                         ) -> tuple[str | None, dict[str, list[HistoryPoint]]]:
    """(HEAD, every belief's history) from ONE walk of the log, oldest point first.

    `git log --raw` names, for each commit, the blob each belief file had after
    it; the blobs are read in one `cat-file --batch`. A 10,000-belief vault
    costs one log and one batch instead of 10,000 of each. With `since` (a commit
    that is an ancestor of HEAD) only the commits after it are walked, so a cache
    keyed by commit can be brought up to date incrementally. `known` maps blobs whose
    state the caller has already parsed (the files as they are now) to it; a function
    giving that map is called once the log is read (a caller reading the files meanwhile).
    """
    if not has_commits(root):
        return None, {}
    head = run(root, "rev-parse", "HEAD").strip()
    rng = f"{since}..{head}" if since else head
    out = run(root, "log", "--reverse", "--raw", "--no-abbrev", "--no-renames", "-c",
              f"--format={_END}%H{_SEP}%aI{_SEP}%s{_SEP}%b{_SEP}", rng, "--", "beliefs/")
    changes: list[tuple[CommitInfo, str, str]] = []  # (commit, belief id, blob or "")
    for rec in out.split(_END):
        if not rec.strip():
            continue
        sha, when, subject, rest = rec.split(_SEP, 3)
        body, _, raw = rest.rpartition(_SEP)
        trailers = {}
        for line in body.splitlines():
            if line.startswith("Epimem-") and ":" in line:
                k, v = line.split(":", 1)
                trailers[k.strip()] = v.strip()
        info = CommitInfo(sha, datetime.fromisoformat(when), subject, trailers)
        for line in raw.splitlines():
            # ":100644 100644 <old> <new> M\tbeliefs/x.md" (merges: one more mode and sha)
            if not line.startswith(":") or "\t" not in line:
                continue
            meta, path = line.split("\t", 1)
            path = path.split("\t")[-1]
            if not (path.startswith("beliefs/") and path.endswith(".md") and path.count("/") == 1):
                continue
            fields = meta.split()
            blob = fields[-2] if len(fields) >= 2 else _NULL_BLOB
            changes.append((info, path[len("beliefs/"):-3], "" if blob == _NULL_BLOB else blob))
    if callable(known):
        known = known()
    known = known or {}
    blobs = dict(zip(*_unique_blobs(root, [b for _, _, b in changes if b and b not in known])))
    histories: dict[str, list[HistoryPoint]] = {}
    for info, bid, blob in changes:
        pts = histories.setdefault(bid, [])
        if pts and pts[-1].sha == info.sha:
            continue  # a merge lists a path once per parent
        if blob in known:
            conf, status = known[blob]
            pts.append(HistoryPoint(info.sha, info.when, info.subject, info.trailers.get("Epimem-Op", "manual"),
                                    conf, status))
        else:
            pts.append(_point(info, blobs.get(blob) if blob else None))
    return head, histories


@dataclass(frozen=True)
class Added:
    """The commit that first added a file, and the blob it added."""
    sha: str
    blob: str
    trailers: dict[str, str]


def first_added(root: Path, folder: str) -> dict[str, Added]:
    """{path: the commit that first added it} for every file ever added under `folder`, from ONE
    walk of the log (oldest first): what a later commit or a hand edit did to it is not this."""
    if not has_commits(root):
        return {}
    out = run(root, "log", "--reverse", "--raw", "--no-abbrev", "--no-renames", "--diff-filter=A",
              f"--format={_END}%H{_SEP}%b{_SEP}", "--", folder)
    found: dict[str, Added] = {}
    for rec in out.split(_END):
        if not rec.strip():
            continue
        sha, rest = rec.split(_SEP, 1)
        body, _, raw = rest.rpartition(_SEP)
        trailers = trailers_of(body)
        for line in raw.splitlines():
            if line.startswith(":") and "\t" in line:
                meta, path = line.split("\t", 1)
                found.setdefault(path, Added(sha, meta.split()[-2], trailers))
    return found


def blob_id(data: bytes, like: str = "") -> str:
    """The id git gives a blob of `data` (sha1, or sha256 when `like` is a sha256 id)."""
    import hashlib

    h = hashlib.sha256 if len(like) == 64 else hashlib.sha1
    return h(b"blob %d\0" % len(data) + data).hexdigest()


def index_blobs(root: Path, folder: str) -> dict[str, str]:
    """{path: blob sha} of the files staged under `folder` (`git ls-files -s`)."""
    out = run(root, "ls-files", "-s", "-z", "--", folder)
    blobs = {}
    for item in out.split("\0"):
        if "\t" in item:
            meta, path = item.split("\t", 1)
            blobs[path] = meta.split()[1]
    return blobs


def _unique_blobs(root: Path, shas: list[str]) -> tuple[list[str], list[str | None]]:
    uniq = list(dict.fromkeys(shas))
    return uniq, show_many(root, uniq)


def is_ancestor(root: Path, older: str, newer: str) -> bool:
    try:
        run(root, "merge-base", "--is-ancestor", older, newer, retries=1)
        return True
    except HistoryError:
        return False


def _revision_like(text: str) -> bool:
    """Whether `text` could name a commit at all. Anything else never reaches git: a 1 MB
    string is past the kernel's limit on an argument (an OSError, not git's refusal), a NUL
    cannot be passed, and a leading `-` would be read as an option."""
    if not text or len(text) > 1024 or "\0" in text or text.startswith("-"):
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def resolve_since(root: Path, since: str) -> str | None:
    """A revision to diff from: `since` itself when it names a commit, else the
    last commit before that date (None: the vault's whole history)."""
    if _revision_like(since):
        try:
            return run(root, "rev-parse", "--verify", "--quiet", f"{since}^{{commit}}", retries=1)
        except HistoryError:
            pass
    try:
        d = date.fromisoformat(since)
    except ValueError:
        from ..core.errors import InputError

        shown = since if len(since) <= 80 else since[:80] + "…"
        raise InputError(f"'since' {shown!r} is neither a revision nor a date YYYY-MM-DD", field="since") from None
    out = run(root, "rev-list", "-1", f"--before={d.isoformat()} 00:00:00", "HEAD")
    return out.strip() or None


def changed_paths(root: Path, base: str | None, head: str = "HEAD") -> list[tuple[str, str]]:
    """(status letter, path) between two revisions; base None = the empty tree."""
    return [(st, path) for st, path, _, _ in changed_blobs(root, base, head)]


def changed_blobs(root: Path, base: str | None, head: str = "HEAD") -> list[tuple[str, str, str, str]]:
    """(status letter, path, blob before, blob after) between two revisions ("" for a side
    without the file); base None = the empty tree. A blob's sha is read by `show_many` without
    looking its path up in a tree again (in a 10,000-file folder, each such lookup inflates it)."""
    if base is None:
        base = run(root, "hash-object", "-t", "tree", "/dev/null")
    out = run(root, "diff", "--raw", "--no-abbrev", "--no-renames", base, head, "--")
    rows = []
    for line in out.splitlines():
        # ":100644 100644 <old> <new> M\tpath"
        if line.startswith(":") and "\t" in line:
            meta, path = line.split("\t", 1)
            fields = meta.split()
            old, new = ("" if b == _NULL_BLOB else b for b in fields[2:4])
            rows.append((fields[4][0], path, old, new))
    return rows


def dirty_paths(root: Path) -> list[tuple[str, str]]:
    """Uncommitted changes in the vault: (status, path), untracked included."""
    from .files import is_temp
    from .paths import leaves

    rows = []
    for code, path in status(root):
        # Never offered for a commit: epimem's temp files (an older version left
        # them beside the notes), and symlinks that leave the vault.
        if is_temp(os.path.basename(path)) or (os.path.islink(root / path) and leaves(root, root / path)):
            continue
        rows.append((code.strip() or "?", path))
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


def uncommitted_sessions(root: Path, path: str = "state/sessions.json") -> str | None:
    """"sessions: …" naming an uncommitted change to the session counter, or None when
    there is none (or the file is not a counter: a broken one is not carried along)."""
    from ..core.changes import sessions_changes
    from ..core.nesting import loads_json

    if not status(root, (path,)):
        return None
    try:
        new = loads_json((root / path).read_text(encoding="utf-8"))
        old_text = show_many(root, [f"HEAD:{path}"])[0] if has_commits(root) else None
        old = loads_json(old_text) if old_text else {}
    except (OSError, ValueError):
        return None
    if not isinstance(new, dict) or not isinstance(old, dict):
        return None
    return "sessions: " + ("; ".join(sessions_changes(old, new)) or "counter rewritten")


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


def commit_index(root: Path, subject: str, *, op: str, beliefs: Iterable[str] = (),
                 extra: dict[str, str] | None = None, body: str = "", when: date | None = None) -> str:
    msg = message(subject, op=op, beliefs=beliefs, body=body, extra=extra)
    with _scratch(root, "message", msg.encode("utf-8")) as msg_file:
        run(root, "commit", "--quiet", "--no-verify", "-F", msg_file, env=dated(when))
    return _committed(root)
