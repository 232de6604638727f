"""Tensions: listing, resolving, and where a contradiction an observation brings goes."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core import rules
from ..core.errors import Conflict, InputError, NotFound, VaultError
from ..core.ids import check_tension_id, text_key, unique_id
from ..core.model import Observation, Problem, Tension
from ..core.notes import NoteError, edit_frontmatter, parse_tension, render_tension, resolve_tension_text, wikilink
from ..core.redact import redact
from ..store import transaction as tx
from ..store.files import NotUTF8, read_text, stat_key
from ..store.paths import leaves
from . import common

if TYPE_CHECKING:
    from .service import Service


def listed(mem: Service, status: str | None) -> tuple[list[Tension], list[Problem]]:
    """The tensions with `status` (every one for None), and the files that could not be read."""
    ts, problems = mem.vault.load_tensions()
    return [t for t in ts if status is None or t.status == status], problems


def select(mem: Service, status: str | None) -> list[Tension]:
    return listed(mem, status)[0]


def _read(mem: Service, tension_id: str) -> tuple[str, Tension, Any]:
    check_tension_id(tension_id, field="tension_id")
    rel = f"tensions/{tension_id}.md"
    p = mem.vault.path(rel)
    if not p.exists():
        raise NotFound(f"no tension '{tension_id}' ({rel} does not exist)", path=rel)
    key = stat_key(p)
    try:
        text = read_text(p, rel)
        return text, parse_tension(text, tension_id, rel), key
    except (NoteError, NotUTF8) as e:  # NotUTF8's message has no path: the file is named here
        raise VaultError(f"{rel}:{e.line}: {e.message}", path=rel, line=e.line) from None


def _note(note: str, what: str) -> str:
    if not note or not note.strip():
        raise InputError(f"'note' is required: {what}", field="note")
    return note.strip()


def resolve(mem: Service, tension_id: str, note: str) -> Tension:
    note = _note(note, "a tension is resolved with a note saying how")
    for attempt in common.attempts(mem):
        with attempt:
            text, t, key = _read(mem, tension_id)
            if t.status == "resolved":
                raise Conflict(f"tension {tension_id} is already resolved", path=t.path)
            new = resolve_tension_text(text, mem.write_today, redact(note, mem.params.redact))
            common.commit(mem, [tx.replace(t.path, new, key)], f"tension: resolve {tension_id} ({t.status} → resolved)",
                          op="resolve", beliefs=[t.belief])
    return replace(t, status="resolved", resolution=note)


def open_tension(mem: Service, belief_id: str, note: str, title: str = "") -> Tension:
    """The user names a tension on a belief themselves (`status: unresolved`)."""
    note = redact(_note(note, "say what does not fit"), mem.params.redact)
    title = redact(" ".join((title or "").split()), mem.params.redact)
    for attempt in common.attempts(mem):
        with attempt:
            _, b, _ = common.read(mem, belief_id)
            _check_active(b)
            t = _question(mem, b, title or f"Does “{b.title}” hold?", note,
                          "Opened by the user; held lightly until it is resolved.")
            common.commit(mem, [tx.create(t.path, render_tension(t))], f"tension: open {t.id} on {belief_id}",
                          op="tension", beliefs=[belief_id])
    return t


def _check_active(b) -> None:
    if b.status != "active":
        raise Conflict(f"{b.id} is {b.status}; a tension is opened on an active belief", path=b.path)


def _question(mem: Service, b, title: str, what: str, suggests: str) -> Tension:
    existing = {p.stem for p in (mem.root / "tensions").glob("*.md")}
    tid = unique_id(f"{mem.write_today.isoformat()}-{b.id}", existing)
    return Tension(id=tid, date=mem.write_today, belief=b.id, status="unresolved", title=title,
                   what_happened=what, suggests=suggests, path=f"tensions/{tid}.md")


PROPOSALS = ("retire", "supersede", "rename")


def propose(mem: Service, belief_id: str, action: str, *, by: str = "", title: str = "",
            source: str = "an assistant") -> tuple[Tension, bool]:
    """An assistant's proposal of a decision that is the user's alone (rule 22): retire a
    belief, let another one (`by`) supersede it, or word it as `title`. It is recorded as an
    open question on the belief (`status: unresolved`), saying what was asked and the command
    that would carry it out, and nothing else changes. (the tension, whether it was opened
    now): the same proposal already open is not asked twice."""
    common.check_choice("action", action, PROPOSALS)
    title = " ".join((title or "").split())
    # The bound an observation has, for the same reason: an assistant's wording (the memory
    # tool's rename takes it from a file name of any length) is written three times into a
    # tension, committed and shown at every session start; one call must not make it a document.
    if len(title) > common.TEXT_MAX:
        raise InputError(f"the proposed wording is {len(title):,} characters, over the {common.TEXT_MAX:,} an "
                         "assistant's text may hold: propose a title of a few words", field="title")
    title = redact(title, mem.params.redact)
    if action == "supersede" and not by:
        raise InputError("'by' is required: the belief that would supersede it", field="by")
    if action == "rename" and not title:
        raise InputError("'title' is required: the wording proposed", field="title")
    for attempt in common.attempts(mem):
        with attempt:
            _, b, _ = common.read(mem, belief_id)
            _check_active(b)
            keep = f"`epimem mirror answer {b.id} --verdict true` keeps it and closes this question."
            if action == "retire":
                ask = f"Retire “{b.title}”?"
                what = f"{source} proposed retiring it (no longer true); nothing was changed."
                how = f"Only the user decides: `epimem belief retire {b.id}` retires it; {keep}"
            elif action == "supersede":
                if by == belief_id:
                    raise InputError("a belief cannot supersede itself", field="by")
                _, s, _ = common.read(mem, by)
                _check_active(s)
                ask = f"Has “{b.title}” become “{s.title}”?"
                what = f"{source} proposed that [[{s.id}]] replaces it; nothing was changed."
                how = (f"Only the user decides: `epimem belief supersede {b.id} --by {s.id}` if it was replaced, "
                       f"`epimem belief merge {s.id} {b.id}` if the two are one; {keep}")
            else:
                ask = f"Is “{b.title}” better worded “{title}”?"
                what = f"{source} proposed the wording “{title}”; nothing was changed."
                how = (f"Only the user decides: `epimem mirror answer {b.id} --verdict false --now \"{title}\"` "
                       f"supersedes it by a belief in those words; {keep}")
            for t in open_on(mem, belief_id):
                if t.belief == belief_id and text_key(t.title) == text_key(ask):
                    return t, False
            t = _question(mem, b, ask, what, how)
            common.commit(mem, [tx.create(t.path, render_tension(t))],
                          f"tension: {action} of {belief_id} proposed ({t.id}, for the user)",
                          op="tension", beliefs=[belief_id] + ([by] if by else []))
    return t, True


STATUS_VERBS = {"unresolved": "reopened", "watching": "watching"}


def set_status(mem: Service, tension_id: str, status: str, note: str = "") -> Tension:
    """Reopen a resolved tension (`unresolved`) or watch one (`watching`), with a dated line."""
    common.check_choice("status", status, tuple(STATUS_VERBS))
    if status == "unresolved":
        note = _note(note, "say why the tension is open again")
    for attempt in common.attempts(mem):
        with attempt:
            text, t, key = _read(mem, tension_id)
            if t.status == status:
                raise Conflict(f"tension {tension_id} is already {status}", path=t.path)
            if status == "watching" and t.status == "resolved":
                raise Conflict(f"tension {tension_id} is resolved; reopen it first", path=t.path)
            verb = STATUS_VERBS[status]
            said = f" — {' '.join(redact(note, mem.params.redact).split())}" if note else ""
            line = f"- {verb}: {mem.write_today.isoformat()}" + said
            new = edit_frontmatter(text, {"status": status}).rstrip("\n") + "\n" + line + "\n"
            common.commit(mem, [tx.replace(t.path, new, key)],
                          f"tension: {'reopen' if status == 'unresolved' else 'watch'} {tension_id} "
                          f"({t.status} → {status})", op="tension", beliefs=[t.belief])
    return replace(t, status=status)


def closing_writes(mem: Service, belief_id: str, reason: str) -> list[tx.Write]:
    """Writes that resolve every open tension on a belief that is retired or superseded:
    a question about a belief no longer held is closed with that reason, not left open."""
    return [tx.replace(f"tensions/{p.name}", resolve_tension_text(text, mem.write_today, reason), key)
            for p, text, key in _open_on(mem, belief_id)]


def close_orphans(mem: Service) -> str | None:
    """Close the open tensions of beliefs no longer held (retired or superseded), as retiring one
    does: a merge can bring a belief retired on one machine and a tension opened on it on the
    other. One commit, or None when there is none."""
    beliefs, _ = mem.vault.load_beliefs()
    gone = {b.id: b.status for b in beliefs if b.status != "active"}
    if not gone:
        return None
    writes: list[tx.Write] = []
    closed: list[str] = []
    for bid, status in sorted(gone.items()):
        for w in closing_writes(mem, bid, f"closed: {bid} was {status} (on another machine)"):
            writes.append(w)
            closed.append(bid)
    if not writes:
        return None
    n, ids = len(writes), sorted(set(closed))
    return common.commit(mem, writes, f"tension: closed {n} tension{'s' if n != 1 else ''} of "
                         f"belief{'s' if len(ids) != 1 else ''} no longer held ({', '.join(ids)})",
                         op="tension", beliefs=ids)


def open_successor(mem: Service, belief_id: str) -> str:
    """The successor an open tension on `belief_id` proposes ("" when none does)."""
    for _, text, _ in _open_on(mem, belief_id):
        try:
            t = parse_tension(text, "t")
        except NoteError:
            continue
        if t.successor and not t.rests_on:
            return t.successor
    return ""


def open_on(mem: Service, belief_id: str) -> list[Tension]:
    """The open tensions about `belief_id` (or proposing it as a successor), oldest first."""
    out = []
    tdir = mem.root / "tensions"
    if not tdir.is_dir():
        return out
    for p in sorted(tdir.glob("*.md")):
        try:
            text = read_text(p, f"tensions/{p.name}")
        except (NotUTF8, OSError):
            continue
        if belief_id not in text:
            continue
        try:
            t = parse_tension(text, p.stem, f"tensions/{p.name}")
        except NoteError:
            continue
        if t.status != "resolved" and belief_id in (t.belief, t.successor):
            out.append(t)
    return out


def for_contradiction(mem: Service, obs: Observation, eff: rules.Effect,
                      pending: dict[str, tuple[str, Any]], successor: str | None = None) -> tuple[str, str, Any]:
    """(id, text, stat key or None for a new file) of the tension this contradiction goes to.

    A belief with an open tension gets the new evidence added to it, not a
    second file: one tension per open question, however often it recurs.
    A proposed `successor` (SPEC §14) is named in it, so the question has both sides.
    """
    bid = eff.before.id
    candidates = [(tid, text, key) for tid, (text, key) in pending.items()]
    tdir = mem.root / "tensions"
    if tdir.is_dir():
        for p in sorted(tdir.glob("*.md")):
            if p.stem in pending:
                continue
            if p.is_symlink() and leaves(mem.root, p):
                continue
            key = stat_key(p)  # before the read: a change after it is seen by the compare-and-swap
            try:
                text = read_text(p, f"tensions/{p.name}")
            except NotUTF8:
                continue  # reported by validate; a new tension file is opened instead
            if bid in text:  # cheap filter before parsing (a bare id or a wikilink)
                candidates.append((p.stem, text, key))
    for tid, text, key in candidates:
        try:
            t = parse_tension(text, tid)
        except NoteError:
            continue  # a malformed tension is never rewritten
        if t.belief == bid and t.status != "resolved" and not t.rests_on:
            line = (f"- evidence: [[{rules.observation_link(obs)}]] "
                    f"({obs.date.isoformat()}: {' '.join(obs.evidence.split())})\n")
            if successor and successor != t.successor:
                text = edit_frontmatter(text, {"successor": wikilink(successor)})
                line += f"- proposed: {obs.date.isoformat()} — [[{successor}]] in place of [[{bid}]]\n"
            return tid, text.rstrip("\n") + "\n" + line, key
    tid, text = _new(mem, obs, eff, set(pending), successor or "")
    return tid, text, None


def _new(mem: Service, obs: Observation, eff: rules.Effect, pending: set[str], successor: str = "") -> tuple[str, str]:
    existing = {p.stem for p in (mem.root / "tensions").glob("*.md")} | set(pending)
    tid = unique_id(f"{obs.date.isoformat()}-{eff.before.id}", existing)
    if eff.divergence:
        title = f"Said and did differ on “{eff.before.title}”"
        suggests = "Self-report and behaviour point different ways; both are kept, neither overrides the other."
    else:
        title = f"Contradicts “{eff.before.title}”"
        suggests = obs.suggests or "The belief may be narrower than stated. Held lightly."
    if successor:
        title = f"Has “{eff.before.title}” given way to something new?"
        suggests = (f"{successor} may have replaced {eff.before.id}: ask the user; their word supersedes "
                    "it in one step, or keeps it.")
    t = Tension(id=tid, date=obs.date, belief=eff.before.id, status="watching", title=title,
                what_happened=obs.evidence, evidence=(rules.observation_link(obs),), suggests=suggests,
                successor=successor)
    return tid, render_tension(t)



def _open_on(mem: Service, belief_id: str):
    tdir = mem.root / "tensions"
    if not tdir.is_dir():
        return
    for p in sorted(tdir.glob("*.md")):
        key = stat_key(p)  # before the read: a change after it is seen by the compare-and-swap
        try:
            text = read_text(p, f"tensions/{p.name}")
        except NotUTF8:
            continue  # malformed, as below (validate names it): it was a UnicodeDecodeError here
        if belief_id not in text:  # cheap filter before parsing
            continue
        try:
            t = parse_tension(text, p.stem)
        except NoteError:
            continue  # a malformed tension is never rewritten
        if t.belief == belief_id and t.status != "resolved":
            yield p, text, key


def moving_writes(mem: Service, from_id: str, to_id: str) -> list[tx.Write]:
    """Open tensions of a belief merged into another now question that one."""
    out = []
    for p, text, key in _open_on(mem, from_id):
        new = edit_frontmatter(text, {"belief": wikilink(to_id)}).rstrip("\n")
        new += f"\n- moved: {mem.write_today.isoformat()} — {from_id} was merged into {to_id}\n"
        out.append(tx.replace(f"tensions/{p.name}", new, key))
    return out
