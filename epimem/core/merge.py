"""Three-way merges of vault files (SPEC §11): pure functions over (base, ours, theirs).

Git merges a vault line by line, and a line merge is wrong for every file epimem
writes: two machines appending to the same month's log always conflict, a
belief confirmed on both sides keeps one confirmation, two session counts
become one. These functions merge by meaning instead, against the common
ancestor, and never return conflict markers. What only a person can settle
(prose changed on both sides, one observation id with two texts) is kept in
both versions, under `MERGE_HEADING` or as two entries, and said in `notes`
with `needs_user`; `validate` reports it until the user edits the file.

`base` is "" when the file did not exist in the ancestor (both sides added it).
The merge is deterministic: the same three inputs give the same bytes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from . import kernel, rules
from .kernel import EARLIER, known_sessions
from .notes import drop_frontmatter_keys, edit_frontmatter, parse_note, split
from .params import DEFAULTS, Params
from .vocabulary import date_of

# A belief whose prose both machines changed keeps the other machine's text
# under this heading (after its Evidence, so the statement and the evidence
# still parse); `validate` reports every file that holds it.
MERGE_HEADING = "## Merge: kept both versions"
_MERGE_INTRO = ("Two machines changed this belief in different ways. Above is one version; "
                "below is what the other machine had. Keep what is true, then delete this section.")

_MARKER = re.compile(r"^(<{7}|={7}|>{7})(?: |$)", re.M)


@dataclass(frozen=True)
class Merged:
    text: str
    notes: tuple[str, ...] = ()
    needs_user: bool = False  # both versions were kept: the user settles it by an edit


def has_conflict_markers(text: str) -> bool:
    return bool(_MARKER.search(text))


def kind_of(path: str) -> str | None:
    """Which merge a vault path takes (the patterns `.gitattributes` names)."""
    p = path.replace("\\", "/")
    if p == "state/sessions.json":
        return "sessions"
    if p == kernel.FORMAT_FILE:
        return "format"
    if not p.endswith(".md") or p.count("/") != 1:
        return None
    top = p.split("/", 1)[0]
    return {"observations": "observations", "beliefs": "belief", "tensions": "tension",
            "reviews": "review"}.get(top)


def three_way(base: Any, ours: Any, theirs: Any) -> tuple[Any, bool]:
    """(value, both changed it differently): a side that changed a value wins over one that did not."""
    if ours == theirs:
        return ours, False
    if ours == base:
        return theirs, False
    if theirs == base:
        return ours, False
    return ours, True


def _set_merge(base: list, ours: list, theirs: list) -> list:
    """Both sides' additions and removals, ours' order first."""
    b = set(base)
    removed = (b - set(ours)) | (b - set(theirs))
    out = [x for x in ours if x not in removed]
    out += [x for x in theirs if x not in removed and x not in out]
    return list(dict.fromkeys(out))


def _union_lines(base: list[str], ours: list[str], theirs: list[str]) -> list[str]:
    """Every line either side kept or added (a line one side deleted stays deleted);
    theirs' new lines go after the line they follow on their side."""
    bset, oset, tset = set(base), set(ours), set(theirs)
    out = [ln for ln in ours if not (ln in bset and ln not in tset and ln.strip())]
    for i, ln in enumerate(theirs):
        if ln in oset or ln in bset:
            continue
        # after the nearest earlier line of theirs that is already placed
        at = len(out)
        for prev in reversed(theirs[:i]):
            if prev.strip() and prev in out:
                at = max(j for j, x in enumerate(out) if x == prev) + 1
                while at < len(out) and out[at] not in oset and out[at] in tset:
                    at += 1  # keep theirs' own new lines in their order
                break
        out.insert(at, ln)
    return out


# --- observation logs ------------------------------------------------------------------

_OBS_HEAD = re.compile(r"^##[ \t]+(obs-[\w\-]+)[ \t]*$", re.M)
_OBS_DATE = re.compile(r"^[-*][ \t]+date[ \t]*:[ \t]*(\d{4}-\d{2}-\d{2})", re.M)


def split_log(text: str) -> tuple[str, list[tuple[str, str]]]:
    """(the text before the first entry, [(id, entry text)]) of an observations file."""
    heads = list(_OBS_HEAD.finditer(text))
    if not heads:
        return text, []
    pre = text[:heads[0].start()]
    entries = []
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        entries.append((h.group(1), text[h.start():end].rstrip("\n") + "\n"))
    return pre, entries


