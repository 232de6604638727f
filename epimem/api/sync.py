"""One vault on many machines (SPEC §11): the merge driver git calls, `sync` and `clone`.

The merge rules are `core.merge` (pure). This module is the thin shell around
them: the driver reads the three versions git hands it and writes the result
back; `sync` commits what is pending, fetches, merges with those rules, pushes
and retries once when the remote moved meanwhile; `clone` sets up a second
machine. Git itself carries the files: any remote, any transport.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import Conflict, EpimemError, InputError, StorageError, VaultError
from ..store import drivers, gitrun

if TYPE_CHECKING:
    from .service import Service

NOTES_FILE = "epimem-merge-notes"  # in the git directory: what the driver wants the user to know


# --- the merge driver --------------------------------------------------------------------------

def merge_driver(base: str, ours: str, theirs: str, path: str, root: str | os.PathLike = ".") -> int:
    """git's `merge.epimem.driver %O %A %B %P`: merge into `ours` (%A) and return 0.

    Anything epimem has no rule for, or cannot read, is returned to git as a conflict
    (exit 1) with `ours` untouched, so git's own message names the file; no
    conflict marker is ever written by epimem.
    """
    from ..core import merge
    from ..store import sessions as sessions_file

    root = Path(root).absolute()
    try:
        texts = [Path(p).read_bytes().decode("utf-8") for p in (base, ours, theirs)]
    except (OSError, UnicodeDecodeError) as e:
        _note(root, f"{path}: cannot be merged by epimem ({e}); git left it for you to resolve")
        return 1
    result = merge.merge_file(path, *texts, params=_params(root), load_sessions=sessions_file.loads,
                              dump_sessions=sessions_file.dump)
    if result is None:
        return 1
    tmp = Path(ours).with_name(Path(ours).name + ".epimem-merge")
    tmp.write_text(result.text, encoding="utf-8")
    os.replace(tmp, ours)
    for n in result.notes:
        _note(root, f"{path}: {n}")
    return 0


def _params(root: Path):
    from ..core.params import DEFAULTS
    from ..store.vault import Vault

    try:
        return Vault(root).params()[0]
    except (OSError, VaultError):
        return DEFAULTS


def _note(root: Path, line: str) -> None:
    g = drivers.git_dir(root)
    if g is None:
        return
    try:
        with open(g / NOTES_FILE, "a", encoding="utf-8") as f:
            f.write(line.replace("\n", " ") + "\n")
    except OSError:
        pass


def _take_notes(root: Path) -> list[str]:
    g = drivers.git_dir(root)
    if g is None:
        return []
    p = g / NOTES_FILE
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
        p.unlink()
    except OSError:
        return []
    return list(dict.fromkeys(ln for ln in lines if ln.strip()))


# --- git, as sync needs it ---------------------------------------------------------------------

class _Git:
    """The git binary in the vault (`store.gitrun`), with the user's environment (credentials,
    ssh agent), read by exit code: a fetch or a merge that fails is an answer here."""

    def __init__(self, root: Path):
        self.root = root

    def run(self, *args: str, check: bool = True) -> gitrun.Done:
        p = gitrun.call(self.root, *args, identity="commit" in args or "merge" in args)
        if check and p.returncode != 0:
            raise StorageError(f"git {args[0]} failed: {(p.stderr or p.stdout).strip()}")
        return p

    def out(self, *args: str) -> str:
        return self.run(*args).stdout.strip()

    def ok(self, *args: str) -> bool:
        return self.run(*args, check=False).returncode == 0


@dataclass
class SyncReport:
    remote: str
    branch: str
    committed: str | None = None          # the commit of pending hand edits, if any
    merged: str = "up to date"            # up to date · fast-forward · merged · pushed only
    pushed: bool = False
    retried: bool = False
    incoming: int = 0                     # commits brought in
    outgoing: int = 0                     # commits sent
    notes: list[str] = field(default_factory=list)
    # What the merge did to beliefs, by id: a remote that deleted every belief (a bug, a wiped
    # folder on the other machine) used to be one line, "Brought in 1 commit".
    beliefs: dict[str, list[str]] = field(default_factory=lambda: {"new": [], "changed": [], "removed": []})


def ensure_attributes(mem: Service) -> str | None:
    """Commit epimem's lines in `.gitattributes` when the vault lacks them (a vault made
    before epimem merged by meaning); the commit's sha, or None when nothing was needed."""
    from ..store import transaction as tx
    from ..store.files import stat_key
    from . import common

    p = mem.root / ".gitattributes"
    text = p.read_text(encoding="utf-8") if p.exists() else None
    if not drivers.attributes_missing(text):
        return None
    w = tx.create(".gitattributes", drivers.ATTRIBUTES) if text is None else \
        tx.replace(".gitattributes", drivers.with_attributes(text), stat_key(p))
    return common.commit(mem, [w], "sync: merge vault files by meaning (.gitattributes)", op="setup")


