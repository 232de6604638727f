"""Every link between the project's own documents leads somewhere: the file exists, and the
heading an anchor names is in it. Docs get split and headings renamed; a dead `#anchor` says
nothing on GitHub or in an editor, it just lands at the top of the page."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([ROOT / "README.md", ROOT / "CLAUDE.md.example", *(ROOT / "docs").glob("*.md"),
               *(ROOT / "skills").glob("*/SKILL.md")])

_FENCE = re.compile(r"^(```|~~~)")
_CODE = re.compile(r"`[^`]*`")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _prose(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced blocks, inline code blanked: a link inside code is an
    example, not a link."""
    out, fenced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append((n, _CODE.sub(lambda m: " " * len(m.group(0)), line)))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation out (not `-` or `_`), spaces to `-`."""
    s = heading.strip().lower()
    s = "".join(c for c in s if c in " -_" or unicodedata.category(c)[0] in "LN")
    return s.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fenced or not m:
            continue
        s = slug(m.group(1))
        out.add(s if s not in seen else f"{s}-{seen[s]}")
        seen[s] = seen.get(s, 0) + 1
    return out


def test_slug_follows_github():
    assert slug("`--budget-tokens N`: markdown for a system prompt") == "--budget-tokens-n-markdown-for-a-system-prompt"
    assert slug("Eighth round: MiniLM's own RRF k") == "eighth-round-minilms-own-rrf-k"
    assert slug("Quality on public conversations (`bench/recall_public.py`)") == \
        "quality-on-public-conversations-benchrecall_publicpy"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_resolve(doc: Path):
    dead = []
    for n, line in _prose(doc.read_text(encoding="utf-8")):
        for target in _LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, obsidian:…
                continue
            path, _, anchor = target.partition("#")
            dest = (doc.parent / path).resolve() if path else doc
            if not dest.exists():
                dead.append(f"{doc.relative_to(ROOT)}:{n}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                dead.append(f"{doc.relative_to(ROOT)}:{n}: {target} (no such heading)")
    assert not dead, "\n".join(dead)