def _entry_day(oid: str, entry: str) -> str:
    m = _OBS_DATE.search(entry)
    if m:
        return m.group(1)
    d = re.match(r"obs-(\d{4})(\d{2})(\d{2})", oid)
    return f"{d.group(1)}-{d.group(2)}-{d.group(3)}" if d else "9999-99-99"


def join_log(pre: str, entries: list[str]) -> str:
    """The file as `observe` writes it: the heading, a blank line, entries one blank line apart."""
    body = "\n".join(entries)
    if not pre.strip():
        return body
    return pre.rstrip("\n") + "\n\n" + body if body else pre


def merge_observations(base: str, ours: str, theirs: str) -> Merged:
    """The union of entries by id, in date order; an entry is never duplicated.
    An id with two different texts keeps both (the user picks), and is reported."""
    bpre, bent = split_log(base)
    opre, oent = split_log(ours)
    tpre, tent = split_log(theirs)
    b, o, t = dict(bent), dict(oent), dict(tent)
    pre, _ = three_way(bpre, opre, tpre)
    order = list(dict.fromkeys([i for i, _ in oent] + [i for i, _ in tent]))
    chosen: list[tuple[str, str, int]] = []  # (day, text, position) for a stable date sort
    notes: list[str] = []
    for pos, oid in enumerate(order):
        ov, tv, bv = o.get(oid), t.get(oid), b.get(oid)
        if ov is None or tv is None:
            present = ov if ov is not None else (tv or "")  # an id in `order` is on one side at least
            if bv is not None and present == bv:
                continue  # removed on one side (an undo), untouched on the other
            chosen.append((_entry_day(oid, present), present, pos))
            continue
        value, both = three_way(bv, ov, tv)
        if both and (_stub(ov) or _stub(tv)):
            value, both = (ov if _stub(ov) else tv), False  # a forgotten observation stays forgotten
        chosen.append((_entry_day(oid, value), value, pos))
        if both:
            chosen.append((_entry_day(oid, tv), tv, pos))
            notes.append(f"observation {oid} has two different texts; both are kept — keep the right one")
    chosen.sort(key=lambda c: (c[0], c[2]))
    return Merged(join_log(pre, [c[1] for c in chosen]), tuple(notes), bool(notes))


def _stub(entry: str) -> bool:
    from .forget import KIND

    return f"\n- {KIND}:" in entry


def duplicate_observation_ids(text: str) -> list[str]:
    """Ids that head more than one entry of a log (what a merge kept in both versions)."""
    seen: dict[str, int] = {}
    for oid, _ in split_log(text)[1]:
        seen[oid] = seen.get(oid, 0) + 1
    return [i for i, n in seen.items() if n > 1]


# --- the session counter ---------------------------------------------------------------

def _later(a: date | None, b: date | None) -> date | None:
    return max((d for d in (a, b) if d is not None), default=None)


def _earlier(a: date | None, b: date | None) -> date | None:
    return min((d for d in (a, b) if d is not None), default=None)


def _machines(c: dict) -> dict[str, int]:
    """A counter's map; a counter of the older shape is all `EARLIER`."""
    if "machines" in c:
        return dict(c["machines"])
    return {EARLIER: c["count"]} if c.get("count") else {}


