"""Forgetting (SPEC §15): what a forgotten belief or a purged text leaves of each file, pure.

`epimem forget ID` retires a belief and takes what it said out of the vault: its file becomes
a *tombstone* (the id and the day, nothing of what it said), the observations that connect it
keep their place in the log but lose their text (a *stub*: date, strength, source, basis and
the link, so rule 9's count, rule 19's steps and every link still read the same), the tensions
that name it go, the review lines that name it go, and the evidence lines of other beliefs that
point at it or at its observations keep their date, kind and link but lose their note.
`--purge-text STRING` replaces a string typed anywhere by `MARK`.

The same function (`forget_file`) is applied to the files in the work tree and, by a purge, to
every version of every file in the history: what a purge leaves in an old commit is exactly
what `forget` leaves in the work tree, and applying it twice changes nothing. It changes
nothing either in a file that holds none of `needles()`, which is how a purge skips the
blobs it has no business with without parsing them.

`forget_outside` does the same for a file git does not hold (ignored: Obsidian's `.trash/`): the
strings alone, since its format is not epimem's.

`commit_changes` says which commits a rewrite changes, from what the rewrite saw of each.

Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from .notes import (
    NoteError,
    edit_frontmatter,
    parse_belief,
    parse_evidence,
    parse_note,
    parse_observations,
    parse_tension,
    split,
)

KIND = "forgotten"          # a tombstone's kind and its frontmatter key (the day)
TITLE = "Forgotten"
MARK = "[forgotten]"        # what a purged text reads as, in a file or a commit message
PATH_MARK = "forgotten"     # ... and in a file name
NOTE = "at the user's request"
# Words shorter than this are not looked for in commit messages and review lines: a title of
# three letters ("Vim") would take every line that mentions it with it.
MIN_WORD = 4


@dataclass(frozen=True)
class Forgetting:
    """What is forgotten, and on which day.

    `beliefs`: the ids forgotten; `observations`: the ids of the observations that connect
    them (every version of every log holds some); `texts`: strings typed somewhere, purged
    wherever they are (they are never written anywhere, not even in a record of the purge);
    `words`: what the forgotten beliefs said in any version (titles, statements, the texts of
    their observations and tensions), looked for in commit messages and review lines.
    """

    day: date
    beliefs: tuple[str, ...] = ()
    observations: frozenset[str] = field(default_factory=frozenset)
    texts: tuple[str, ...] = ()
    words: tuple[str, ...] = ()

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(f"beliefs/{b}.md" for b in self.beliefs)


def needles(f: Forgetting) -> tuple[bytes, ...]:
    """Byte strings of which a file must hold one for `forget_file` to change it (beyond the
    forgotten beliefs' own files, which are decided by their path)."""
    out = [*(b.encode() for b in f.beliefs), *(o.encode() for o in f.observations),
           *(t.encode("utf-8") for t in f.texts), *(w.encode("utf-8") for w in f.words)]
    return tuple(dict.fromkeys(n for n in out if n))


# --- tombstones ---------------------------------------------------------------------------------

def is_forgotten(b) -> bool:
    """Whether a parsed belief is what `tombstone` leaves (`is_tombstone` judges a file's text)."""
    return b.kind == KIND and b.status == "retired"


def tombstone(belief_id: str, day: date) -> str:
    """The file a forgotten belief leaves: its id (the file name) and the day, nothing of what it said.
    A valid retired belief, so every reader shows it as retired and none shows what it was."""
    d = day.isoformat()
    return (f"---\ntitle: {TITLE}\nkind: {KIND}\nbasis: interpretive\nconfidence: 0.00\npermanence: unknown\n"
            f"first: {d}\nconfirmed:\nchallenged:\nstatus: retired\ntags: []\nscope: global\npinned: false\n"
            f"supersedes: []\n{KIND}: {d}\n---\n"
            f"Forgotten on {d} at the user's request: what this belief said, and the evidence for it, "
            f"were removed.\n\n## Evidence\n- {d} · {KIND} — {NOTE}\n")


def forgotten_on(text: str) -> date | None:
    """The day a tombstone was written, or None when `text` is not a tombstone."""
    if f"\n{KIND}:" not in text:
        return None
    note = parse_note(text, lenient=True)
    if note is None:
        return None
    meta = note.meta
    d = meta.get(KIND)
    if meta.get("kind") != KIND or not isinstance(d, date):
        return None
    return d


def is_tombstone(text: str) -> bool:
    return forgotten_on(text) is not None


# --- what the forgotten beliefs said ------------------------------------------------------------

def words_of_belief(text: str, belief_id: str) -> list[str]:
    """The title and the statement's lines of one version of a belief file ([] for a tombstone
    or a file that does not parse)."""
    if is_tombstone(text):
        return []
    try:
        b = parse_belief(text, belief_id)
    except NoteError:
        note = parse_note(text, lenient=True)
        if note is None:
            return []
        title = note.meta.get("title")
        return [title.strip()] if isinstance(title, str) and title.strip() else []
    return [b.title, *(ln.strip() for ln in b.statement.splitlines())]


def connected(text: str, beliefs: Iterable[str]) -> list[tuple[str, list[str]]]:
    """(observation id, its texts) of each entry of a log that connects one of `beliefs`."""
    ids = set(beliefs)
    obs, _ = parse_observations(text)
    return [(o.id, [o.evidence, o.suggests, o.therefore]) for o in obs if o.connects in ids]


def words_of_tension(text: str) -> list[str]:
    try:
        t = parse_tension(text, "t")
    except NoteError:
        return []
    return [t.title, t.what_happened, t.suggests]


def clean_words(words: Iterable[str]) -> tuple[str, ...]:
    """The words worth looking for, longest first (a title inside a statement is replaced
    after the statement), once each; nothing shorter than `MIN_WORD`, nothing of ours."""
    out = {w.strip() for w in words if isinstance(w, str)}
    out = {w for w in out if len(w) >= MIN_WORD and w not in (MARK, TITLE, NOTE, KIND, "(forgotten)")}
    return tuple(sorted(out, key=lambda w: (-len(w), w)))


# --- one file -----------------------------------------------------------------------------------

def forget_file(path: str, text: str, f: Forgetting) -> str | None:
    """`text` (the file at `path`) with what `f` forgets taken out; None when this version of
    the file should not exist at all (a forgotten belief's file that is not its tombstone, a
    tension that names a forgotten belief). Idempotent; identity on a file that holds none of
    `needles(f)` and is not a forgotten belief's file."""
    if path in f.paths:
        return text if is_tombstone(text) else None
    top = path.split("/", 1)[0]
    out = text
    if f.beliefs and path.endswith(".md") and path.count("/") == 1:
        if top == "tensions" and names_forgotten(text, f):
            return None
        if top == "observations":
            out = stub_observations(out, f)
        elif top == "beliefs":
            out = _forget_evidence(out, f)
        elif top == "reviews":
            out = _drop_review_lines(out, f)
    return replace_texts(path, out, f.texts) if f.texts else out


def names_forgotten(text: str, f: Forgetting) -> bool:
    if not any(b in text for b in f.beliefs):
        return False
    try:
        t = parse_tension(text, "t")
    except NoteError:
        # Not a tension epimem can read: it goes if it links a forgotten belief at all.
        return any(re.search(_id_pattern(b), text) for b in f.beliefs)
    return bool({t.belief, t.successor, t.rests_on} & set(f.beliefs))


_OBS_HEAD = re.compile(r"^##[ \t]+(obs-[\w\-]+)[ \t]*$", re.M)
_FIELD = re.compile(r"^[-*][ \t]+([\w ]+?)[ \t]*:[ \t]?(.*)$")
_KEPT_FIELDS = ("date", "connects", "strength", "source", "basis")


def stub_observations(text: str, f: Forgetting) -> str:
    """Each entry that connects a forgotten belief, as a stub: its heading and the fields
    that hold no text, `evidence: forgotten`, and the day it was forgotten."""
    if not any(o in text for o in f.observations) and not any(b in text for b in f.beliefs):
        return text
    ids = set(f.beliefs)
    heads = list(_OBS_HEAD.finditer(text))
    if not heads:
        return text
    parts = [text[:heads[0].start()]]
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        entry = text[h.start():end]
        parts.append(_stub(entry, ids, f.day) if _connects(entry) in ids else entry)
    return "".join(parts)


def _connects(entry: str) -> str:
    for ln in entry.splitlines()[1:]:
        m = _FIELD.match(ln.strip())
        if m and m.group(1).strip().lower() == "connects":
            v = m.group(2).strip()
            lm = re.fullmatch(r"\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]", v)
            return lm.group(1).strip() if lm else v
    return ""


def _stub(entry: str, ids: set[str], day: date) -> str:
    lines = entry.splitlines(keepends=True)
    fields: dict[str, str] = {}
    for ln in lines[1:]:
        m = _FIELD.match(ln.strip())
        if m:
            fields.setdefault(m.group(1).strip().lower(), m.group(2).strip())
    if KIND in fields:
        return entry  # a stub already: it keeps the day it was first forgotten
    rows = [("date", fields.get("date", "")), ("evidence", "forgotten")]
    rows += [(k, fields[k]) for k in _KEPT_FIELDS[1:] if fields.get(k)]
    rows.append((KIND, day.isoformat()))
    trail = entry[len(entry.rstrip("\n")):]  # the blank line(s) before the next entry
    body = "".join(f"- {k}: {v}\n" for k, v in rows)
    return lines[0].rstrip("\n") + "\n" + body.rstrip("\n") + (trail or "\n")


def _forget_evidence(text: str, f: Forgetting) -> str:
    """Another belief's evidence lines that point at a forgotten belief or one of its
    observations, or quote what it said: date, kind and link kept, the note replaced."""
    if not any(n.decode("utf-8") in text for n in needles(f)):
        return text
    try:
        _, body, body_line = split(text)
        _, evidence = parse_evidence(body, body_line)
    except NoteError:
        return text
    if not evidence:
        return text
    head_len = len(text) - len(body)
    out = []
    m = re.search(r"^##[ \t]+Evidence[ \t]*$", body, re.M | re.I)
    start = head_len + (m.end() if m else 0)
    prefix, section = text[:start], text[start:]
    for ln in section.splitlines(keepends=True):
        out.append(_evidence_line(ln, f))
    return prefix + "".join(out)


_EV = re.compile(r"^(?P<lead>[ \t]*[-*][ \t]+\d{4}-\d{2}-\d{2}[ \t]*·[ \t]*[\w\- ]+?[ \t]*"
                 r"(?:·[ \t]*\[\[(?P<link>[^\]]+)\]\][ \t]*)?)(?:[—–-][ \t]*(?P<note>.*))?$")


def _evidence_line(line: str, f: Forgetting) -> str:
    body = line.rstrip("\n")
    m = _EV.match(body)
    if m is None or not m["note"]:
        return line
    link = m["link"] or ""
    target = link.split("|", 1)[0]
    name = target.rsplit("/", 1)[-1].split("#")[-1]
    hit = (target.startswith("beliefs/") and name in f.beliefs) or name in f.observations \
        or any(w in m["note"] for w in f.words) or any(re.search(_id_pattern(b), m["note"]) for b in f.beliefs)
    if not hit or m["note"].strip() == KIND:
        return line
    return m["lead"].rstrip() + f" — {KIND}" + line[len(body):]


def _id_pattern(belief_id: str) -> str:
    return rf"(?<![\w\-]){re.escape(belief_id)}(?![\w\-])"


def _drop_review_lines(text: str, f: Forgetting) -> str:
    """A review's body lines that name a forgotten belief, one of its observations or what it
    said (an audit's table row holds its title and its last evidence) go; the frontmatter stays."""
    try:
        _, body, _ = split(text)
    except NoteError:
        body = text
    head = text[:len(text) - len(body)]
    pats = [re.compile(_id_pattern(b)) for b in f.beliefs]
    kept = [ln for ln in body.splitlines(keepends=True)
            if not (any(p.search(ln) for p in pats) or any(o in ln for o in f.observations)
                    or any(w in ln for w in f.words))]
    return head + "".join(kept)


# --- a typed text -------------------------------------------------------------------------------

def replace_texts(path: str, text: str, texts: Sequence[str]) -> str:
    """`text` with every one of `texts` replaced by `MARK`, the file's structure kept: a note's
    frontmatter value by value (quoted where YAML needs it), a JSON file string by string, and
    whatever is left (a YAML comment, a broken file) as plain text, so none of them remains."""
    texts = [t for t in texts if t]
    if not texts or not any(t in text for t in texts):
        return text
    out = text
    if path.endswith(".json"):
        out = _json_replace(out, texts)
    elif path.endswith(".md") and out.startswith("---"):
        out = _note_replace(out, texts)
    for t in sorted(texts, key=len, reverse=True):
        out = out.replace(t, MARK)
    return out


def _value(v: Any, texts: Sequence[str]) -> Any:
    if isinstance(v, str):
        for t in sorted(texts, key=len, reverse=True):
            v = v.replace(t, MARK)
        return v
    if isinstance(v, list):
        return [_value(x, texts) for x in v]
    if isinstance(v, dict):
        return {k: _value(x, texts) for k, x in v.items()}
    return v


def _note_replace(text: str, texts: Sequence[str]) -> str:
    note = parse_note(text, lenient=True)
    if note is None:
        return text
    _, body, _ = split(text)
    meta = note.meta
    changes = {k: nv for k, v in meta.items() if (nv := _value(v, texts)) != v}
    head = text[:len(text) - len(body)]
    return (edit_frontmatter(head, changes) if changes else head) + body


def _json_replace(text: str, texts: Sequence[str]) -> str:
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return text
    new = _value(obj, texts)
    if new == obj:
        return text
    return json.dumps(new, ensure_ascii=False, indent=2) + ("\n" if text.endswith("\n") else "")


def forget_bytes(path: str, data: bytes, f: Forgetting) -> bytes | None:
    """`forget_file` for a blob as git holds it: text that is not UTF-8 only has the typed
    texts replaced, byte for byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        out = data
        for t in sorted(f.texts, key=len, reverse=True):
            out = out.replace(t.encode("utf-8"), MARK.encode())
        return out
    new = forget_file(path, text, f)
    return None if new is None else new.encode("utf-8")


NOTE_SUFFIXES = (".md", ".markdown", ".txt")


def forget_outside(path: str, text: str, f: Forgetting) -> str:
    """A file under the vault that git does not hold (ignored: a note Obsidian moved to `.trash/`,
    its layout file): its format is not epimem's, so only the strings are replaced, by `MARK` —
    each typed text (also as a JSON string spells it) and, in a note, what the forgotten beliefs
    said. Identity on a file that holds none of them."""
    out = text
    for t in sorted(f.texts, key=len, reverse=True):
        if not t:
            continue
        out = out.replace(t, MARK)
        spelled = json.dumps(t, ensure_ascii=False)[1:-1]
        if spelled != t:
            out = out.replace(spelled, MARK)
    if path.lower().endswith(NOTE_SUFFIXES):
        for w in f.words:  # longest first (`clean_words`)
            out = out.replace(w, MARK)
    return out


def forget_path(path: str, f: Forgetting) -> str:
    """A file name holding a typed text loses it too."""
    for t in sorted(f.texts, key=len, reverse=True):
        if t and t in path:
            path = path.replace(t, PATH_MARK)
    return path


def forget_message(message: str, f: Forgetting) -> str:
    """A commit message without the typed texts or what the forgotten beliefs said (their ids stay:
    the tombstones keep them)."""
    out = message
    for w in sorted((*f.texts, *f.words), key=len, reverse=True):
        if w:
            out = out.replace(w, MARK)
    return out


# --- which commits change -----------------------------------------------------------------------

@dataclass(frozen=True)
class CommitFacts:
    """What a rewrite saw of one commit: its id, its parents (ids), its subject as it will read,
    and whether its files or its message change, or nothing of it is left."""

    sha: str
    parents: tuple[str, ...]
    subject: str
    files: bool = False
    message: bool = False
    dropped: bool = False


@dataclass(frozen=True)
class CommitChange:
    sha: str
    subject: str
    how: str  # "files" · "message" · "dropped" (nothing of it was left) · "parents" (a new id only)


def commit_changes(facts: Sequence[CommitFacts]) -> tuple[CommitChange, ...]:
    """Every commit that gets a new id, oldest first: the ones whose files or message change,
    the ones nothing is left of, and those after them, whose only change is a parent's new id.
    `facts` come parents first (as `git fast-export` walks)."""
    changed: set[str] = set()
    out = []
    for c in facts:
        how = ("dropped" if c.dropped else "files" if c.files else "message" if c.message
               else "parents" if any(p in changed for p in c.parents) else "")
        if how:
            changed.add(c.sha)
            out.append(CommitChange(c.sha, c.subject, how))
    return tuple(out)
