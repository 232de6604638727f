"""Beliefs by the user's hand: read, add, edit, reject or retire, reinforce, pin, supersede.

Each change reads the file it changes, lets `epimem.core.rules` decide, and
hands a compare-and-swap write to the one write path: a hand edit saved while
epimem computed is never overwritten.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core import rules
from ..core.changes import belief_change
from ..core.errors import Conflict, InputError, VaultError
from ..core.ids import slugify, text_key, unique_id
from ..core.model import BASES, PERMANENCES, STATUSES, Belief, Evidence
from ..core.notes import append_evidence, render_belief, update_belief_text
from ..core.redact import redact
from ..store import transaction as tx
from . import common, tensions

if TYPE_CHECKING:
    from .memory import Memory

EDITABLE = frozenset({"title", "statement", "kind", "basis", "permanence", "confidence", "tags", "scope",
                      "pinned", "status", "depends_on"})


# --- changing --------------------------------------------------------------------------------

def _check_kind(kind: str, params) -> None:
    if not kind or not re.fullmatch(r"[a-z][a-z0-9\-]*", kind):
        raise InputError(f"invalid kind {kind!r}: a lowercase word such as {', '.join(params.kinds[:4])}",
                         field="kind")


def _check_confidence(conf: float, basis: str, params) -> None:
    try:
        rules.check_confidence(conf, basis, params)
    except rules.RuleError as e:
        raise InputError(str(e), field="confidence") from None


def add(mem: Memory, *, title: str, statement: str, kind: str, basis: str, permanence: str,
        confidence: float | None, tags: Iterable[str], scope: str, belief_id: str | None,
        supersedes: Iterable[str], pinned: bool, note: str, depends_on: Iterable[str] = ()) -> Belief:
    params = mem.params
    title, statement = redact(title.strip(), params.redact), redact(statement.strip(), params.redact)
    if not title:
        raise InputError("'title' is required", field="title")
    if not statement:
        raise InputError("'statement' is required: say what the belief claims", field="statement")
    common.check_choice("basis", basis, BASES)
    common.check_choice("permanence", permanence, PERMANENCES)
    _check_kind(kind, params)
    conf = rules.start_confidence(basis, params) if confidence is None else float(confidence)
    _check_confidence(conf, basis, params)
    supersedes = tuple(supersedes)
    for s in supersedes:
        common.check_id_input(s, "supersedes")
    rests = check_depends_on(depends_on)
    today = mem.write_today
    for attempt in common.attempts(mem):
        with attempt:
            existing, _ = mem.vault.load_beliefs()
            same = text_key(statement)
            for b in existing:
                _refuse_identical(b, same)
            ids = {b.id for b in existing} | {p.stem for p in (mem.root / "beliefs").glob("*.md")}
            bid = common.check_id_input(belief_id, "belief_id") if belief_id else unique_id(slugify(title), ids)
            if bid in ids:
                raise Conflict(f"belief '{bid}' already exists", path=f"beliefs/{bid}.md")
            _known_bases(bid, rests, ids)
            how = note or "added by the user"
            b = Belief(id=bid, title=title, kind=kind, basis=basis, confidence=round(conf, 2),
                       permanence=permanence, first=today, tags=common.clean_tags(tags), scope=scope or "global",
                       pinned=pinned, supersedes=supersedes, depends_on=rests, statement=statement,
                       evidence=(Evidence(today, "added", "", f"{how} ({conf:.2f})"),),
                       path=f"beliefs/{bid}.md")
            writes = [tx.create(b.path, render_belief(b))]
            for old_id in supersedes:
                text, old, key = common.read(mem, old_id)
                after = replace(old, status="superseded")
                ev = Evidence(today, "superseded", f"beliefs/{bid}",
                              _verdict(f"replaced by {title}", old, "supersession", mem))
                writes.append(tx.replace(old.path, update_belief_text(text, old, after, (ev,)), key))
                writes += tensions.closing_writes(mem, old_id, f"closed: {old_id} was superseded by {bid}")
            subject = f"belief: add {bid} ({conf:.2f}, {basis}, {permanence})"
            if supersedes:
                subject += f", superseding {', '.join(supersedes)}"
            common.commit(mem, writes, subject, op="add", beliefs=[bid, *supersedes],
                          check=lambda ids=ids, same=same: _no_identical_since(mem, ids, same))
    return b


def _verdict(note: str, b: Belief, source: str, mem: Memory) -> str:
    """The note of the user's verdict that `b` no longer holds, with the confidence it had
    (SPEC §14: calibration counts it); a note that carries its verdict already is kept."""
    from ..core import calibration

    if b.status != "active" or calibration.parse(b.id, None, note) is not None:
        return note
    return calibration.with_tag(note, b, "false", source, mem.today, mem.params)


def check_depends_on(values: Iterable[str]) -> tuple[str, ...]:
    """The ids of `depends_on` as given (ids or [[wikilinks]]), each a slug, in order, once."""
    from ..core.notes import link_target

    if isinstance(values, str):
        values = [values]
    return tuple(dict.fromkeys(common.check_id_input(link_target(str(v)), "depends_on") for v in values))


def _known_bases(bid: str, rests: tuple[str, ...], ids: set[str]) -> None:
    for d in rests:
        if d == bid:
            raise InputError(f"{bid} cannot depend on itself", field="depends_on")
        if d not in ids:
            raise InputError(f"'depends_on' names unknown belief '{d}'", field="depends_on")


def _refuse_identical(b: Belief, same: str) -> None:
    if text_key(b.statement) == same:
        raise Conflict(f"an identical belief already exists: {b.id} ({b.title}); "
                       "confirm it with `epimem observe` instead of adding it again", path=b.path)


def _no_identical_since(mem: Memory, ids: set[str], same: str) -> None:
    """Under the lock: a belief added by another writer since this one was prepared must not
    say the same thing (the check of `add` above, for the files that are new since)."""
    for name in os.listdir(mem.root / "beliefs"):
        if name.endswith(".md") and name[:-3] not in ids:
            try:
                _refuse_identical(mem.vault.read_belief(name[:-3])[1], same)
            except VaultError:
                continue  # a broken file is validate's to report, as in the check above


def edit(mem: Memory, belief_id: str, note: str, changes: dict[str, Any]) -> Belief:
    """Change fields by the user's hand; a confidence change is a user action with provenance."""
    unknown = set(changes) - EDITABLE
    if unknown:
        raise InputError(f"cannot edit {', '.join(sorted(unknown))}", field=sorted(unknown)[0])
    changes = {k: v for k, v in changes.items() if v is not None}
    if not changes:
        raise InputError("nothing to change: pass at least one field")
    params = mem.params
    for k in ("title", "statement"):
        if k in changes:
            changes[k] = redact(str(changes[k]).strip(), params.redact)
            if not changes[k]:
                raise InputError(f"'{k}' cannot be empty", field=k)
    for k, allowed in (("basis", BASES), ("permanence", PERMANENCES), ("status", STATUSES)):
        if k in changes:
            common.check_choice(k, changes[k], allowed)
    if "tags" in changes:
        changes["tags"] = common.clean_tags(changes["tags"])
    if "depends_on" in changes:
        changes["depends_on"] = check_depends_on(changes["depends_on"])
    for attempt in common.attempts(mem):
        with attempt:
            text, before, key = common.read(mem, belief_id)
            if changes.get("depends_on"):
                _known_bases(belief_id, changes["depends_on"],
                             {p.stem for p in (mem.root / "beliefs").glob("*.md")})
            after = replace(before, **changes)
            if "confidence" in changes:
                after = replace(after, confidence=round(float(changes["confidence"]), 2))
            _check_confidence(after.confidence, after.basis, params)
            ch = belief_change(belief_id, before, after)
            if ch is None:
                raise Conflict(f"{belief_id} already has those values", path=before.path)
            if any(getattr(after, k) != getattr(before, k) for k in rules.WORD_FIELDS):
                after = rules.user_word(after, mem.write_today)  # rule 16: decay counts from the user's word
            ev = Evidence(mem.write_today, "edited", "", (note or "edited by the user") + ": " + "; ".join(ch.details))
            common.commit(mem, [tx.replace(before.path, update_belief_text(text, before, after, (ev,)), key)],
                          f"edit: {belief_id} " + ", ".join(ch.details[:2]), op="edit", beliefs=[belief_id])
    return replace(after, evidence=after.evidence + (ev,))