def merge_sessions(base: dict | None, ours: dict, theirs: dict) -> dict:
    """Sessions counted on both sides add up: each machine's entry of the map takes the
    larger side (a grow-only counter, SPEC §1.4) and `count` is their sum; dates take
    the later; the next review follows the later review; the sessions the vault knows
    are both sides'. Counters are `core.kernel`'s dicts."""
    if base is None:
        base = {"count": 0, "days": {}, "last_session": None, "last_review": None,
                "next_review_at": min(ours["next_review_at"], theirs["next_review_at"]), "created": None}
    days: dict[str, int] = {}
    bd, od, td = dict(base.get("days") or {}), dict(ours.get("days") or {}), dict(theirs.get("days") or {})
    for k in sorted(set(bd) | set(od) | set(td)):
        n = od.get(k, 0) + td.get(k, 0) - bd.get(k, 0)
        if n > 0:
            days[k] = n
    om, tm, bm = _machines(ours), _machines(theirs), _machines(base)
    machines = {k: max(om.get(k, 0), tm.get(k, 0)) for k in sorted(set(om) | set(tm))}
    # The sessions counted before the map (an older epimem on either side, or a count raised
    # by hand) are one shared entry: sessions added to it on both sides add up, as before.
    if EARLIER in machines:
        o, t, b = om.get(EARLIER, 0), tm.get(EARLIER, 0), bm.get(EARLIER, 0)
        machines[EARLIER] = max(o, t, o + t - b)
    machines = {k: n for k, n in machines.items() if n}
    count = sum(machines.values())
    oc, tc = ours.get("counted") or {}, theirs.get("counted") or {}
    both = {k: max(d for d in (oc.get(k), tc.get(k)) if d) for k in [*oc, *(k for k in tc if k not in oc)]}
    counted = dict(sorted(both.items(), key=lambda kv: kv[1]))  # stable: in the order counted, by day
    newest = max(counted.values(), default=None)
    if newest is not None:
        counted = known_sessions(counted, date.fromisoformat(newest))
    olr, tlr = ours["last_review"], theirs["last_review"]
    if olr == tlr:
        nra, _ = three_way(base["next_review_at"], ours["next_review_at"], theirs["next_review_at"])
        if ours["next_review_at"] != theirs["next_review_at"] and nra == ours["next_review_at"]:
            nra = max(ours["next_review_at"], theirs["next_review_at"])
    else:
        later = ours if tlr is None or (olr is not None and olr > tlr) else theirs
        nra = later["next_review_at"]
    created = _earlier(ours.get("created"), theirs.get("created"))
    return {"count": count, "last_session": _later(ours["last_session"], theirs["last_session"]),
            "last_review": _later(olr, tlr), "next_review_at": nra, "created": created, "days": days,
            "machines": machines, "counted": counted}


def unapply_sessions(before: dict, after: dict, now: dict, own: str) -> dict:
    """The counter `now` without what one change did to it (`before` → `after`): undoing an
    import takes its sessions back out (SPEC §4: never a session this machine counted, on the
    `own` entry of the map, which the hook's counts that rode along with that change are).
    Dates the change set are put back when no later change moved them."""
    bm, am, nm = _machines(before), _machines(after), _machines(now)
    machines = dict(nm)
    for k in set(am) | set(bm):
        if k != own:
            machines[k] = max(0, nm.get(k, 0) - (am.get(k, 0) - bm.get(k, 0)))
    machines = {k: n for k, n in sorted(machines.items()) if n}
    own_added = max(0, am.get(own, 0) - bm.get(own, 0))
    days = dict(now.get("days") or {})
    for d in set(after.get("days") or {}) | set(before.get("days") or {}):
        delta = (after.get("days") or {}).get(d, 0) - (before.get("days") or {}).get(d, 0)
        days[d] = max(0, days.get(d, 0) - delta)
    if own_added and after.get("last_session") is not None:
        d = after["last_session"].isoformat()
        days[d] = days.get(d, 0) + own_added
    out = dict(now, machines=machines, count=sum(machines.values()),
               days={d: n for d, n in sorted(days.items()) if n})
    for key in ("last_session", "last_review", "next_review_at", "created"):
        if now.get(key) == after.get(key) and before.get(key) != after.get(key):
            out[key] = before.get(key)
    if out["next_review_at"] is None:
        out["next_review_at"] = now["next_review_at"]
    return out


# --- beliefs ------------------------------------------------------------------------------

_SECTION = re.compile(r"^##[ \t]+(.+?)[ \t]*$", re.M)
_EV_DATE = re.compile(r"^[-*][ \t]+(\d{4}-\d{2}-\d{2})")
_STATUS_RANK = {"active": 0, "superseded": 1, "retired": 2}


def _sections(body: str) -> tuple[str, list[tuple[str, str]]]:
    """(the prose before the first `## ` heading, [(heading line, its text)])."""
    heads = list(_SECTION.finditer(body))
    if not heads:
        return body, []
    out = []
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(body)
        out.append((h.group(0).strip(), body[h.end():end]))
    return body[:heads[0].start()], out


def _evidence_merge(base: str, ours: str, theirs: str) -> str:
    lines = _union_lines([x for x in base.split("\n") if x.strip()], [x for x in ours.split("\n") if x.strip()],
                         [x for x in theirs.split("\n") if x.strip()])
    # date order, stable: an undated line keeps the date of the line before it
    keyed, last = [], ""
    for i, ln in enumerate(lines):
        m = _EV_DATE.match(ln.strip())
        last = m.group(1) if m else last
        keyed.append((last, i, ln))
    keyed.sort(key=lambda k: (k[0], k[1]))
    return "\n" + "\n".join(k[2] for k in keyed) + "\n" if keyed else "\n"


