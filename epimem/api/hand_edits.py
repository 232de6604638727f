"""Committing what the user changed by hand (Obsidian, an editor): `epimem commit`, `watch --commit`.

A hand edit is legitimate and is never lost, but it obeys the rules like any
other change (rule 18): a belief file that does not parse, or that breaks a
rule (a confidence above its basis's cap), is reported and left out of the
commit, untouched on disk, so the user can fix it. A belief changed within the
rules gets an `edited` evidence line naming the change (rule 12), and decay
counts from that day when the user changed what it claims or how sure it is
(rule 16). The evidence lines are written and committed in one change: the
vault lock is held throughout, and a failed commit puts the files back.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import inbox as core_inbox
from ..core import rules
from ..core.changes import Change, belief_change, belief_field_changes, headline
from ..core.errors import Conflict
from ..core.ids import SLUG, slugify, unique_id
from ..core.model import Belief, Problem
from ..core.notes import (
    NoteError,
    edit_frontmatter,
    key_lines,
    one_parse,
    parse_belief,
    parse_note,
    parse_observations,
    parse_tension,
    refuse_conflict_markers,
    update_belief_text,
    yaml_scalar,
)
from ..core.params import rules_file_problems
from ..store import git
from ..store import transaction as tx
from ..store.files import NotUTF8, read_text, stat_key
from ..store.paths import committable
from ..store.sessions import PATH as SESSIONS
from . import common, dependencies, timeline

if TYPE_CHECKING:
    from .service import Service


def _redact_hand_edit(mem: Service, rel: str) -> None:
    """A secret typed into a note by hand is redacted in the file before it is
    committed: git history is pushed and kept, the file is the user's to fix.
    The rewrite goes through the write path, uncommitted: the commit that
    follows records it."""
    import logging

    from ..core.scrub import scrubbed

    p = mem.root / rel
    if not (rel.endswith(".md") and rel.split("/", 1)[0] in ("beliefs", "observations", "tensions", "reviews")
            and p.is_file() and not p.is_symlink()):
        return
    key = stat_key(p)
    text = read_text(p, rel)
    clean, found = scrubbed(rel, text, mem.params.redact)
    if not found:
        return  # only a secret is a reason to touch the user's file
    tx.apply(mem.root, [tx.replace(rel, clean, key)], None, lock=common.lock(mem), caches=common.caches(mem))
    logging.getLogger("epimem").warning("epimem: %s held what looks like a secret; it was redacted in the file "
                                        "before the commit", rel)


def commit_hand_edits(mem: Service, only: frozenset[str] | None = None, *, preview: bool = False
                      ) -> tuple[str | None, list[Change], list[Problem]]:
    """Commit what the user changed by hand, with a message naming it
    (`only`: just those paths, when a change is about to touch them; `preview`: say what would
    be committed and refused, and write nothing — `epimem doctor`)."""
    common.require_repo(mem) if preview else common.writable(mem)
    problems: list[Problem] = []
    changes: list[Change] = []
    lock = mem.vault.lock()
    params, today, real = mem.params, mem.write_today, mem.machine_day

    def prepare() -> tx.Staged | None:
        rows = []
        for st, p in git.dirty_paths(mem.root):
            if only is not None and p not in only:
                continue
            if committable(p):
                rows.append((st, p))
            elif "/" not in p and p.endswith(".md"):
                # Obsidian makes new notes at the vault root by default: say where they go.
                problems.append(Problem(p, 1, "a file at the vault root is not part of the vault "
                                        "(not committed); move a belief into beliefs/"))
        tracked = git.has_commits(mem.root)
        keep: list[tuple[str, str]] = []
        rewrites: list[tuple[str, str, str]] = []  # (path, text as the user left it, text with provenance)
        renames: list[tuple[str, str, str]] = []   # (Obsidian's path, text as left, the slug path)
        born: dict[str, Belief] = {}
        edited: list[tuple[Belief | None, Belief]] = []  # (as committed, as the user left it)
        taken = {n[:-3] for n in os.listdir(mem.root / "beliefs") if n.endswith(".md")} \
            if (mem.root / "beliefs").is_dir() else set()
        for st, p in rows:
            fp = mem.root / p
            if p.endswith(".md") and fp.is_file():
                try:
                    read_text(fp, p)
                except NotUTF8 as e:
                    problems.append(Problem(p, e.line or 1, f"{e.message} (not committed)"))
                    continue
                if not preview:
                    _redact_hand_edit(mem, p)
            if p == "epistemology.md" and fp.is_file():
                # Rule 18 for the rules themselves: an invalid parameter is not committed.
                wrong = rules_file_problems(read_text(fp, p), p)
                if wrong:
                    problems.extend(Problem(w.path, w.line, f"{w.message.replace('; using the default', '')} "
                                            "(not committed: rule 18; epimem uses the default meanwhile)")
                                    for w in wrong)
                    continue
            if p == SESSIONS and fp.exists():
                # The counter edited by hand into something it cannot be read as: recorded, every
                # machine's next session would stop counting (the hook and `session start` refuse it).
                counter, wrong = mem.vault.read_sessions_checked()
                if wrong:
                    problems.extend(Problem(w.path, w.line, f"{w.message} (not committed)") for w in wrong)
                    continue
                late = rules.counter_future_dates(counter, real) if real is not None else []
                if late:  # rule 20: as `validate` reports it
                    problems.append(Problem(p, 1, rules.future_date_message(f"'{late[0][0]}'", late[0][1], real)
                                            + " (not committed: rule 18)"))
                    continue
            if p.startswith("reviews/") and real is not None and (day := rules.review_ahead(p, real)) is not None:
                problems.append(Problem(p, 1, rules.future_date_message("the review of", day, real)
                                        + " (not committed: rule 18)"))
                continue
            if p.startswith("observations/") and p.endswith(".md") and fp.is_file():
                # A log that does not read as whole entries (a field with no heading of its own, a
                # bad date, conflict markers) is malformed too: recorded, its entries read wrong
                # on every machine.
                wrong = _log_problems(read_text(fp, p), p)
                if wrong:
                    problems.extend(Problem(p, line, f"{msg} (not committed)") for line, msg in wrong)
                    continue
            if p.startswith(f"{core_inbox.FOLDER}/") and p.endswith(".md") and fp.is_file():
                # A proposal edited by hand into one that cannot be read: recorded, the inbox would
                # refuse it on every machine (its accept and its listing name it).
                try:
                    core_inbox.parse(read_text(fp, p), p)
                except NoteError as e:
                    msg = e.message.removeprefix(f"{p}:{e.line or 1}: ")  # the Problem names path:line
                    problems.append(Problem(p, e.line or 1, f"{msg} (not committed)"))
                    continue
            if p.startswith("tensions/") and p.endswith(".md") and fp.is_file():
                # Rule 18's "as a malformed file is" holds for a tension too: recorded, a file that
                # does not parse read as the tension "removed" and went to every machine.
                try:
                    parse_tension(read_text(fp, p), Path(p).stem, p)
                except NoteError as e:
                    problems.append(Problem(p, e.line or 1, f"{e.message} (not committed)"))
                    continue
            if p.startswith("beliefs/") and p.endswith(".md") and fp.exists():
                text = read_text(fp, p)
                stem = Path(p).stem
                named = SLUG.match(stem) is not None
                note = parse_note(text, lenient=True)
                if not named and "title" not in (note.meta if note is not None else {}):
                    text = _titled(text, stem)  # a note named after its title (SPEC §1)
                try:
                    new = parse_belief(text, stem, p)
                except NoteError as e:
                    problems.append(Problem(p, e.line or 1, f"{e.message} (not committed)"))
                    continue
                broken = rules.rule_problems(new, params, today=real)
                if broken:
                    lines = key_lines(text)
                    problems.extend(Problem(p, lines.get(f, 1), f"{msg} (not committed: rule 18)")
                                    for f, msg in broken)
                    continue
                if not named:
                    if st != "??":
                        problems.append(Problem(p, 1, "a belief file's name must be its id (a lowercase slug); "
                                                "rename it back (not committed)"))
                        continue
                    bid = unique_id(slugify(new.title) or "belief", taken)
                    taken.add(bid)
                    rel = f"beliefs/{bid}.md"
                    marked = _with_provenance(text, None, new, today) or text
                    renames.append((p, read_text(fp, p), rel))
                    born[rel] = new
                    rewrites.append((rel, "", marked))
                    keep.append(("??", rel))
                    continue
                old = git.parse_belief_blob(git.show_many(mem.root, [f"HEAD:{p}"])[0], stem) \
                    if tracked and st != "??" else None
                marked = _with_provenance(text, old, new, today)
                if marked is not None:
                    rewrites.append((p, text, marked))
                edited.append((old, new))
            keep.append((st, p))
        if not keep:
            return None
        # A hand edit that retires, supersedes or drops a tier of a belief others rest on flags
        # them, as the same change made by a command would (SPEC §14): the committed version is
        # the "before", since the file on disk already is the edit.
        flags, flagged = dependencies.flags_for(mem, edited) if edited and not preview else ([], [])
        moved = {new for _, _, new in renames}
        # Named as the user left the files, before epimem adds its provenance lines.
        changes.extend(timeline.describe(mem, [("A" if st == "??" else st[0], p) for st, p in keep if p not in moved],
                                         (lambda p: f"HEAD:{p}") if tracked else None, None, new_from_disk=True))
        for old_path, _, new_path in renames:
            c = belief_change(Path(new_path).stem, None, born[new_path])
            assert c is not None
            changes.append(Change(c.what, c.ident, c.action, c.details + (f"renamed from {old_path}",)))
        if preview:
            return None
        if rewrites or renames:
            # Written without a commit first, then committed with the rest below: one
            # commit, and `abort` restores the user's own files if that commit fails.
            tx.apply(mem.root, [tx.create(p, marked) if p in moved else tx.replace(p, marked, stat_key(mem.root / p))
                                for p, _, marked in rewrites] + [tx.delete(old) for old, _, _ in renames],
                     None, lock=lock)
        flag_originals = {w.path: read_text(mem.root / w.path, w.path) for w in flags if w.mode == "replace"}
        if flags:
            tx.apply(mem.root, flags, None, lock=lock)
        subject = "edit: " + headline(changes) if changes else "edit: files changed by hand"
        body = "\n".join([f"- {c.sentence()}" for c in changes] + [f"- {ln}" for ln in flagged])
        commit = tx.Commit(subject, "edit", beliefs=tuple(c.ident for c in changes if c.what == "belief"),
                           body=body, when=mem.replayed)

        def abort() -> None:
            tx.apply(mem.root, [tx.upsert(p, original) for p, original, _ in rewrites if p not in moved]
                     + [tx.delete(p) for p in moved] + [tx.upsert(old, original) for old, original, _ in renames]
                     + [tx.upsert(w.path, flag_originals[w.path]) if w.path in flag_originals else tx.delete(w.path)
                        for w in flags],
                     None, lock=lock)

        return tx.Staged(commit, tuple(p for _, p in keep) + tuple(w.path for w in flags),
                         abort=abort if (rewrites or renames or flags) else None)

    with one_parse():  # each file is read by the checks, the message and the context cache
        res = tx.adopt(mem.root, prepare, lock=common.lock(mem), caches=common.caches(mem))
    return res.commit, changes, problems


def _log_problems(text: str, rel: str) -> list[tuple[int, str]]:
    """(line, message) for what makes an observation log malformed, as `validate` says it."""
    try:
        refuse_conflict_markers(text)
    except NoteError as e:
        return [(e.line or 1, e.message)]
    return parse_observations(text, rel)[1]


def preview(mem: Service) -> tuple[list[Change], list[Problem]]:
    """What `epimem commit` would record now, and what it would leave out: nothing is written."""
    _, changes, problems = commit_hand_edits(mem, preview=True)
    return changes, problems


def settle(mem: Service, paths: list[str], *, by_model: bool = False) -> str | None:
    """Before epimem rewrites `paths`, pass the user's uncommitted edits to them
    through rule 18, so that epimem's commit never carries a hand edit along
    unchecked: an edit within the rules is committed first, as `epimem commit`
    would (its `edited` line, its own commit); one that breaks a rule (or does
    not parse) stays on disk, untouched, and the change is refused — neither
    the user's edit nor the caller's change is lost. Returns the hand edit's
    commit, or None. Call it before reading the files, in each pass of a change
    prepared outside the lock (`common.attempts`): a retry checks again.

    `by_model`: the change comes from a path a model runs by itself (an `--origin`: the skills,
    MCP, the memory tool, the session-end pass). It commits no hand edit that decides what only
    the user does (`rules.users_decisions`): committing it is `epimem commit`, the user's (rule
    22), and it would make a model's own edit the user's word — a fact minted (rule 14), decay
    reset (rule 16)."""
    if not paths or not git.has_commits(mem.root):
        return None
    dirty = frozenset(c.path for c in git.status(mem.root, paths))
    if not dirty:
        return None
    if by_model:
        _refuse_users_decisions(mem, dirty)
    sha, _, problems = commit_hand_edits(mem, only=dirty)
    for pr in problems:
        if pr.path in dirty:
            raise Conflict(f"{pr}; this hand edit is left as it is, and nothing was recorded — "
                           "fix the file, then record this again", path=pr.path, line=pr.line)
    return sha


def refuse_uncommitted_rules(mem: Service) -> None:
    """A path a model runs by itself is judged by the rules the user committed (rule 13: editing
    `epistemology.md` is a commit like any other). The engine reads the file as it stands, so a
    model's own edit of it (`confirm_step: 0.60`, `review: off`) would move committed numbers, or
    let past the inbox what the user asked to review first (SPEC §15), as the rules' doing."""
    rel = "epistemology.md"
    if not git.has_commits(mem.root) or not git.status(mem.root, [rel]):
        return
    raise Conflict(f"{rel} holds an edit not yet committed: the rules an assistant's observation is judged by "
                   "are the user's to set, and they commit them (`epimem commit`, which asks them); nothing was "
                   "recorded — ask the user to commit or undo the edit, then record this again", path=rel)


