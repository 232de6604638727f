"""`validate`: every problem in the vault, each with its file and line.

The parser reports what it cannot read; this adds what only the whole vault
shows: a confidence above its basis's cap, links to beliefs or observations
that are not there.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..core import rules
from ..core.model import Problem
from ..store.paths import escaping_links
from .common import key_line, line_of

if TYPE_CHECKING:
    from .memory import Memory


def validate(mem: Memory) -> list[Problem]:
    mem.vault.require()
    snap = mem.vault.snapshot(mem.today)
    problems = list(snap.problems)
    for rel, target in escaping_links(mem.root):
        problems.append(Problem(rel, 1, f"a symbolic link to {target}, outside the vault: epimem does not read, "
                                        "index, send or commit it"))
    params = mem.params
    root = mem.root
    # A malformed belief is reported once, as itself, not again by everything that links to it.
    ids = {b.id for b in snap.beliefs} | {Path(p.path).stem for p in snap.problems if p.path.startswith("beliefs/")}
    obs_ids = {o.id for o in snap.observations}
    for b in snap.beliefs:
        for fld, msg in rules.rule_problems(b, params):
            problems.append(Problem(b.path, key_line(root / b.path, fld), msg))
        for s in b.supersedes:
            if s not in ids:
                problems.append(Problem(b.path, key_line(root / b.path, "supersedes"),
                                        f"supersedes unknown belief '{s}'"))
        for ev in b.evidence:
            if ev.link.startswith("observations/") and "#" in ev.link and ev.link.split("#", 1)[1] not in obs_ids:
                problems.append(Problem(b.path, line_of(root / b.path, ev.link),
                                        f"evidence links to a missing observation [[{ev.link}]]"))
    for o in snap.observations:
        if o.connects != "new" and o.connects not in ids:
            problems.append(Problem(o.path, line_of(root / o.path, f"## {o.id}"),
                                    f"{o.id} connects to unknown belief '{o.connects}'"))
    for t in snap.tensions:
        if t.belief not in ids:
            problems.append(Problem(t.path, key_line(root / t.path, "belief"),
                                    f"tension is about unknown belief '{t.belief}'"))
    problems += merge_leftovers(root)
    return sorted(problems, key=lambda p: (p.path, p.line))


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
            elif merge.has_conflict_markers(text):
                out.append(Problem(f"{folder}/{e.name}", line_of(Path(e.path), "<<<<<<<"),
                                   "git conflict markers: resolve them by hand"))
    for e in note_entries(root / "observations"):
        try:
            text = open(e.path, encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            continue
        for oid in merge.duplicate_observation_ids(text):
            out.append(Problem(f"observations/{e.name}", line_of(Path(e.path), f"## {oid}"),
                               f"{oid} is there twice with different texts (two machines); keep one"))
    return out
