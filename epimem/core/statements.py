"""The user's statements about themselves: the keyword pass over a transcript.

It finds what the *user* said in so many words: explicit corrections and stated preferences
("don't…", "I prefer…", "always/never…"). It reads human turns only, interprets nothing, and keeps
a statement only when it sounds general rather than tied to the task at hand. Its items are
observations with basis self-report, recorded by the session-end pass (`api/transcripts`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .ids import text_key
from .transcript import Transcript


@dataclass(frozen=True)
class Statement:
    """A correction or preference the user stated, as said."""

    text: str
    title: str
    kind: str  # "preference" or "convention"
    form: str  # "prefer", "always", "never", "dont"
    turn: int  # line of the transcript
    when: str = ""  # the turn's timestamp (ISO, UTC), as the transcript records it


_LEAD = r"^(?:(?:no|nope|ok|okay|also|and|but|so|oh|please|pls|hey|actually|again|just)[,!.:]?\s+)*"
_FORMS = [
    ("prefer", "preference", re.compile(
        _LEAD + r"(?:i|we)\s+(?:really\s+|much\s+|strongly\s+|generally\s+)?prefer\s+(?P<rest>.+)$", re.I)),
    ("rather", "preference", re.compile(_LEAD + r"i(?:'d|’d| would)\s+(?:much\s+)?rather\s+(?P<rest>.+)$", re.I)),
    ("always", "convention", re.compile(_LEAD + r"(?P<subj>(?:i|we)\s+)?always\s+(?P<rest>.+)$", re.I)),
    ("never", "convention", re.compile(_LEAD + r"(?P<subj>(?:i|we)\s+)?never\s+(?P<rest>.+)$", re.I)),
    ("dont", "convention", re.compile(_LEAD + r"(?:don't|don’t|do not|dont)\s+(?P<rest>.+)$", re.I)),
    ("stop", "convention", re.compile(_LEAD + r"stop\s+(?P<rest>.+)$", re.I)),
]
# Titles describe the person, as every belief does ("Asks never to push to main"),
# not the instruction they gave ("Never push to main"), which would read as an
# order when the profile is shown back to them or to the assistant.
_TITLE = {"prefer": "Prefers", "rather": "Would rather", "always": "Asks to always",
          "never": "Asks never to", "dont": "Asks not to", "stop": "Asks to stop"}
_SELF_TITLE = {"always": "Says they always", "never": "Says they never"}
_RANK = {"prefer": 0, "rather": 0, "always": 1, "never": 1, "dont": 2, "stop": 2}
# Words that tie a sentence to this task ("don't change that", "stop here"):
# such a correction is about the work, not about the person.
_DEICTIC = re.compile(r"\b(?:this|that|these|those|it|its|here|there|now|yet|again|today|anymore|"
                      r"above|below)\b", re.I)
_NOT_ADVICE = re.compile(r"^(?:worry|know|think|understand|see|get|mind|forget|bother|panic|apologi[sz]e|"
                         r"care|have|need|want|like|remember|be sorry)\b", re.I)
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
_YOU = re.compile(r"\b(?:you|your|yours|you're|you've|you'll|you'd)\b", re.I)
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")


def _sentences(text: str) -> Iterable[str]:
    text = _FENCE.sub("\n", text)
    for line in text.splitlines():
        if line.startswith(("    ", "\t", ">", "|")):
            continue  # code, quotes and tables are not the user speaking
        line = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line).strip()
        if not line or len(line) > 400:
            continue
        for s in _SENTENCE.split(line):
            s = s.strip()
            if 8 <= len(s) <= 240:
                yield s


def match_statement(sentence: str) -> tuple[str, str, str] | None:
    """(form, kind, title) when the sentence is a general correction or preference."""
    s = sentence.strip()
    if s.endswith("?") or _DEICTIC.search(s):
        return None
    for form, kind, rx in _FORMS:
        m = rx.match(s)
        if not m:
            continue
        rest = re.sub(r",?\s*please$", "", m.group("rest").strip().rstrip(".!;:"), flags=re.I)
        if len(rest.split()) < 2 or (form in ("dont", "stop") and _NOT_ADVICE.match(rest)):
            return None
        lead = _SELF_TITLE[form] if m.groupdict().get("subj") else _TITLE[form]
        title = f"{lead} {rest}"
        if _YOU.search(rest):
            # "before you commit" is the user talking to the assistant; under a title
            # about the user, "you" would read as the user. Keep their words, quoted.
            said = re.sub(_LEAD, "", re.sub(r",?\s*please$", "", s.rstrip(".!;:"), flags=re.I), flags=re.I)
            title = f"Asks: “{said[0].upper() + said[1:]}”"
        if len(title) > 80:
            title = title[:80].rsplit(" ", 1)[0] + "…"
        return form, kind, title
    return None


def find_statements(transcript: Transcript, limit: int | None = None) -> list[Statement]:
    """Stated preferences and corrections, general ones only, strongest first, no repeats."""
    found: dict[str, Statement] = {}
    for turn in transcript.human:
        for s in _sentences(turn.text):
            m = match_statement(s)
            if m is None:
                continue
            form, kind, title = m
            key = text_key(title)
            if key not in found:
                found[key] = Statement(s, title, kind, form, turn.index, turn.timestamp)
    ranked = sorted(found.values(), key=lambda st: (_RANK[st.form], -st.turn))
    return ranked[:limit] if limit is not None else ranked


def statement_items(statements: list[Statement], *, session: str = "", beliefs=(),
                    source: str = "claude-code/transcript", agent: str = "Claude Code",
                    project: str = "") -> list[dict]:
    """Observation items for `Memory.observe`: basis self-report, nothing interpreted.

    A statement whose title matches an active belief's title is the user
    restating it (reinforcement: recorded, no number changes); any other is
    a first sighting that may become a belief.
    """
    by_title = {text_key(b.title): b.id for b in beliefs if b.status == "active"}
    items = []
    for st in statements:
        quoted = st.text.replace('"', "'")
        item = {
            "evidence": f'Said in a {agent} session: "{quoted}"',
            # becomes the statement of a new belief: what was said, marked as said
            "suggests": f"{st.title}, said as a standing rule rather than about one task.",
            "therefore": "Follow it in similar work unless told otherwise; behaviour may still differ.",
            "basis": "self-report", "source": source,
        }
        if session:
            item["session"] = session
        if _DAY.match(st.when):
            item["date"] = st.when[:10]  # when it was said, not when the pass ran
        bid = by_title.get(text_key(st.title))
        if bid:
            item.update(connects=bid, strength="confirming")
        else:
            item.update(connects="new", strength="single", title=st.title, kind=st.kind,
                        permanence="unknown")
            if project and st.kind == "convention":
                # "Always run make check" said in a project is that project's convention
                # until seen elsewhere; a stated preference is about the person.
                item["scope"] = project
        items.append(item)
    return items
