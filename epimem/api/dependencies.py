"""Flagging the beliefs that rest on a belief that changed (SPEC §14).

Every change goes through `common.commit`, which asks `flag_writes` what else the change
must write: for each belief the change supersedes, retires or drops a tier
(`core.dependencies.base_change`), a tension "rests on a belief that changed" on each
active belief that names it in `depends_on` — in the same commit, so the flag and its
cause are one step in the history and an undo takes back both. A dependant is never
lowered: only evidence or the user's word moves a number.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core import dependencies as deps
from ..core.ids import unique_id
from ..core.model import Belief, Tension
from ..core.notes import NoteError, parse_belief, parse_tension, render_tension
from ..store import transaction as tx
from ..store.files import NotUTF8, read_text, stat_key

if TYPE_CHECKING:
    from .memory import Memory


def _belief_writes(writes: list[tx.Write]) -> dict[str, str | None]:
    # A belief the change creates is nobody's base yet: only rewritten ones can have changed.
    return {w.path[len("beliefs/"):-3]: w.text for w in writes
            if w.mode == "replace" and w.path.startswith("beliefs/") and w.path.endswith(".md")}


def flag_writes(mem: Memory, writes: list[tx.Write]) -> tuple[list[tx.Write], list[str]]:
    """(the tension writes that flag dependants of what `writes` change, one line for the
    commit message per flag). Empty — at the cost of one parse per written belief — when
    the change moves no belief that anything could rest on."""
    written = _belief_writes(writes)
    if not written:
        return [], []
    pairs: list[tuple[Belief | None, Belief | None]] = []
    for bid, text in written.items():
        try:
            after = parse_belief(text, bid) if text is not None else None
        except NoteError:
            after = None
        p = mem.root / "beliefs" / f"{bid}.md"
        before = None
        if after is not None and p.exists():
            try:
                before = parse_belief(read_text(p, f"beliefs/{bid}.md"), bid)
            except (NoteError, NotUTF8, OSError):
                pass
        pairs.append((before, after))
    pending = {w.path[len("tensions/"):-3] for w in writes if w.path.startswith("tensions/")}
    return flags_for(mem, pairs, pending)


def flags_for(mem: Memory, pairs: list[tuple[Belief | None, Belief | None]],
              pending: set[str] = frozenset()) -> tuple[list[tx.Write], list[str]]:
    """The flag writes and their commit lines for beliefs changed from `before` to `after`
    (a pair with either side None changes nothing a dependant must hear about). `pending`:
    tension ids the same change writes already. A hand edit committed by `epimem commit`
    passes the committed version as `before`: the file on disk is already the edit."""
    today, params = mem.write_today, mem.params
    changes: list[deps.BaseChange] = []
    after_of: dict[str, Belief] = {}
    for before, after in pairs:
        if after is None:
            continue
        after_of[after.id] = after
        if before is None:
            continue
        c = deps.base_change(before, after, today, params)
        if c is not None:
            changes.append(c)
    if not changes:
        return [], []
    beliefs, _ = mem.vault.load_beliefs()
    # The change's own versions of the beliefs it writes, over what is on disk.
    current = {b.id: b for b in beliefs}
    current.update(after_of)
    existing = {p.stem for p in (mem.root / "tensions").glob("*.md")} | set(pending)
    out: list[tx.Write] = []
    lines: list[str] = []
    opened = _open_flags(mem, set(pending))
    for c in changes:
        for d in deps.dependants(current.values(), c.belief):
            found = opened.get((d.id, c.belief))
            line = f"- changed: {today.isoformat()} — {c.belief} was {c.detail}\n"
            if found is not None:
                rel, text, key = found
                out.append(tx.replace(rel, text.rstrip("\n") + "\n" + line, key))
                opened[(d.id, c.belief)] = (rel, text.rstrip("\n") + "\n" + line, key)
            else:
                title, what, suggests = deps.flag_text(c, d)
                tid = unique_id(f"{today.isoformat()}-{d.id}", existing)
                existing.add(tid)
                t = Tension(id=tid, date=today, belief=d.id, status="unresolved", title=title,
                            what_happened=what, evidence=(f"beliefs/{c.belief}",), suggests=suggests,
                            rests_on=c.belief, path=f"tensions/{tid}.md")
                out.append(tx.create(t.path, render_tension(t)))
            lines.append(f"flagged: {d.id} rests on {c.belief}, which was {c.detail}")
    return _one_per_file(out), lines


def _one_per_file(writes: list[tx.Write]) -> list[tx.Write]:
    # A flag extended twice in one change is one write of its last text.
    last: dict[str, tx.Write] = {}
    for w in writes:
        last[w.path] = w
    return list(last.values())


def _open_flags(mem: Memory, skip: set[str]) -> dict[tuple[str, str], tuple[str, str, Any]]:
    """(dependant, base) → (path, text, stat key) of each open flag, so a base that changes
    again adds a line to its flag rather than opening a second one."""
    out: dict[tuple[str, str], tuple[str, str, Any]] = {}
    tdir = mem.root / "tensions"
    if not tdir.is_dir():
        return out
    for p in sorted(tdir.glob("*.md")):
        if p.stem in skip:
            continue
        key = stat_key(p)
        try:
            text = read_text(p, f"tensions/{p.name}")
        except (NotUTF8, OSError):
            continue
        if "rests_on" not in text:
            continue
        try:
            t = parse_tension(text, p.stem)
        except NoteError:
            continue  # a malformed tension is never rewritten
        if t.rests_on and t.status != "resolved":
            out[(t.belief, t.rests_on)] = (f"tensions/{p.name}", text, key)
    return out
