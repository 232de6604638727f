"""Forgetting (SPEC §15): `forget ID` and `forget --purge`, planned, confirmed by the user, done.

Two steps, so that nothing is forgotten without the user's word (rule 22):

    p = forget.plan(mem, ["prefers-tabs"], purge=True, remotes="push")   # reads, writes nothing
    ... show p (files, commits, remotes) and ask the user ...
    forget.forget(mem, p, confirm=p.token)                               # refuses if the vault moved

`forget` retires each belief as a tombstone and takes what it said out of the work tree
(`core.forget.forget_file`: observations stubbed, tensions deleted, review lines and other
beliefs' evidence notes removed, a typed text replaced) in one commit through the write path.
With `purge` the history is then rewritten the same way (`store.rewrite`): every commit, every
old object and reflog; the caches under `.epimem/` are dropped and recall's index erased and
rebuilt through recall's own API; a record of the purge (`state/purges/<day>-<id>.json`: which
commit became which, never what was forgotten) is committed in the new history, so that
another clone's `sync` refuses to merge the old history back and can run the same purge.
"""

from __future__ import annotations

import hashlib
import json
import secrets as _secrets
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import Conflict, InputError, NotFound, StorageError
from ..core.forget import (
    CommitChange,
    Forgetting,
    clean_words,
    commit_changes,
    connected,
    forget_file,
    forget_outside,
    forgotten_on,
    names_forgotten,
    tombstone,
    words_of_belief,
    words_of_tension,
)
from ..store import rewrite
from . import common

if TYPE_CHECKING:
    from .service import Service

RECORDS = "state/purges"
PUSH_MARKER = "epimem-purge-push.json"  # in the git directory: the remotes a purge still has to reach
MIN_TEXT = 4
REMOTE_POLICIES = ("push", "later")


@dataclass(frozen=True)
class FileChange:
    path: str
    what: str  # tombstone · stubbed · deleted · lines removed · notes removed · text replaced


@dataclass(frozen=True)
class RemoteAction:
    name: str
    branch: str
    lease: str | None  # what the remote's branch holds now (the old history), None when it has none
    action: str        # push (now) · later (the next `epimem sync`)


@dataclass(frozen=True)
class Plan:
    """What `forget` will do, for the user to confirm. `texts` counts the typed texts; they
    themselves are held only in `forgetting` (never shown, never written)."""

    beliefs: tuple[str, ...]
    texts: int
    purge: bool
    files: tuple[FileChange, ...]
    commits: tuple[CommitChange, ...]
    remotes: tuple[RemoteAction, ...]
    token: str
    forgetting: Forgetting = field(repr=False, compare=False, default=None)  # type: ignore[assignment]
    writes: tuple = field(repr=False, compare=False, default=())
    outside: tuple = field(repr=False, compare=False, default=())  # files git does not hold (ignored)
    state: tuple = field(repr=False, compare=False, default=())

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.commits:
            out[c.how] = out.get(c.how, 0) + 1
        return out


@dataclass
class Report:
    plan: Plan
    commit: str | None = None                 # the forget commit (None: the work tree needed nothing)
    rewritten: dict[str, str] = field(default_factory=dict)  # old commit -> new (purge)
    record: str | None = None                  # the purge record's path
    head: str | None = None
    pushed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --- planning -----------------------------------------------------------------------------------

def plan(mem: Service, beliefs: Iterable[str] = (), *, purge: bool = False, texts: Sequence[str] = (),
         remotes: str | None = None) -> Plan:
    """What forgetting `beliefs` (and purging `texts`, typed somewhere) would change. Writes nothing."""
    common.require_repo(mem)
    ids = tuple(dict.fromkeys(common.check_id_input(b, "belief_id") for b in beliefs))
    texts = tuple(dict.fromkeys(_check_text(t) for t in texts))
    purge = purge or bool(texts)
    if not ids and not texts:
        raise InputError("name a belief to forget, or a text to purge", field="belief_id")
    if remotes is not None and remotes not in REMOTE_POLICIES:
        raise InputError(f"'remotes' must be one of {', '.join(REMOTE_POLICIES)}, not {remotes!r}", field="remotes")
    root = mem.root
    for bid in ids:
        if not (root / "beliefs" / f"{bid}.md").exists():
            raise NotFound(f"no belief '{bid}' (beliefs/{bid}.md does not exist)", path=f"beliefs/{bid}.md")
    _require_clean(mem)
    f = gather(mem, ids, texts)
    writes, outside, files = _work_tree(mem, f)
    if not purge and not writes and not outside:
        raise Conflict(f"{', '.join(ids)} {'is' if len(ids) == 1 else 'are'} forgotten already; "
                       "`--purge` takes it out of the history too", path=f"beliefs/{ids[0]}.md")
    commits: tuple[CommitChange, ...] = ()
    actions: tuple[RemoteAction, ...] = ()
    if purge:
        tips = [r.name for r in rewrite.refs(root) if _rewritten(r.name)]
        if tips:
            commits = commit_changes(rewrite.rewrite(root, f, tips, dry_run=True).facts)
        actions = _remote_actions(mem, remotes)
    state = _state(root)
    token = hashlib.sha256(json.dumps([state, ids, len(texts), purge, f.day.isoformat(),
                                       [(c.path, c.what) for c in files], [a.name for a in actions],
                                       remotes]).encode()).hexdigest()[:16]
    return Plan(ids, len(texts), purge, tuple(files), commits, actions, token, f, tuple(writes), tuple(outside),
                state)


