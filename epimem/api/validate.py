"""`validate`: every problem in the vault, each with its file and line.

The parser reports what it cannot read; this adds what only the whole vault
shows: a confidence above its basis's cap, links to beliefs or observations
that are not there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import dependencies, rules
from ..core.model import Problem
from ..store.files import folder_in_place
from ..store.paths import escaping_links, folders_named_as_notes, private_dir
from .common import key_line, line_of

if TYPE_CHECKING:
    from .service import Service


def validate(mem: Service) -> list[Problem]:
    mem.vault.require()
    snap = mem.vault.snapshot(mem.today)
    problems = [p for p in snap.problems if not _renamed_by_commit(mem, p)]
    for rel, target in escaping_links(mem.root):
        where = private_dir(os.path.realpath(mem.root / rel), os.path.realpath(mem.root))
        problems.append(Problem(rel, 1, f"a symbolic link to {target}, "
                                        + (f"into {where}/ (not a note)" if where else "outside the vault")
                                        + ": epimem does not read, index, send or commit it"))
    problems += [Problem(rel, 1, folder_in_place(rel)) for rel in folders_named_as_notes(mem.root)]
    params = mem.params
    root = mem.root
    real = mem.machine_day  # rule 20: what is dated after the machine's day
    # A malformed belief is reported once, as itself, not again by everything that links to it.
    ids = {b.id for b in snap.beliefs} | {Path(p.path).stem for p in snap.problems if p.path.startswith("beliefs/")}
    obs_ids = {o.id for o in snap.observations}
    status = {b.id: b.status for b in snap.beliefs}
    for b in snap.beliefs:
        for fld, msg in rules.rule_problems(b, params, today=real):
            problems.append(Problem(b.path, key_line(root / b.path, fld), msg))
        for s in b.supersedes:
            if s not in ids:
                problems.append(Problem(b.path, key_line(root / b.path, "supersedes"),
                                        f"supersedes unknown belief '{s}'"))
            elif b.status == "active" and status.get(s) == "active":
                # SPEC §14: the old one is shown as current until the user's word supersedes it.
                problems.append(Problem(b.path, key_line(root / b.path, "supersedes"),
                                        f"supersedes '{s}', which is still active and shown as current: "
                                        f"`epimem belief supersede {s} --by {b.id}` records the change "
                                        "(or take it out of this list)"))
        for d in b.depends_on:
            if d not in ids:
                problems.append(Problem(b.path, key_line(root / b.path, "depends_on"),
                                        f"depends on unknown belief '{d}'"))
        for ev in b.evidence:
            if ev.link.startswith("observations/") and "#" in ev.link and ev.link.split("#", 1)[1] not in obs_ids:
                problems.append(Problem(b.path, line_of(root / b.path, ev.link),
                                        f"evidence links to a missing observation [[{ev.link}]]"))
    if (root / "inbox").is_dir():  # the review inbox's files (SPEC §15): each one readable, or named
        from . import inbox

        props, unread = inbox.read_all(mem)
        problems += unread
        # rule 18 for an import's proposal: a change since the import proposed it is never accepted
        refused = inbox.edited_imports(mem, [p for p in props if p.status == "pending"])
        problems += [Problem(f"inbox/{pid}.md", 1, why) for pid, why in sorted(refused.items())]
    for loop in dependencies.cycles(snap.beliefs):
        first = next(b for b in snap.beliefs if b.id == loop[0])
        problems.append(Problem(first.path, key_line(root / first.path, "depends_on"),
                                "dependencies go round in a loop: " + " → ".join(loop + loop[:1])
                                + "; a belief cannot rest, through others, on itself"))
    for o in snap.observations:
        if real is not None and o.date > real:
            problems.append(Problem(o.path, line_of(root / o.path, f"## {o.id}"),
                                    rules.future_date_message(f"{o.id} is dated", o.date, real)))
        if o.connects != "new" and o.connects not in ids:
            problems.append(Problem(o.path, line_of(root / o.path, f"## {o.id}"),
                                    f"{o.id} connects to unknown belief '{o.connects}'"))
    for t in snap.tensions:
        if real is not None and t.date > real:
            problems.append(Problem(t.path, key_line(root / t.path, "date"),
                                    rules.future_date_message("'date'", t.date, real)))
        if t.belief not in ids:
            problems.append(Problem(t.path, key_line(root / t.path, "belief"),
                                    f"tension is about unknown belief '{t.belief}'"))
        for key, ref in (("successor", t.successor), ("rests_on", t.rests_on)):
            if ref and ref not in ids:
                problems.append(Problem(t.path, key_line(root / t.path, key), f"{key} names unknown belief '{ref}'"))
    if real is not None:
        problems += _future_counter_and_reviews(mem, real)
    problems += merge_leftovers(root)
    return sorted(problems, key=lambda p: (p.path, p.line))


def _future_counter_and_reviews(mem: Service, real) -> list[Problem]:
    """Rule 20 beyond evidence: the session counter's days and a review's (its file's name), which
    rules 8 and 10 count from; after the machine's day they would keep both quiet for good."""
    from ..store import sessions as sessions_file
    from ..store.paths import note_entries

    out = []
    s, unread = mem.vault.read_sessions_checked()
    if not unread:
        for key, d in rules.counter_future_dates(s, real):
            out.append(Problem(sessions_file.PATH, line_of(mem.root / sessions_file.PATH, f'"{key}"'),
                               rules.future_date_message(f"'{key}'", d, real)))
    for e in note_entries(mem.root / "reviews"):
        if (d := rules.review_ahead(e.name, real)) is not None:
            out.append(Problem(f"reviews/{e.name}", 1, rules.future_date_message("the review of", d, real)))
    return out


def _renamed_by_commit(mem: Service, p: Problem) -> bool:
    """A note Obsidian made (`beliefs/Untitled 1.md`, named after its title) is not invalid: `epimem
    commit` gives it a slug id by renaming it (SPEC §1). True when `p` is only that file's name,
    the file is new (untracked) and what it holds parses as a belief within the rules."""
    from ..core.ids import SLUG, slugify
    from ..core.notes import NoteError, parse_belief, parse_note
    from ..store import git
    from ..store.files import NotUTF8, read_text
    from .hand_edits import _titled

    rel = p.path
    stem = Path(rel).stem
    if not (rel.startswith("beliefs/") and rel.endswith(".md") and "/" not in rel[8:]) or SLUG.match(stem):
        return False
    fp = mem.root / rel
    try:
        text = read_text(fp, rel)
    except (OSError, NotUTF8):
        return False
    if ("??", rel) not in set(git.dirty_paths(mem.root)):  # only a new note is renamed, not a tracked one
        return False
    if "title" not in getattr(parse_note(text, lenient=True), "meta", {}):
        text = _titled(text, stem)
    try:
        b = parse_belief(text, slugify(stem), rel)
    except NoteError:
        return False
    return not rules.rule_problems(b, mem.params, today=mem.machine_day)


def _unlinked(mem: Service) -> list[tuple[str, str, str]]:
    """(path, text, text with wikilinks) of each note that still names beliefs by bare id."""
    from ..core.notes import REFERENCE_KEYS, with_wikilinks
    from ..store.files import NotUTF8, read_text

    out = []
    for folder in REFERENCE_KEYS:
        d = mem.root / folder
        if not d.is_dir():
            continue
        for name in sorted(os.listdir(d)):
            rel = f"{folder}/{name}"
            if not name.endswith(".md") or not (d / name).is_file() or (d / name).is_symlink():
                continue
            try:
                text = read_text(d / name, rel)
            except NotUTF8:
                continue  # validate reports it
            new = with_wikilinks(rel, text)
            if new is not None:
                out.append((rel, text, new))
    return out


def bare_links(mem: Service) -> list[str]:
    """The notes written before references were wikilinks (SPEC §1), which `upgrade_links` rewrites."""
    mem.vault.require()
    return [p for p, _, _ in _unlinked(mem)]


def upgrade_links(mem: Service) -> tuple[str | None, list[str]]:
    """Rewrite every bare-id reference (a tension's belief, a review's beliefs, `supersedes`)
    as a wikilink, in one commit that says so; (the commit or None, the files changed).
    A note with an uncommitted hand edit passes it through rule 18 first, never swept along."""
    from ..store import transaction as tx
    from ..store.files import stat_key
    from . import common, hand_edits

    common.writable(mem)
    with common.lock(mem):
        hand_edits.settle(mem, [p for p, _, _ in _unlinked(mem)])
        found = _unlinked(mem)
        if not found:
            return None, []
        n = len(found)
        paths = [p for p, _, _ in found]
        sha = common.commit(mem, [tx.replace(p, new, stat_key(mem.root / p)) for p, _, new in found],
                      f"upgrade: {n} note{'s' if n != 1 else ''} name beliefs as [[wikilinks]]", op="upgrade",
                      body="References written as bare ids before are now links Obsidian's graph follows:\n"
                           + "\n".join(f"- {p}" for p in paths),
                      beliefs=[p[len("beliefs/"):-3] for p in paths if p.startswith("beliefs/")])
        return sha, paths


def merge_leftovers(root: Path) -> list[Problem]:
    """What a merge kept in both versions for the user to settle (SPEC §11), until an edit does."""
    from ..core import merge
    from ..store.paths import note_entries

    out = []
    for folder in ("beliefs", "tensions", "reviews"):
        for e in note_entries(root / folder):
            try:
                text = open(e.path, encoding="utf-8").read()
            except (OSError, UnicodeDecodeError):
                continue  # reported by the parser already
            if merge.MERGE_HEADING in text:
                out.append(Problem(f"{folder}/{e.name}", line_of(Path(e.path), merge.MERGE_HEADING),
                                   "a merge kept two machines' versions here; keep what is true and delete "
                                   f"the section '{merge.MERGE_HEADING[3:]}'"))
            elif folder == "reviews" and merge.has_conflict_markers(text):  # beliefs' and tensions' parser says it
                out.append(Problem(f"{folder}/{e.name}", line_of(Path(e.path), "<<<<<<<"),
                                   "git conflict markers: resolve them by hand"))
    for e in note_entries(root / "observations"):
        try:
            text = open(e.path, encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            continue
        if merge.has_conflict_markers(text):
            out.append(Problem(f"observations/{e.name}", line_of(Path(e.path), "<<<<<<<"),
                               "git conflict markers: resolve them by hand"))
        for oid in merge.duplicate_observation_ids(text):
            out.append(Problem(f"observations/{e.name}", line_of(Path(e.path), f"## {oid}"),
                               f"{oid} is there twice with different texts (two machines); keep one"))
    return out
