"""Import from a plain memory file (CLAUDE.md, MEMORY.md): each top-level bullet
becomes a belief at speculative confidence, basis self-report, for the user to
confirm. Mapping is pure (`plan_claude_memory`); the file is never touched."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from ..core.errors import InputError, NotFound
from ..core.ids import slugify, text_key
from ..core.model import Belief, Evidence
from ..core.params import DEFAULTS, Params
from ..core.redact import only_secrets, redact
from . import markdown as md
from .migration import ImportReport, Migration, write_migration

SPECULATIVE = 0.20
_PREFER = re.compile(r"\b(prefer|prefers|like|likes|want|wants|rather|dislike|dislikes|hate|hates)\b", re.I)
_CONVENTION = re.compile(r"\b(always|never|don't|do not|must|should|use|uses)\b", re.I)


def plan_claude_memory(text: str, *, name: str, today: date, params: Params = DEFAULTS,
                       existing: Sequence[Belief] = ()) -> Migration:
    """Every top-level bullet a belief at speculative confidence (self-report); nested bullets
    stay in its statement; the heading above becomes a tag (or the kind, when it names one)."""
    taken = {b.id for b in existing}
    have = {text_key(b.statement.split("\n\n")[0]) for b in existing} | {text_key(b.title) for b in existing}
    beliefs: list[Belief] = []
    notes: list[str] = []
    unmapped: list[str] = []
    dup = 0
    heading = ""

    def items(tokens: list[dict]):
        nonlocal heading
        for tok in tokens:
            if tok.get("type") == "heading":
                heading = " ".join(md.inline(tok.get("children")).split())
            elif tok.get("type") == "list":
                for li in tok.get("children") or []:
                    yield heading, li

    for section, li in items(md.ast(text)):
        kids = li.get("children") or []
        head = [k for k in kids if k.get("type") in ("block_text", "paragraph")]
        if not head:
            continue
        first = redact(" ".join(md.inline(head[0].get("children")).split()), params.redact)
        rest = md.render([k for k in kids if k is not head[0]])
        statement = first + ("\n\n" + redact(rest, params.redact) if rest else "")
        if not first:
            continue
        if only_secrets(first):  # `- sk-ant-…`: a secret kept in a memory file, not something believed
            unmapped.append(f"{name}: a bullet held only a secret ({first}); not imported")
            continue
        if text_key(first) in have:
            dup += 1
            continue
        have.add(text_key(first))
        title = re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0].rstrip(".")
        if len(title) > 80:
            title = title[:80].rsplit(" ", 1)[0] + "…"
        kind = md.kind_from(section, params.kinds) or (
            "preference" if _PREFER.search(first) else "convention" if _CONVENTION.search(first) else "fact")
        tags = (slugify(section),) if section and not md.kind_from(section, params.kinds) else ()
        bid = md.unique(slugify(title), taken)
        beliefs.append(Belief(
            id=bid, title=title, kind=kind, basis="self-report",
            confidence=SPECULATIVE, permanence="unknown", first=today, tags=tags, statement=statement,
            evidence=(Evidence(today, "imported", "", f"imported from {name}; confirm or retire it "
                               "(a gut-check, or `epimem belief edit`)"),)))
    if dup:
        notes.append(f"{dup} bullet(s) already in the vault were left out")
    if not beliefs and not dup and not unmapped:
        notes.append(f"{name}: no bullets found")
    return Migration(tuple(beliefs), unmapped=tuple(unmapped), notes=tuple(notes))


def import_claude_memory(memory, path: str | Path, *, dry_run: bool = False) -> ImportReport:
    path = Path(path).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFound(f"cannot read {path}: no such file", path=str(path)) from None
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}", path=str(path)) from None
    except UnicodeDecodeError as e:
        raise InputError(f"cannot read {path}: not UTF-8 text ({e.reason} at byte {e.start})",
                         path=str(path)) from None
    existing, _ = memory.vault.load_beliefs() if memory.vault.exists() else ([], [])
    m = plan_claude_memory(text, name=path.name, today=memory.write_today, params=memory.params, existing=existing)
    subject = f"import: {len(m.beliefs)} beliefs from {path.name} (speculative, self-report)"
    return write_migration(memory, m, subject=subject, dry_run=dry_run, importer="claude-memory", source=path.name)
