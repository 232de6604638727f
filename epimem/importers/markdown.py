"""Markdown as another memory writes it, read through mistune's AST (so a heading
inside a code block is not a heading), and the small text helpers the importers share."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from ..core.ids import text_key, unique_id

NEVER = {"", "—", "–", "-", "--", "---", "never", "n/a", "na", "none", "null"}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_LABEL = re.compile(r"^\*\*(?P<label>[^*]+?)\s*:?\s*\*\*\s*:?\s*(?P<value>.*)$")


def ast(text: str) -> list[dict]:
    import mistune

    tokens = mistune.create_markdown(renderer=None)(text)
    assert isinstance(tokens, list)  # renderer=None: the AST, never rendered text
    return tokens


def render(tokens: list[dict]) -> str:
    from mistune.core import BlockState
    from mistune.renderers.markdown import MarkdownRenderer

    return MarkdownRenderer()(tokens, BlockState()).strip()


def inline(children: list[dict] | None, marks: bool = False) -> str:
    """Inline tokens as text; with `marks`, strong keeps its `**` and breaks are newlines."""
    out = []
    for c in children or []:
        t = c.get("type")
        if t in ("text", "codespan", "inline_html"):
            out.append(c.get("raw", ""))
        elif t in ("softbreak", "linebreak"):
            out.append("\n" if marks else " ")
        elif t == "strong" and marks:
            out.append("**" + inline(c.get("children")) + "**")
        else:
            out.append(inline(c.get("children"), marks))
    return "".join(out)


@dataclass
class Section:
    level: int
    title: str
    parent: str  # the nearest heading above with a lower level ("" at the top)
    tokens: list[dict] = field(default_factory=list)


def sections(tokens: list[dict]) -> list[Section]:
    out: list[Section] = []
    stack: list[tuple[int, str]] = []
    for tok in tokens:
        if tok.get("type") == "heading":
            level = tok["attrs"]["level"]
            title = " ".join(inline(tok.get("children")).split())
            while stack and stack[-1][0] >= level:
                stack.pop()
            out.append(Section(level, title, stack[-1][1] if stack else ""))
            stack.append((level, title))
        elif out:
            out[-1].tokens.append(tok)
    return out


def fields(tokens: list[dict]) -> tuple[dict[str, str], list[dict]]:
    """`**Label:** value` lines of a section (lower-case labels), and the other tokens."""
    found: dict[str, str] = {}
    rest: list[dict] = []
    for tok in tokens:
        if tok.get("type") != "paragraph":
            if tok.get("type") != "blank_line":
                rest.append(tok)
            continue
        lines = inline(tok.get("children"), marks=True).split("\n")
        hit = False
        for line in lines:
            m = _LABEL.match(line.strip())
            if m:
                found[m.group("label").strip().lower()] = m.group("value").strip()
                hit = True
        if not hit:
            rest.append(tok)
    return found, rest


def parse_date(value: str | None) -> date | None:
    if value is None or value.strip().lower() in NEVER:
        return None
    m = _DATE.search(value)
    if not m:
        raise ValueError(f"{value!r} is not a date YYYY-MM-DD")
    return date.fromisoformat(m.group(0))


def unique(base: str, taken: set[str]) -> str:
    """`core.ids.unique_id`, and the id is taken from then on: an import names many files at once."""
    bid = unique_id(base, taken)
    taken.add(bid)
    return bid


def kind_from(section: str, kinds: tuple[str, ...]) -> str | None:
    word = text_key(section)
    for k in kinds:
        if word in (k, k + "s", k + "es") or (k.endswith("y") and word == k[:-1] + "ies"):
            return k
    return None
