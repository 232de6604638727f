"""Converters from other memories (SPEC §12): the MCP reference memory server's
`memory.jsonl`, Claude Code's auto memory folder, and a mem0 export.

What another memory holds was written by a machine and never weighed: every
belief starts speculative (0.20), basis `interpretive` when a model inferred it
and `self-report` when it records what the user said, for the user to confirm
with a gut-check. Each belief is scoped to the project it came from (a Claude
Code project folder), global otherwise, and carries an evidence line naming its
source. What has no place in a vault is listed in the report's `unmapped`.
Mapping is pure (`plan_*`); the sources are never touched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..core.errors import InputError, NotFound
from ..core.ids import slugify, text_key
from ..core.model import Belief, Evidence
from ..core.params import DEFAULTS, Params
from ..core.redact import only_secrets, redact
from . import markdown as md
from .claude_memory import plan_claude_memory
from .migration import ImportReport, Migration, write_migration

SPECULATIVE = 0.20


def _title(text: str) -> str:
    first = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0].rstrip(".")
    return first if len(first) <= 80 else first[:80].rsplit(" ", 1)[0] + "…"


class _Builder:
    """Beliefs from free texts: ids unique, texts already in the vault (or twice in the source) left out."""

    def __init__(self, existing: Sequence[Belief], params: Params):
        self.taken = {b.id for b in existing}
        self.have = {text_key(b.statement.split("\n\n")[0]) for b in existing} | {text_key(b.title) for b in existing}
        self.params = params
        self.beliefs: list[Belief] = []
        self.duplicates = 0
        self.unmapped: list[str] = []

    def add(self, text: str, *, kind: str, basis: str, first: date, tags: tuple[str, ...], scope: str,
            source: str) -> Belief | None:
        text = redact(" ".join(text.split()), self.params.redact)
        if not text:
            return None
        if only_secrets(text):
            self.unmapped.append(f"{source}: only a secret ({text}); not imported")
            return None
        if text_key(text) in self.have:
            self.duplicates += 1
            return None
        self.have.add(text_key(text))
        title = _title(text)
        bid = md.unique(slugify(title) or "imported", self.taken)
        b = Belief(id=bid, title=title, kind=kind, basis=basis, confidence=SPECULATIVE, permanence="unknown",
                   first=first, tags=tuple(t for t in dict.fromkeys(slugify(t) for t in tags) if t), scope=scope,
                   statement=text, evidence=(Evidence(first, "imported", "", f"imported from {source}; confirm "
                                                      "or retire it (a gut-check, or `epimem belief edit`)"),))
        self.beliefs.append(b)
        return b

    def notes(self) -> tuple[str, ...]:
        return (f"{self.duplicates} memory text(s) already in the vault (or twice in the source) were left out",) \
            if self.duplicates else ()


def _kind(name: str | None, params: Params, default: str) -> str:
    return md.kind_from(name or "", params.kinds) or default


# --- the MCP reference memory server (@modelcontextprotocol/server-memory) ------------------------

def plan_mcp_memory(text: str, *, name: str, today: date, params: Params = DEFAULTS,
                    existing: Sequence[Belief] = ()) -> Migration:
    """Each observation of an entity becomes a belief about that entity (tagged with it);
    each relation a belief `from relation to`. An entity with no observations is unmapped."""
    b = _Builder(existing, params)
    unmapped: list[str] = []
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError as e:
            raise InputError(f"not JSON: {e.msg} (column {e.colno})", path=name, line=n) from None
        if not isinstance(rec, dict):
            unmapped.append(f"line {n}: not an object")
            continue
        if rec.get("type") == "entity":
            ent, etype = str(rec.get("name") or "").strip(), str(rec.get("entityType") or "").strip()
            obs = [o for o in rec.get("observations") or [] if isinstance(o, str) and o.strip()]
            if not ent:
                unmapped.append(f"line {n}: an entity without a name")
                continue
            if not obs:
                unmapped.append(f"entity {ent!r} ({etype or 'no type'}): no observations to believe")
            for o in obs:
                if only_secrets(redact(o, params.redact)):  # before "alex: …" gives it a word of its own
                    unmapped.append(f"entity {ent!r}: an observation that is only a secret; not imported")
                    continue
                text_ = o if ent.lower() in o.lower() else f"{ent}: {o}"
                b.add(text_, kind=_kind(etype, params, "fact"), basis="interpretive", first=today,
                      tags=(ent, etype, "mcp-memory"), scope="global", source=f"{name} (entity {ent})")
        elif rec.get("type") == "relation":
            frm, to, rel = (str(rec.get(k) or "").strip() for k in ("from", "to", "relationType"))
            if not (frm and to and rel):
                unmapped.append(f"line {n}: a relation without from, to and relationType")
                continue
            b.add(f"{frm} {rel.replace('_', ' ')} {to}.", kind="fact", basis="interpretive", first=today,
                  tags=(frm, to, "mcp-memory"), scope="global", source=f"{name} (relation)")
        else:
            unmapped.append(f"line {n}: a record of type {rec.get('type')!r}")
    return Migration(tuple(b.beliefs), unmapped=tuple(unmapped + b.unmapped), notes=b.notes())


# --- Claude Code's auto memory folder -------------------------------------------------------------

# A topic file's `type:` (Claude Code writes user, feedback, project, reference) says what sort of
# memory it is: the user's own guidance on how to work is a preference, what they are (role, goals,
# knowledge) their identity, a project's state or a pointer elsewhere a fact. A kind its heading or
# wording names instead is kept.
AUTO_MEMORY_KINDS = {"user": "identity", "feedback": "preference", "project": "fact", "reference": "fact"}

def project_of(folder: Path) -> str:
    """The project a `~/.claude/projects/<project>/memory` folder belongs to: Claude Code names
    the folder after the project's path with `/` turned into `-` (lossy where names hold a `-`)."""
    proj = folder.parent.name if folder.name == "memory" else folder.name
    return "/" + proj.lstrip("-").replace("-", "/") if proj.startswith("-") else proj


