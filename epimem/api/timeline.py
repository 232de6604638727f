"""The vault over time: a belief's history, what changed in words, undo, and
committing what the user changed by hand. Git is the log (`epimem.store.git`);
undo and hand edits are committed through the one write path's `record`."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.changes import Change, belief_change, headline, tension_change
from ..core.errors import Conflict, NotFound, StorageError
from ..core.model import Problem
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
