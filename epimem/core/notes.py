"""Reading and writing the vault's markdown: beliefs, observations, tensions.

Two promises shape this module:
- Parsing is strict about meaning and precise about place: a bad value is a
  NoteError carrying the line it is on, so every command can say `path:line`.
- Writing an existing file is surgical. `edit_frontmatter` replaces only the
  lines of the keys that changed and `append_evidence` only adds lines, so a
  user's hand edits, comments, key order and unknown keys survive every
  rewrite, and `git diff` shows exactly the change.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal, overload

import yaml

from .errors import VaultError
from .ids import SLUG
from .model import BASES, PERMANENCES, STATUSES, STRENGTHS, TENSION_STATUSES, Belief, Evidence, Observation, Tension
from .nesting import MAX_DEPTH, TOO_DEEP, depth, too_deep
from .vocabulary import date_of

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _FrontmatterLoader(_Loader):  # type: ignore[misc, valid-type]
    """The loader of a note's frontmatter: a key given twice in one mapping is an error on the
    second one's line. PyYAML keeps the last silently, while epimem's surgical writer replaces
    the first: an observation that raised `confidence` there left the file reading the old
    number, and reported the new one (YAML 1.2 says keys are unique)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key, _ in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"{key.value!r} is there twice (line {seen[key.value]} too); keep one",
                            key.start_mark)
                    seen[key.value] = key.start_mark.line + 2
        return super().construct_mapping(node, deep)


class NoteError(VaultError, ValueError):
    """A file that cannot be parsed: `line` says where (the caller knows the path)."""

    def __init__(self, line: int, message: str, path: str | None = None):
        super().__init__(message, path=path, line=line)


@dataclass(frozen=True)
class Note:
    meta: dict[str, Any]
    body: str
    key_lines: dict[str, int]  # frontmatter key -> 1-based line in the file
    body_line: int             # 1-based line where the body starts


# --- frontmatter -------------------------------------------------------------

def split(text: str) -> tuple[str, str, int]:
    """(frontmatter, body, line of the body). Raises NoteError when unclosed."""
    if text.startswith("\ufeff"):
        # Notepad's "UTF-8 with BOM": the file shows as starting with '---', so say what is before it.
        raise NoteError(1, "the file starts with a byte-order mark (U+FEFF) before its '---' line: "
                           "re-save it as UTF-8 without BOM")
    if not text.startswith("---"):
        raise NoteError(1, "no frontmatter: the file must start with a '---' line")
    first_nl = text.find("\n")
    if first_nl < 0 or text[:first_nl].rstrip() != "---":
        raise NoteError(1, "no frontmatter: the file must start with a '---' line")
    m = re.search(r"^---[ \t]*$", text[first_nl + 1:], re.M)
    if m is None:
        raise NoteError(1, "frontmatter is not closed by a '---' line")
    fm = text[first_nl + 1:first_nl + 1 + m.start()]
    body_start = first_nl + 1 + m.end()
    if text[body_start:body_start + 1] == "\n":
        body_start += 1
    body_line = text.count("\n", 0, body_start) + 1
    return fm, text[body_start:], body_line


_KEY_LINE = re.compile(r"^([A-Za-z_][\w\-]*)[ \t]*:", re.M)


def _key_lines(fm: str) -> dict[str, int]:
    # +2: the frontmatter starts on the line after the opening '---'.
    return {m.group(1): fm.count("\n", 0, m.start()) + 2 for m in _KEY_LINE.finditer(fm)}


def key_lines(text: str) -> dict[str, int]:
    """Each frontmatter key's 1-based line in the file; {} when the file has no frontmatter."""
    try:
        return _key_lines(split(text)[0])
    except NoteError:
        return {}


# The fast path: frontmatter as epimem and Obsidian write it — one `key: value`
# per line, plain words, numbers, dates, booleans, flow lists of plain words —
# is read without YAML, ~10× faster, which is what a cold cache of 10,000
# beliefs (every file after a `git clone` or `git pull`) spends its time on.
# Anything else goes to the YAML parser; a test holds the two equal.
_FAST_LINE = re.compile(r"^([A-Za-z_][\w\-]*):(?:[ \t]+(.*?))?[ \t]*$")
_FAST_NUM = re.compile(r"^(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$")
_FAST_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_FAST_TEXT = re.compile(r"^[A-Za-z][^\t]*$")
_FAST_TOKEN = re.compile(r"^[0-9][0-9a-z]*[a-z][0-9a-z]*$")  # "8f3a2c": a session id, not a number
_FAST_QUOTED = re.compile(r'^"([^"\\]*)"$')
_FAST_ITEM = re.compile(r"^[A-Za-z][A-Za-z0-9_\-./ ]*$")
# Words YAML 1.1 reads as something other than text.
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
_NO = object()