def _check_text(text: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InputError("the text to purge is empty", field="purge_text")
    if "\n" in text or "\r" in text:
        raise InputError("the text to purge must be one line (purge each line of a longer text)", field="purge_text")
    if len(text) < MIN_TEXT:
        raise InputError(f"the text to purge has fewer than {MIN_TEXT} characters: it would be replaced in every "
                         "word that holds it, across the whole history", field="purge_text")
    return text


def _rewritten(name: str) -> bool:
    """The refs a purge rewrites: the vault's own; a remote's are dropped (they hold the old history)."""
    return not name.startswith("refs/remotes/") and not rewrite.is_temp(name)


def _state(root: Path) -> tuple:
    return tuple(sorted((r.name, r.sha) for r in rewrite.refs(root)))


def _require_clean(mem: Service) -> None:
    from ..store import git

    dirty = [p for st, p in git.dirty_paths(mem.root) if p != "state/sessions.json"]
    if git.has_commits(mem.root) and not (mem.root / ".git" / "MERGE_HEAD").exists() and not dirty:
        return
    if (mem.root / ".git" / "MERGE_HEAD").exists():
        raise Conflict("a merge is unfinished in the vault; finish it (or `git merge --abort`) before forgetting")
    if dirty:
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise Conflict(f"the vault has changes that are not committed ({shown}); commit them (`epimem commit`) "
                       "or undo them before forgetting, so that what is forgotten is forgotten from them too",
                       path=dirty[0])
    raise Conflict("the vault has no commit yet; there is nothing to forget")


def gather(mem: Service, ids: Sequence[str], texts: Sequence[str] = (), day: date | None = None) -> Forgetting:
    """What the beliefs said in any version the history holds, and the observations that connect them."""
    root = mem.root
    day = day or mem.write_today  # rule 20: the tombstone and the stubs are dated by the machine
    if not ids:
        return Forgetting(day, (), frozenset(), tuple(texts), ())
    words: list[str] = []
    observations: set[str] = set()
    for path, data in _versions(root, ids):
        text = data.decode("utf-8", "replace")
        if path.startswith("beliefs/"):
            words += words_of_belief(text, Path(path).stem)
        elif path.startswith("observations/"):
            for oid, said in connected(text, ids):
                observations.add(oid)
                words += said
        elif path.startswith("tensions/"):
            if names_forgotten(text, Forgetting(day, tuple(ids))):
                words += words_of_tension(text)
    return Forgetting(day, tuple(ids), frozenset(observations), tuple(texts), clean_words(words))


def _versions(root: Path, ids: Sequence[str]) -> Iterator[tuple[str, bytes]]:
    """Every version, in the history and in the work tree, of the forgotten beliefs' files, the
    logs and the tensions: what they said is looked for in all of them (read a chunk at a time)."""
    from ..store import git

    paths = [f"beliefs/{b}.md" for b in ids]
    at: dict[str, list[str]] = {}
    if git.has_commits(root):
        out = rewrite.text(root, "log", "--all", "--format=", "--raw", "--no-abbrev", "--no-renames", "-c",
                           "--", *paths, "observations/", "tensions/")
        for line in out.splitlines():
            if not line.startswith(":") or "\t" not in line:
                continue
            meta, path = line.split("\t", 1)
            path = path.split("\t")[-1]
            blob = meta.split()[-2]
            if set(blob) != {"0"} and path not in at.setdefault(blob, []):
                at[blob].append(path)
    for sha, data in rewrite.blobs(root, list(at)):
        for path in at[sha]:
            yield path, data
    for p in paths:
        if (root / p).exists():
            yield p, (root / p).read_bytes()
    for folder in ("observations", "tensions"):
        d = root / folder
        if d.is_dir():
            for q in sorted(d.glob("*.md")):
                yield f"{folder}/{q.name}", q.read_bytes()


def _work_tree(mem: Service, f: Forgetting, *, untracked: bool = True) -> tuple[list, list, list[FileChange]]:
    """The writes that take what `f` forgets out of the work tree (the files git holds, those it
    ignores), and what each does."""
    from ..store import transaction as tx
    from ..store.files import stat_key

    root = mem.root
    writes, files = [], []
    tracked = [p for p in rewrite.text(root, "ls-files", "-z").split("\0") if p]
    for bid in f.beliefs:
        rel = f"beliefs/{bid}.md"
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
        if forgotten_on(text) is None:
            writes.append(tx.replace(rel, tombstone(bid, f.day), stat_key(root / rel)))
            files.append(FileChange(rel, "tombstone"))
    candidates = tracked if f.texts else [p for p in tracked if p.startswith(rewrite.TEXT_DIRS)]
    for rel in candidates:
        if rel in f.paths or not rel.endswith((".md", ".json", ".txt")) and not f.texts:
            continue
        p = root / rel
        try:
            data = p.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        new = forget_file(rel, text, f)
        if new == text:
            continue
        key = stat_key(p)
        if new is None:
            writes.append(tx.Write(rel, None, "replace", key))
            files.append(FileChange(rel, "deleted"))
            continue
        writes.append(tx.replace(rel, new, key))
        top = rel.split("/", 1)[0]
        hows = []
        if f.beliefs and forget_file(rel, text, replace(f, texts=())) != text:
            hows.append({"observations": "stubbed", "reviews": "lines removed"}.get(top, "notes removed"))
        if any(t in text for t in f.texts):
            hows.append("text replaced")
        files.append(FileChange(rel, ", ".join(hows) or "text replaced"))
    outside = []
    for rel, new, key in _outside_git(root, set(tracked), f) if untracked else ():
        outside.append(tx.replace(rel, new, key))
        files.append(FileChange(rel, "text replaced (not in git)"))
    return writes, outside, files


def _outside_git(root: Path, tracked: set[str], f: Forgetting) -> Iterator[tuple[str, str, tuple[int, int]]]:
    """(path, new text, stat key) of each file under the vault that git does not hold and that holds
    what `f` forgets: what git ignores (Obsidian's `.trash/` and layout, an editor's leftovers) is
    under the vault too. `.git/` is the purge's, `.epimem/` the caches' (dropped); links are not followed."""
    import os

    from ..core.forget import NOTE_SUFFIXES
    from ..store.files import INTERNAL_DIR, stat_key

    texts = [t.encode("utf-8") for t in f.texts if t]
    words = [w.encode("utf-8") for w in f.words]
    if not texts and not words:
        return
    for dirpath, dirs, names in os.walk(root):
        here = Path(dirpath)
        if here == root:
            dirs[:] = [d for d in dirs if d not in (".git", INTERNAL_DIR)]
        dirs[:] = [d for d in dirs if not (here / d).is_symlink()]
        for name in sorted(names):
            p = here / name
            rel = p.relative_to(root).as_posix()
            if rel in tracked or p.is_symlink():
                continue
            try:
                data = p.read_bytes()
            except OSError:
                continue
            if not (any(t in data for t in texts)
                    or (rel.lower().endswith(NOTE_SUFFIXES) and any(w in data for w in words))):
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                raise Conflict(f"{rel} (a file git does not hold) holds what is forgotten but is not text epimem "
                               "can change; delete it or move it out of the vault, then forget again",
                               path=rel) from None
            new = forget_outside(rel, text, f)
            if new != text:
                yield rel, new, stat_key(p)


def _remote_actions(mem: Service, policy: str | None) -> tuple[RemoteAction, ...]:
    """Each remote and what the purge does about it. A remote holds the old history: without
    the user's word on it, another machine would merge it back, so the purge refuses."""
    root = mem.root
    names = [n for n in rewrite.text(root, "remote").split() if n]
    if not names:
        return ()
    branch = (rewrite.head_ref(root) or "refs/heads/main").removeprefix("refs/heads/")
    if policy is None:
        raise Conflict(
            f"the vault has {'a remote' if len(names) == 1 else 'remotes'} ({', '.join(names)}) holding its "
            "history: a purge here alone would be undone by the next sync of another machine. Say what to do "
            "with it: `--remotes push` sends the rewritten history now (with a lease: only over the history this "
            "vault last saw there), `--remotes later` leaves that to the next `epimem sync`. Either way the other "
            "machines' `epimem sync` then refuses to merge the old history and tells them how to follow")
    out = []
    head = rewrite.text(root, "rev-parse", "HEAD")
    for name in names:
        tracking = f"refs/remotes/{name}/{branch}"
        lease = rewrite.text(root, "rev-parse", "--verify", "--quiet", tracking, check=False) or None
        if lease and not rewrite.ok(root, "merge-base", "--is-ancestor", lease, head):
            raise Conflict(f"{name}/{branch} has commits this vault has not merged; `epimem sync` first, so that "
                           "the purge covers them too")
        out.append(RemoteAction(name, branch, lease, policy))
    return tuple(out)


# --- doing it -------------------------------------------------------------------------------------

def forget(mem: Service, p: Plan, *, confirm: str) -> Report:
    """Do what `p` says. `confirm` must be `p.token`: the caller showed the plan and the user said yes."""
    if not isinstance(p, Plan) or confirm != p.token:
        raise InputError("forgetting needs the user's confirmation of its plan (`plan`, then `forget` with the "
                         "plan's token)", field="confirm")
    from ..store import transaction as tx

    rep = Report(p)
    lock = mem.vault.lock()
    with lock:
        if _state(mem.root) != p.state:
            raise Conflict("the vault changed since the plan was made; plan again and confirm what it says now")
        if p.writes:
            subject = "forget: " + (", ".join(p.beliefs) if p.beliefs else "") + \
                (("; " if p.beliefs else "") + f"{p.texts} typed text{'s' if p.texts != 1 else ''} removed"
                 if p.texts else "")
            body = "Forgotten at the user's request: " + "; ".join(
                f"{c.path} ({c.what})" for c in p.files[:50]) + (" …" if len(p.files) > 50 else "")
            c = tx.Commit(subject, "forget", beliefs=p.beliefs, body=body, when=mem.replayed)
            res = tx.apply(mem.root, list(p.writes), c, lock=lock, caches=common.caches(mem))
            rep.commit = res.commit
        if p.outside:  # not in git: written as any change is, without a commit
            tx.apply(mem.root, list(p.outside), None, lock=lock)
        if p.purge:
            _purge(mem, p, rep)
        else:
            rewrite.drop_caches(mem.root)
    _recall_afresh(mem, rep)
    if p.purge:
        rewrite.end(mem.root)
        if any(a.action == "push" for a in p.remotes):
            rep.pushed, notes = push_pending(mem)
            rep.notes += notes + [_remote_keeps(mem.root, n) for n in rep.pushed]
    _refresh_context(mem, rep)
    return rep


def _purge(mem: Service, p: Plan, rep: Report) -> None:
    root = mem.root
    f = p.forgetting
    before = {r.name: r.sha for r in rewrite.refs(root)}
    tips = [n for n in before if _rewritten(n)]
    head = rewrite.head_ref(root)
    rewrite.drop_temp_refs(root)
    rewrite.begin_import(root)
    try:
        rw = rewrite.rewrite(root, f, tips)
        rid = _secrets.token_hex(16)
        record_path = f"{RECORDS}/{f.day.isoformat()}-{rid[:8]}.json"
        new_refs = dict(rw.new_refs)
        if head and new_refs.get(head):
            remotes = {a.name: {"branch": a.branch, "tip": a.lease} for a in p.remotes}
            record = {"version": 1, "id": rid, "date": f.day.isoformat(), "beliefs": list(p.beliefs),
                      "texts": p.texts, "old_tips": {n: before[n] for n in tips}, "remotes": remotes,
                      "rewritten": {o: n for o, n in sorted(rw.mapping.items()) if o != n}}
            changed = sum(1 for o, n in rw.mapping.items() if o != n)
            msg = (f"forget: history purged ({changed} commit{'s' if changed != 1 else ''} rewritten)\n\n"
                   "What was forgotten is in no commit before this one. Another clone of this vault still holds "
                   "the old history: its `epimem sync` refuses to merge it and says how to follow (a new clone, "
                   f"or `epimem sync --adopt-purge`). The record lists which commit became which.\n\n"
                   f"Epimem-Op: purge\n" + (f"Epimem-Beliefs: {', '.join(p.beliefs)}\n" if p.beliefs else ""))
            data = (json.dumps(record, indent=1, sort_keys=True) + "\n").encode()
            new_head = rewrite.commit_file(root, str(new_refs[head]), record_path, data, msg)
            new_refs[head] = new_head
            rep.record = record_path
            rep.head = new_head
            if p.remotes:
                _mark_push(root, record_path, p.remotes)
        updates: dict[str, str | None] = dict(new_refs)
        updates.update({n: None for n in before if n.startswith("refs/remotes/")})
    except BaseException:
        rewrite.drop_temp_refs(root)
        rewrite.end(root)
        raise
    rewrite.switch(root, updates)
    rep.rewritten = {o: n for o, n in rw.mapping.items() if o != n}
    rewrite.drop_caches(root)


def _remote_keeps(root: Path, remote: str) -> str:
    url = rewrite.text(root, "remote", "get-url", remote, check=False) or remote
    return (f"{remote} no longer shows the old history, but keeps its objects until it is garbage-collected "
            f"there: on a repository you own, `git -C {url} reflog expire --expire=now --all && git -C {url} gc "
            "--prune=now`; on a hosting service, ask its support to (GitHub: \"removing sensitive data\")")


def _recall_afresh(mem: Service, rep: Report) -> None:
    """Recall's index and Chroma hold the texts: erased and built again through recall's own API."""
    try:
        from ..recall.api import erase

        rep.notes += erase(mem.root)
    except Exception as e:  # the index is rebuildable; the forgetting landed
        rep.notes.append(f"the recall index could not be rebuilt ({e}); run `epimem index rebuild` — until then "
                         "it may still hold what was forgotten")


def _refresh_context(mem: Service, rep: Report) -> None:
    from ..store.context_cache import refresh_context

    try:
        refresh_context(mem.root, mem.today, changed=None)
    except Exception as e:  # a cache: rebuilt by the next session
        rep.notes.append(f"the session context was not rebuilt ({e}); the next session rebuilds it")


# --- the other machines ---------------------------------------------------------------------------

def _mark_push(root: Path, record: str, actions: Sequence[RemoteAction]) -> None:
    doc = {"record": record, "remotes": {a.name: {"branch": a.branch, "lease": a.lease} for a in actions}}
    (root / ".git" / PUSH_MARKER).write_text(json.dumps(doc), encoding="utf-8")


def _read_marker(root: Path) -> dict | None:
    try:
        doc = json.loads((root / ".git" / PUSH_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("remotes"), dict) else None


def _write_marker(root: Path, doc: dict | None) -> None:
    p = root / ".git" / PUSH_MARKER
    if doc is None or not doc.get("remotes"):
        p.unlink(missing_ok=True)
    else:
        p.write_text(json.dumps(doc), encoding="utf-8")


def pending_push(root: Path, remote: str) -> dict | None:
    """What a purge here still has to send to `remote` ({branch, lease}), or None."""
    doc = _read_marker(root)
    if doc is None:
        return None
    if not (root / str(doc.get("record", ""))).exists():
        _write_marker(root, None)  # the purge it was made for was rolled back
        return None
    return doc["remotes"].get(remote)


def push_pending(mem: Service, only: str | None = None) -> tuple[list[str], list[str]]:
    """Send the rewritten history to each remote a purge has yet to reach, with a lease: only if
    the remote's branch still holds what this vault last saw there. (pushed, notes)"""
    root = mem.root
    doc = _read_marker(root)
    if doc is None:
        return [], []
    pushed, notes = [], []
    for name, spec in list(doc["remotes"].items()):
        if only is not None and name != only:
            continue
        ok, why = push_with_lease(root, name, spec["branch"], spec.get("lease"))
        if ok:
            pushed.append(name)
            del doc["remotes"][name]
        else:
            notes.append(why)
    _write_marker(root, doc)
    return pushed, notes


def push_with_lease(root: Path, remote: str, branch: str, lease: str | None) -> tuple[bool, str]:
    """Replace `remote`'s branch by this vault's HEAD only if it still holds `lease` (the old history
    this vault saw there; None: the branch must not exist)."""
    code, out, err = rewrite.call(root, "push", "--porcelain", f"--force-with-lease=refs/heads/{branch}:{lease or ''}",
                                  remote, f"HEAD:refs/heads/{branch}")
    if code == 0:
        return True, ""
    text = (err + out).decode("utf-8", "replace").strip()
    if "stale info" in text or "rejected" in text:
        return False, (f"{remote}/{branch} changed since the purge (another machine pushed to it): nothing was "
                       "sent; `epimem sync` fetches it and says what to do")
    last = text.splitlines()[-1] if text else "no reason given"
    return False, f"could not send the purged history to {remote!r} ({last}); `epimem sync` tries again"


@dataclass(frozen=True)
class Incoming:
    """A purge made on another machine that this clone's history predates."""

    path: str
    record: dict
    local: int  # commits of this clone that the purge did not see (they are carried over by an adoption)


def incoming(mem: Service, theirs: str) -> list[Incoming]:
    """The purge records `theirs` holds whose rewritten commits this clone still has in its history."""
    root = mem.root
    listed = rewrite.run(root, "ls-tree", "-r", "--name-only", theirs, "--", RECORDS + "/", check=False).decode()
    mine = set(rewrite.run(root, "ls-tree", "-r", "--name-only", "HEAD", "--", RECORDS + "/",
                            check=False).decode().split())
    new = [p for p in listed.split() if p and p not in mine]
    if not new:
        return []
    ours = set(rewrite.text(root, "rev-list", "HEAD").split())
    out = []
    for path in new:
        try:
            rec = json.loads(rewrite.run(root, "cat-file", "blob", f"{theirs}:{path}"))
        except (ValueError, StorageError):
            continue
        keys = set((rec.get("rewritten") or {}).keys())
        if keys & ours:
            theirs_all = set(rewrite.text(root, "rev-list", theirs).split())
            local = len([c for c in ours if c not in keys and c not in theirs_all])
            out.append(Incoming(path, rec, local))
    return out


def refusal(remote: str, found: Sequence[Incoming], url: str) -> str:
    rec = found[0].record
    what = ", ".join(rec.get("beliefs") or []) or "a typed text"
    texts = int(rec.get("texts") or 0)
    local = sum(i.local for i in found)
    again = " ".join("--purge-text TEXT" for _ in range(texts))
    return (f"{remote}'s history was rewritten on {rec.get('date')} on another machine to forget {what}"
            + (f" (and {texts} typed text{'s' if texts != 1 else ''})" if texts and rec.get("beliefs") else "")
            + ". This clone still holds the old history: merging it would bring back what was forgotten, so "
              "nothing was merged. Either make a new clone (`epimem clone " + url + " NEW-FOLDER`), check it, "
              "and delete this folder; or run `epimem sync --adopt-purge"
            + (f" {again}" if texts else "") + "` to rewrite this clone the same way"
            + (f" ({local} commit{'s' if local != 1 else ''} of this clone that the purge's record does not list "
               "are carried through it)" if local else "")
            + (f"; the purge removed {texts} text{'s' if texts != 1 else ''} typed by the user: give "
               f"{'it' if texts == 1 else 'them'} again with --purge-text" if texts else "")
            + ".")


def adopt(mem: Service, found: Sequence[Incoming], refs_to_rewrite: Sequence[str], texts: Sequence[str] = (),
          keep_tracking: str | None = None) -> dict:
    """Run another machine's purge here: rewrite this clone's refs (`refs_to_rewrite`) through the
    same forgetting, landing on the commits the purge made wherever it saw the same commit,
    then drop every old object and cache. Returns {ref: new value}."""
    root = mem.root
    texts = tuple(dict.fromkeys(_check_text(t) for t in texts))
    known: dict[str, str] = {}
    beliefs: list[str] = []
    need_texts = 0
    day = None
    for i in found:
        known.update(i.record.get("rewritten") or {})
        beliefs += [b for b in i.record.get("beliefs") or [] if b not in beliefs]
        need_texts += int(i.record.get("texts") or 0)
        day = day or date.fromisoformat(str(i.record.get("date")))
    present = rewrite.present(root, known)
    current = {r.name: r.sha for r in rewrite.refs(root)}
    updates: dict[str, str | None] = {}
    # The other remotes' branches (and a stash) hold the old history too: dropped, a fetch brings them back.
    for name in current:
        if (name.startswith("refs/remotes/") and not (keep_tracking and name.startswith(keep_tracking))) \
                or name == "refs/stash":
            updates[name] = None
    tips = []
    for name in refs_to_rewrite:
        sha = current.get(name)
        if sha is None:
            continue
        if sha in known:
            updates[name] = known[sha]
        else:
            tips.append(name)
    if tips:  # commits the purge did not see: they go through the same forgetting, typed texts included
        if need_texts and len(texts) < need_texts:
            raise InputError(f"the purge removed {need_texts} text{'s' if need_texts != 1 else ''} typed by the "
                             f"user; give {'it' if need_texts == 1 else 'each'} again with --purge-text (or make a "
                             "new clone)", field="purge_text")
        for t in texts:
            if not _occurs(root, t, present[:50]):
                raise InputError("a text given with --purge-text does not occur in the history the purge rewrote; "
                                 "give exactly the text given on the machine that purged", field="purge_text")
    f = gather(mem, beliefs, texts, day=day)
    with mem.vault.lock():
        rewrite.drop_temp_refs(root)
        rewrite.begin_import(root)
        try:
            if tips:
                rw = rewrite.rewrite(root, f, tips, exclude=present, known=known)
                updates.update({n: v for n, v in rw.new_refs.items() if v})
        except BaseException:
            rewrite.drop_temp_refs(root)
            rewrite.end(root)
            raise
        rewrite.switch(root, updates)
        rewrite.drop_caches(root)
    rep = Report(Plan(tuple(beliefs), len(texts), True, (), (), (), ""))
    _recall_afresh(mem, rep)
    rewrite.end(root)
    _refresh_context(mem, rep)
    return updates


def _occurs(root: Path, text: str, commits: Sequence[str]) -> bool:
    """Whether `text` is in one of `commits` (a file or the message): a text given again to follow a
    purge must be one the purge removed."""
    for c in commits:
        if rewrite.ok(root, "grep", "-q", "-F", "-e", text, c, "--"):
            return True
        if text in rewrite.text(root, "log", "-1", "--format=%B", c):
            return True
    return False


# --- what `sync` asks ------------------------------------------------------------------------------

def _records(root: Path, rev: str) -> list[tuple[str, dict]]:
    listed = rewrite.run(root, "ls-tree", "-r", "--name-only", rev, "--", RECORDS + "/", check=False).decode()
    out = []
    for path in listed.split():
        try:
            rec = json.loads(rewrite.run(root, "cat-file", "blob", f"{rev}:{path}"))
        except (ValueError, StorageError):
            continue
        if isinstance(rec, dict) and isinstance(rec.get("rewritten"), dict):
            out.append((path, rec))
    return out


def outgoing_old(mem: Service, theirs: str) -> list[Incoming]:
    """This vault's own purges whose old history `theirs` (a remote's branch) still holds:
    commits another machine pushed on top of the history before the purge."""
    root = mem.root
    mine = _records(root, "HEAD")
    if not mine:
        return []
    theirs_all = set(rewrite.text(root, "rev-list", theirs, "--not", "HEAD").split())
    out = []
    for path, rec in mine:
        keys = set(rec["rewritten"])
        if keys & theirs_all:
            out.append(Incoming(path, rec, len([c for c in theirs_all if c not in keys])))
    return out


def send_pending(mem: Service, remote: str, branch: str) -> tuple[bool, list[str]]:
    """Before a sync fetches: a purge made here that `remote` has yet to get is sent, with a lease,
    when the remote's branch still holds what the purge saw there (so nothing old is fetched)."""
    root = mem.root
    spec = pending_push(root, remote)
    if spec is None or spec.get("branch") != branch:
        return False, []
    code, out, _ = rewrite.call(root, "ls-remote", remote, f"refs/heads/{branch}")
    if code != 0:
        return False, []
    tip = (out.decode().split() or [None])[0]
    head = rewrite.text(root, "rev-parse", "HEAD")
    if tip == head or (tip and rewrite.ok(root, "merge-base", "--is-ancestor", tip, head)
                       and not outgoing_old(mem, tip)):
        pushed, notes = [], []  # it has the new history already (sent by an earlier sync)
        _clear_marker(root, remote)
        return False, notes
    if tip != spec.get("lease"):
        return False, []  # another machine pushed meanwhile: the fetch and `follow` decide
    pushed, notes = push_pending(mem, only=remote)
    if pushed:
        return True, [f"the purged history was sent to {remote} (with a lease); its other clones are refused the "
                      "old history by their next `epimem sync`, which says how to follow"]
    return False, notes


def _clear_marker(root: Path, remote: str) -> None:
    doc = _read_marker(root)
    if doc is not None:
        doc["remotes"].pop(remote, None)
        _write_marker(root, doc)


@dataclass
class Followed:
    lease: str | None = None   # push with this lease (the remote still holds the old history)
    notes: list[str] = field(default_factory=list)


def follow(mem: Service, remote: str, branch: str, theirs: str, *, adopt_purge: bool = False,
           texts: Sequence[str] = ()) -> Followed | None:
    """What a sync does about purges once it has fetched `theirs` (`remote`/`branch`):

    - the remote holds a purge this clone's history predates: refused (nothing is merged), or,
      with `adopt_purge`, this clone's refs rewritten the same way first;
    - the remote holds the history before a purge made here, with commits pushed on it since:
      refused, or with `adopt_purge` those commits carried through the same purge and the
      result pushed with a lease.
    None: nothing to do about purges (the common case: one `ls-tree`)."""
    root = mem.root
    url = rewrite.text(root, "remote", "get-url", remote, check=False) or remote
    found = incoming(mem, theirs)
    if found:
        if not adopt_purge:
            raise Conflict(refusal(remote, found, url))
        local = [r.name for r in rewrite.refs(root) if r.name.startswith(("refs/heads/", "refs/tags/"))]
        updates = adopt(mem, found, local, texts, keep_tracking=f"refs/remotes/{remote}/")
        return Followed(None, [f"this clone now has {remote}'s purged history ({len(updates)} "
                               f"ref{'s' if len(updates) != 1 else ''} rewritten, old objects pruned)"])
    mine = outgoing_old(mem, theirs)
    if not mine:
        if pending_push(root, remote):
            _clear_marker(root, remote)
        return None
    tip = rewrite.text(root, "rev-parse", theirs)
    extra = sum(i.local for i in mine)
    if extra and not adopt_purge:
        # What was fetched holds what the purge removed: it is not kept here.
        rewrite.run(root, "update-ref", "-d", f"refs/remotes/{remote}/{branch}", check=False)
        rewrite.clean(root)
        texts_n = sum(int(i.record.get("texts") or 0) for i in mine)
        raise Conflict(
            f"{remote}/{branch} still holds the history from before the purge made here, with {extra} "
            f"commit{'s' if extra != 1 else ''} another machine pushed on it since; nothing was merged or sent. "
            "`epimem sync --adopt-purge" + "".join(" --purge-text TEXT" for _ in range(texts_n))
            + "` carries those commits through the same purge and sends the result with a lease")
    adopt(mem, mine, [f"refs/remotes/{remote}/{branch}"], texts)
    if not extra:  # the remote holds just the history the purge rewrote: it gets the new one
        return Followed(tip, [f"{remote} still held the history from before the purge; it is sent the purged one"])
    return Followed(tip, [f"{extra} commit{'s' if extra != 1 else ''} pushed to {remote} on the old history were "
                          "carried through the purge"])


def sent(mem: Service, remote: str) -> None:
    """After a push with a lease: the remote has the purged history; what was fetched of the old goes."""
    _clear_marker(mem.root, remote)
    rewrite.clean(mem.root)


def tombstones(mem: Service) -> tuple[str, ...]:
    from ..core.forget import is_forgotten

    bs, _ = mem.vault.load_beliefs()
    return tuple(sorted(b.id for b in bs if is_forgotten(b)))


def reforget(mem: Service, changed: Iterable[str] | None) -> str | None:
    """After a merge: what another machine wrote about a belief forgotten here (an observation
    made before it heard of the forgetting) is taken out again, in one commit. None: nothing was."""
    changed = None if changed is None else [p for p in changed if p.startswith(rewrite.TEXT_DIRS)]
    if changed is not None and not changed:
        return None
    ids = tombstones(mem)
    if not ids:
        return None
    from ..store import transaction as tx

    f = Forgetting(mem.write_today, ids, frozenset(), (), ())
    obs: set[str] = set()
    d = mem.root / "observations"
    for q in sorted(d.glob("*.md")) if d.is_dir() else []:
        obs |= {oid for oid, _ in connected(q.read_text(encoding="utf-8", errors="replace"), ids)}
    f = replace(f, observations=frozenset(obs))
    writes, _, files = _work_tree(mem, f, untracked=False)  # a merge brings only what git holds
    if not writes:
        return None
    c = tx.Commit(f"forget: {', '.join(ids[:5])} again (a merge brought back what was forgotten)", "forget",
                  beliefs=ids, body="; ".join(f"{x.path} ({x.what})" for x in files), when=mem.replayed)
    return tx.apply(mem.root, writes, c, lock=mem.vault.lock(), caches=common.caches(mem)).commit