def sync(mem: Service, remote: str | None = None, *, index: bool = True, adopt_purge: bool = False,
         purge_texts: tuple[str, ...] = ()) -> SyncReport:
    """Commit pending edits, fetch, merge by epimem's rules, push; retry once when rejected.
    A purge (`epimem forget --purge`) is sent with a lease; another machine's purge is never
    merged back from the old history here: refused, or with `adopt_purge` run here too (`api.forget`)."""
    from . import common
    from . import forget as forgetting

    common.require_repo(mem)  # also: no unfinished merge, and the driver registered
    root = mem.root
    g = _Git(root)
    branch = g.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False).stdout.strip()
    if not branch:
        raise VaultError(f"the vault at {root} is not on a branch (a detached HEAD); "
                         f"check one out (`git -C {root} switch main`) and sync again")
    remote = remote or _upstream_remote(g, branch) or "origin"
    if not g.ok("remote", "get-url", remote):
        known = g.out("remote").split()
        raise InputError(f"the vault has no remote {remote!r}"
                         + (f" (it has: {', '.join(known)})" if known else "")
                         + f"; add one with `git -C {root} remote add {remote} URL`", field="remote")
    rep = SyncReport(remote, branch)
    start = g.run("rev-parse", "--verify", "--quiet", "HEAD", check=False).stdout.strip()
    with mem.vault.lock():
        ensure_attributes(mem)
        if gitrun.status(root):  # the common case is clean: no hand-edit pass
            from .hand_edits import commit_hand_edits

            sha, _, problems = commit_hand_edits(mem)
            rep.committed = sha
            rep.notes += [f"{p} (left out of the commit)" for p in problems]
        lease = None
        sent, notes = forgetting.send_pending(mem, remote, branch)
        rep.pushed, rep.notes = rep.pushed or sent, rep.notes + notes
        for attempt in (1, 2):
            _fetch(g, remote, branch)
            theirs = f"{remote}/{branch}"
            if _has_ref(g, theirs):
                outgoing, incoming = (int(x) for x in g.out("rev-list", "--left-right", "--count",
                                                            f"HEAD...{theirs}").split())
                # Only what comes in can bring a purge, or the history before one (`api.forget.follow`).
                followed = forgetting.follow(mem, remote, branch, theirs, adopt_purge=adopt_purge,
                                             texts=purge_texts) if incoming else None
                if followed is not None:
                    lease, start = followed.lease or lease, ""  # the old HEAD is gone with the old history
                    rep.notes += followed.notes
                    outgoing, incoming = (int(x) for x in g.out("rev-list", "--left-right", "--count",
                                                                f"HEAD...{theirs}").split())
                if incoming:
                    before = g.out("rev-parse", "HEAD")
                    _merge(mem, g, rep, remote, branch, incoming)
                    # a fast-forward leaves nothing to send; a merge sends ours and the merge commit
                    outgoing = 0 if rep.merged == "fast-forward" else outgoing + 1
                    if forgetting.reforget(mem, _merged_paths(g, before)):
                        outgoing += 1
                    from .tensions import close_orphans

                    if close_orphans(mem):  # a belief retired there, a tension opened on it here
                        rep.notes.append("closed the open tensions of beliefs retired or superseded on the other side")
                        outgoing += 1
            else:
                rep.merged = "pushed only"  # an empty remote: the first push makes the branch
                outgoing = _count(g, "HEAD")
            rep.outgoing = outgoing
            if outgoing == 0:
                break
            with_lease = [f"--force-with-lease=refs/heads/{branch}:{lease}"] if lease else []
            push = g.run("push", "--porcelain", *with_lease, remote, f"HEAD:refs/heads/{branch}", check=False)
            if push.returncode == 0:
                rep.pushed = True
                if lease:
                    forgetting.sent(mem, remote)
                if not _upstream_remote(g, branch):
                    g.run("branch", f"--set-upstream-to={remote}/{branch}", branch, check=False)
                break
            text = (push.stderr + push.stdout)
            if attempt == 2 or not ("rejected" in text or "fetch first" in text or "non-fast-forward" in text):
                raise StorageError(f"could not push to {remote!r}: {_first_lines(text)}; "
                                   "your changes are committed here, run `epimem sync` again")
            rep.retried = True  # someone pushed meanwhile: fetch, merge and try once more
        rep.notes += _take_notes(root)
    if rep.incoming:
        changed = g.out("diff", "--name-only", "--no-renames", start, "HEAD").split("\n") if start else None
        _after_merge(mem, rep, index, changed)
    return rep


