"""The vault as the files of the memory tool, and what a model writes into them, read back.

The model sees `/memories` as a folder of markdown files; none of them is a file of the vault.
Each is rendered from what the API returns (a belief, a tension, the session context), and a
write is never saved as text: what it adds is read as observations for `epimem.api`'s observe,
the one write path of evidence. This module is the two directions of that translation, pure:

- `belief_file`, `tension_file`, `readme`: the text of a file, as `Line`s that know which part
  of the file they are, so that an edit can be told apart from an addition;
- `observations`: the observation objects (the ones `epimem observe --json` reads) in a text the
  model wrote, or a `Refused` that says why nothing was recorded, in words a model acts on.

Confidence is shown in words only (the tiers every reader of epimem names), never as a number
the model could copy back as a setting; a write that tries to set one, or a date, a status or a
basis of `fact`, is refused as a whole: nothing of it is recorded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..core.calibration import strip_tag

ROOT = "/memories"

# What each tier means to a model reading it (the names are the kernel's, SPEC §2).
TIER_WORDS = {
    "factual": "a verified fact, by the user's own word",
    "established": "held firmly: behaviour has fitted it again and again",
    "developing": "supported, still being tested",
    "tentative": "a guess to check before relying on it",
    "speculative": "barely supported: do not rely on it",
}


class Refused(Exception):
    """A write the rules refuse: nothing of it was recorded; `message` says why and what to do."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


# --- what a refusal says ----------------------------------------------------------------------

SAY_INSTEAD = ("Say what the user did or said instead, as a line in the belief's file: `confirming: …`, "
               "`complicating: …` or `contradicting: …`.")
CONFIDENCE = ("epimem records observations, not confidences: a belief's confidence moves only with evidence, "
              "by the vault's rules (a new belief starts where one observation puts it; each confirmation by "
              "the user's behaviour in another session moves it a step), so nothing was recorded. " + SAY_INSTEAD)
DATES = ("epimem dates evidence the day it is recorded (today), never earlier or later, so nothing was recorded: "
         "leave the date out and say what happened.")
STATUS = ("Only the user retires or replaces a belief, so nothing was recorded. To ask them, delete the belief's "
          "file (that proposes retiring it) or rename it onto the belief that replaces it.")
PINNED = "Only the user pins a belief (exempts it from fading), so nothing was recorded."
FACT = ("Only the user makes a belief a fact: an assistant cannot mint a verified fact from what it saw, so "
        "nothing was recorded. Record what the user did or said; the user confirms it as a fact themselves.")
SESSION = ("The session and the source of what you record are the app's to say, not the text's, so nothing was "
           "recorded: leave out the `session:` and `source:` lines.")
WORDING = ("A belief's wording is the user's to change, so nothing was recorded. To propose other words, rename "
           "its file (e.g. to /memories/beliefs/prefers-tabs-except-in-go.md); to add nuance, add a line "
           "`complicating: …` with what the user did that the wording misses.")
EVIDENCE = ("Evidence stays on record as it was written, so nothing was recorded. If it no longer fits, add a "
            "line `contradicting: …` saying what the user did that goes against it.")
VIEW = ("This part of the file is epimem's own view of the belief and cannot be changed, so nothing was "
        "recorded. Add lines instead: `confirming: …`, `complicating: …` or `contradicting: …`.")


def _field(name: str) -> str:
    return (f"A belief's {name} is the user's to change (`epimem belief edit`), so nothing was recorded. "
            + SAY_INSTEAD)


# --- rendering --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Line:
    text: str
    part: str  # title, key:<name>, statement, evidence, guide, blank


def text_of(lines: list[Line]) -> str:
    return "\n".join(ln.text for ln in lines) + "\n"