def plan_claude_auto_memory(files: dict[str, str], *, project: str, today: date, params: Params = DEFAULTS,
                            existing: Sequence[Belief] = ()) -> Migration:
    """`MEMORY.md` and each topic file: every top-level bullet a belief (a topic file
    without bullets is one belief), scoped to `project`; links in the index are pointers,
    not beliefs."""
    beliefs: list[Belief] = []
    notes: list[str] = []
    unmapped: list[str] = []
    taken = list(existing)
    for name in sorted(files, key=lambda n: (n != "MEMORY.md", n)):
        text = files[name]
        meta: dict[str, Any] = {}
        if text.startswith("---"):
            from ..core.notes import parse_note

            note = parse_note(text, lenient=True)  # a topic file's frontmatter is Claude's: unread, it is text
            if note is not None:
                meta, text = note.meta, note.body
        if name == "MEMORY.md":
            # "- [Debugging](debugging.md) — how builds fail": the topic file is imported itself
            text = "\n".join(ln for ln in text.splitlines()
                             if not re.match(r"^\s*[-*]\s*\[[^\]]+\]\([^)]+\.md\)", ln))
        m = plan_claude_memory(text, name=f"auto memory {name}", today=today, params=params, existing=taken)
        topic = slugify(Path(name).stem) if name != "MEMORY.md" else ""
        mtype = str(meta.get("type") or "")
        found = list(m.beliefs)
        dup = any("already in the vault" in n for n in m.notes)
        unmapped += m.unmapped
        if not found and text.strip() and not dup and not m.unmapped:
            body = " ".join(text.split())
            if only_secrets(redact(body, params.redact)):
                unmapped.append(f"auto memory {name}: only a secret; not imported")
            elif body and text_key(body) not in {text_key(b.statement) for b in taken}:
                found = [Belief(id=md.unique(slugify(str(meta.get("name") or Path(name).stem)),
                                             {b.id for b in taken}),
                                title=str(meta.get("name") or Path(name).stem.replace("-", " ").capitalize()),
                                kind="fact", basis="self-report", confidence=SPECULATIVE, permanence="unknown",
                                first=today, statement=redact(text.strip(), params.redact),
                                evidence=(Evidence(today, "imported", "", f"imported from auto memory {name}; "
                                                   "confirm or retire it"),))]
        if not found and not text.strip():
            unmapped.append(f"{name}: empty")
        for b in found:
            from dataclasses import replace

            # feedback and user notes are what the user said; project and reference notes are the model's
            basis = "interpretive" if mtype in ("project", "reference") else "self-report"
            kind = AUTO_MEMORY_KINDS.get(mtype, b.kind) if b.kind == "fact" else b.kind
            b = replace(b, scope=project, basis=basis, kind=kind,
                        tags=tuple(dict.fromkeys(b.tags + tuple(t for t in (topic, "claude-auto-memory") if t))))
            beliefs.append(b)
            taken.append(b)
        notes += [n for n in m.notes if "no bullets found" not in n]
    return Migration(tuple(beliefs), unmapped=tuple(unmapped), notes=tuple(notes))


# --- mem0 -----------------------------------------------------------------------------------------