def _merged_paths(g: _Git, before: str) -> list[str] | None:
    """The files a merge changed since `before` (what a forgetting may have to take out again)."""
    p = g.run("diff", "--name-only", "--no-renames", before, "HEAD", check=False)
    return [x for x in p.stdout.split("\n") if x] if p.returncode == 0 else None


def _upstream_remote(g: _Git, branch: str) -> str | None:
    p = g.run("config", "--get", f"branch.{branch}.remote", check=False)
    return p.stdout.strip() or None


def _has_ref(g: _Git, ref: str) -> bool:
    return g.ok("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")


def _count(g: _Git, spec: str) -> int:
    return int(g.out("rev-list", "--count", spec) or 0)


def _first_lines(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip() and not ln.startswith("To ")]
    return " ".join(lines[:3]) or "git gave no reason"


def _fetch(g: _Git, remote: str, branch: str) -> None:
    p = g.run("fetch", "--quiet", remote, check=False)
    if p.returncode != 0:
        url = g.run("remote", "get-url", remote, check=False).stdout.strip()
        raise StorageError(f"cannot reach the remote {remote!r} ({url}): {_first_lines(p.stderr)}; "
                           "nothing was merged or pushed — your changes are committed here")


def _merge(mem: Service, g: _Git, rep: SyncReport, remote: str, branch: str, incoming: int) -> None:
    theirs = f"{remote}/{branch}"
    rep.incoming += incoming
    head = g.out("rev-parse", "HEAD")
    if g.ok("merge-base", "--is-ancestor", "HEAD", theirs):
        with _recorded(mem, g, head, theirs):
            g.run("merge", "--quiet", "--ff-only", theirs)
        rep.merged = "fast-forward"
        _brought(g, head, rep.beliefs)
        return
    mb = g.run("merge-base", "HEAD", theirs, check=False)
    if mb.returncode != 0:
        raise Conflict(f"{remote}/{branch} shares no history with this vault (another vault, or one "
                       f"created again on the other machine); nothing was merged. To bring its files in, "
                       f"export it there (`epimem export`) and import it here (`epimem import jsonl`)")
    base = mb.stdout.strip()
    both = _changed_on_both(g, base, theirs)
    # git merges what one side changed; the files both changed are merged here, in this
    # process, by the same rules the driver applies (`core.merge`): one process for all of
    # them instead of one per file. The driver `true` keeps ours for now.
    with _recorded(mem, g, head, theirs):
        p = g.run("-c", f"merge.{drivers.DRIVER}.driver=true", "merge", "--no-commit", "--no-ff", theirs,
                  check=False)
        if p.returncode != 0 and not g.ok("rev-parse", "--verify", "--quiet", "MERGE_HEAD"):
            raise StorageError(f"git merge failed: {_first_lines(p.stderr + p.stdout)}; nothing was merged")
        if p.returncode != 0:
            conflicted = g.out("diff", "--name-only", "--diff-filter=U").split()
            g.run("merge", "--abort", check=False)
            files = ", ".join(conflicted) or _first_lines(p.stdout + p.stderr)
            raise Conflict(f"{theirs} changed files epimem has no rule to merge ({files}); nothing was merged. "
                           f"Merge by hand (`git -C {g.root} merge {theirs}`, edit those files, commit), then "
                           "`epimem sync` again")
        try:
            rep.notes += _merge_both(mem, g, base, theirs, both)
            g.run("commit", "--quiet", "--no-verify", "-m", f"sync: merge {theirs}")
        except BaseException:
            g.run("merge", "--abort", check=False)
            raise
    rep.merged = "merged"
    _brought(g, head, rep.beliefs)


