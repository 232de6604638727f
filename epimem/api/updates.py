"""The user's word on a belief that may have changed (SPEC §14), each in one commit.

A contradicting observation may propose the belief's successor; the tension then names
both and the assistant asks. What the user answers settles it in one step:

- `replace`: the old belief no longer holds and the successor does (the proposed one, an
  existing belief, or a new one in the user's words): the old is superseded, the successor
  carries the user's word (rule 16: decay counts from today) and lists the old in
  `supersedes`, and the open tensions about the old are closed;
- `keep`: the old belief still holds: it carries the user's word, the proposed successor
  is retired and the tension resolved;
- `decline`: the proposed successor does not hold: it is retired and the tension resolved.

The verdict tags (`core.calibration`) are written by the caller's choice of `tags`, from
each belief as it was when the user was asked.
"""

from __future__ import annotations

from dataclasses import replace as with_
from typing import TYPE_CHECKING

from ..core import rules
from ..core.errors import Conflict, InputError
from ..core.ids import slugify, text_key, unique_id
from ..core.model import Belief, Evidence
from ..core.notes import render_belief, resolve_tension_text, update_belief_text
from ..core.redact import redact
from ..store import transaction as tx
from ..store.files import read_text, stat_key
from . import common, listing, tensions

if TYPE_CHECKING:
    from .service import Service


def _active(b: Belief) -> None:
    if b.status != "active":
        raise Conflict(f"{b.id} is {b.status}, not active", path=b.path)


def replace(mem: Service, old_id: str, *, by: str = "", title: str = "", note: str = "",
            tags: dict[str, str] | None = None) -> tuple[Belief, Belief]:
    """Supersede `old_id` by `by` (an existing belief) or by a new belief titled `title`
    (the user's own words, basis self-report): one commit. `tags`: belief id → the verdict
    tag for its evidence line. Returns (old after, successor after)."""
    tags = tags or {}
    params, today = mem.params, mem.write_today
    title = redact(" ".join((title or "").split()), params.redact)
    note = redact(" ".join((note or "").split()), params.redact)
    if not by and not title:
        raise InputError("say what replaces it: an existing belief, or the new belief's title", field="now")
    for attempt in common.attempts(mem):
        with attempt:
            otext, old, okey = common.read(mem, old_id)
            _active(old)
            writes: list[tx.Write] = []
            target = by or _same_title(mem, old_id, title)
            if target:
                if target == old_id:
                    raise InputError("a belief cannot succeed itself", field="by")
                ntext, new, nkey = common.read(mem, target)
                _active(new)
                why = f"the user said this replaces {old_id}" + (f" ({note})" if note else "")
                ev = Evidence(today, "reinforcing", f"beliefs/{old_id}", f"{why} {tags.get(target, '')}".strip())
                after = rules.user_word(with_(new, supersedes=tuple(dict.fromkeys(new.supersedes + (old_id,)))), today)
                writes.append(tx.replace(new.path, update_belief_text(ntext, new, after, (ev,)), nkey))
                after = with_(after, evidence=after.evidence + (ev,))
            else:
                ids = {p.stem for p in (mem.root / "beliefs").glob("*.md")}
                bid = unique_id(slugify(title), ids)
                conf = rules.start_confidence("self-report", params)
                how = f"the user said this replaces {old_id}" + (f": {note}" if note else "")
                after = Belief(id=bid, title=title, kind=old.kind, basis="self-report", confidence=conf,
                               permanence=old.permanence, first=today, confirmed=today, tags=old.tags,
                               scope=old.scope, supersedes=(old_id,), statement=title,
                               evidence=(Evidence(today, "added", f"beliefs/{old_id}", f"{how} ({conf:.2f})"),),
                               path=f"beliefs/{bid}.md")
                writes.append(tx.create(after.path, render_belief(after)))
                target = bid
            oafter = with_(old, status="superseded")
            oev = Evidence(today, "superseded", f"beliefs/{target}",
                           f"{note or 'the user said this no longer holds'}; replaced by {after.title} "
                           f"{tags.get(old_id, '')}".strip())
            writes.insert(0, tx.replace(old.path, update_belief_text(otext, old, oafter, (oev,)), okey))
            writes += tensions.closing_writes(mem, old_id, f"closed: the user said {target} replaces {old_id}")
            common.commit(mem, writes, f"supersede: {old_id} → {target} (the user's word)", op="supersede",
                          beliefs=[target, old_id])
    return with_(oafter, evidence=oafter.evidence + (oev,)), after