def _fast_text(s: str, pattern: re.Pattern) -> bool:
    return (bool(pattern.match(s)) and s.lower() not in _YAML_WORDS and ": " not in s
            and " #" not in s and not s.endswith(":") and not s.endswith(" "))


def _fast_value(raw: str | None) -> Any:
    if raw is None or raw == "":
        return None
    if raw in ("true", "false"):
        return raw == "true"
    if _FAST_NUM.match(raw):
        return float(raw) if "." in raw else int(raw)
    if _FAST_DATE.match(raw):
        try:
            return date.fromisoformat(raw)
        except ValueError:
            return _NO
    if raw[0] == "[" and raw[-1] == "]":
        inner = raw[1:-1].strip()
        if not inner:
            return []
        items = [x.strip() for x in inner.split(",")]
        return items if all(_fast_text(x, _FAST_ITEM) for x in items) else _NO
    if _FAST_TOKEN.match(raw) and not raw.startswith(("0b", "0x", "0o")):
        return raw
    q = _FAST_QUOTED.match(raw)
    if q:
        return q.group(1)
    return raw if _fast_text(raw, _FAST_TEXT) else _NO


def fast_meta(fm: str) -> dict[str, Any] | None:
    """The frontmatter as a dict when every line is simple, else None (use YAML)."""
    out: dict[str, Any] = {}
    for line in fm.split("\n"):
        if not line:
            continue
        m = _FAST_LINE.match(line)
        if m is None or m.group(1) in out:
            return None
        v = _fast_value(m.group(2))
        if v is _NO:
            return None
        out[m.group(1)] = v
    return out


@overload
def parse_note(text: str, *, lenient: Literal[False] = False) -> Note: ...
@overload
def parse_note(text: str, *, lenient: Literal[True]) -> Note | None: ...


def parse_note(text: str, *, lenient: bool = False) -> Note | None:
    """The note's frontmatter, parsed, and its body; a NoteError naming the line when it cannot be read.

    `lenient`: None instead of the error. For a reader that only looks at a note and has nothing
    to report about one it cannot read (the words of a diff, a merge, a belief's history, whether
    a skill is ours): every such reader reads through this one parser, so none of them can read a
    file differently from `validate`."""
    if not lenient:
        return _parse_note(text)
    try:
        return _parse_note(text)
    except NoteError:
        return None