_FIGURE = r"[01]?\.\d\d"
# A parenthesis that holds only a confidence or its move: "(0.75)", "(0.30 → 0.35)", "(0.40 → 0.30, rule 15)".
_MOVE = re.compile(r"\s*\((?:" + _FIGURE + r")(?:\s*→\s*" + _FIGURE + r")?(,\s*rule \d+)?\)")
_LEFT = re.compile(r"(?<![\w.])" + _FIGURE + r"(?!\d)")


def without_numbers(note: str) -> str:
    """An evidence note or a reason as the model reads it: no confidence figures (`0.30 → 0.35`,
    `(0.75)`), no verdict tags; the words around them stay, a figure left inside words is `…`."""
    out = _MOVE.sub(lambda m: f" ({m.group(1)[1:].strip()})" if m.group(1) else "", strip_tag(note))
    return _LEFT.sub("…", out).strip()


def tier_line(tier: str, stored_tier: str, confirmed: str | None) -> str:
    words = f"{tier} — {TIER_WORDS.get(tier, '')}".rstrip(" —")
    if stored_tier != tier:
        since = f"not confirmed since {confirmed}" if confirmed else "never confirmed"
        words += f" (faded from {stored_tier}: {since})"
    return words


def belief_file(v: dict[str, Any], stored_tier: str, refused: str = "") -> list[Line]:
    """A belief's file, from its view (`core.record.view`, full): confidence in words only."""
    out = [Line(f"# {v['title']}", "title"), Line("", "blank"),
           Line(f"- belief: {v['id']}", "key:belief"),
           Line(f"- confidence: {tier_line(v['tier'], stored_tier, v.get('confirmed'))}", "key:confidence"),
           Line(f"- kind: {v['kind']}", "key:kind"),
           Line(f"- basis: {v['basis']}", "key:basis"),
           Line(f"- permanence: {v['permanence']}", "key:permanence"),
           Line(f"- first seen: {v['first']}", "key:first"),
           Line(f"- last confirmed: {v.get('confirmed') or 'never'}", "key:confirmed"),
           Line(f"- last challenged: {v.get('challenged') or 'never'}", "key:challenged")]
    if v.get("status") != "active":
        out.append(Line(f"- status: {v['status']} — no longer held; kept on record", "key:status"))
    if v.get("pinned"):
        out.append(Line("- pinned: yes (does not fade)", "key:pinned"))
    if v.get("scope") and v["scope"] != "global":
        out.append(Line(f"- scope: {v['scope']}", "key:scope"))
    if v.get("tags"):
        out.append(Line(f"- tags: {', '.join(v['tags'])}", "key:tags"))
    if v.get("depends_on"):
        out.append(Line(f"- rests on: {', '.join(v['depends_on'])}", "key:depends_on"))
    if v.get("supersedes"):
        out.append(Line(f"- replaced: {', '.join(v['supersedes'])}", "key:supersedes"))
    if refused:
        out.append(Line(f"- note: {refused}", "key:note"))
    out.append(Line("", "blank"))
    out += [Line(s, "statement") for s in (v.get("statement") or v["title"]).splitlines()]
    out += [Line("", "blank"), Line("## Evidence", "evidence")]
    for e in v.get("evidence") or ():
        out.append(Line(f"- {e.get('date') or '?'} · {e['kind']} — {without_numbers(e.get('note') or '')}",
                        "evidence"))
    if v.get("status") == "active":
        out += [Line("", "blank"), Line("## Adding evidence", "guide"),
                Line("Lines you add to this file are recorded as observations of this belief, dated today. Start "
                     "each with how it bears on the belief — `confirming: …` (what the user did that fits it), "
                     "`complicating: …` (what adds nuance) or `contradicting: …` (what goes against it) — and "
                     "add `(said)` after the word when the user said it of themselves rather than did it. Only "
                     "evidence moves its confidence; delete the file to propose retiring it.", "guide")]
    return out


