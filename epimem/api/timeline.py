"""The vault over time: a belief's history, what changed in words, undo, and
committing what the user changed by hand. Git is the log (`epimem.store.git`);
undo and hand edits are committed through the one write path's `record`."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.changes import Change, belief_change, tension_change
from ..core.errors import Conflict, NotFound, StorageError
from ..core.notes import parse_observations
from ..store import git
from ..store import transaction as tx
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
            new = fp.read_text(encoding="utf-8") if fp.exists() else None
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