def tensions_about(mem: Service, belief_ids: set[str]) -> set[str]:
    """The tension files with an uncommitted hand edit that may be about one of `belief_ids`: a
    contradiction extends the open tension of its belief, so the edit is settled first (rule 18),
    never swept into the observation's commit unchecked."""
    if not belief_ids or not git.has_commits(mem.root):
        return set()
    out = set()
    for c in git.status(mem.root, ["tensions"]):
        fp = mem.root / c.path
        if not (c.path.endswith(".md") and fp.is_file()):
            continue
        try:
            text = read_text(fp, c.path)
        except NotUTF8:
            continue  # never extended: a new tension opens instead (validate names it)
        if any(b in text for b in belief_ids):  # a cheap filter, as `tensions.for_contradiction` reads them
            out.add(c.path)
    return out


def _refuse_users_decisions(mem: Service, dirty: frozenset[str]) -> None:
    for p in sorted(dirty):
        fp = mem.root / p
        if p.startswith("tensions/") and p.endswith(".md") and fp.is_file():
            _refuse_tension_decision(mem, p)
            continue
        if not (p.startswith("beliefs/") and p.endswith(".md") and fp.is_file()):
            continue
        stem = Path(p).stem
        try:
            new = parse_belief(read_text(fp, p), stem, p)
        except (NoteError, NotUTF8):
            continue  # rule 18 refuses it below, as it stands
        old = git.parse_belief_blob(git.show_many(mem.root, [f"HEAD:{p}"])[0], stem)
        decided = rules.users_decisions(old, new)
        if decided:
            raise _users_to_commit(p, f"changes {', '.join(decided)}")


