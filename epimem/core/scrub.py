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

from .redact import redact


def _value(v: Any, patterns) -> Any:
    if isinstance(v, str):
        return redact(v, patterns)
    if isinstance(v, list):
        return [_value(x, patterns) for x in v]
    if isinstance(v, tuple):
        return tuple(_value(x, patterns) for x in v)
    if isinstance(v, dict):
        return {k: _value(x, patterns) for k, x in v.items()}
    return v


def lines(text: str, patterns) -> str:
    """Every line redacted on its own (line endings kept)."""
    return "".join(redact(ln, patterns) for ln in text.splitlines(keepends=True))


def _note(text: str, patterns) -> str:
    from .notes import edit_frontmatter, parse_note

    note = parse_note(text, lenient=True)
    if note is None:
        return lines(text, patterns)  # not a note epimem can read: the safe, structure-blind way
    body = note.body
    changes = {}
    for k, v in note.meta.items():
        nv = _value(v, patterns)
        if nv != v:
            changes[k] = nv
    head = text[: len(text) - len(body)]
    if changes:
        head = edit_frontmatter(head, changes)
    return head + lines(body, patterns)


def _json(text: str, patterns) -> str:
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return lines(text, patterns)
    new = _value(obj, patterns)
    if new == obj:
        return text
    return json.dumps(new, ensure_ascii=False, indent=2) + ("\n" if text.endswith("\n") else "")


def scrub(path: str, text: str, patterns) -> str:
    """`text`, to be written at `path`, with every secret the patterns find replaced."""
    if not text:
        return text
    if path.endswith(".json"):
        return _json(text, patterns)
    if path.endswith(".md") and text.startswith("---"):
        return _note(text, patterns)
    return lines(text, patterns)