def _parse_note(text: str) -> Note:
    fm, body, body_line = split(text)
    try:
        meta = fast_meta(fm)
        if meta is None:
            _refuse_aliases(fm)
            meta = yaml.load(fm, Loader=_FrontmatterLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        line = (mark.line + 2) if mark is not None else 2
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        context, start = getattr(e, "context", None), getattr(e, "context_mark", None)
        if context and start is not None and start.line + 2 != line:
            # An unclosed `[` is found where the parser gives up, often the next key's line,
            # which the user did not touch: name the line the broken value starts on too.
            problem += f" ({context} from line {start.line + 2})"
        raise NoteError(line, f"invalid YAML in frontmatter: {problem}") from None
    except RecursionError:
        raise NoteError(2, f"invalid YAML in frontmatter: {TOO_DEEP}") from None
    except (ValueError, TypeError, OverflowError) as e:
        # PyYAML builds `2026-02-30` into a date and lets the ValueError escape
        # unmarked: find the impossible date's line ourselves.
        raise NoteError(_bad_date_line(fm), f"invalid value in frontmatter: {e}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise NoteError(2, "frontmatter must be a mapping of keys to values")
    kl = _key_lines(fm)
    if too_deep(meta):
        # The mapping is the first level: the key whose value goes deeper is the problem.
        key = next((k for k, v in meta.items() if depth(v, MAX_DEPTH) >= MAX_DEPTH), None)
        raise NoteError(kl.get(key, 2) if isinstance(key, str) else 2,
                        f"invalid YAML in frontmatter: {f'{key!r} is ' if isinstance(key, str) else ''}{TOO_DEEP}")
    return Note(meta, body, kl, body_line)


def _refuse_aliases(fm: str) -> None:
    """Frontmatter with YAML aliases is refused: nothing epimem or Obsidian writes
    uses them, and nine nested aliases ("billion laughs") expand to 10⁹ values
    that every later walk over the value (comparison, hashing, JSON) would take
    minutes on. The event parser finds them without building anything."""
    if "*" not in fm:
        return
    for ev in yaml.parse(fm, Loader=_Loader):
        if isinstance(ev, yaml.AliasEvent):
            line = ev.start_mark.line + 2 if ev.start_mark is not None else 2
            raise NoteError(line, "YAML aliases (*name) are not allowed in frontmatter")


def _bad_date_line(fm: str) -> int:
    for i, line in enumerate(fm.split("\n")):
        m = re.match(r"^[\w\-]+:\s*(\d{4}-\d{2}-\d{2})\b", line)
        if m:
            try:
                date.fromisoformat(m.group(1))
            except ValueError:
                return i + 2
    return 2


class Raw(str):
    """A frontmatter value already written as YAML (a flow mapping of parameters): kept as it is."""


def yaml_scalar(value: Any, _flow: bool = False) -> str:
    """One YAML value as Obsidian writes it: plain where safe, quoted where not.
    (`_flow`: an item of a `[a, b]` list, where YAML reads some plain text
    differently, `:0` for one.)"""
    if isinstance(value, Raw):
        return str(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value != value:
            return ".nan"  # YAML's own spellings, so a value written back reads back the same
        if value in (math.inf, -math.inf):
            return ".inf" if value > 0 else "-.inf"
        return f"{value:.2f}"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (date, datetime)):
        return value.isoformat()[:10]
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_scalar(v, True) for v in value) + "]"
    if isinstance(value, dict):
        # A flow mapping, not `str(value)`: the write path's redaction writes a changed key back
        # through here, and a proposal's `observation:` (or an import's `records:` items) came
        # out as a quoted Python repr, a file `epimem inbox` could no longer read. A text of many
        # lines (an import record's file) keeps its line breaks (`yaml_text`).
        return "{" + ", ".join(f"{yaml_scalar(str(k), True)}: "
                               + (yaml_text(v) if isinstance(v, str) and "\n" in v else yaml_scalar(v, True))
                               for k, v in value.items()) + "}"
    s = str(value).replace("\n", " ")
    if s and s == s.strip() and not re.search(r"[\[\]{},#&*!|>'\"%@`]", s):
        try:
            probe, want = (f"k: [{s}]", {"k": [s]}) if _flow else (f"k: {s}", {"k": s})
            if yaml.load(probe, Loader=_Loader) == want:
                return s
        except (yaml.YAMLError, UnicodeEncodeError, ValueError):
            # A lone surrogate: quoted, and refused by the write path before any file is
            # touched. ValueError: PyYAML builds `0000-00-00` or `2026-02-30` into a date and
            # lets the error escape — such a title is written quoted, and reads back a string.
            pass
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(s, ensure_ascii=False))


def yaml_text(value: str) -> str:
    """A text of any length and any lines as one double-quoted YAML value (line breaks escaped),
    which reads back to exactly the same string."""
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


# Characters YAML refuses in a file (C1 controls, U+FFFE/FFFF) or reads as line
# breaks (NEL, U+2028/2029): escaped inside the quoted value, so whatever text a
# title holds, the file reads back to the same value. A lone surrogate is left
# as it is: the write path refuses it before any file is touched.
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufffe\uffff]")


def edit_frontmatter(text: str, changes: dict[str, Any]) -> str:
    """Set keys in the frontmatter, touching no other line.

    A key that exists has its line (and any indented continuation lines of a
    block value) replaced; a missing key is added before the closing '---'.
    """
    if not changes:
        return text
    fm, body, _ = split(text)
    lines = fm.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for key, value in changes.items():
        new_line = f"{key}: {yaml_scalar(value)}".rstrip()
        idx = next((i for i, ln in enumerate(lines) if re.match(rf"^{re.escape(key)}[ \t]*:", ln)), None)
        if idx is None:
            lines.append(new_line)
            continue
        end = idx + 1
        # A block value (an indented list Obsidian wrote) is replaced whole.
        while end < len(lines) and lines[end].startswith((" ", "\t", "- ")):
            end += 1
        lines[idx:end] = [new_line]
    return "---\n" + "\n".join(lines) + "\n---\n" + body