def _day(v: Any) -> date | None:
    if not isinstance(v, str) or not v.strip():
        return None
    try:
        return datetime.fromisoformat(v.strip().replace("Z", "+00:00")).date()
    except ValueError:
        return None


MEM0_KNOWN = {"id", "memory", "text", "content", "hash", "metadata", "created_at", "updated_at", "user_id",
              "agent_id", "run_id", "app_id", "categories", "score", "immutable", "expiration_date", "owner",
              "organization"}


def plan_mem0(data: Any, *, name: str, today: date, params: Params = DEFAULTS,
              existing: Sequence[Belief] = ()) -> Migration:
    """Each memory of a mem0 export (a JSON list, or `{"results": [...]}`) a belief: the text
    inferred by mem0's model (interpretive, speculative), first seen when mem0 created it,
    tagged with its categories, scoped to `metadata.project` when it has one."""
    if isinstance(data, dict):
        data = data.get("results") or data.get("memories")
    if not isinstance(data, list):
        raise InputError(f"{name}: expected a JSON list of memories (or an object with 'results')", path=name)
    b = _Builder(existing, params)
    unmapped: list[str] = []
    for i, m in enumerate(data):
        if not isinstance(m, dict):
            unmapped.append(f"item {i}: not an object")
            continue
        text = m.get("memory") or m.get("text") or m.get("content")
        mid = str(m.get("id") or f"item {i}")
        if not isinstance(text, str) or not text.strip():
            unmapped.append(f"memory {mid}: no text")
            continue
        meta = m.get("metadata") if isinstance(m.get("metadata"), dict) else {}
        cats = [c for c in (m.get("categories") or []) if isinstance(c, str)]
        scope = str(meta.get("project") or "global")
        first = _day(m.get("created_at")) or today
        kind = _kind(cats[0] if cats else str(meta.get("kind") or ""), params, "fact")
        made = b.add(text, kind=kind, basis="interpretive", first=first, tags=(*cats, "mem0"), scope=scope,
                     source=f"{name} (mem0 {mid})")
        extra = sorted(set(m) - MEM0_KNOWN) + sorted(f"metadata.{k}" for k in meta if k not in ("project", "kind"))
        if made is not None and extra:
            unmapped.append(f"memory {mid}: {', '.join(extra)} kept nowhere")
    return Migration(tuple(b.beliefs), unmapped=tuple(unmapped + b.unmapped), notes=b.notes())


# --- reading the sources and writing them --------------------------------------------------------

def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFound(f"cannot read {path}: no such file", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}", path=str(path)) from None


def _existing(memory) -> list[Belief]:
    return memory.vault.load_beliefs()[0] if memory.vault.exists() else []


def import_mcp_memory(memory, path: str | Path, *, dry_run: bool = False) -> ImportReport:
    path = Path(path).expanduser()
    m = plan_mcp_memory(_read(path), name=path.name, today=memory.write_today, params=memory.params,
                        existing=_existing(memory))
    return write_migration(memory, m, subject=f"import: {len(m.beliefs)} beliefs from {path.name} "
                                              "(MCP memory server; speculative)", dry_run=dry_run,
                           importer="mcp-memory", source=path.name)


def import_claude_auto_memory(memory, path: str | Path, *, dry_run: bool = False,
                              project: str | None = None) -> ImportReport:
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise NotFound(f"{folder} is not a folder (Claude Code keeps auto memory in "
                       "~/.claude/projects/<project>/memory/)", path=str(folder))
    files = {p.name: _read(p) for p in sorted(folder.glob("*.md"))}
    if not files:
        raise InputError(f"{folder} holds no .md files (no MEMORY.md, no topic files)", path=str(folder))
    m = plan_claude_auto_memory(files, project=project or project_of(folder), today=memory.write_today,
                                params=memory.params, existing=_existing(memory))
    return write_migration(memory, m, subject=f"import: {len(m.beliefs)} beliefs from Claude Code auto memory "
                                              f"({project or project_of(folder)}; speculative)", dry_run=dry_run,
                           importer="claude-auto-memory", source=project or project_of(folder))


def import_mem0(memory, path: str | Path, *, dry_run: bool = False) -> ImportReport:
    path = Path(path).expanduser()
    try:
        data = json.loads(_read(path))
    except json.JSONDecodeError as e:
        raise InputError(f"not JSON: {e.msg}", path=str(path), line=e.lineno) from None
    m = plan_mem0(data, name=path.name, today=memory.write_today, params=memory.params, existing=_existing(memory))
    return write_migration(memory, m, subject=f"import: {len(m.beliefs)} beliefs from {path.name} "
                                              "(mem0; speculative)", dry_run=dry_run,
                           importer="mem0", source=path.name)
