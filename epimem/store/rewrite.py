"""A vault's history rewritten so that what is forgotten is in no commit (`forget --purge`).

git-filter-repo does this for any repository; epimem drives `git fast-export | git fast-import`
itself (docs/decisions.md, issue 29), because a purge of a vault must be:

- *whole or absent after kill -9*: the new history is imported under `refs/epimem-purge/`
  (nothing the user sees changes), then `.epimem/purge.json` records every ref's old and new
  value (fsynced) and only then are the refs moved. A purge killed before that record leaves the
  old history (the next command drops what was imported); killed after it, the next command
  moves the refs that were not moved yet and finishes (`recover`);
- *deterministic*: the same history and the same `Forgetting` give the same new commits, on
  any machine, so another clone can run the same purge and land on the same commit ids;
- *narrow*: fast-export runs without blob data; only the blobs that hold what is forgotten are
  read (`git cat-file --batch`, a chunk at a time), changed by `core.forget.forget_file`, and sent
  to fast-import; every other blob is named by its id.

Then the reflogs are expired and `git gc --prune=now` drops every old object, so no pack, loose
object or reflog holds what was forgotten. Every git call goes through `call`, over the
store's one runner (`store.gitrun`).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import StorageError
from ..core.forget import CommitFacts, Forgetting, forget_bytes, forget_message, forget_path, needles
from . import gitrun
from .files import INTERNAL_DIR, PURGE_NAME, VaultLock, lock_path, tmp_dir
from .sessions import MACHINE_FILE

TEMP = "refs/epimem-purge/"
TEMP_TAGS = "epimem-purge/"  # an annotated tag is imported as refs/tags/epimem-purge/<name>
JOURNAL = PURGE_NAME
CHUNK = 2000  # blobs read by one `cat-file --batch`
TEXT_DIRS = ("beliefs/", "observations/", "tensions/", "reviews/")


class PurgeError(StorageError):
    """git refused a step of a purge; the vault keeps its old history (the message says so)."""


def call(root: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
         ) -> tuple[int, bytes, bytes]:
    """Every git process of a purge and of what follows it (a push with a lease, a remote's
    record), through the store's one runner: (exit code, stdout, stderr), as bytes."""
    return gitrun.call_bytes(root, *args, stdin=stdin, env=env)


def _git(root: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None,
         check: bool = True) -> bytes:
    code, out, err = call(root, *args, stdin=stdin, env=env)
    if check and code != 0:
        raise PurgeError(f"git {args[0]} failed: {err.decode('utf-8', 'replace').strip()[:500]}")
    return out


def ok(root: Path, *args: str) -> bool:
    return call(root, *args)[0] == 0