def drop_frontmatter_keys(text: str, keys) -> str:
    """Remove keys (and a block value's continuation lines) from the frontmatter, touching no other line."""
    fm, body, _ = split(text)
    lines = fm.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out, skipping = [], False
    for ln in lines:
        if skipping and ln.startswith((" ", "\t", "- ")):
            continue
        skipping = any(re.match(rf"^{re.escape(k)}[ \t]*:", ln) for k in keys)
        if not skipping:
            out.append(ln)
    if len(out) == len(lines):
        return text
    return "---\n" + "\n".join(out) + "\n---\n" + body


# --- values --------------------------------------------------------------------

def _date(meta: dict, key: str, lines: dict) -> date | None:
    try:
        return date_of(meta.get(key), f"'{key}'")
    except ValueError as e:
        raise NoteError(lines.get(key, 2), str(e)) from None


def _required_date(meta: dict, key: str, lines: dict) -> date:
    d = _date(meta, key, lines)
    if d is None:
        raise NoteError(lines.get(key, 2), f"'{key}' is required (a date YYYY-MM-DD)")
    return d


def _choice(meta: dict, key: str, lines: dict, allowed: tuple[str, ...], default: str | None = None) -> str:
    v = meta.get(key, default)
    if v is None:
        raise NoteError(lines.get(key, 2), f"'{key}' is required (one of {', '.join(allowed)})")
    if v not in allowed:
        raise NoteError(lines.get(key, 2), f"'{key}' must be one of {', '.join(allowed)}, not {v!r}")
    return v


def _text_list(meta: dict, key: str, lines: dict) -> tuple[str, ...]:
    v = meta.get(key)
    if v is None or v == "":
        return ()
    if isinstance(v, str):
        return (v,)
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) for x in v):
        return tuple(str(x) for x in v)
    raise NoteError(lines.get(key, 2), f"'{key}' must be a list of text")


def _link_list(meta: dict, key: str, lines: dict) -> tuple[str, ...]:
    """A list of references as a person may type it: `[[a]], [[b]]` unquoted is YAML's nested lists."""
    v = meta.get(key)
    if isinstance(v, list):
        v = [f"[[{x[0]}]]" if isinstance(x, list) and len(x) == 1 and isinstance(x[0], str) else x for x in v]
        meta = {**meta, key: v}
    return _text_list(meta, key, lines)


# --- beliefs -------------------------------------------------------------------

_EVIDENCE_HEADING = re.compile(r"^##[ \t]+Evidence[ \t]*$", re.M | re.I)
_EVIDENCE_LINE = re.compile(
    r"^[-*][ \t]+(?P<date>\d{4}-\d{2}-\d{2})[ \t]*·[ \t]*(?P<kind>[\w\- ]+?)[ \t]*"
    r"(?:·[ \t]*\[\[(?P<link>[^\]]+)\]\][ \t]*)?(?:[—–-][ \t]*(?P<note>.*))?$")


def parse_evidence(body: str, body_line: int = 1) -> tuple[str, tuple[Evidence, ...]]:
    """(statement, evidence): the prose before `## Evidence` and its lines.
    An evidence line dated with an impossible day (`9999-99-99`) is a NoteError
    on its line (`body_line` is where the body starts in the file)."""
    m = _EVIDENCE_HEADING.search(body)
    if m is None:
        return body.strip(), ()
    statement = body[:m.start()].strip()
    rest = body[m.end():]
    nxt = re.search(r"^#{1,2}[ \t]", rest, re.M)
    section = rest[:nxt.start()] if nxt else rest
    out = []
    for i, line in enumerate(section.splitlines()):
        em = _EVIDENCE_LINE.match(line.strip())
        if em:
            try:
                day = date.fromisoformat(em["date"])
            except ValueError:
                at = body_line + body.count("\n", 0, m.end()) + i
                raise NoteError(at, f"evidence line dated {em['date']!r}, which is not a day (YYYY-MM-DD)") from None
            out.append(Evidence(day, em["kind"].strip(), em["link"] or "", (em["note"] or "").strip()))
    return statement, tuple(out)