def reject(mem: Memory, belief_id: str, *, retire: bool, note: str) -> Belief:
    """Rule 5: the user says it is no longer true: −0.20, or retire it."""
    for attempt in common.attempts(mem):
        with attempt:
            text, before, key = common.read(mem, belief_id)
            if before.status != "active":
                raise Conflict(f"{belief_id} is {before.status}, not active", path=before.path)
            said = _verdict(redact(note, mem.params.redact) or "the user said this is no longer true", before,
                            "retirement" if retire else "rejection", mem)
            after = rules.reject(before, mem.write_today, mem.params, retire=retire, note=said)
            ev = after.evidence[len(before.evidence):]
            new_text = update_belief_text(text, before, replace(after, evidence=before.evidence), ev)
            subject = (f"retire: {belief_id}" if retire else
                       f"reject: {belief_id} ({before.confidence:.2f} → {after.confidence:.2f})")
            writes = [tx.replace(before.path, new_text, key)]
            if retire:
                writes += tensions.closing_writes(mem, belief_id, f"closed: {belief_id} was retired")
            common.commit(mem, writes, subject,
                          op="retire" if retire else "reject", beliefs=[belief_id])
    return after


def reinforce(mem: Memory, belief_id: str, note: str, kind: str, affirm: bool = False) -> Belief:
    """The user restating a belief: recorded as evidence, no number changes (rule 3).

    `affirm`: the user confirmed it when asked (a gut-check): decay counts from
    today (rule 16), the confidence still does not move."""
    for attempt in common.attempts(mem):
        with attempt:
            text, b, key = common.read(mem, belief_id)
            day = mem.write_today
            ev = Evidence(day, kind, "", redact(note, mem.params.redact) or "the user said this is still true")
            after = rules.user_word(b, day) if affirm else b
            new_text = update_belief_text(text, b, after, (ev,)) if after is not b else append_evidence(text, (ev,))
            subject = f"{kind}: {belief_id} (" + ("decay counts from today)" if after is not b else "no change)")
            common.commit(mem, [tx.replace(b.path, new_text, key)], subject, op=kind, beliefs=[belief_id])
    return replace(after, evidence=b.evidence + (ev,))