def _users_to_commit(p: str, what: str) -> Conflict:
    return Conflict(f"{p} holds a hand edit not yet committed that {what}: only the user commits that (`epimem "
                    "commit`, which asks them), an observation never carries it in; nothing was recorded — ask the "
                    "user to commit or undo the edit, then record this again", path=p)


def _refuse_tension_decision(mem: Service, p: str) -> None:
    """Only the user resolves (or reopens) a tension (SPEC §1.3, rule 22)."""
    stem = Path(p).stem
    try:
        new = parse_tension(read_text(mem.root / p, p), stem, p)
    except (NoteError, NotUTF8):
        return  # rule 18 refuses it below, as it stands
    old = git.parse_tension_blob(git.show_many(mem.root, [f"HEAD:{p}"])[0], stem)
    if old is None or (old.status, old.resolution) != (new.status, new.resolution):
        raise _users_to_commit(p, "opens a tension" if old is None else "changes its status or resolution")


def _titled(text: str, stem: str) -> str:
    """A note with no `title`: its file name is its title, as Obsidian shows it."""
    if not text.startswith("---"):
        return f"---\ntitle: {yaml_scalar(stem)}\n---\n{text}"
    return edit_frontmatter(text, {"title": stem})


_EVIDENCE_ADDED = re.compile(r"\d+ evidence lines? added")


def _with_provenance(text: str, old: Belief | None, new: Belief, today) -> str | None:
    """The file with the evidence line a hand edit owes (rule 12), or None when it owes none."""
    if old is None:
        if new.evidence:
            return None
        return update_belief_text(text, new, new, (rules.hand_edit_evidence((), today, added=True),))
    details = tuple(d for d in belief_field_changes(old, new) if not _EVIDENCE_ADDED.fullmatch(d))
    if not details:
        return None  # only evidence lines added (the user's own provenance), or nothing a person would name
    after = new
    if new.confirmed == old.confirmed and any(getattr(new, k) != getattr(old, k) for k in rules.WORD_FIELDS):
        after = rules.user_word(new, today)
    return update_belief_text(text, new, after, (rules.hand_edit_evidence(details, today),))


__all__ = ["commit_hand_edits", "preview", "settle"]