# A commit of 20,000 files copied in by hand parsed each one three times (the check for
# malformed files and rule 18, the words of the commit message, the session context), 60 % of
# its time: within `one_parse()` the same text parses once. A Belief is immutable, so sharing
# one is safe; a text that does not parse is not kept (its error is raised again each time).
_PARSED: ContextVar[dict | None] = ContextVar("epimem_parsed_beliefs", default=None)


@contextmanager
def one_parse() -> Iterator[None]:
    """While the block runs, `parse_belief` of a text it has parsed already returns that belief."""
    token = _PARSED.set({})
    try:
        yield
    finally:
        _PARSED.reset(token)


# The line git opens a conflict with. Only the opening line is looked for: a line of seven `=`
# is also a markdown heading's underline, and `<<<<<<<` never starts a line of prose.
_CONFLICT_START = re.compile(r"^<{7}(?: |$)", re.M)


def refuse_conflict_markers(text: str) -> None:
    """A note that holds git's conflict markers does not parse, on the `<<<<<<<` line (before
    YAML, whose own error would name the line after it): a writer that appended to the note, or
    `epimem commit`, would record the unsettled merge as the vault's state."""
    m = _CONFLICT_START.search(text) if "<<<<<<<" in text else None  # the test first: parsing is hot
    if m is not None:
        raise NoteError(text.count("\n", 0, m.start()) + 1,
                        "git conflict markers (<<<<<<<, =======, >>>>>>>): keep what is true and delete "
                        "the marker lines")


def parse_belief(text: str, belief_id: str, path: str = "") -> Belief:
    memo = _PARSED.get()
    if memo is None:
        return _parse_belief(text, belief_id, path)
    key = (text, belief_id, path or f"beliefs/{belief_id}.md")
    b = memo.get(key)
    if b is None:
        b = memo[key] = _parse_belief(text, belief_id, path)
    return b


def _parse_belief(text: str, belief_id: str, path: str = "") -> Belief:
    refuse_conflict_markers(text)
    note = parse_note(text)
    meta, kl = note.meta, note.key_lines
    title = meta.get("title")
    if not isinstance(title, str) or not title.strip():
        raise NoteError(kl.get("title", 2), "'title' is required (text)")
    kind = meta.get("kind")
    if not isinstance(kind, str) or not kind.strip():
        raise NoteError(kl.get("kind", 2), "'kind' is required (text)")
    basis = _choice(meta, "basis", kl, BASES)
    conf = meta.get("confidence")
    if isinstance(conf, bool) or not isinstance(conf, (int, float)):
        raise NoteError(kl.get("confidence", 2), f"'confidence' must be a number 0.00–1.00, not {conf!r}")
    if not 0.0 <= conf <= 1.0:
        raise NoteError(kl.get("confidence", 2), f"'confidence' must be between 0.00 and 1.00, not {conf}")
    permanence = _choice(meta, "permanence", kl, PERMANENCES)
    status = _choice(meta, "status", kl, STATUSES, default="active")
    pinned = meta.get("pinned", False)
    if pinned is None:
        pinned = False
    if not isinstance(pinned, bool):
        raise NoteError(kl.get("pinned", 2), f"'pinned' must be true or false, not {pinned!r}")
    scope = meta.get("scope") or "global"
    if not isinstance(scope, str):
        raise NoteError(kl.get("scope", 2), "'scope' must be text ('global' or a project)")
    statement, evidence = parse_evidence(note.body, note.body_line)
    return Belief(
        id=belief_id, title=title.strip(), kind=kind.strip(), basis=basis,
        confidence=float(conf), permanence=permanence,
        first=_required_date(meta, "first", kl),
        confirmed=_date(meta, "confirmed", kl), challenged=_date(meta, "challenged", kl),
        status=status, tags=_text_list(meta, "tags", kl), scope=scope, pinned=pinned,
        supersedes=tuple(link_target(x) for x in _text_list(meta, "supersedes", kl)),
        depends_on=tuple(link_target(x) for x in _link_list(meta, "depends_on", kl)), statement=statement,
        evidence=evidence, confirmed_session=str(meta.get("confirmed_session") or ""),
        path=path or f"beliefs/{belief_id}.md",
    )


