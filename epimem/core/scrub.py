"""Redacting a whole file's text without breaking its structure.

`core.redact.redact` works on one piece of text. The write path redacts every
file it writes, whatever service built it, and a file has a structure that a
`[REDACTED:…]` marker or a greedy pattern must not break:

- a note's frontmatter is redacted value by value and the changed keys are
  written back with `notes.yaml_scalar` (quoted where YAML needs it), so
  `tags: [password=x]` becomes `tags: ["password=[REDACTED:password]"]`, not a
  nested list;
- a note's body, an observation log, any other text file, line by line: every
  field of epimem's formats is one line, so a pattern that runs to the end of
  the text (a private key without its END line) can never swallow the entries
  after it;
- a JSON file string by string, re-serialised only when something changed.

Pure: no I/O.
"""

from __future__ import annotations

import json
from typing import Any

from .nesting import loads_json
from .redact import redacted


def _value(v: Any, patterns) -> tuple[Any, int]:
    """(`v` with its texts redacted, how many secrets were found). Only a value that held one is
    written back: comparing old and new would re-render a NaN, which is unequal to itself.
    Recursive: every reader has refused a value nested deeper than `nesting.MAX_DEPTH`."""
    if isinstance(v, str):
        return redacted(v, patterns)
    if isinstance(v, (list, tuple)):
        pairs = [_value(x, patterns) for x in v]
        found = sum(n for _, n in pairs)
        if not found:
            return v, 0
        items = [x for x, _ in pairs]
        return (tuple(items) if isinstance(v, tuple) else items), found
    if isinstance(v, dict):
        out, found = {}, 0
        for k, x in v.items():
            out[k], n = _value(x, patterns)
            found += n
        return (out, found) if found else (v, 0)
    return v, 0


def _lines(text: str, patterns) -> tuple[str, int]:
    out, found = [], 0
    for ln in text.splitlines(keepends=True):
        r, n = redacted(ln, patterns)
        out.append(r)
        found += n
    return "".join(out), found


def lines(text: str, patterns) -> str:
    """Every line redacted on its own (line endings kept)."""
    return _lines(text, patterns)[0]


def _note(text: str, patterns) -> tuple[str, int]:
    from .notes import edit_frontmatter, parse_note

    note = parse_note(text, lenient=True)
    if note is None:
        return _lines(text, patterns)  # not a note epimem can read: the safe, structure-blind way
    changes, found = {}, 0
    for k, v in note.meta.items():
        nv, n = _value(v, patterns)
        if n:
            changes[k] = nv
            found += n
    body = note.body
    head = text[: len(text) - len(body)]
    if changes:
        head = edit_frontmatter(head, changes)
    body, n = _lines(body, patterns)
    return head + body, found + n


def _json(text: str, patterns) -> tuple[str, int]:
    try:
        obj = loads_json(text)
    except ValueError:  # nested too deep to walk included: line by line, as for any text
        return _lines(text, patterns)
    new, found = _value(obj, patterns)
    if not found:
        return text, 0
    return json.dumps(new, ensure_ascii=False, indent=2) + ("\n" if text.endswith("\n") else ""), found


def scrubbed(path: str, text: str, patterns) -> tuple[str, int]:
    """(`text`, to be written at `path`, with every secret the patterns find replaced; how many
    they found). A text that held none is returned as it came, byte for byte."""
    if not text:
        return text, 0
    if path.endswith(".json"):
        return _json(text, patterns)
    if path.endswith(".md") and text.startswith("---"):
        return _note(text, patterns)
    return _lines(text, patterns)


def scrub(path: str, text: str, patterns) -> str:
    return scrubbed(path, text, patterns)[0]
