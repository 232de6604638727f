"""Tensions: listing, resolving, and where a contradiction an observation brings goes."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core import rules
from ..core.errors import Conflict, InputError, NotFound, VaultError
from ..core.ids import check_tension_id, unique_id
from ..core.model import Observation, Tension
from ..core.notes import NoteError, parse_tension, render_tension, resolve_tension_text
from ..core.redact import redact
from ..store import transaction as tx
from ..store.files import NotUTF8, read_text, stat_key
from ..store.paths import leaves
from . import common

if TYPE_CHECKING:
    from .memory import Memory


def select(mem: Memory, status: str | None) -> list[Tension]:
    ts, _ = mem.vault.load_tensions()
    return [t for t in ts if status is None or t.status == status]


def resolve(mem: Memory, tension_id: str, note: str) -> Tension:
    check_tension_id(tension_id, field="tension_id")
    if not note or not note.strip():
        raise InputError("'note' is required: a tension is resolved with a note saying how", field="note")
    rel = f"tensions/{tension_id}.md"
    with common.lock(mem):
        p = mem.vault.path(rel)
        if not p.exists():
            raise NotFound(f"no tension '{tension_id}' ({rel} does not exist)", path=rel)
        key = stat_key(p)
        text = read_text(p, rel)
        try:
            t = parse_tension(text, tension_id, rel)
        except NoteError as e:
            raise VaultError(f"{rel}:{e.line}: {e.message}", path=rel, line=e.line) from None
        if t.status == "resolved":
            raise Conflict(f"tension {tension_id} is already resolved", path=rel)
        new = resolve_tension_text(text, mem.today, redact(note, mem.params.redact))
        common.commit(mem, [tx.replace(rel, new, key)], f"tension: resolve {tension_id} ({t.status} → resolved)",
                      op="resolve", beliefs=[t.belief])
    return replace(t, status="resolved", resolution=note)


def for_contradiction(mem: Memory, obs: Observation, eff: rules.Effect,
                      pending: dict[str, tuple[str, Any]]) -> tuple[str, str, Any]:
    """(id, text, stat key or None for a new file) of the tension this contradiction goes to.

    A belief with an open tension gets the new evidence added to it, not a
    second file: one tension per open question, however often it recurs.
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
            try:
                text = read_text(p, f"tensions/{p.name}")
            except NotUTF8:
                continue  # reported by validate; a new tension file is opened instead
            if f"belief: {bid}" in text:  # cheap filter before parsing
                candidates.append((p.stem, text, stat_key(p)))
    for tid, text, key in candidates:
        try:
            t = parse_tension(text, tid)
        except NoteError:
            continue  # a malformed tension is never rewritten
        if t.belief == bid and t.status != "resolved":
            line = (f"- evidence: [[{rules.observation_link(obs)}]] "
                    f"({obs.date.isoformat()}: {' '.join(obs.evidence.split())})\n")
            return tid, text.rstrip("\n") + "\n" + line, key
    tid, text = _new(mem, obs, eff, set(pending))
    return tid, text, None


def _new(mem: Memory, obs: Observation, eff: rules.Effect, pending: set[str]) -> tuple[str, str]:
    existing = {p.stem for p in (mem.root / "tensions").glob("*.md")} | set(pending)
    tid = unique_id(f"{obs.date.isoformat()}-{eff.before.id}", existing)
    if eff.divergence:
        title = f"Said and did differ on “{eff.before.title}”"
        suggests = "Self-report and behaviour point different ways; both are kept, neither overrides the other."
    else:
        title = f"Contradicts “{eff.before.title}”"
        suggests = obs.suggests or "The belief may be narrower than stated. Held lightly."
    t = Tension(id=tid, date=obs.date, belief=eff.before.id, status="watching", title=title,
                what_happened=obs.evidence, evidence=(rules.observation_link(obs),), suggests=suggests)
    return tid, render_tension(t)