def tension_file(t: dict[str, Any], belief_title: str) -> list[Line]:
    out = [Line(f"# {t['title']}", "title"), Line("", "blank"),
           Line(f"- tension: {t['id']}", "key:tension"),
           Line(f"- about: {ROOT}/beliefs/{t['belief']}.md ({belief_title})", "key:belief"),
           Line(f"- status: {t['status']}", "key:status"),
           Line(f"- since: {t['date']}", "key:date")]
    if t.get("successor"):
        out.append(Line(f"- proposed in its place: {ROOT}/beliefs/{t['successor']}.md", "key:successor"))
    if t.get("rests_on"):
        out.append(Line(f"- rests on: {ROOT}/beliefs/{t['rests_on']}.md, which changed", "key:rests_on"))
    out.append(Line("", "blank"))
    for label, key in (("What happened", "what_happened"), ("What this suggests", "suggests")):
        if t.get(key):
            out.append(Line(f"{label}: {t[key]}", "statement"))
    out += [Line("", "blank"),
            Line("Only the user resolves a tension. Evidence about it goes into the belief's file.", "guide")]
    return out


def readme(per_session: int, review_required: bool) -> list[Line]:
    text = f"""# The user's epimem memory

This is not a folder of your notes: it is the user's epimem vault, shown as files. It holds
what assistants believe about the user — hypotheses, each with a confidence in words that only
evidence moves — and the user reads every change (each one is a git commit they can undo).

## Reading
- context.md: what matters most, as an assistant is told at the start of a session.
- beliefs/<id>.md: one belief each: its confidence, statement and evidence. Confidence, from
  firm to weak: factual (verified by the user), established, developing, tentative (a guess to
  check), speculative (do not rely on it).
- tensions/<id>.md: open questions — evidence that did not fit a belief, or a proposal waiting
  for the user.

## Writing
What you write is recorded as observations about the user, dated today; the files keep
showing what epimem holds, not your text. At most {per_session} observations in a conversation,
and zero is a good answer: record behaviour more than what the user says about themselves,
concretely, and nothing that would feel like surveillance if the user read it.
- Something new: create a file with any name (e.g. /memories/prefers-tabs.md). Each bullet
  or paragraph is one observation; its heading, or else its first sentence, is the title of a
  new belief, which starts where the vault's rules put one observation.
- Evidence about a belief: add a line to its file, starting with `confirming:`, `complicating:`
  or `contradicting:`; write `confirming (said): …` when the user said it rather than did it.
- A belief that no longer holds: delete its file. Two beliefs that are one, or a better
  wording: rename the file. Both only ask the user; nothing is deleted or renamed.
You cannot set a confidence, a date or a status: the rules move a belief, the user decides.
"""
    if review_required:
        text += ("\nThis vault is set to `review: required`: the user reviews what assistants record before "
                 "it lands, so what you write here waits in their review inbox until they accept it.\n")
    return [Line(s, "guide") for s in text.rstrip("\n").split("\n")]


# --- reading what the model wrote ---------------------------------------------------------------

# The keys a line may set (`key: value`), by their spoken names, as observation fields.
KEYS = {
    "evidence": "evidence", "what happened": "evidence", "suggests": "suggests", "therefore": "therefore",
    "title": "title", "kind": "kind", "permanence": "permanence", "tags": "tags", "tag": "tags",
    "scope": "scope", "basis": "basis", "strength": "strength", "connects": "connects", "belief": "connects",
    "rests on": "depends_on", "depends on": "depends_on", "new despite similar": "new_despite_similar",
}
# Keys that would set what only the rules or the user set: the refusal for each.
FORBIDDEN = {
    **dict.fromkeys(("confidence", "effective confidence", "certainty", "probability", "score", "weight", "tier",
                     "confidence level"), CONFIDENCE),
    **dict.fromkeys(("date", "dated", "first", "first seen", "seen", "confirmed", "last confirmed", "challenged",
                     "last challenged", "since", "when"), DATES),
    **dict.fromkeys(("status", "retired", "superseded", "supersedes", "replaced", "replaced by"), STATUS),
    "pinned": PINNED, "session": SESSION, "source": SESSION,
}
# Fields of an existing belief that evidence added to it cannot carry.
BELIEF_FIELDS = {"title": WORDING, "kind": _field("kind"), "permanence": _field("permanence"),
                 "tags": _field("tags"), "scope": _field("scope")}