def set_pinned(mem: Memory, belief_id: str, pinned: bool) -> Belief:
    for attempt in common.attempts(mem):
        with attempt:
            text, before, key = common.read(mem, belief_id)
            if before.pinned == pinned:
                return before
            after = replace(before, pinned=pinned)
            ev = Evidence(mem.write_today, "pinned" if pinned else "unpinned", "",
                          "exempt from decay" if pinned else "decays again")
            common.commit(mem, [tx.replace(before.path, update_belief_text(text, before, after, (ev,)), key)],
                          f"{'pin' if pinned else 'unpin'}: {belief_id}", op="pin", beliefs=[belief_id])
    return after


def supersede(mem: Memory, old_ids: Iterable[str], by: str, note: str) -> Belief:
    old_ids = list(old_ids)
    for attempt in common.attempts(mem):
        with attempt:
            text, new, key = common.read(mem, by)
            writes = []
            for oid in old_ids:
                if oid == by:
                    raise InputError("a belief cannot supersede itself", field="by")
                otext, old, okey = common.read(mem, oid)
                after = replace(old, status="superseded")
                ev = Evidence(mem.write_today, "superseded", f"beliefs/{by}",
                              _verdict(note or f"replaced by {new.title}", old, "supersession", mem))
                writes.append(tx.replace(old.path, update_belief_text(otext, old, after, (ev,)), okey))
                writes += tensions.closing_writes(mem, oid, f"closed: {oid} was superseded by {by}")
            merged = tuple(dict.fromkeys(new.supersedes + tuple(old_ids)))
            writes.append(tx.replace(new.path, update_belief_text(text, new, replace(new, supersedes=merged)), key))
            common.commit(mem, writes, f"supersede: {', '.join(old_ids)} → {by}", op="supersede",
                          beliefs=[by, *old_ids])
    return replace(new, supersedes=merged)