def _brought(g: _Git, before: str, into: dict[str, list[str]]) -> None:
    """Add the beliefs a merge changed since `before` to `into`, by what happened to each file."""
    p = g.run("diff", "--name-status", "--no-renames", "-z", before, "HEAD", "--", "beliefs/", check=False)
    words = p.stdout.split("\0") if p.returncode == 0 else []
    for status, path in zip(words[0::2], words[1::2]):
        if path.startswith("beliefs/") and path.endswith(".md") and "/" not in path[len("beliefs/"):]:
            into[{"A": "new", "D": "removed"}.get(status[:1], "changed")].append(path[len("beliefs/"):-3])


@contextmanager
def _recorded(mem: Service, g: _Git, head: str, theirs: str) -> Iterator[None]:
    """The merge is recorded before git touches a file, so that a sync killed mid-merge is
    rolled back or finished by the next command (`store.sync_journal`)."""
    from ..store import sync_journal

    paths = g.out("diff", "--name-only", "--no-renames", "-z", head, theirs).split("\0")
    sync_journal.begin(mem.root, head, theirs, [p for p in paths if p])
    try:
        yield
    except EpimemError:  # a merge git refused, aborted above: nothing to recover
        sync_journal.end(mem.root)
        raise
    # Anything else (Ctrl-C in the middle of git's merge) keeps the record, as a kill does:
    # the next command rolls the half merge back.
    sync_journal.end(mem.root)


def _changed_on_both(g: _Git, base: str, theirs: str) -> list[str]:
    from ..core.merge import kind_of

    ours_changed = set(g.out("diff", "--name-only", "--no-renames", base, "HEAD").split("\n"))
    theirs_changed = g.out("diff", "--name-only", "--no-renames", base, theirs).split("\n")
    return [p for p in theirs_changed if p and p in ours_changed and kind_of(p) is not None]


def _merge_both(mem: Service, g: _Git, base: str, theirs: str, paths: list[str]) -> list[str]:
    """Merge the files both sides changed (git holds the merge open) and stage them."""
    if not paths:
        return []
    from ..core import merge
    from ..store import sessions as sessions_file
    from ..store import transaction as tx
    from ..store.git import show_many

    blobs = show_many(mem.root, [f"{rev}:{p}" for p in paths for rev in (base, "HEAD", theirs)])
    writes, notes = [], []
    params = mem.params
    for i, path in enumerate(paths):
        b, o, t = (x or "" for x in blobs[3 * i:3 * i + 3])
        if blobs[3 * i + 1] is None or blobs[3 * i + 2] is None:
            continue  # deleted on one side: git decided (or stopped) already
        result = merge.merge_file(path, b, o, t, params=params, load_sessions=sessions_file.loads,
                                  dump_sessions=sessions_file.dump)
        if result is None:
            continue
        writes.append(tx.upsert(path, result.text))
        notes += [f"{path}: {n}" for n in result.notes]
    # written under the vault lock sync holds; committed below as the merge, not by the transaction
    tx.apply(mem.root, writes, None, lock=mem.vault.lock())
    g.run("add", "--", *[w.path for w in writes])
    return notes