def run(root: Path, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
    """`git ARGS`'s output; `PurgeError` with what git said when it fails (unless `check` is off)."""
    return _git(root, *args, stdin=stdin, check=check)


def text(root: Path, *args: str, check: bool = True) -> str:
    """`git ARGS`'s output as text, stripped."""
    return _out(root, *args, check=check)


def _out(root: Path, *args: str, **kw) -> str:
    return _git(root, *args, **kw).decode("utf-8", "surrogateescape").strip()


# --- refs -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Ref:
    name: str
    sha: str
    kind: str  # commit · tag


def refs(root: Path) -> list[Ref]:
    """Every ref of the vault, symbolic ones aside (`refs/remotes/origin/HEAD`)."""
    out = _out(root, "for-each-ref", "--format=%(refname)%09%(objectname)%09%(objecttype)%09%(symref)")
    rows = []
    for line in out.splitlines():
        name, sha, kind, sym = (line.split("\t") + ["", "", "", ""])[:4]
        if name and not sym:
            rows.append(Ref(name, sha, kind))
    return rows


def is_temp(name: str) -> bool:
    return name.startswith(TEMP) or name.startswith("refs/tags/" + TEMP_TAGS)


def _temp_name(name: str) -> str:
    return TEMP + name[len("refs/"):] if name.startswith("refs/") else TEMP + name


def head_ref(root: Path) -> str | None:
    p = _git(root, "symbolic-ref", "--quiet", "HEAD", check=False)
    return p.decode().strip() or None


# --- the stream -----------------------------------------------------------------------------------

@dataclass
class _Commit:
    ref: str
    mark: str
    old: str
    header: list[bytes]           # author, committer, encoding lines
    message: bytes
    parents: list[str]            # ":mark" or a sha (an excluded parent)
    changes: list[tuple[str, str, str, str]]  # (op "M"/"D"/other, mode, dataref, path) — raw lines for other
    raw: list[bytes] = field(default_factory=list)  # lines we pass as they are (N, C, R, deleteall)


def _unquote(path: str) -> str:
    if not (path.startswith('"') and path.endswith('"')):
        return path
    body = path[1:-1].encode("latin-1", "backslashreplace")
    return body.decode("unicode_escape").encode("latin-1").decode("utf-8", "surrogateescape")


def _quote(path: str) -> str:
    if not any(c in path for c in '"\\\n') and not path.startswith(" "):
        return path
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _Stream:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def line(self) -> bytes | None:
        if self.pos >= len(self.data):
            return None
        nl = self.data.find(b"\n", self.pos)
        if nl < 0:
            nl = len(self.data)
        out = self.data[self.pos:nl]
        self.pos = nl + 1
        return out

    def take(self) -> bytes:
        out = self.line()
        if out is None:
            raise PurgeError("git fast-export's stream ended in the middle of a command")
        return out

    def peek(self) -> bytes | None:
        keep = self.pos
        out = self.line()
        self.pos = keep
        return out

    def data_block(self, header: bytes) -> bytes:
        n = int(header.split(b" ", 1)[1])
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        if self.data[self.pos:self.pos + 1] == b"\n":
            self.pos += 1
        return out


@dataclass
class _Reset:
    ref: str
    frm: str | None


@dataclass
class _Tag:
    name: str
    frm: str = ""
    lines: list[bytes] = field(default_factory=list)
    message: bytes = b""


def _parse(data: bytes) -> Iterator[_Commit | _Reset | _Tag]:
    """fast-export's commands, as parsed (what else it says, `feature done` and `done`, is left out)."""
    s = _Stream(data)
    while True:
        line = s.line()
        if line is None:
            return
        if not line or line.startswith(b"feature ") or line == b"done":
            continue
        if line.startswith(b"commit "):
            c = _Commit(line[7:].decode("utf-8", "surrogateescape"), "", "", [], b"", [], [])
            while True:
                nxt = s.peek()
                if nxt is None:
                    break
                if not nxt.startswith((b"mark ", b"original-oid ", b"author ", b"committer ", b"encoding ",
                                       b"data ", b"from ", b"merge ", b"M ", b"D ", b"C ", b"R ", b"N ",
                                       b"deleteall")) and nxt != b"":
                    break
                ln = s.take()
                text = ln.decode("utf-8", "surrogateescape")
                if ln == b"":
                    break
                if ln.startswith(b"mark "):
                    c.mark = text[5:]
                elif ln.startswith(b"original-oid "):
                    c.old = text[13:]
                elif ln.startswith((b"author ", b"committer ", b"encoding ")):
                    c.header.append(ln)
                elif ln.startswith(b"data "):
                    c.message = s.data_block(ln)
                elif ln.startswith((b"from ", b"merge ")):
                    c.parents.append(text.split(" ", 1)[1])
                elif ln.startswith(b"M "):
                    _, mode, ref, path = text.split(" ", 3)
                    c.changes.append(("M", mode, ref, _unquote(path)))
                elif ln.startswith(b"D "):
                    c.changes.append(("D", "", "", _unquote(text[2:])))
                else:  # C, R, N, deleteall: passed on as they are
                    c.changes.append((text, "", "", ""))
            yield c
        elif line.startswith(b"reset "):
            ref = line[6:].decode("utf-8", "surrogateescape")
            frm = None
            nxt = s.peek()
            if nxt is not None and nxt.startswith(b"from "):
                frm = s.take()[5:].decode()
            yield _Reset(ref, frm)
        elif line.startswith(b"tag "):
            t = _Tag(line[4:].decode("utf-8", "surrogateescape"))
            while True:
                nxt = s.peek()
                if nxt is None or nxt == b"":
                    if nxt == b"":
                        s.line()
                    break
                ln = s.take()
                if ln.startswith(b"from "):
                    t.frm = ln[5:].decode()
                elif ln.startswith(b"original-oid "):
                    continue
                elif ln.startswith(b"data "):
                    t.message = s.data_block(ln)
                    break
                else:
                    t.lines.append(ln)
            yield t


# --- the rewrite ----------------------------------------------------------------------------------

@dataclass
class Rewrite:
    facts: list[CommitFacts]
    mapping: dict[str, str]               # old commit -> new commit (a dropped one -> what replaces it)
    new_refs: dict[str, str | None]       # ref -> its new value (None: it points at nothing any more)
    blobs_changed: int = 0


def blobs(root: Path, wanted: list[str]) -> Iterator[tuple[str, bytes]]:
    """(id, bytes) of each blob of `wanted`, read a chunk at a time."""
    for s in range(0, len(wanted), CHUNK):
        chunk = wanted[s:s + CHUNK]
        data = _git(root, "cat-file", "--batch", stdin=("\n".join(chunk) + "\n").encode())
        pos = 0
        for sha in chunk:
            nl = data.index(b"\n", pos)
            header = data[pos:nl].decode()
            pos = nl + 1
            if header.endswith(" missing"):
                continue
            size = int(header.split()[-1])
            yield sha, data[pos:pos + size]
            pos += size + 1


def rewrite(root: Path, f: Forgetting, tips: Iterable[str], *, exclude: Iterable[str] = (),
            known: dict[str, str] | None = None, dry_run: bool = False) -> Rewrite:
    """The history reachable from `tips` (ref names) and not from `exclude` (commits), rewritten
    so that it holds nothing `f` forgets. `known` maps commits outside the rewrite to what
    replaces them (another clone's purge). With `dry_run`, only what would change is said."""
    tips = list(tips)
    known = dict(known or {})
    args = ["fast-export", "--no-data", "--show-original-ids", "--reference-excluded-parents",
            "--use-done-feature", "--signed-tags=strip", "--tag-of-filtered-object=rewrite",
            "--fake-missing-tagger", "--reencode=no", "--stdin"]
    # The revisions on stdin: a purge another machine made may exclude thousands of commits.
    revs = "".join(f"{t}\n" for t in tips) + "".join(f"^{e}\n" for e in exclude)
    stream = _git(root, *args, stdin=revs.encode("utf-8", "surrogateescape"))
    items = list(_parse(stream))
    # Which blobs could hold what is forgotten: read once each (a chunk at a time), changed once
    # per (blob, path): the same blob at two paths may be a belief in one and a tension in the other.
    texts_everywhere = bool(f.texts)
    forgotten_paths = f.paths
    look: dict[str, None] = {}
    at_forgotten: set[str] = set()
    for item in items:
        if not isinstance(item, _Commit):
            continue
        for op, mode, ref, path in item.changes:
            if op == "M" and mode != "160000" and not ref.startswith(":") and \
                    (texts_everywhere or path in forgotten_paths or path.startswith(TEXT_DIRS)):
                look[ref] = None
                if path in forgotten_paths:
                    at_forgotten.add(ref)
    pins = needles(f)
    holding: dict[str, bytes] = {}
    for sha, data in blobs(root, list(look)):
        if sha in at_forgotten or any(n in data for n in pins):
            holding[sha] = data
    next_mark = 1 + max((int(c.mark[1:]) for c in items if isinstance(c, _Commit) and c.mark), default=0)
    out: list[bytes] = [b"feature done\n"]
    new_blob: dict[tuple[str, str], str | None] = {}   # (blob, path) -> ":mark", the blob itself, or None (drop)
    by_content: dict[bytes, str] = {}
    replaced: dict[str, str | None] = {}   # a dropped commit's mark -> what stands in its place
    facts: list[CommitFacts] = []
    mark_old: dict[str, str] = {}
    blobs_changed = 0

    def parent(p: str) -> str | None:
        while p in replaced:
            r = replaced[p]
            if r is None:
                return None
            p = r
        return known.get(p, p) if not p.startswith(":") else p

    def old_of(p: str) -> str:
        return mark_old.get(p, p)

    for item in items:
        if isinstance(item, _Reset):
            target = parent(item.frm) if item.frm else None
            line = f"reset {_temp_name(item.ref)}\n" + (f"from {target}\n" if target else "")
            out.append(line.encode("utf-8", "surrogateescape"))
            continue
        if isinstance(item, _Tag):
            target = parent(item.frm)
            if target is None:
                continue  # it tagged a commit nothing is left of
            msg = forget_message(item.message.decode("utf-8", "surrogateescape"), f).encode(
                "utf-8", "surrogateescape")
            out.append(f"tag {TEMP_TAGS}{item.name}\nfrom {target}\n".encode("utf-8", "surrogateescape"))
            out += [ln + b"\n" for ln in item.lines]
            out.append(b"data %d\n" % len(msg) + msg + b"\n")
            continue
        c = item
        mark_old[c.mark] = c.old
        msg_text = c.message.decode("utf-8", "surrogateescape")
        new_msg = forget_message(msg_text, f)
        changes: list[str] = []
        files_changed = False
        pre: list[bytes] = []
        for op, mode, ref, path in c.changes:
            if op == "D":
                new_path = forget_path(path, f)
                files_changed |= new_path != path
                changes.append(f"D {_quote(new_path)}")
                continue
            if op != "M":
                changes.append(op)
                continue
            new_path = forget_path(path, f)
            files_changed |= new_path != path
            held = holding.get(ref)
            if held is None or mode == "160000":
                changes.append(f"M {mode} {ref} {_quote(new_path)}")
                continue
            key = (ref, path)
            if key not in new_blob:
                new = forget_bytes(path, held, f)
                if new is None:
                    new_blob[key] = None
                elif new == held:
                    new_blob[key] = ref
                else:
                    m = by_content.get(new)
                    if m is None:
                        m = f":{next_mark}"
                        next_mark += 1
                        by_content[new] = m
                        pre.append(b"blob\nmark %s\ndata %d\n" % (m.encode(), len(new)) + new + b"\n")
                        blobs_changed += 1
                    new_blob[key] = m
            nb = new_blob[key]
            if nb is None:
                files_changed = True
                continue
            files_changed |= nb != ref
            changes.append(f"M {mode} {nb} {_quote(new_path)}")
        parents = [parent(p) for p in c.parents]
        kept_parents = list(dict.fromkeys(p for p in parents if p is not None))
        subject = new_msg.split("\n", 1)[0]
        dropped = bool(c.changes) and not changes and len(c.parents) <= 1
        facts.append(CommitFacts(c.old, tuple(old_of(p) for p in c.parents), subject, files=files_changed,
                                 message=new_msg != msg_text, dropped=dropped))
        if dropped:
            replaced[c.mark] = kept_parents[0] if kept_parents else None
            target = kept_parents[0] if kept_parents else None
            if target is not None:
                out.append(f"reset {_temp_name(c.ref)}\nfrom {target}\n".encode("utf-8", "surrogateescape"))
            continue
        out += pre
        body = new_msg.encode("utf-8", "surrogateescape")
        lines = [f"commit {_temp_name(c.ref)}".encode("utf-8", "surrogateescape"), f"mark {c.mark}".encode()]
        lines += c.header
        lines.append(b"data %d" % len(body))
        text = b"\n".join(lines) + b"\n" + body + b"\n"
        if not kept_parents:
            # a root commit (or one whose parents are all gone): fast-import must not continue the ref
            text = f"reset {_temp_name(c.ref)}\n".encode("utf-8", "surrogateescape") + text
        for i, p in enumerate(kept_parents):
            text += f"{'from' if i == 0 else 'merge'} {p}\n".encode()
        text += "".join(ch + "\n" for ch in changes).encode("utf-8", "surrogateescape") + b"\n"
        out.append(text)
    out.append(b"done\n")
    if dry_run:
        return Rewrite(facts, {}, {}, blobs_changed)
    marks = Path(root) / ".git" / "epimem-purge-marks"
    try:
        _git(root, "fast-import", "--quiet", "--done", f"--export-marks={marks}", stdin=b"".join(out))
        new_of: dict[str, str] = {}
        for line in marks.read_text(encoding="ascii").splitlines():
            m, _, sha = line.partition(" ")
            new_of[m] = sha
    finally:
        with suppress(FileNotFoundError):
            marks.unlink()
    mapping: dict[str, str] = {}
    for m, old in mark_old.items():
        target = parent(m)
        if target is None:
            continue
        mapping[old] = new_of.get(target, target)
    temp = {r.name: r.sha for r in refs(root) if is_temp(r.name)}
    new_refs: dict[str, str | None] = {}
    for name in tips:
        if name.startswith("refs/tags/") and f"refs/tags/{TEMP_TAGS}{name[10:]}" in temp:
            new_refs[name] = temp[f"refs/tags/{TEMP_TAGS}{name[10:]}"]
        else:
            new_refs[name] = temp.get(_temp_name(name))
    return Rewrite(facts, mapping, new_refs, blobs_changed)


def present(root: Path, shas: Iterable[str]) -> list[str]:
    """Those of `shas` that name a commit this repository has (one `cat-file --batch-check`)."""
    shas = [x for x in shas if is_sha(x)]
    if not shas:
        return []
    out = _git(root, "cat-file", "--batch-check", stdin=("\n".join(shas) + "\n").encode()).decode()
    return [line.split()[0] for line in out.splitlines() if line.endswith(" commit") or " commit " in line]


def drop_temp_refs(root: Path) -> None:
    names = [r.name for r in refs(root) if is_temp(r.name)]
    if names:
        _git(root, "update-ref", "--stdin", stdin="".join(f"delete {n}\n" for n in names).encode())


def commit_file(root: Path, parent: str, path: str, data: bytes, message: str) -> str:
    """A commit on top of `parent` adding one file, made without the index or the work tree
    (the purge's record, committed into the new history before anything moves)."""
    index = Path(root) / ".git" / "epimem-purge-index"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        _git(root, "read-tree", parent, env=env)
        blob = _out(root, "hash-object", "-w", "--stdin", stdin=data)
        _git(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = _out(root, "write-tree", env=env)
    finally:
        with suppress(FileNotFoundError):
            index.unlink()
    return _out(root, "commit-tree", tree, "-p", parent, stdin=message.encode("utf-8"))


# --- moving the refs, whole or not at all -----------------------------------------------------------

def journal_path(root: Path) -> Path:
    return Path(root) / INTERNAL_DIR / JOURNAL


def pending(root: str | os.PathLike) -> bool:
    from .files import purge_pending

    return purge_pending(root)


def _write_journal(root: Path, doc: dict) -> None:
    from .recovery import write_record

    write_record(root, JOURNAL, doc)


def read_journal(root: Path) -> dict | None:
    try:
        return json.loads(journal_path(root).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise PurgeError(f"{journal_path(root)} cannot be read ({e}); a purge was interrupted — "
                         "look at it, then delete it") from None


def begin_import(root: Path) -> None:
    """Recorded before fast-import writes anything: a purge killed now is rolled back."""
    _write_journal(root, {"version": 1, "phase": "import", "pid": os.getpid(), "started": time.time()})


def switch(root: Path, updates: dict[str, str | None], *, then: str = "caches") -> None:
    """Move every ref to its new value (None: delete it) and the work tree to the new HEAD,
    then drop every old object. Recorded first, so that a kill at any point is finished by
    the next command (`recover`)."""
    head = _out(root, "rev-parse", "--verify", "--quiet", "HEAD")
    doc = {"version": 1, "phase": "switch", "pid": os.getpid(), "started": time.time(), "old_head": head,
           "updates": {k: v for k, v in sorted(updates.items())}, "then": then}
    _write_journal(root, doc)
    _finish(root, doc)


def _finish(root: Path, doc: dict) -> None:
    updates: dict[str, str | None] = doc.get("updates") or {}
    _clear_ref_locks(root, list(updates), float(doc.get("started") or 0))
    current = {r.name: r.sha for r in refs(root)}
    cmds = []
    for name, new in updates.items():
        if new is None:
            if name in current:
                cmds.append(f"delete {name}\n")
        elif current.get(name) != new:
            cmds.append(f"update {name} {new}\n")
    cmds += [f"delete {n}\n" for n in current if is_temp(n) and n not in updates]
    if cmds:
        _git(root, "update-ref", "--stdin", stdin="".join(cmds).encode("utf-8", "surrogateescape"))
    # The index and the work tree follow HEAD from the old commit to the new one, as a checkout
    # does: a file the rewrite changed is written, one it did not keeps what is in the work tree
    # (the session counter the hook left uncommitted). Run again after a kill, it is a no-op.
    with suppress(FileNotFoundError):
        (Path(root) / ".git" / "index.lock").unlink()
    old_head = str(doc.get("old_head") or "")
    if ok(root, "rev-parse", "--verify", "--quiet", "HEAD"):
        if not (old_head and ok(root, "read-tree", "-m", "-u", old_head, "HEAD")):
            _git(root, "read-tree", "--reset", "-u", "HEAD")
    doc = {**doc, "phase": "clean"}
    _write_journal(root, doc)
    clean(root)
    _write_journal(root, {**doc, "phase": doc.get("then") or "caches"})


def _clear_ref_locks(root: Path, names: list[str], started: float) -> None:
    """The `.lock` files a killed `update-ref` left (only those made during the purge)."""
    for p in gitrun.ref_lock_files(Path(root), names):
        try:
            if os.stat(p).st_mtime >= started - 1:
                os.unlink(p)
        except OSError:
            continue


# Files in the git directory that name or hold what a commit said (a message, a merge's notes).
_STRAY = ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE", "SQUASH_MSG",
          "COMMIT_EDITMSG", "CHERRY_PICK_HEAD", "REVERT_HEAD", "epimem-merge-notes", "gc.log")


def clean(root: Path) -> None:
    """No reflog, loose object, pack or stray file keeps an old commit: expire every reflog,
    drop what git wrote for the last commands, and `gc --prune=now`."""
    gitdir = Path(root) / ".git"
    for name in _STRAY:
        with suppress(FileNotFoundError, IsADirectoryError):
            (gitdir / name).unlink()
    import shutil

    shutil.rmtree(gitdir / "rr-cache", ignore_errors=True)
    _git(root, "reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    _git(root, "-c", "gc.reflogExpire=now", "-c", "gc.reflogExpireUnreachable=now", "-c", "gc.rerereResolved=now",
         "-c", "gc.rerereUnresolved=now", "-c", "gc.pruneExpire=now", "-c", "gc.worktreePruneExpire=now",
         "gc", "--quiet", "--prune=now")


def end(root: Path) -> None:
    from .recovery import drop_record

    drop_record(root, JOURNAL)


def recover(root: Path, lock: VaultLock | None = None) -> str | None:
    """Finish, or roll back, a purge a killed process left: the vault then has the old history
    (killed while importing) or the new one (killed after the refs' record), never a mix."""
    import logging

    lock = lock or VaultLock(lock_path(root))
    with lock:
        doc = read_journal(root)
        if doc is None:
            return None
        phase = doc.get("phase")
        from .recovery import wait_for_git

        wait_for_git(root, float(doc.get("started") or 0))
        if phase == "import":
            with suppress(FileNotFoundError):
                (Path(root) / ".git" / "epimem-purge-marks").unlink()
            with suppress(FileNotFoundError):
                (Path(root) / ".git" / "epimem-purge-index").unlink()
            drop_temp_refs(root)
            end(root)
            note = "an interrupted purge was rolled back: the vault keeps its history as it was; forget again to purge"
        elif phase in ("switch", "clean"):
            if phase == "switch":
                _finish(root, doc)
            else:
                clean(root)
                _write_journal(root, {**doc, "phase": doc.get("then") or "caches"})
            drop_caches(root)
            note = "an interrupted purge was finished: the history no longer holds what was forgotten"
        else:
            return None  # what is left (the caches, the recall index) is the service's to finish
        logging.getLogger("epimem").warning("epimem: %s", note)
        return note


# --- the caches -------------------------------------------------------------------------------------

# What in `.epimem/` is not a cache of the files: the locks, the journals, the MCP server's token,
# this clone's id in the per-machine session counter (a new one would leave the old entry
# behind for good). Recall's folders are recall's to empty (`recall.api.erase`), through its own API.
KEEP = frozenset({"lock", "cache.lock", "journal.json", "sync-merge.json", JOURNAL, "mcp-token", "tmp",
                  "recall", "chroma", Path(MACHINE_FILE).name})


def drop_caches(root: Path) -> list[str]:
    """Delete every cache under `.epimem/` (they are rebuilt from the files on their next use):
    the session context, the parse caches, the page and its history, an open gut-check, logs."""
    import shutil

    internal = Path(root) / INTERNAL_DIR
    gone = []
    try:
        entries = list(os.scandir(internal))
    except FileNotFoundError:
        return []
    for e in entries:
        if e.name in KEEP:
            continue
        if e.is_dir(follow_symlinks=False):
            shutil.rmtree(e.path, ignore_errors=True)
        else:
            with suppress(FileNotFoundError):
                os.unlink(e.path)
        gone.append(e.name)
    for e in list(os.scandir(tmp_dir(root))) if tmp_dir(root).is_dir() else []:
        with suppress(OSError):
            os.unlink(e.path)
    return sorted(gone)


_SHA = re.compile(r"^[0-9a-f]{40}$")


def is_sha(text: str) -> bool:
    return bool(_SHA.match(text))