def _meta(text: str) -> dict[str, Any] | None:
    if not text.strip():
        return None
    note = parse_note(text, lenient=True)
    return note.meta if note is not None else None


def _body(text: str) -> str:
    return split(text)[1]


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _day(v: Any) -> date | None:
    try:
        return date_of(v, "date")
    except (ValueError, TypeError):
        return None


def merge_belief(base: str, ours: str, theirs: str, params: Params = DEFAULTS) -> Merged:
    """A belief, field by field (SPEC §11): a field changed on one side takes that side;
    confidence changed on both moves by both changes from the base, within the cap and
    the floor; confirmed/challenged take the later date; a user's retire or supersede wins
    over `active`; tags merge both sides' additions and removals; evidence is the union
    in date order; prose changed on both sides keeps both under `MERGE_HEADING`."""
    if ours == theirs:
        return Merged(ours)  # the same change on both sides (one import run twice): git keeps one, so do we
    from .forget import is_tombstone

    # Forgetting is the user's word and wins whole (SPEC §15): a field merge would bring back the
    # other machine's title and evidence into the tombstone.
    if is_tombstone(ours) or is_tombstone(theirs):
        kept = ours if is_tombstone(ours) else theirs
        dropped = theirs if kept is ours else ours
        note = () if is_tombstone(dropped) or dropped == base else (
            "forgotten on one machine; what the other changed in it since was dropped",)
        return Merged(kept, note)
    om, tm = _meta(ours), _meta(theirs)
    if om is None or tm is None:
        return _keep_both(ours, theirs, "the file does not parse on one side")
    bm = _meta(base) or {}
    added_twice = not base.strip()
    notes: list[str] = []
    other: list[str] = []  # the other machine's values, for the merge section
    changes: dict[str, Any] = {}
    for key in list(dict.fromkeys([*om, *tm])):
        bv, ov, tv = bm.get(key), om.get(key), tm.get(key)
        if key == "confidence" and _both_moved(bv, ov, tv):
            # the same step on both machines (two confirmations) is two steps, not one
            value = _merge_confidence(bv, ov, tv, om, tm, params, added_twice)
            if value != ov:
                changes[key] = value
            continue
        if ov == tv:
            continue
        value, both = three_way(bv, ov, tv)
        if added_twice:
            both = True
        if key == "confidence" and both:
            value = _merge_confidence(bv, ov, tv, om, tm, params, added_twice)
        elif key in ("confirmed", "challenged") and both:
            value = _later(_day(ov), _day(tv))
        elif key == "first" and both:
            value = _earlier(_day(ov), _day(tv))
        elif key == "confirmed_session":
            continue  # follows `confirmed`, below
        elif key in ("tags", "supersedes", "depends_on") and (isinstance(ov, list) or isinstance(tv, list)):
            value = _set_merge(_as_list(bv), _as_list(ov), _as_list(tv))
        elif key == "status" and both:
            value = max((ov, tv), key=lambda s: _STATUS_RANK.get(str(s), -1))
            notes.append(f"status: one machine made it {ov}, the other {tv}; kept {value}")
        elif key == "pinned" and both:
            value = bool(ov) or bool(tv)
        elif both:
            other.append(f"- {key} on the other machine: {tv if tv is not None else '(empty)'}")
        if key == "status" and value != ov and not both:
            notes.append(f"status {value}, from the other machine, wins over {ov}")
        if value != ov:
            changes[key] = value
    # the session that last confirmed goes with the confirmation that won
    oc, tc = _day(om.get("confirmed")), _day(tm.get("confirmed"))
    if oc != tc and tc is not None and (oc is None or tc > oc) and om.get("confirmed_session") != tm.get(
            "confirmed_session"):
        changes["confirmed_session"] = tm.get("confirmed_session")
    drop = () if changes.get("confirmed_session", "") is not None else ("confirmed_session",)
    changes = {k: v for k, v in changes.items() if k not in drop}  # no longer written (rule 3 reads the log)
    text = edit_frontmatter(ours, changes) if changes else ours
    text = drop_frontmatter_keys(text, drop) if drop else text
    bb, ob, tb = (_body(base) if base.strip() else ""), _body(ours), _body(theirs)
    if tb == ob or tb == bb:
        body = ob  # the body changed on one side at most: that side's text, byte for byte
    elif ob == bb and not added_twice:
        body = tb
    else:
        body, extra = _merge_body(bb, ob, tb, added_twice)
        other += extra
    head = text[:len(text) - len(_body(text))]
    if other:
        body = _add_merge_section(body, other)
        notes.append("both machines changed the same text; both versions are kept under "
                     f"'{MERGE_HEADING[3:]}' — edit the belief to settle it")
    return Merged(head + body, tuple(notes), bool(other))


