"""The vault over time: a belief's history, what changed in words, undo, and
committing what the user changed by hand. Git is the log (`epimem.store.git`);
undo and hand edits are committed through the one write path's `record`."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.changes import Change, belief_change, headline, tension_change
from ..core.errors import Conflict, NotFound, StorageError
from ..core.model import Problem, Snapshot
from ..core.notes import NoteError, parse_belief, parse_observations
from ..store import git
from ..store import transaction as tx
from ..store.files import NotUTF8, read_text, stat_key
from ..store.git import HistoryError
from . import common

if TYPE_CHECKING:
    from .memory import Memory


@contextmanager
def _reading_git(what: str):
    """Reading history runs git as a process: a failure to start it (no git on PATH,
    a vault on a lost mount) is a StorageError, like every other git failure."""
    try:
        yield
    except OSError as e:
        raise StorageError(f"cannot read the vault's {what}: {e.strerror or e}") from None


def history(mem: Memory, belief_id: str) -> list[git.HistoryPoint]:
    common.check_id_input(belief_id)
    common.require_repo(mem)
    with _reading_git("history"):
        pts = git.belief_history(mem.root, belief_id)
    if not pts and not mem.vault.belief_path(belief_id).exists():
        raise NotFound(f"no belief '{belief_id}' and no history of one", path=f"beliefs/{belief_id}.md")
    return pts


def _since(mem: Memory, since: str) -> str | None:
    """The revision to compare with; None for the whole history (or an empty one)."""
    try:
        return git.resolve_since(mem.root, since)  # an InputError names `since` when it is neither
    except HistoryError:
        if not git.has_commits(mem.root):
            return None  # a date before a history that has not begun
        raise


def diff(mem: Memory, since: str) -> list[Change]:
    common.require_repo(mem)
    base = _since(mem, since)
    if not git.has_commits(mem.root):
        return []
    with _reading_git("history"):
        rows = git.changed_paths(mem.root, base)
        return describe(mem, rows, (lambda p: f"{base}:{p}") if base else None, lambda p: f"HEAD:{p}")


def describe(mem: Memory, rows, old_spec, new_spec, new_from_disk: bool = False) -> list[Change]:
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
            c = belief_change(stem, git.parse_belief_blob(old, stem), git.parse_belief_blob(new, stem))
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
        else:
            c = Change("file", p, {"A": "added", "D": "removed"}.get(st, "changed"))
        if c:
            changes.append(c)
    if obs_added:
        changes.append(Change("observations", str(obs_added), "recorded"))
    return changes


def _undo_subject(subject: str) -> str:
    # Undoing an undo is a redo: say so, rather than "undo: undo: …".
    if subject.startswith("undo: "):
        return "redo: " + subject[len("undo: "):]
    if subject.startswith("redo: "):
        return "undo: " + subject[len("redo: "):]
    return f"undo: {subject}"


def undo(mem: Memory) -> tuple[str, str]:
    """Revert the last epimem commit with a new commit; returns (new sha, undone subject)."""
    common.require_repo(mem)

    def prepare() -> tx.Staged:
        last = git.last_epimem_commit(mem.root)
        if last is None:
            raise Conflict("nothing to undo: no epimem commit in this vault")
        if last.trailers.get("Epimem-Op") == "init":
            raise Conflict("the last epimem commit created the vault; there is nothing before it to return to")
        git.revert(mem.root, last.sha)
        beliefs = tuple(b.strip() for b in last.trailers.get("Epimem-Beliefs", "").split(",") if b.strip())
        commit = tx.Commit(_undo_subject(last.subject), "undo", beliefs=beliefs,
                           extra=(("Epimem-Reverts", last.sha),), when=mem.replayed)
        return tx.Staged(commit, None, abort=lambda: git.abort_revert(mem.root), value=last.subject)

    res = tx.record(mem.root, prepare, lock=common.lock(mem), caches=common.caches(mem))
    assert res.commit is not None
    return res.commit, res.value


def _disk_text(fp: Path) -> str | None:
    # A file that is not UTF-8 is described as unreadable (None), like a malformed one.
    try:
        return read_text(fp)
    except NotUTF8:
        return None


def _redact_hand_edit(mem: Memory, rel: str) -> None:
    """A secret typed into a note by hand is redacted in the file before it is
    committed: git history is pushed and kept, the file is the user's to fix.
    The rewrite goes through the write path, uncommitted: the commit that
    follows records it."""
    import logging

    from ..core.scrub import scrub

    p = mem.root / rel
    if not (rel.endswith(".md") and rel.split("/", 1)[0] in ("beliefs", "observations", "tensions", "reviews")
            and p.is_file() and not p.is_symlink()):
        return
    key = stat_key(p)
    text = read_text(p, rel)
    clean = scrub(rel, text, mem.params.redact)
    if clean == text:
        return
    tx.apply(mem.root, [tx.replace(rel, clean, key)], None, lock=common.lock(mem), caches=common.caches(mem))
    logging.getLogger("epimem").warning("epimem: %s held what looks like a secret; it was redacted in the file "
                                        "before the commit", rel)


def commit_hand_edits(mem: Memory) -> tuple[str | None, list[Change], list[Problem]]:
    """Commit what the user changed by hand, with a message naming it.

    Malformed belief files are reported and left out of the commit, so a
    half-finished edit is never recorded as the vault's state.
    """
    common.require_repo(mem)
    problems: list[Problem] = []
    changes: list[Change] = []

    def prepare() -> tx.Staged | None:
        rows = [(st, p) for st, p in git.dirty_paths(mem.root) if not p.startswith(".epimem/")]
        keep = []
        for st, p in rows:
            if p.endswith(".md") and (mem.root / p).is_file() and not p.startswith("beliefs/"):
                try:
                    read_text(mem.root / p, p)
                except NotUTF8 as e:
                    problems.append(Problem(p, e.line or 1, f"{e.message} (not committed)"))
                    continue
            if p.startswith("beliefs/") and p.endswith(".md") and (mem.root / p).exists():
                try:
                    parse_belief(read_text(mem.root / p, p), Path(p).stem)
                except (NoteError, NotUTF8) as e:
                    problems.append(Problem(p, e.line or 1, f"{e.message} (not committed)"))
                    continue
            _redact_hand_edit(mem, p)
            keep.append((st, p))
        if not keep:
            return None
        tracked = git.has_commits(mem.root)
        changes.extend(describe(mem, [("A" if st == "??" else st[0], p) for st, p in keep],
                                (lambda p: f"HEAD:{p}") if tracked else None, None, new_from_disk=True))
        subject = "edit: " + headline(changes) if changes else "edit: files changed by hand"
        body = "\n".join(f"- {c.sentence()}" for c in changes)
        commit = tx.Commit(subject, "edit", beliefs=tuple(c.ident for c in changes if c.what == "belief"),
                           body=body, when=mem.replayed)
        return tx.Staged(commit, tuple(p for _, p in keep))

    res = tx.record(mem.root, prepare, lock=common.lock(mem), caches=common.caches(mem))
    return res.commit, changes, problems


# --- every belief's history at once (the visual mirror) -------------------------------

HISTORY_CACHE = "history.json"  # under .epimem/: rebuildable from git at any time
_CACHE_VERSION = 1


def _known_states(mem: Memory, snapshot: Snapshot) -> dict[str, tuple[float | None, str]]:
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


def _cached(path: Path) -> tuple[str | None, dict[str, list[git.HistoryPoint]]]:
    import json
    from datetime import datetime

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != _CACHE_VERSION:
            return None, {}
        return data["head"], {bid: [git.HistoryPoint(s, datetime.fromisoformat(w), subj, op, c, st)
                                    for s, w, subj, op, c, st in pts]
                              for bid, pts in data["beliefs"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return None, {}  # a missing or damaged cache is rebuilt, never an error


def histories(mem: Memory, snapshot: Snapshot | None = None) -> dict[str, list[git.HistoryPoint]]:
    """Every belief's history from git (oldest point first), from one walk of the log.

    Cached in `.epimem/history.json` by the commit it was read at: the same HEAD
    is read back as it is; a HEAD that descends from the cached one walks only the
    new commits; anything else (a reset, a rebase) walks the whole log again.

    With the `snapshot` just read, a blob that is still the belief's file on disk is
    not parsed again: its state is the snapshot's (read through the vault's parse cache).
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
            return cached
        since = cached_head if cached_head and git.is_ancestor(mem.root, cached_head, head) else None
        known = _known_states(mem, snapshot) if snapshot is not None else None
        head, new = git.all_belief_histories(mem.root, since=since, known=known)
    result = cached if since else {}
    for bid, pts in new.items():
        result[bid] = result.get(bid, []) + pts
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_cache(path, compact_json({
            "version": _CACHE_VERSION, "head": head,
            "beliefs": {bid: [[p.sha, p.when.isoformat(), p.subject, p.op, p.confidence, p.status] for p in pts]
                        for bid, pts in result.items()}}))
    except OSError:
        pass  # a read-only sidecar only costs the next reader a walk
    return result


def diff_summary(mem: Memory, since: str, limit: int) -> tuple[list[Change], dict[str, int]]:
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
        rows = [(st, p) for st, p in git.changed_paths(mem.root, base) if not Path(p).name.startswith(".")]
        counts: dict[str, int] = {}
        for _, p in rows:
            folder = p.split("/", 1)[0] if "/" in p else "other"
            counts[folder] = counts.get(folder, 0) + 1
        notes = [(st, p) for st, p in rows if p.startswith(("beliefs/", "tensions/", "reviews/"))][:limit]
        changes = describe(mem, notes, (lambda p: f"{base}:{p}") if base else None, lambda p: f"HEAD:{p}")
    return changes, counts