def link_target(value: str) -> str:
    """The note a reference names, written as an id or as Obsidian's `[[id]]` /
    `[[beliefs/id|alias]]`: every reference between notes is a wikilink on disk
    (SPEC §1) so Obsidian's graph follows it, and an id everywhere else."""
    v = value.strip()
    if v.startswith("[[") and v.endswith("]]"):
        v = v[2:-2].split("|", 1)[0].split("#", 1)[0].strip()
        v = v.rsplit("/", 1)[-1]
        if v.endswith(".md"):
            v = v[:-3]
    return v


def wikilink(belief_id: str) -> str:
    return f"[[{belief_id}]]"


# The frontmatter key of each note kind that names beliefs (SPEC §1: a wikilink on disk).
REFERENCE_KEYS = {"beliefs": "supersedes", "tensions": "belief", "reviews": "beliefs"}


def with_wikilinks(path: str, text: str) -> str | None:
    """A note written before references were links (`supersedes: [old-id]`, `belief: old-id`),
    with them as `[[wikilinks]]` and no other line touched; None when it has nothing to change
    (it links already, names nothing, or does not parse: that is validate's to report)."""
    key = REFERENCE_KEYS.get(path.split("/", 1)[0])
    if key is None:
        return None
    note = parse_note(text, lenient=True)
    if note is None:
        return None
    v = note.meta.get(key)
    # A bare *id*: a value that names no belief file (a path, a title) is the parser's to
    # refuse, and as [[../outside]] would name nothing either.
    bare = lambda x: (isinstance(x, str) and not x.strip().startswith("[[")  # noqa: E731
                      and SLUG.match(x.strip()) is not None)
    if isinstance(v, str) and bare(v):
        return edit_frontmatter(text, {key: wikilink(link_target(v))})
    if isinstance(v, list) and any(bare(x) for x in v):
        return edit_frontmatter(text, {key: [wikilink(link_target(x)) if bare(x) else x for x in v]})
    return None


def belief_fields(b: Belief) -> dict[str, Any]:
    out = {
        "title": b.title, "kind": b.kind, "basis": b.basis, "confidence": b.confidence,
        "permanence": b.permanence, "first": b.first, "confirmed": b.confirmed,
        "challenged": b.challenged, "status": b.status, "tags": list(b.tags),
        "scope": b.scope, "pinned": b.pinned, "supersedes": [wikilink(x) for x in b.supersedes],
    }
    # Written only when the belief rests on others, so that every file written before
    # `depends_on` existed reads and rewrites byte for byte as it did.
    if b.depends_on:
        out["depends_on"] = [wikilink(x) for x in b.depends_on]
    return out


def format_evidence(ev: Evidence) -> str:
    parts = [ev.date.isoformat() if ev.date else "—", ev.kind]
    if ev.link:
        parts.append(f"[[{ev.link}]]")
    line = "- " + " · ".join(parts)
    if ev.note:
        line += " — " + ev.note.replace("\n", " ").strip()
    return line


def render_belief(b: Belief) -> str:
    fields = belief_fields(b)
    fm = "\n".join(f"{k}: {yaml_scalar(v)}".rstrip() for k, v in fields.items())
    ev = "\n".join(format_evidence(e) for e in b.evidence)
    body = b.statement.strip() + "\n\n## Evidence\n" + (ev + "\n" if ev else "")
    return f"---\n{fm}\n---\n{body}"


def update_belief_text(text: str, before: Belief, after: Belief,
                       new_evidence: tuple[Evidence, ...] = ()) -> str:
    """Rewrite only what changed between `before` and `after`, then append evidence."""
    old, new = belief_fields(before), belief_fields(after)
    changes = {k: v for k, v in new.items() if old.get(k) != v}
    if before.depends_on and not after.depends_on:
        changes["depends_on"] = []
    out = edit_frontmatter(text, changes)
    if after.confirmed_session != before.confirmed_session:
        # `confirmed_session` is no longer written: the session that last confirmed is read from
        # the last confirming evidence line's observation. A file written before loses its line
        # when the belief is next confirmed, as the value would be stale from then on.
        out = drop_frontmatter_keys(out, ("confirmed_session",))
    if after.statement != before.statement:
        out = replace_statement(out, after.statement)
    return append_evidence(out, new_evidence)


def replace_statement(text: str, statement: str) -> str:
    fm_text, body, _ = split(text)
    m = _EVIDENCE_HEADING.search(body)
    rest = body[m.start():] if m else ""
    head = text[:len(text) - len(body)]
    return head + statement.strip() + "\n\n" + rest