def _both_moved(bv: Any, ov: Any, tv: Any) -> bool:
    b, o, t = _num(bv), _num(ov), _num(tv)
    return b is not None and o is not None and t is not None and o != b and t != b


def _as_list(v: Any) -> list:
    if v is None or v == "":
        return []
    return [str(x) for x in v] if isinstance(v, list) else [str(v)]


def _merge_confidence(bv: Any, ov: Any, tv: Any, om: dict, tm: dict, params: Params, added_twice: bool) -> Any:
    o, t, b = _num(ov), _num(tv), _num(bv)
    if o is None or t is None:
        return ov
    if added_twice or b is None:
        return max(o, t)  # two machines created it apart: the one that earned more
    value = b + (o - b) + (t - b)
    basis = str(om.get("basis") or tm.get("basis") or "")
    hi = max(rules.cap(basis, params), 0.0)
    lo = min(params.confidence_floor, o, t)  # a user who set it lower than the floor keeps that
    return round(min(hi, max(lo, value)), 2)


def _merge_body(base: str, ours: str, theirs: str, added_twice: bool) -> tuple[str, list[str]]:
    """(the body, the other machine's prose for the merge section)."""
    bpre, bsec = _sections(base)
    opre, osec = _sections(ours)
    tpre, tsec = _sections(theirs)
    other: list[str] = []
    pre, both = three_way(bpre.strip(), opre.strip(), tpre.strip())
    if both or (added_twice and opre.strip() != tpre.strip()):
        pre = opre.strip()
        other.append("The statement on the other machine:\n\n" + tpre.strip())
    bs, os_, ts = dict(bsec), dict(osec), dict(tsec)
    headings = list(dict.fromkeys([h for h, _ in osec] + [h for h, _ in tsec]))
    parts = [pre + "\n"] if pre else []
    for h in headings:
        bv, ov, tv = bs.get(h, ""), os_.get(h), ts.get(h)
        if h.lower() == "## evidence" or h == MERGE_HEADING:
            value = _evidence_merge(bv, ov or "", tv or "") if h != MERGE_HEADING else \
                "\n" + "\n".join(_union_lines(bv.split("\n"), (ov or "").split("\n"),
                                              (tv or "").split("\n"))).strip("\n") + "\n"
        elif ov is None or tv is None:
            present = ov if ov is not None else (tv or "")
            if h in bs and present == bv:
                continue  # deleted on one side
            value = present
        else:
            value, both = three_way(bv, ov, tv)
            if both:
                other.append(f"The section '{h[3:]}' on the other machine:\n" + tv.rstrip())
        parts.append(h + ("\n" + value.lstrip("\n") if value.strip() else "\n"))
    out = "\n".join(p.rstrip("\n") + "\n" for p in parts)
    return out, other


def _add_merge_section(body: str, lines: list[str]) -> str:
    if MERGE_HEADING in body:
        return body.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    return body.rstrip("\n") + f"\n\n{MERGE_HEADING}\n{_MERGE_INTRO}\n\n" + "\n\n".join(lines) + "\n"


def _keep_both(ours: str, theirs: str, why: str) -> Merged:
    if ours == theirs:
        return Merged(ours)
    text = ours.rstrip("\n") + f"\n\n{MERGE_HEADING}\n{_MERGE_INTRO}\n\n" + "\n".join(
        "    " + ln if ln.strip() else "" for ln in theirs.rstrip("\n").split("\n")) + "\n"
    return Merged(text, (f"{why}; both versions are kept — edit the file to settle it",), True)


# --- tensions and reviews ---------------------------------------------------------------------

_TENSION_RANK = {"unresolved": 0, "watching": 1, "resolved": 2}