def _same_title(mem: Service, old_id: str, title: str) -> str:
    """The successor an open tension on `old_id` proposed under this title ("" when none)."""
    proposed = tensions.open_successor(mem, old_id)
    if not proposed:
        return ""
    try:
        b = mem.vault.read_belief(proposed)[1]
    except Exception:  # noqa: BLE001 - a broken or missing file is simply not that successor
        return ""
    return proposed if b.status == "active" and text_key(b.title) == text_key(title) else ""


def keep(mem: Service, belief_id: str, successor: str, *, note: str = "", tag: str = "") -> Belief:
    """The user says `belief_id` still holds: their word on it (rule 16), the proposed
    `successor` retired, the tensions proposing it resolved. One commit."""
    params, today = mem.params, mem.write_today
    note = redact(" ".join((note or "").split()), params.redact)
    for attempt in common.attempts(mem):
        with attempt:
            text, b, key = common.read(mem, belief_id)
            _active(b)
            ev = Evidence(today, "reinforcing", "", f"{note or 'the user said this still holds'} {tag}".strip())
            after = rules.user_word(b, today)
            writes = [tx.replace(b.path, update_belief_text(text, b, after, (ev,)), key)]
            writes += _retire(mem, successor, f"the user said {belief_id} still holds")
            writes += _resolve(mem, belief_id, successor, f"the user said {belief_id} still holds")
            common.commit(mem, writes, f"keep: {belief_id} still holds; {successor} retired (the user's word)",
                          op="answer", beliefs=[belief_id, successor])
    return with_(after, evidence=after.evidence + (ev,))


def decline(mem: Service, successor: str, belief_id: str, *, note: str = "", tag: str = "") -> Belief:
    """The user says the proposed `successor` of `belief_id` does not hold: it is retired
    and the tensions proposing it resolved. One commit."""
    note = redact(" ".join((note or "").split()), mem.params.redact)
    for attempt in common.attempts(mem):
        with attempt:
            writes = _retire(mem, successor, f"{note or 'the user said this does not hold'} {tag}".strip())
            if not writes:
                raise Conflict(f"{successor} is not active", path=f"beliefs/{successor}.md")
            writes += _resolve(mem, belief_id, successor, f"the user said {successor} does not hold")
            common.commit(mem, writes, f"retire: {successor} (the user's word: it does not replace {belief_id})",
                          op="retire", beliefs=[successor, belief_id])
    return listing.get(mem, successor)[0]


def settle(mem: Service, belief_id: str, *, note: str = "") -> Belief:
    """The user says a belief that open questions are about (a contradiction, a flag "rests
    on a belief that changed") still holds: their word on it (rule 16), and the questions
    answered — their tensions resolved with it. One commit."""
    today = mem.write_today
    note = redact(" ".join((note or "").split()), mem.params.redact)
    for attempt in common.attempts(mem):
        with attempt:
            text, b, key = common.read(mem, belief_id)
            _active(b)
            ev = Evidence(today, "reinforcing", "", note or "the user said this still holds")
            after = rules.user_word(b, today)
            why = f"the user said {belief_id} still holds"
            writes = [tx.replace(b.path, update_belief_text(text, b, after, (ev,)), key)]
            for t in tensions.open_on(mem, belief_id):
                if t.belief == belief_id and not t.successor:
                    p = mem.root / t.path
                    writes.append(tx.replace(t.path, resolve_tension_text(read_text(p, t.path), today, why),
                                             stat_key(p)))
            common.commit(mem, writes, f"reinforcing: {belief_id} (the user's word; its open questions resolved)",
                          op="reinforcing", beliefs=[belief_id])
    return with_(after, evidence=after.evidence + (ev,))


def _retire(mem: Service, belief_id: str, note: str) -> list[tx.Write]:
    text, b, key = common.read(mem, belief_id)
    if b.status != "active":
        return []
    after = rules.reject(b, mem.write_today, mem.params, retire=True, note=note)
    return [tx.replace(b.path, update_belief_text(text, b, with_(after, evidence=b.evidence),
                                                  after.evidence[len(b.evidence):]), key)]


def _resolve(mem: Service, belief_id: str, successor: str, why: str) -> list[tx.Write]:
    out = []
    for t in tensions.open_on(mem, belief_id):
        if t.successor == successor and t.belief == belief_id:
            p = mem.root / t.path
            key = stat_key(p)
            out.append(tx.replace(t.path, resolve_tension_text(read_text(p, t.path), mem.write_today, why), key))
    return out