def append_evidence(text: str, evidence: tuple[Evidence, ...]) -> str:
    if not evidence:
        return text
    lines = "\n".join(format_evidence(e) for e in evidence) + "\n"
    m = _EVIDENCE_HEADING.search(text)
    if m is None:
        sep = "" if text.endswith("\n") else "\n"
        return f"{text}{sep}\n## Evidence\n{lines}"
    after = text[m.end():]
    nxt = re.search(r"^#{1,2}[ \t]", after, re.M)
    end = m.end() + (nxt.start() if nxt else len(after))
    section = text[m.end():end].rstrip("\n")
    rebuilt = section + "\n" + lines
    tail = text[end:]
    if tail:
        rebuilt += "\n"
    return text[:m.end()] + rebuilt + tail


# --- observations --------------------------------------------------------------

_OBS_HEADING = re.compile(r"^##[ \t]+(obs-[\w\-]+)[ \t]*$", re.M)
_OBS_FIELD = re.compile(r"^[-*][ \t]+([\w ]+?)[ \t]*:[ \t]?(.*)$")


def parse_observations(text: str, path: str = "") -> tuple[list[Observation], list[tuple[int, str]]]:
    """All entries of an observations file, and (line, message) for bad ones."""
    out: list[Observation] = []
    bad: list[tuple[int, str]] = []
    heads = list(_OBS_HEADING.finditer(text))
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        fields: dict[str, str] = {}
        again: list[tuple[int, str]] = []  # (line within the entry, field) given a second time
        for k, ln in enumerate(text[h.end():end].splitlines()):
            fm = _OBS_FIELD.match(ln.strip())
            if fm:
                name = fm.group(1).strip().lower()
                if name in fields:
                    again.append((k, name))  # the entry's own (first) value stands
                else:
                    fields[name] = fm.group(2).strip()
        try:
            out.append(_observation(h.group(1), fields, path))
        except NoteError as e:
            # counted only for the rare bad entry: per heading it would be quadratic
            bad.append((text.count("\n", 0, h.start()) + 1, e.message))
        if again:
            # Lines typed under an entry without their own heading: read as the entry's, the last
            # value won and rewrote what it recorded (its date, evidence, strength), unreported.
            names = ", ".join(f"'{n}'" for n in dict.fromkeys(n for _, n in again))
            bad.append((text.count("\n", 0, h.end()) + 1 + again[0][0],
                        f"{h.group(1)}: {names} given a second time from this line; an observation starts with "
                        "its own '## obs-…' heading (and is never edited: add a new entry)"))
    return out, bad


def _observation(obs_id: str, f: dict[str, str], path: str) -> Observation:
    try:
        d = date.fromisoformat(f.get("date", ""))
    except ValueError:
        raise NoteError(0, f"{obs_id}: 'date' must be YYYY-MM-DD") from None
    strength = f.get("strength", "")
    if strength not in STRENGTHS:
        raise NoteError(0, f"{obs_id}: 'strength' must be one of {', '.join(STRENGTHS)}")
    basis = f.get("basis", "behavioral")
    if basis not in BASES:
        raise NoteError(0, f"{obs_id}: 'basis' must be one of {', '.join(BASES)}")
    connects = f.get("connects", "new").strip()
    m = re.fullmatch(r"\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]", connects)
    connects = m.group(1).strip() if m else connects or "new"
    source, session = f.get("source", ""), ""
    sm = re.match(r"^(.*?)[ \t]*·[ \t]*session[ \t]+(\S+)$", source)
    if sm:
        source, session = sm.group(1), sm.group(2)
    cited = tuple(dict.fromkeys(x.strip() for x in re.findall(r"\[\[([^\]|#]+)", f.get("cited", "")) if x.strip()))
    return Observation(id=obs_id, date=d, evidence=f.get("evidence", ""), strength=strength,
                       basis=basis, connects=connects, suggests=f.get("suggests", ""),
                       therefore=f.get("therefore", ""), source=source, session=session,
                       cited=cited, path=path)


def _one_line(s: str) -> str:
    return " ".join(s.split())


def render_observation(o: Observation) -> str:
    connects = "new" if o.connects == "new" else f"[[{o.connects}]]"
    source = o.source or "cli"
    if o.session:
        source += f" · session {o.session}"
    rows = [("date", o.date.isoformat()), ("evidence", o.evidence), ("suggests", o.suggests),
            ("therefore", o.therefore), ("connects", connects), ("strength", o.strength),
            ("source", source), ("basis", o.basis),
            ("cited", ", ".join(f"[[{c}]]" for c in o.cited))]
    body = "\n".join(f"- {k}: {_one_line(v)}".rstrip() for k, v in rows if v or k in ("evidence",))
    return f"## {o.id}\n{body}\n"