def _after_merge(mem: Service, rep: SyncReport, index: bool, changed: list[str] | None) -> None:
    """The caches follow the merged files: the session context, then recall's index (incremental)."""
    from ..store.context_cache import refresh_context

    try:
        refresh_context(mem.root, changed=[p for p in changed if p] if changed is not None else None)
    except (OSError, ValueError, VaultError) as e:
        rep.notes.append(f"the session context cache was not refreshed ({e}); the next session rebuilds it")
    if index and (mem.root / ".epimem" / "recall").is_dir():
        rep.notes += _index(mem.root)


def _index(root: Path) -> list[str]:
    from ..recall.api import Recaller

    try:
        r = Recaller(root)
        rep = r.sync()
        return list(r.notes) or ([f"the recall index was updated ({rep.action})"] if rep.action else [])
    except Exception as e:  # the index is rebuildable; a failure must not fail a sync that landed
        return [f"the recall index was not updated ({e}); `epimem index sync` updates it"]


# --- clone -------------------------------------------------------------------------------------

@dataclass
class CloneReport:
    root: Path
    url: str
    beliefs: int
    notes: list[str] = field(default_factory=list)


def clone(url: str, path: str | os.PathLike, *, index: bool = True, today=None) -> CloneReport:
    """Clone a vault from `url` into `path`, register the merge driver, build the index."""
    from .service import open_service

    dest = Path(path).expanduser().absolute()
    if dest.exists() and any(dest.iterdir()):
        raise Conflict(f"{dest} already exists and is not empty; choose a new folder", path=str(dest))
    # --no-local: from a path, git would hard-link every object, what a purge made unreachable too.
    p = gitrun.call(dest.parent if dest.parent.is_dir() else Path.cwd(), "clone", "--quiet", "--no-local", url,
                    str(dest))
    if p.returncode != 0:
        raise StorageError(f"cannot clone {url}: {_first_lines(p.stderr)}")
    _check_out_a_branch(_Git(dest))
    from .setup import make_private

    make_private(dest)  # as `init` makes a vault: the owner's alone
    mem = open_service(dest, today)
    if not mem.vault.exists():
        raise VaultError(f"{url} is a git repository but not an epimem vault (no epistemology.md, no "
                         f"beliefs/); it was cloned into {dest}, which you may delete", path=str(dest))
    mem.vault.require()  # registers the merge driver
    rep = CloneReport(dest, url, 0)
    if ensure_attributes(mem):
        rep.notes.append("the vault's .gitattributes now names epimem's merge driver (committed here; "
                         "`epimem sync` sends it)")
    beliefs, problems = mem.vault.load_beliefs()
    rep.beliefs = len(beliefs)
    rep.notes += [str(p) for p in problems]
    if index:
        rep.notes += _index(dest)
    return rep


def _check_out_a_branch(g: _Git) -> None:
    """A bare remote made by `git init --bare` names `master` as its HEAD while the vault
    pushed `main`: git then clones nothing into the work tree. Check out the branch there is."""
    if g.ok("rev-parse", "--verify", "--quiet", "HEAD"):
        return
    branches = [b.strip() for b in g.out("branch", "-r", "--format=%(refname:short)").splitlines()
                if b.strip() and not b.strip().endswith("/HEAD")]
    pick = next((b for b in branches if b.endswith("/main")), branches[0] if branches else None)
    if pick is not None:
        g.run("checkout", "--quiet", "-b", pick.split("/", 1)[1], "--track", pick)