def merge(mem: Memory, keep: str, other: str, note: str = "") -> Belief:
    """Two beliefs the user says are one: `other`'s evidence is united into `keep`,
    `other` is superseded by `keep` (its file and history stay), and its open tensions
    move to `keep`. Rule 17 never merges by itself; this is the user's word.

    The kept belief's numbers stay its own (the user chose which one to keep);
    its dates span both, and an evidence line records the merge and both values.
    """
    if keep == other:
        raise InputError("a belief cannot be merged with itself", field="other")
    for attempt in common.attempts(mem):
        with attempt:
            ktext, kb, kkey = common.read(mem, keep)
            otext, ob, okey = common.read(mem, other)
            for b in (kb, ob):
                if b.status != "active":
                    raise Conflict(f"{b.id} is {b.status}; only active beliefs are merged", path=b.path)
            seen = set(kb.evidence)
            united = tuple(e for e in ob.evidence if e not in seen)
            dates = lambda *ds: [d for d in ds if d]  # noqa: E731
            after = replace(kb, first=min(kb.first, ob.first),
                            confirmed=max(dates(kb.confirmed, ob.confirmed), default=None),
                            challenged=max(dates(kb.challenged, ob.challenged), default=None),
                            tags=tuple(dict.fromkeys(kb.tags + ob.tags)),
                            supersedes=tuple(dict.fromkeys(kb.supersedes + (other,))))
            why = redact(note, mem.params.redact) or "the user said these are one belief"
            ev = Evidence(mem.write_today, "merged", f"beliefs/{other}",
                          f"{why}: {other} ({ob.confidence:.2f}) merged into this one ({kb.confidence:.2f}); "
                          f"{len(united)} evidence line{'s' if len(united) != 1 else ''} united")
            moved = tuple(sorted(united, key=lambda e: (e.date is None, e.date)))
            writes = [tx.replace(kb.path, update_belief_text(ktext, kb, after, moved + (ev,)), kkey)]
            oafter = replace(ob, status="superseded")
            oev = Evidence(mem.write_today, "superseded", f"beliefs/{keep}", f"merged into {kb.title}")
            writes.append(tx.replace(ob.path, update_belief_text(otext, ob, oafter, (oev,)), okey))
            writes += tensions.moving_writes(mem, other, keep)
            common.commit(mem, writes, f"merge: {other} → {keep} ({len(united)} evidence lines united)",
                          op="merge", beliefs=[keep, other])
    return replace(after, evidence=after.evidence + moved + (ev,))


def apply_review(mem: Memory, changes: list[tuple[str, dict[str, Any], str]], subject: str) -> tuple[str, list[Belief]]:
    """The user accepts a review's proposals: each (belief id, fields, why) becomes a
    change with a `reviewed` evidence line, all in one commit. Returns (sha, beliefs after)."""
    if not changes:
        raise InputError("nothing to apply: the review proposes no change", field="proposals")
    params = mem.params
    for attempt in common.attempts(mem):
        with attempt:
            writes, out, ids = [], [], []
            for bid, fields, why in changes:
                text, before, key = common.read(mem, bid)
                if before.status != "active":
                    raise Conflict(f"{bid} is {before.status}; the review's proposal no longer applies",
                                   path=before.path)
                after = replace(before, **fields)
                _check_confidence(after.confidence, after.basis, params)
                ch = belief_change(bid, before, after)
                if ch is None:
                    continue
                ev = Evidence(mem.write_today, "reviewed", "", f"{why}: " + "; ".join(ch.details))
                writes.append(tx.replace(before.path, update_belief_text(text, before, after, (ev,)), key))
                out.append(replace(after, evidence=after.evidence + (ev,)))
                ids.append(bid)
            if not writes:
                raise Conflict("nothing to apply: every proposal is already in place")
            sha = common.commit(mem, writes, subject, op="review", beliefs=ids,
                                body="\n".join(f"- {b.id}: {b.evidence[-1].note}" for b in out))
    return sha, out