STRENGTHS = {"confirming": "confirming", "confirms": "confirming", "contradicting": "contradicting",
             "contradicts": "contradicting", "complicating": "complicating", "complicates": "complicating",
             "single": "single"}
BASES = {"said": "self-report", "self-report": "self-report", "self report": "self-report",
         "did": "behavioral", "behavioral": "behavioral", "behavioural": "behavioral", "behaviour": "behavioral",
         "behavior": "behavioral", "inferred": "interpretive", "interpretive": "interpretive",
         "fact": "fact", "verified": "fact"}

_BULLET = r"(?:[-*+]\s+|\d{1,3}[.)]\s+)?"
_KEY = re.compile(_BULLET + r"(?:\*\*|__)?([A-Za-z][A-Za-z _\-]{0,30}?)\s*(?:\*\*|__)?\s*:(?:\*\*|__)?\s*(.*)$")
_LABEL = re.compile(_BULLET + r"(?:\*\*|__)?([A-Za-z]+)(?:\s*\(([^)]{1,30})\))?(?:\*\*|__)?\s*[:—–]\s*(.*)$")
_ITEM = re.compile(r"(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_DATED = re.compile(_BULLET + r"\d{4}-\d{2}-\d{2}\b")
# A confidence given as a figure ("confidence 0.95", "95% confident") or as a tier after the
# word ("confidence: established"); "developing confidence in Rust" is about the user, not this.
_NUMBER = r"(?:\d{1,3}(?:[.,]\d+)?\s*%|[01]?[.,]\d{1,3}\b|\d\s*/\s*10\b)"
_TIER = r"(?:factual|established|developing|tentative|speculative|verified)\b"
_CONF_WORD = r"(?:confiden\w*|certainty|probability)"
_CONFIDENCE = re.compile(_CONF_WORD + r"\W{0,4}(?:(?:of|at|is|level|=)\W{0,3})?(?:" + _NUMBER + "|" + _TIER + ")|"
                         + r"(?<![\w.])" + _NUMBER + r"\W{0,3}" + _CONF_WORD, re.I)


def _norm(key: str) -> str:
    return " ".join(key.lower().replace("_", " ").replace("-", " ").split())


def _clean(s: str) -> str:
    return s.strip().strip("*_`").strip()


def _title_from(text: str) -> str:
    """A new belief's title from what the model wrote: its first sentence, without "The user"."""
    first = re.split(r"(?<=[.!?;])\s|\s[—–]\s", text.strip(), maxsplit=1)[0].rstrip(".!?;: ")
    first = re.sub(r"^(?:the\s+user|user|they|he|she)(?:'s)?\s+", "", first, flags=re.I)
    if len(first) > 80:
        first = first[:81].rsplit(" ", 1)[0].rstrip(",;: ")
    return first[:1].upper() + first[1:]


def _list(value: str) -> list[str]:
    return [x for x in (_clean(v) for v in value.strip().strip("[]").split(",")) if x]


def _check_text(text: str) -> None:
    if _CONFIDENCE.search(text):
        raise Refused(CONFIDENCE)


def observations(text: str, *, connects: str = "new") -> list[dict[str, Any]]:
    """The observations a model's text holds (`connects`: the belief it was written into, or
    "new"), or `Refused`. Each bullet or paragraph is one; `key: value` lines set its fields, a
    leading `confirming:` (etc.) its strength, `(said)` after it its basis. A new belief's title
    is its `title:`, else the heading of a paragraph alone under it, else its first sentence."""
    items: list[dict[str, Any]] = []
    headings: list[str] = []  # the heading each paragraph was written under ("" for a bullet)
    pending: dict[str, Any] = {}
    cur: dict[str, Any] | None = None
    heading = ""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[0].strip() == "---":  # a frontmatter block: its keys, for the first item
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is not None:
            for raw in lines[1:end]:
                m = _KEY.match(raw.strip())
                if m and (_norm(m.group(1)) in KEYS or _norm(m.group(1)) in FORBIDDEN):
                    _set(pending, _norm(m.group(1)), m.group(2), connects)
            lines = lines[end + 1:]

    def start(evidence: str, paragraph: bool = False) -> dict[str, Any]:
        item: dict[str, Any] = dict(pending)
        pending.clear()
        item["evidence"] = (item.get("evidence", "") + " " + evidence).strip()
        items.append(item)
        headings.append(heading if paragraph else "")  # a list's heading names the list, not an item
        return item

    for raw in lines:
        s = raw.strip()
        if not s:
            cur = None
            continue
        if s.startswith("#"):
            heading, cur = _clean(s.lstrip("#")), None
            continue
        if _DATED.match(s):
            raise Refused(DATES)
        label = _LABEL.match(s)
        if label and _norm(label.group(1)) in STRENGTHS:
            cur = start(_clean(label.group(3)))
            cur["strength"] = STRENGTHS[_norm(label.group(1))]
            said = _norm(label.group(2) or "")
            if BASES.get(said) == "fact":
                raise Refused(FACT)
            if said in BASES:
                cur["basis"] = BASES[said]
            continue
        key = _KEY.match(s)
        if key and (_norm(key.group(1)) in KEYS or _norm(key.group(1)) in FORBIDDEN):
            _set(cur if cur is not None else pending, _norm(key.group(1)), key.group(2), connects)
            continue
        bullet = _ITEM.match(s)
        if bullet:
            cur = start(_clean(bullet.group(1)))
        elif cur is not None:
            cur["evidence"] = (cur.get("evidence", "") + " " + _clean(s)).strip()
        else:
            cur = start(_clean(s), paragraph=True)
    if pending and items:  # keys after the last item (a trailer) are its own
        items[-1].update({k: v for k, v in pending.items() if k not in items[-1] or k == "evidence"})
    elif pending:
        items.append(pending)
        headings.append(heading)  # keys alone (`evidence: …`) under a heading: a paragraph
    out = []
    for item, under in zip(items, headings):
        if not item.get("evidence"):
            continue
        for v in item.values():
            if isinstance(v, str):
                _check_text(v)
        item["connects"] = item.get("connects") or connects
        if item["connects"] == "new":
            item["strength"] = "single"  # the first sighting of what a new belief says
            alone = sum(1 for x, h in zip(items, headings) if h == under and x.get("evidence")) == 1
            item.setdefault("title", under if under and alone else _title_from(item["evidence"]))
        else:
            item.setdefault("strength", "complicating")
        out.append(item)
    return out


def _set(item: dict[str, Any], key: str, value: str, connects: str) -> None:
    if key in FORBIDDEN:
        raise Refused(FORBIDDEN[key])
    field = KEYS[key]
    value = _clean(value)
    if connects != "new" and field in BELIEF_FIELDS:
        raise Refused(BELIEF_FIELDS[field])
    if field == "basis":
        b = BASES.get(_norm(value), value.lower())
        if b == "fact":
            raise Refused(FACT)
        item["basis"] = b
    elif field == "strength":
        item["strength"] = STRENGTHS.get(_norm(value), value.lower())
    elif field in ("tags", "depends_on"):
        item[field] = _list(value)
    elif field == "new_despite_similar":
        item[field] = _norm(value) in ("yes", "true", "y", "1")
    elif field == "evidence":
        item["evidence"] = (item.get("evidence", "") + " " + value).strip()
    else:
        item[field] = value