def _merge_frontmatter(bm: dict, om: dict, tm: dict, prefer: dict[str, dict[str, int]]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for key in dict.fromkeys([*om, *tm]):
        ov, tv = om.get(key), tm.get(key)
        if ov == tv:
            continue
        value, both = three_way(bm.get(key), ov, tv)
        if both and key in prefer:
            value = max((ov, tv), key=lambda s: prefer[key].get(str(s), -1))
        elif both and key == "date":
            value = _earlier(_day(ov), _day(tv))
        if value != ov:
            changes[key] = value
    return changes


def merge_tension(base: str, ours: str, theirs: str) -> Merged:
    """Both sides' entries are kept: the union of the tension's lines (its evidence,
    its resolution); a resolution wins over watching or unresolved."""
    om, tm = _meta(ours), _meta(theirs)
    if om is None or tm is None:
        return _keep_both(ours, theirs, "the tension does not parse on one side")
    changes = _merge_frontmatter(_meta(base) or {}, om, tm, {"status": _TENSION_RANK})
    text = edit_frontmatter(ours, changes) if changes else ours
    head = text[:len(text) - len(_body(text))]
    bl = _body(base).split("\n") if base.strip() else []
    ol, tl = _body(ours).split("\n"), _body(theirs).split("\n")
    if not base.strip():
        # opened on both machines the same day: one tension, the other's title kept as a line
        otitle = next((x for x in ol if x.startswith("# ")), None)
        tl = [f"- also opened as: {x[2:].strip()}" if x.startswith("# ") and otitle and x != otitle else x
              for x in tl]
    lines = [x for x in _union_lines(bl, ol, tl)]
    body = "\n".join(lines).strip("\n") + "\n"
    return Merged(head + body)


_RECORD = re.compile(r"^(?:# .*|## (?:audit|gut-check|interview|review)[ \t]*)$", re.M)


def _records(body: str) -> tuple[str, list[str]]:
    heads = list(_RECORD.finditer(body))
    if not heads:
        return body, []
    return body[:heads[0].start()], [body[h.start():(heads[i + 1].start() if i + 1 < len(heads) else len(body))]
                                     .strip("\n") for i, h in enumerate(heads)]


def merge_review(base: str, ours: str, theirs: str) -> Merged:
    """Both sides' records of the day are kept, ours first; a record the other
    machine wrote under its own title is added as a `## kind` section."""
    om, tm = _meta(ours), _meta(theirs)
    if om is None or tm is None:
        return _keep_both(ours, theirs, "the review does not parse on one side")
    _, brec = _records(_body(base)) if base.strip() else ("", [])
    pre, orec = _records(_body(ours))
    _, trec = _records(_body(theirs))
    gone = (set(brec) - set(orec)) | (set(brec) - set(trec))
    out = [r for r in orec if r not in gone]
    for r in trec:
        if r in out or r in gone:
            continue
        if r.startswith("# "):
            first, _, rest = r.partition("\n")
            kind = str(tm.get("kind") or "review")
            r = f"## {kind}" + ("\n" + rest if rest else "")
            if r in out:
                continue
        out.append(r)
    head = ours[:len(ours) - len(_body(ours))]
    body = pre + "\n\n".join(out) + "\n"
    return Merged(head + body)


# --- the session counter's text, and the dispatch ----------------------------------------------

def merge_json_counter(base: str, ours: str, theirs: str, load, dump) -> Merged:
    """`state/sessions.json` through its one reader and writer (`store.sessions.loads`/`dump`)."""
    try:
        o, t = load(ours), load(theirs)
    except (ValueError, TypeError, json.JSONDecodeError):
        return Merged(ours, ("state/sessions.json does not parse on one side; kept this machine's",), True)
    try:
        b = load(base) if base.strip() else None
    except (ValueError, TypeError, json.JSONDecodeError):
        b = None
    return Merged(dump(merge_sessions(b, o, t)))


def merge_file(path: str, base: str, ours: str, theirs: str, *, params: Params = DEFAULTS,
               load_sessions=None, dump_sessions=None) -> Merged | None:
    """The merge for a vault path, or None when epimem has no rule for it."""
    kind = kind_of(path)
    if ours == theirs:
        return Merged(ours)
    if kind == "observations":
        return merge_observations(base, ours, theirs)
    if kind == "belief":
        return merge_belief(base, ours, theirs, params)
    if kind == "tension":
        return merge_tension(base, ours, theirs)
    if kind == "review":
        return merge_review(base, ours, theirs)
    if kind == "sessions" and load_sessions is not None and dump_sessions is not None:
        return merge_json_counter(base, ours, theirs, load_sessions, dump_sessions)
    if kind == "format":
        return merge_format(ours, theirs)
    return None


def merge_format(ours: str, theirs: str) -> Merged | None:
    """The vault's format after a merge is the newer side's (SPEC §1.4): the files of both are in
    it, and an epimem that knows only the older one then refuses the vault rather than misread it."""
    try:
        fmt = max(kernel.vault_format(ours), kernel.vault_format(theirs))
    except ValueError:
        return None  # a damaged side: git's conflict names the file
    return Merged(kernel.format_text(fmt))
