"""The review inbox's file (SPEC §15): what an unattended path proposed, waiting for the user.

With `review: required` in `epistemology.md`, an observation from a path nobody watches (the
session-end pass, an agent over MCP, the Claude API's memory tool) is not applied but written as
`inbox/<id>.md`: a note whose frontmatter says who proposed it and holds the observation as it
would be given to observe. Nothing in it is a number: the rules decide those when the user
accepts it, on that day's state. A rejected proposal stays on file (`inbox/rejected/<id>.md`,
`status: rejected`), so the same observation proposed again (a retried hook) is not asked about twice.

A second kind (`kind: import`): what an import would write about one belief (the belief's file as
the import planned it, with the observations and tensions that concern it), kept as `records`
(vault path, text). Its numbers were set by the importer's rules when proposed; accepting runs the
importer's own write code again, caps, validation and redaction included, and takes the records
only as the commit that proposed them wrote them (api/inbox: a file edited since is refused).

Pure: render and parse, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from .errors import InputError
from .ids import text_key
from .notes import NoteError, parse_note, yaml_scalar, yaml_text

REVIEW_VALUES = ("off", "required")
STATUSES = ("pending", "rejected")
# Who proposed it: the paths that run without the user watching each write.
ORIGINS = ("session-end", "mcp", "memory-tool", "import", "skill", "api")
FOLDER = "inbox"
REJECTED = "inbox/rejected"
_ID = re.compile(r"prop-\d{8}-[0-9a-f]{4,40}")
KINDS = ("observation", "import")
# The importers whose batches can wait (`epimem import …`); `jsonl` writes files, the others a Migration.
IMPORTERS = ("epistemic-memory", "claude-memory", "mcp-memory", "claude-auto-memory", "mem0", "jsonl")
# Where an import proposal's records may go: the files an import writes, nothing outside them.
_RECORD_PATH = re.compile(r"beliefs/[a-z0-9][a-z0-9-]*\.md|tensions/[a-z0-9][a-z0-9-]*\.md"
                          r"|observations/\d{4}-\d{2}\.md|reviews/\d{4}-\d{2}-\d{2}\.md"
                          r"|state/sessions\.json|epistemology\.md")


@dataclass(frozen=True)
class Record:
    """One file an import proposal would write (its text as the import planned it, before any
    merge with what the vault holds); an observation log's text holds only the proposal's entries."""
    path: str
    text: str


@dataclass(frozen=True)
class Proposal:
    id: str
    proposed: date
    origin: str
    source: str
    session: str
    observation: dict[str, Any] = field(default_factory=dict)
    status: str = "pending"
    decided: date | None = None
    note: str = ""  # the user's words on a rejection
    kind: str = "observation"
    importer: str = ""  # kind import: which importer planned it (IMPORTERS)
    records: tuple[Record, ...] = ()  # kind import: what it would write

    @property
    def path(self) -> str:
        # A rejected proposal moves to `inbox/rejected/`: what waits is `inbox/*.md`, which the
        # session-start hook counts with one listing.
        return f"{FOLDER}/{self.id}.md" if self.status == "pending" else f"{REJECTED}/{self.id}.md"


def fingerprint(p: Proposal) -> str:
    """What the user looked at, in a few characters: the page's buttons send it back, so a
    proposal edited between the look and the click (by hand, or by a model with a file tool) is
    refused rather than accepted unseen. Of the parsed proposal, not the bytes: a touch or a
    re-save that changes nothing it says is not a change."""
    return hashlib.sha256(repr(p).encode("utf-8")).hexdigest()[:16]


def is_proposal_id(value: str) -> bool:
    return bool(_ID.fullmatch(value))


def check_proposal_id(value: str, field: str = "id") -> str:
    v = value.strip()
    if not is_proposal_id(v):
        raise InputError(f"'{value}' is not a proposal id (prop-YYYYMMDD-xxxx, as `epimem inbox` lists them)",
                         field=field)
    return v


def proposal_id(day: date, session: str, item: dict[str, Any], taken: set[str]) -> tuple[str, bool]:
    """A stable id from what is proposed (session, belief, evidence): the same observation
    proposed twice gets the same id (True: it is already on file)."""
    key = f"{session}\n{item.get('connects', '')}\n{text_key(str(item.get('evidence', '')))}"
    digest = hashlib.sha1(key.encode()).hexdigest()
    return f"prop-{day:%Y%m%d}-{digest[:8]}", f"prop-{day:%Y%m%d}-{digest[:8]}" in taken


def import_proposal_id(day: date, importer: str, key: str) -> str:
    """An import proposal's id: its digest is of what is proposed (the importer and a key of the
    belief's words, not the day), so the same import run again finds it on file, pending or
    rejected, whatever day it is (`digest_of`)."""
    digest = hashlib.sha1("\n".join(("import", importer, key)).encode()).hexdigest()
    return f"prop-{day:%Y%m%d}-{digest[:8]}"


def digest_of(pid: str) -> str:
    return pid.rsplit("-", 1)[-1]


def render(p: Proposal) -> str:
    """The file of a proposal: what it holds in the frontmatter, and in prose what deciding does."""
    if p.kind == "import":
        fields = ["kind: import", f"importer: {p.importer}", f"source: {yaml_scalar(p.source)}"]
    else:
        fields = [f"source: {yaml_scalar(p.source)}", f"session: {yaml_scalar(p.session)}"]
    lines = ["---", f"id: {p.id}", f"proposed: {p.proposed.isoformat()}", f"origin: {p.origin}", *fields,
             f"status: {p.status}"]
    if p.decided is not None:
        lines.append(f"decided: {p.decided.isoformat()}")
    if p.note:
        lines.append(f"note: {yaml_scalar(p.note)}")
    lines += _import_body(p) if p.kind == "import" else _observation_body(p)
    if p.status == "rejected":
        lines.append(f"Rejected by the user on {p.decided.isoformat() if p.decided else '?'}"
                     + (f": {p.note}" if p.note else "") + ".")
        lines.append("")
    return "\n".join(lines)


def _observation_body(p: Proposal) -> list[str]:
    lines = ["observation:", *(f"  {k}: {yaml_scalar(v)}" for k, v in p.observation.items()), "---"]
    said = p.observation.get("evidence", "")
    target = p.observation.get("connects", "new")
    title = p.observation.get("title")
    head = f"{p.observation.get('strength', '')} → {target}" + (f" ({title})" if title else "")
    return lines + [f"# Proposed: {head}", "", f"> {said}", "",
                    f"Proposed by {p.origin} ({p.source or 'no source'}"
                    + (f", session {p.session}" if p.session else "") + f") on {p.proposed.isoformat()}.",
                    "Nothing here has moved a number: `epimem inbox` shows what accepting it would change, "
                    f"`epimem inbox accept {p.id}` applies the rules to it, `epimem inbox reject {p.id}` "
                    "declines it.", ""]


def _import_body(p: Proposal) -> list[str]:
    lines = ["records:"]
    for r in p.records:
        lines += [f"  - path: {r.path}", f"    text: {yaml_text(r.text)}"]
    return lines + ["---", f"# Proposed by an import: {', '.join(r.path for r in p.records)}", "",
                    f"From `epimem import {p.importer}` ({p.source or 'no source'}) on {p.proposed.isoformat()}. "
                    "Nothing here has changed the vault: `epimem inbox --diff` shows what accepting it would write "
                    "(the import's own rules applied again that day), "
                    f"`epimem inbox accept {p.id}` writes it, `epimem inbox reject {p.id}` declines it "
                    "(the same import run again will not ask twice). A change to this file is not accepted.", ""]


def parse(text: str, path: str) -> Proposal:
    """A proposal file; a NoteError naming the file and line when it cannot be read."""
    try:
        note = parse_note(text)
    except NoteError as e:
        raise NoteError(e.line or 1, f"{path}:{e.line or 1}: {e.message}", path=path) from None
    meta, lines = note.meta, note.key_lines

    def bad(key: str, why: str) -> NoteError:
        line = lines.get(key, 1)
        return NoteError(line, f"{path}:{line}: '{key}' {why}", path=path)

    pid = meta.get("id")
    stem = path.rsplit("/", 1)[-1][:-3] if path.endswith(".md") else path
    if not isinstance(pid, str) or not is_proposal_id(pid) or pid != stem:
        raise bad("id", f"must be the proposal id of the file's name ({stem})")
    proposed = meta.get("proposed")
    if not isinstance(proposed, date):
        raise bad("proposed", "must be a date YYYY-MM-DD")
    origin = meta.get("origin")
    if origin not in ORIGINS:
        raise bad("origin", f"must be one of {', '.join(ORIGINS)}")
    status = meta.get("status", "pending")
    if status not in STATUSES:
        raise bad("status", f"must be one of {', '.join(STATUSES)}")
    decided = meta.get("decided")
    if decided is not None and not isinstance(decided, date):
        raise bad("decided", "must be a date YYYY-MM-DD")
    kind = meta.get("kind", "observation")
    if kind not in KINDS:
        raise bad("kind", f"must be one of {', '.join(KINDS)}")
    for key in ("source", "session", "note"):
        if meta.get(key) is not None and not isinstance(meta.get(key), str):
            raise bad(key, "must be text")
    if kind == "import":
        return _parse_import(meta, bad, pid, proposed, origin, status, decided)
    obs = meta.get("observation")
    if not isinstance(obs, dict) or not obs:
        raise bad("observation", "must be the observation proposed (connects, strength, evidence, …)")
    item = {str(k): (v.isoformat() if isinstance(v, date) else v) for k, v in obs.items()}
    return Proposal(id=pid, proposed=proposed, origin=origin, source=meta.get("source") or "",
                    session=meta.get("session") or "", observation=item, status=status,
                    decided=decided, note=meta.get("note") or "")


def _parse_import(meta, bad, pid, proposed, origin, status, decided) -> Proposal:
    if origin != "import":
        raise bad("origin", "must be import for a proposal of kind import")
    importer = meta.get("importer")
    if importer not in IMPORTERS:
        raise bad("importer", f"must be one of {', '.join(IMPORTERS)}")
    raw = meta.get("records")
    if not isinstance(raw, list) or not raw:
        raise bad("records", "must list what the import would write (path and text of each file)")
    records = []
    for n, r in enumerate(raw, 1):
        if not isinstance(r, dict) or set(r) != {"path", "text"} or not isinstance(r.get("text"), str):
            raise bad("records", f"item {n} must have exactly a path and a text")
        rel = r.get("path")
        # nothing escapes the vault, and an import writes only these files
        if not isinstance(rel, str) or not _RECORD_PATH.fullmatch(rel):
            raise bad("records", f"item {n}: {rel!r} is not a file an import writes")
        records.append(Record(rel, r["text"]))
    if len({r.path for r in records}) != len(records):
        raise bad("records", "names a file twice")
    return Proposal(id=pid, proposed=proposed, origin=origin, source=meta.get("source") or "", session="",
                    status=status, decided=decided, note=meta.get("note") or "", kind="import",
                    importer=importer, records=tuple(records))


def review_from_meta(meta: dict[str, Any], path: str = "epistemology.md",
                     lines: dict[str, int] | None = None) -> tuple[str, str | None]:
    """`review:` of `epistemology.md`: (value, why it is wrong or None); a wrong one is "off"
    reported, as every parameter is defaulted."""
    v = meta.get("review", "off")
    if v is None or v is False:
        return "off", None
    if isinstance(v, str) and v.strip().lower() in REVIEW_VALUES:
        return v.strip().lower(), None
    return "off", f"parameter 'review' must be one of {', '.join(REVIEW_VALUES)}, not {v!r}; using the default (off)"
