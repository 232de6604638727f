"""The vault over time: a belief's history, what changed in words, undo, and
committing what the user changed by hand. Git is the log (`epimem.store.git`);
undo and hand edits are committed through the one write path's `adopt`."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import rules
from ..core.changes import Change, belief_change, mapping_changes, sessions_changes, tension_change
from ..core.errors import Conflict, InputError, NotFound, StorageError
from ..core.model import Snapshot
from ..core.notes import parse_note, parse_observations
from ..core.record import FIELDS
from ..core.redact import redact
from ..store import git
from ..store import transaction as tx
from ..store.files import NotUTF8, read_text
from ..store.git import HistoryError
from . import common

if TYPE_CHECKING:
    from .service import Service


@contextmanager
def _reading_git(what: str):
    """Reading history runs git as a process: a failure to start it (no git on PATH,
    a vault on a lost mount) is a StorageError, like every other git failure."""
    try:
        yield
    except OSError as e:
        raise StorageError(f"cannot read the vault's {what}: {e.strerror or e}") from None


def history(mem: Service, belief_id: str) -> list[git.HistoryPoint]:
    common.check_id_input(belief_id)
    common.require_repo(mem)
    with _reading_git("history"):
        pts = git.belief_history(mem.root, belief_id)
    if not pts and not mem.vault.belief_path(belief_id).exists():
        raise NotFound(f"no belief '{belief_id}' and no history of one", path=f"beliefs/{belief_id}.md")
    return _shown(mem, pts)


def _redacted(mem: Service, pts: list[git.HistoryPoint]) -> list[git.HistoryPoint]:
    """Rule 23 for the log: epimem redacts the messages it commits, but a belief's history also
    lists the commits other tools made to its file (Obsidian's git plugin, a `git commit` by hand,
    another machine's push), whose subjects are whatever was typed there."""
    patterns = mem.params.redact
    return [p if (s := redact(p.subject, patterns)) == p.subject else replace(p, subject=s) for p in pts]


def _shown(mem: Service, pts: list[git.HistoryPoint]) -> list[git.HistoryPoint]:
    """A history as every reader shows it: redacted (`_redacted`), and a commit whose file breaks
    a rule epimem would have refused (another tool committed a hand edit: Obsidian's git plugin,
    a `git commit`) shown at the last valid state before it, saying why (rule 21: no reader
    presents a number `validate` refuses)."""
    out: list[git.HistoryPoint] = []
    last: tuple[float | None, str | None] = (None, None)
    for p in _redacted(mem, pts):
        why = _refused_state(p, mem.params)
        if why:
            p = replace(p, confidence=last[0], status=last[1], refused=why)
        else:
            last = (p.confidence, p.status)
        out.append(p)
    return out


def _refused_state(p: git.HistoryPoint, params) -> str:
    from ..core.model import STATUSES

    if p.status not in (None, "deleted", "malformed") and p.status not in STATUSES:
        return f"'status' must be one of {', '.join(STATUSES)}, not {p.status!r}"
    if p.confidence is None or p.basis is None:
        return ""  # a state read from the vault's own reader is valid by then
    try:
        rules.check_confidence(p.confidence, p.basis, params)
    except rules.RuleError as e:
        return str(e)
    return ""


def _since(mem: Service, since: str) -> str | None:
    """The revision to compare with; None for the whole history (or an empty one)."""
    try:
        return git.resolve_since(mem.root, since)  # an InputError names `since` when it is neither
    except HistoryError:
        if not git.has_commits(mem.root):
            return None  # a date before a history that has not begun
        raise


def diff(mem: Service, since: str) -> list[Change]:
    common.require_repo(mem)
    base = _since(mem, since)
    if not git.has_commits(mem.root):
        return []
    with _reading_git("history"):
        rows = git.changed_paths(mem.root, base)
        return describe(mem, rows, (lambda p: f"{base}:{p}") if base else None, lambda p: f"HEAD:{p}")


def describe(mem: Service, rows, old_spec, new_spec, new_from_disk: bool = False) -> list[Change]:
    """What changed between two states of the vault, in words a person reads."""
    rows = [(st, p) for st, p in rows if not Path(p).name.startswith(".")]  # .gitkeep, .gitignore
    specs: list[str] = []
    for _, p in rows:
        if old_spec:
            specs.append(old_spec(p))
        if not new_from_disk:
            specs.append(new_spec(p))
    blobs = iter(git.show_many(mem.root, specs))
    changes: list[Change] = []
    obs_added = 0
    for st, p in rows:
        old = next(blobs) if old_spec else None
        if new_from_disk:
            fp = mem.root / p
            new = _disk_text(fp) if fp.exists() else None
        else:
            new = next(blobs)
        stem = Path(p).stem
        c: Change | None
        if p.startswith("beliefs/") and p.endswith(".md"):
            now = git.parse_belief_blob(new, stem)
            broken = rules.rule_problems(now, mem.params, today=mem.machine_day) if now is not None else []
            if broken:
                # Rule 21: a state committed by another tool that epimem would have refused is
                # not described as the belief's (its numbers), only as refused, and why.
                changes.append(Change("belief", stem, "added" if old is None else "changed", (
                    "an edit was committed that the rules refuse, so it is shown as before: "
                    + "; ".join(m for _, m in broken),)))
                continue
            c = belief_change(stem, git.parse_belief_blob(old, stem), now)
            if old is not None and new is not None:
                # keys epimem does not know (Obsidian's `aliases`, a user's own) are named too
                extra = mapping_changes(_meta(old), _meta(new), skip=BELIEF_KEYS)
                if extra:
                    c = Change("belief", stem, "changed", (c.details if c else ()) + tuple(extra))
        elif p.startswith("tensions/") and p.endswith(".md"):
            c = tension_change(stem, git.parse_tension_blob(old, stem), git.parse_tension_blob(new, stem))
        elif p.startswith("observations/"):
            before = {o.id: o for o in parse_observations(old or "")[0]}
            after = {o.id: o for o in parse_observations(new or "")[0]}
            obs_added += len(after.keys() - before.keys())
            # The log is append-only (a mistake is corrected by a new entry):
            # an entry changed or removed by hand is named, never passed over.
            for oid in sorted(before):
                if oid not in after:
                    changes.append(Change("observation", oid, "removed", ("the log is append-only",)))
                elif after[oid] != before[oid]:
                    changes.append(Change("observation", oid, "edited", ("the log is append-only",)))
            c = None
        elif p.startswith("reviews/"):
            c = Change("review", stem, "added" if old is None else "changed")
        elif p in ("epistemology.md", SESSIONS) and old is None and new is not None:
            c = Change("file", p, "added")  # a new file is new, not each of its keys (`init`'s commit)
        elif p == "epistemology.md":
            c = _file_change(p, _meta(old), _meta(new), mapping_changes)
        elif p == SESSIONS:
            c = _file_change(p, _json(old), _json(new), sessions_changes)
        else:
            c = Change("file", p, {"A": "added", "D": "removed"}.get(st, "changed"))
        if c:
            changes.append(c)
    if obs_added:
        changes.append(Change("observations", str(obs_added), "recorded"))
    # Rule 23: the states compared are committed ones, and a commit epimem did not make (Obsidian's
    # git plugin commits what was typed minutes ago) holds the text as it was typed.
    patterns = mem.params.redact
    return [replace(c, details=tuple(redact(d, patterns) for d in c.details)) for c in changes]


BELIEF_KEYS = frozenset(FIELDS)


def _meta(text: str | None) -> dict:
    note = parse_note(text, lenient=True) if text is not None else None
    return note.meta if note is not None else {}


def _json(text: str | None) -> dict:
    from ..core.nesting import loads_json

    try:
        v = loads_json(text) if text else {}
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def _file_change(path: str, old: dict, new: dict, how) -> Change:
    details = tuple(how(old, new))
    return Change("file", path, "changed" if details else "edited", details)


# What undo walks back through (SPEC §4): epimem's commits that changed what was
# learned. A session count, the vault's creation, a format migration and undo/redo themselves are not.
CONTENT = ("beliefs/", "observations/", "tensions/")
NOT_UNDONE = frozenset({"init", "session", "undo", "redo", "migrate"})
SESSIONS = "state/sessions.json"


def _learned(c: git.EpimemCommit) -> bool:
    return c.op not in NOT_UNDONE and any(p.startswith(CONTENT) for p in c.paths)


def undo_state(log: list[git.EpimemCommit]) -> tuple[dict[str, str], list[git.EpimemCommit]]:
    """(undone: target sha → the undo commit's sha, redoable: the undo commits since
    the last change, oldest first), from epimem's log (newest first). Pure.

    An undo made by an earlier epimem that reverted an undo is read as a redo.
    """
    by_sha = {c.info.sha: c for c in log}
    undone: dict[str, str] = {}
    stack: list[git.EpimemCommit] = []

    def redone(target: str) -> None:
        undone.pop(target, None)
        stack[:] = [u for u in stack if u.info.trailers.get("Epimem-Reverts") != target]

    for c in reversed(log):
        t = c.info.trailers
        if c.op == "undo":
            target = t.get("Epimem-Reverts", "")
            inner = by_sha.get(target)
            if inner is not None and inner.op == "undo":  # the old "undo of an undo"
                redone(inner.info.trailers.get("Epimem-Reverts", ""))
                continue
            undone[target] = c.info.sha
            stack.append(c)
        elif c.op == "redo":
            redone(t.get("Epimem-Redoes", ""))
        elif _learned(c):
            stack = []
    return undone, stack


def _target(mem: Service, log: list[git.EpimemCommit], undone: dict[str, str], commit: str | None) -> git.EpimemCommit:
    if commit is None:
        for c in log:
            if _learned(c) and c.info.sha not in undone:
                return c
        raise Conflict("nothing to undo: no epimem commit that changed a belief, an observation or a tension "
                       "is left to take back")
    try:
        sha = git.run(mem.root, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}", retries=1)
    except git.HistoryError:
        raise InputError(f"'commit': {commit!r} is not a commit of this vault", field="commit") from None
    found = next((c for c in log if c.info.sha == sha), None)
    if found is None:
        raise InputError(f"'commit': {sha[:8]} is not an epimem commit; undo takes back only epimem's own",
                         field="commit")
    if found.op in ("undo", "redo"):
        raise Conflict(f"{sha[:8]} is an {found.op}; `redo` re-applies what was undone")
    if found.op == "session":
        raise Conflict(f"{sha[:8]} only counted sessions; a session count is never what undo reverts")
    if found.op == "init":
        raise Conflict("that commit created the vault; there is nothing before it to return to")
    if sha in undone:
        raise Conflict(f"{sha[:8]} is already undone (by {undone[sha][:8]}); `redo` re-applies it")
    return found


def _beliefs(trailers: dict[str, str]) -> tuple[str, ...]:
    return tuple(b.strip() for b in trailers.get("Epimem-Beliefs", "").split(",") if b.strip())


def undo(mem: Service, commit: str | None = None) -> tuple[str, str]:
    """Revert the given epimem commit, or the last one not yet undone that changed a
    belief, an observation or a tension; a new commit. Returns (new sha, undone subject)."""
    common.writable(mem)

    def pick() -> tuple[str, tx.Commit, str]:
        log = git.epimem_log(mem.root)
        undone, _ = undo_state(log)
        target = _target(mem, log, undone, commit)
        c = tx.Commit(f"undo: {target.info.subject}", "undo", beliefs=_beliefs(target.info.trailers),
                      extra=(("Epimem-Reverts", target.info.sha),), when=mem.replayed)
        return target.info.sha, c, target.info.subject, target.op == "import"

    return _revert(mem, pick)


def redo(mem: Service) -> tuple[str, str]:
    """Re-apply the last undo's change (the undos since the last change, newest first)."""
    common.writable(mem)

    def pick() -> tuple[str, tx.Commit, str]:
        log = git.epimem_log(mem.root)
        _, stack = undo_state(log)
        if not stack:
            raise Conflict("nothing to redo: no undo since the last change")
        u = stack[-1]
        target = u.info.trailers.get("Epimem-Reverts", "")
        subject = u.info.subject[len("undo: "):] if u.info.subject.startswith("undo: ") else u.info.subject
        c = tx.Commit(f"redo: {subject}", "redo", beliefs=_beliefs(u.info.trailers),
                      extra=(("Epimem-Reverts", u.info.sha), ("Epimem-Redoes", target)), when=mem.replayed)
        redone = next((x for x in log if x.info.sha == target), None)
        return u.info.sha, c, subject, redone is not None and redone.op == "import"

    return _revert(mem, pick)


def _revert(mem: Service, pick) -> tuple[str, str]:
    """Take back the change `pick()` names (under the lock: (sha, the commit to make, the
    subject to report)) by epimem's own three-way rules, as a `git pull` merges
    (`core.merge`), not by git's line revert: a later change to the same lines (two
    observations appended to one month's log, a belief confirmed again) is the common
    case, and a merge driver that keeps both versions for a person to settle is right
    for a pull but not for an undo, which is refused instead."""
    with common.lock(mem):
        from ..store.journal import recover_if_needed

        recover_if_needed(mem.root, common.lock(mem))  # the log read below must be the finished one
        sha, c, subject, counted = pick()
        writes = _merged_revert(mem, sha, allow_empty=counted)
        if counted:  # an import's sessions are part of what it brought: they go (and come back) with it
            writes += _sessions_revert(mem, sha)
        if not writes:
            raise Conflict(f"nothing to undo: the files {sha[:8]} changed are already as they were before it")
        res = tx.apply(mem.root, writes, c, lock=common.lock(mem), caches=common.caches(mem))
    assert res.commit is not None
    return res.commit, subject


def _sessions_revert(mem: Service, sha: str) -> list[tx.Write]:
    """The session counter without the sessions commit `sha` brought (an import's)."""
    from ..core.kernel import empty_sessions
    from ..core.merge import unapply_sessions
    from ..store import sessions as sessions_file
    from ..store.files import stat_key

    after, before = git.show_many(mem.root, [f"{sha}:{SESSIONS}", f"{sha}^:{SESSIONS}"])
    fp = mem.root / SESSIONS
    if after is None or after == before or not fp.exists():
        return []
    try:
        a = sessions_file.loads(after)
        b = sessions_file.loads(before) if before else empty_sessions()
        now = sessions_file.loads(fp.read_text(encoding="utf-8"))
    except (ValueError, TypeError):
        return []  # a counter that does not parse is reported by validate, never rewritten
    new = unapply_sessions(b, a, now, sessions_file.machine_id(mem.root))
    text = sessions_file.dump(new)
    return [] if text == fp.read_text(encoding="utf-8") else [tx.replace(SESSIONS, text, stat_key(fp))]


def _merged_revert(mem: Service, sha: str, allow_empty: bool = False) -> list[tx.Write]:
    """The writes that take back `sha` by meaning, file by file: base = the file as `sha`
    left it, ours = as it is now (HEAD), theirs = as it was before `sha`. A Conflict
    naming the file when only a person can settle it (prose changed on both sides, a file
    `sha` created or removed that changed since); nothing is written then."""
    from ..core.merge import merge_file, split_log
    from ..store.files import stat_key

    root = mem.root
    paths = [p for p in git.run(root, "diff-tree", "--no-commit-id", "--name-only", "-r", "--no-renames",
                                sha).splitlines() if p and p != SESSIONS]
    dirty = [c.path for c in git.status(root, paths)] if paths else []
    if dirty:
        raise Conflict(f"cannot undo {sha[:8]}: {dirty[0]} has uncommitted edits; commit them (`epimem commit`) "
                       "first; nothing was changed", path=dirty[0])
    blobs = iter(git.show_many(root, [spec for p in paths for spec in (f"{sha}:{p}", f"HEAD:{p}", f"{sha}^:{p}")]))
    writes: list[tx.Write] = []
    for p in paths:
        base, ours, theirs = next(blobs), next(blobs), next(blobs)
        if theirs is None and base is not None and ours not in (None, base) and p.startswith("observations/"):
            theirs = split_log(base)[0]  # the month's log this change began (its heading): what came after stays
        if ours == theirs:
            continue  # already as it was before
        if ours == base:
            text = theirs  # nothing changed it since: the plain inverse
        elif base is None or ours is None or theirs is None:
            what = "created" if theirs is None else ("removed" if base is None else "changed")
            raise Conflict(f"cannot undo {sha[:8]}: it {what} {p}, which a later change "
                           f"{'removed' if ours is None else 'changed'}; undo that one first; nothing was changed",
                           path=p)
        else:
            m = merge_file(p, base, ours, theirs, params=mem.params)
            if m is None or m.needs_user:
                why = "; ".join(m.notes) if m is not None and m.notes else "epimem has no rule to merge it"
                raise Conflict(f"cannot undo {sha[:8]}: {p} was changed since in the same text ({why}); "
                               "undo the later change first, or edit the file; nothing was changed", path=p)
            text = m.text
        if text == ours:
            continue
        fp = root / p
        writes.append(tx.delete(p) if text is None else
                      tx.create(p, text) if ours is None else tx.replace(p, text, stat_key(fp)))
    if not writes and not allow_empty:
        raise Conflict(f"nothing to undo: the files {sha[:8]} changed are already as they were before it")
    return writes


def _disk_text(fp: Path) -> str | None:
    # A file that is not UTF-8 is described as unreadable (None), like a malformed one.
    try:
        return read_text(fp)
    except NotUTF8:
        return None


# --- every belief's history at once (the visual mirror) -------------------------------

HISTORY_CACHE = "history.json"  # under .epimem/: rebuildable from git at any time
_CACHE_VERSION = 2  # 2: subjects redacted (rule 23), each point's basis (rule 21); 1 had neither


def _known_states(mem: Service, snapshot: Snapshot) -> dict[str, tuple[float | None, str]]:
    """{blob sha: (confidence, status)} for the belief files unchanged since the index."""
    staged = git.index_blobs(mem.root, "beliefs/")
    dirty = {p for _, p in git.dirty_paths(mem.root)}
    out: dict[str, tuple[float | None, str]] = {}
    for b in snapshot.beliefs:
        rel = f"beliefs/{b.id}.md"
        sha = staged.get(rel)
        if sha and rel not in dirty and b.path in ("", rel):
            out[sha] = (b.confidence, b.status)
    return out


def _states_of(mem: Service, snapshot: Snapshot | Callable[[], Snapshot],
               ) -> Callable[[], dict[str, tuple[float | None, str]]]:
    return lambda: _known_states(mem, snapshot() if callable(snapshot) else snapshot)


def _cached(path: Path) -> tuple[str | None, dict[str, list[git.HistoryPoint]]]:
    import json
    from datetime import datetime

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != _CACHE_VERSION:
            return None, {}
        return data["head"], {bid: [git.HistoryPoint(s, datetime.fromisoformat(w), subj, op, c, st, basis)
                                    for s, w, subj, op, c, st, basis in pts]
                              for bid, pts in data["beliefs"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return None, {}  # a missing or damaged cache is rebuilt, never an error


def histories(mem: Service, snapshot: Snapshot | Callable[[], Snapshot] | None = None,
              ) -> dict[str, list[git.HistoryPoint]]:
    """Every belief's history from git (oldest point first), from one walk of the log.

    Cached in `.epimem/history.json` by the commit it was read at: the same HEAD
    is read back as it is; a HEAD that descends from the cached one walks only the
    new commits; anything else (a reset, a rebase) walks the whole log again.

    With the `snapshot` just read, a blob that is still the belief's file on disk is
    not parsed again: its state is the snapshot's (read through the vault's parse cache).
    `snapshot` may be a function giving it, called only once git's log has been read: the
    visual page reads the files while git walks the log.
    """
    from ..store.files import compact_json, write_cache
    from ..store.vault import INTERNAL

    common.require_repo(mem)
    path = mem.root / INTERNAL / HISTORY_CACHE
    cached_head, cached = _cached(path)
    with _reading_git("history"):
        if not git.has_commits(mem.root):
            return {}
        head = git.run(mem.root, "rev-parse", "HEAD").strip()
        if cached_head == head:
            # judged again on reading: a pattern added to epistemology.md since, another cap
            return {bid: _shown(mem, pts) for bid, pts in cached.items()}
        since = cached_head if cached_head and git.is_ancestor(mem.root, cached_head, head) else None
        known = None if snapshot is None else _states_of(mem, snapshot)
        head, new = git.all_belief_histories(mem.root, since=since, known=known)
    result = cached if since else {}
    for bid, pts in new.items():
        result[bid] = result.get(bid, []) + pts
    result = {bid: _redacted(mem, pts) for bid, pts in result.items()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_cache(path, compact_json({
            "version": _CACHE_VERSION, "head": head,
            "beliefs": {bid: [[p.sha, p.when.isoformat(), p.subject, p.op, p.confidence, p.status, p.basis]
                              for p in pts] for bid, pts in result.items()}}))
    except OSError:
        pass  # a read-only sidecar only costs the next reader a walk
    return {bid: _shown(mem, pts) for bid, pts in result.items()}


def diff_summary(mem: Service, since: str, limit: int) -> tuple[list[Change], dict[str, int]]:
    """What changed since `since`, bounded for a page: the first `limit` beliefs and tensions
    described in words (`describe`, as `epimem diff`), and how many files changed per folder.

    Observation logs are counted, not described: after a year they are most of the vault,
    and a page says how many observations came in from the snapshot's dates instead.
    """
    common.require_repo(mem)
    base = _since(mem, since)
    if not git.has_commits(mem.root):
        return [], {}
    with _reading_git("history"):
        # A string test, not Path(p).name: since the first commit every file has changed.
        changed = git.changed_blobs(mem.root, base)
        blobs = {p: (old, new) for _, p, old, new in changed}
        rows = [(st, p) for st, p, _, _ in changed if not p.rpartition("/")[2].startswith(".")]
        counts: dict[str, int] = {}
        for _, p in rows:
            folder = p.split("/", 1)[0] if "/" in p else "other"
            counts[folder] = counts.get(folder, 0) + 1
        notes = [(st, p) for st, p in rows if p.startswith(("beliefs/", "tensions/", "reviews/"))][:limit]
        # By blob sha: a `rev:path` would look each path up in its 10,000-entry folder again.
        changes = describe(mem, notes, (lambda p: blobs[p][0] or f"{base}:{p}") if base else None,
                           lambda p: blobs[p][1] or f"HEAD:{p}")
    return changes, counts