# --- tensions ------------------------------------------------------------------

def parse_tension(text: str, tension_id: str, path: str = "") -> Tension:
    refuse_conflict_markers(text)
    note = parse_note(text)
    meta, kl = note.meta, note.key_lines
    d = _required_date(meta, "date", kl)
    belief = meta.get("belief")
    if isinstance(belief, list) and len(belief) == 1 and isinstance(belief[0], list) and len(belief[0]) == 1:
        belief = f"[[{belief[0][0]}]]"  # `belief: [[id]]` unquoted, as a person may type it: YAML's nested list
    if not isinstance(belief, str) or not link_target(belief):
        raise NoteError(kl.get("belief", 2), "'belief' is required (a belief id or [[wikilink]])")
    belief = _belief_id(link_target(belief), "belief", kl)
    status = _choice(meta, "status", kl, TENSION_STATUSES, default="unresolved")
    title, fields, links = "", {}, []
    for ln in note.body.splitlines():
        s = ln.strip()
        if s.startswith("# ") and not title:
            title = s[2:].strip()
            continue
        fm = _OBS_FIELD.match(s)
        if fm:
            key = fm.group(1).strip().lower()
            fields[key] = fm.group(2).strip()
            if key == "evidence":
                links += re.findall(r"\[\[([^\]]+)\]\]", fm.group(2))
    return Tension(id=tension_id, date=d, belief=belief, status=status, title=title,
                   what_happened=fields.get("what happened", ""), evidence=tuple(links),
                   suggests=fields.get("what this suggests", ""),
                   resolution=fields.get("resolution", ""),
                   path=path or f"tensions/{tension_id}.md",
                   successor=_reference(meta, "successor", kl), rests_on=_reference(meta, "rests_on", kl))


def _reference(meta: dict, key: str, lines: dict) -> str:
    """An optional reference to one belief (`successor: "[[id]]"`), as an id; "" when absent."""
    v = meta.get(key)
    if isinstance(v, list) and len(v) == 1 and isinstance(v[0], list) and len(v[0]) == 1:
        v = f"[[{v[0][0]}]]"  # unquoted `[[id]]`: YAML's nested list
    if v is None or v == "":
        return ""
    if not isinstance(v, str) or not link_target(v):
        raise NoteError(lines.get(key, 2), f"'{key}' must be a belief id or [[wikilink]]")
    return _belief_id(link_target(v), key, lines)


def _belief_id(target: str, key: str, lines: dict) -> str:
    """A reference's target when it can name a belief file (a slug); a hand edit may name a
    path, a title or a NUL byte, which no belief file has: refused at its line, not followed."""
    if not SLUG.match(target):
        shown = repr(target) if len(target) <= 60 else repr(target[:60]) + "…"
        raise NoteError(lines.get(key, 2), f"'{key}' must name a belief by its id (lowercase letters, digits "
                                           f"and hyphens, as its file is named), not {shown}")
    return target


def render_tension(t: Tension) -> str:
    ev = ", ".join(f"[[{e}]]" for e in t.evidence)
    rows = [f"- what happened: {_one_line(t.what_happened)}", f"- evidence: {ev}",
            f"- what this suggests: {_one_line(t.suggests)}"]
    if t.resolution:
        rows.append(f"- resolution: {_one_line(t.resolution)}")
    refs = "".join(f'{k}: "{wikilink(v)}"\n' for k, v in (("successor", t.successor), ("rests_on", t.rests_on)) if v)
    return (f"---\ndate: {t.date.isoformat()}\nbelief: \"{wikilink(t.belief)}\"\nstatus: {t.status}\n{refs}---\n"
            f"# {_one_line(t.title)}\n" + "\n".join(r.rstrip() for r in rows) + "\n")


def resolve_tension_text(text: str, today: date, note: str) -> str:
    out = edit_frontmatter(text, {"status": "resolved"})
    sep = "" if out.endswith("\n") else "\n"
    return f"{out}{sep}- resolution: {today.isoformat()} — {_one_line(note)}\n"
