"""A vault that can leave (SPEC §12): the whole vault as JSON Lines, and back.

`export` writes one typed record per line — `header` (the schema version), then
`epistemology`, `sessions`, every `belief`, `observation`, `tension` and `review` —
with every field parsed for other programs and the file's own text (`text`), so
that `import` into an empty vault gives back the files epimem wrote byte for byte
and a second export gives the same lines. Importing into a vault that already has
files merges each one by the rules of the merge drivers (`core.merge`), as if the
export came from a machine that never shared a commit with this one.

A record written by another program may carry fields and no `text`: the file is
then rendered from the fields, as epimem writes a new one. The import is `api/jsonl_import`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .. import __version__
from ..core import merge
from ..core.errors import InputError, VaultError
from ..core.model import Problem
from ..core.notes import (
    NoteError,
    belief_fields,
    parse_observations,
    parse_tension,
)
from ..core.reading import text as redacted_text
from ..store import sessions as sessions_file
from ..store.files import NotUTF8, read_text
from ..store.paths import note_entries

# the import half lives in api/jsonl_import; its names are this module's too, as before
from .jsonl_import import SCHEMA, TYPES, JsonlReport, import_jsonl, plan, read_records  # noqa: F401

if TYPE_CHECKING:
    from .service import Service


def _iso(v: Any) -> Any:
    return v.isoformat() if isinstance(v, date) else v


def _line(rec: dict) -> str:
    return json.dumps(rec, ensure_ascii=False, sort_keys=False, default=_iso)


# --- export --------------------------------------------------------------------------------

def records(mem: Service) -> Iterator[dict]:
    """The vault's records, in a fixed order (so two exports of one vault are identical), as
    every reader is shown them (`store.vault.Reader`, SPEC rules 21 and 23): each text redacted,
    whatever its file's state, and a belief whose hand edit breaks a rule as it was last
    committed, its record saying so in `refused`."""
    mem.vault.require()
    root = mem.root
    reader = mem.vault.reader(mem.today)
    patterns = reader.params.redact

    def read(rel: str, path: Path) -> str:
        try:
            return redacted_text(rel, read_text(path, rel), patterns)
        except NotUTF8 as e:
            raise unreadable(Problem(rel, e.line or 1, e.message)) from None

    yield {"type": "header", "schema": SCHEMA, "generator": f"epimem {__version__}"}
    ep = root / "epistemology.md"
    if ep.exists():
        yield {"type": "epistemology", "text": read("epistemology.md", ep)}  # exported as text, not read as rules
    sp = root / sessions_file.PATH
    if sp.exists():
        text = read(sessions_file.PATH, sp)
        rec: dict[str, Any] = {"type": "sessions"}
        try:
            rec.update({k: _iso(v) for k, v in sessions_file.loads(text).items()})
        except (ValueError, TypeError):
            rec["problem"] = "state/sessions.json does not parse"
        rec["text"] = text
        yield rec
    for e in sorted(note_entries(root / "beliefs"), key=lambda e: e.name):
        bid, rel = e.name[:-3], f"beliefs/{e.name}"
        try:
            raw: str | Problem = read_text(e.path, rel)
        except NotUTF8 as err:
            raw = Problem(rel, err.line or 1, err.message)  # shown as last committed, as `belief show` does
        shown, seen = reader.file(rel, raw)
        if isinstance(raw, Problem) and shown is None:
            raise unreadable(raw)  # never committed: no text to export, and leaving it out would lose it
        rec = {"type": "belief", "id": bid}
        b = seen.belief
        if b is not None:
            rec.update({k: _iso(v) for k, v in belief_fields(b).items()})
            rec["statement"] = b.statement
            rec["evidence"] = [{"date": _iso(ev.date), "kind": ev.kind, "link": ev.link, "note": ev.note}
                               for ev in b.evidence]
        elif seen.problem is not None:
            rec["problem"] = f"line {seen.problem.line}: {seen.problem.message}"
        if seen.refused is not None:
            rec["refused"] = str(seen.refused)
        rec["text"] = shown if shown is not None else redacted_text(rel, raw, patterns)
        yield rec
    for e in sorted(note_entries(root / "observations"), key=lambda e: e.name):
        text = read(f"observations/{e.name}", Path(e.path))
        pre, entries = merge.split_log(text)
        parsed = {o.id: o for o in parse_observations(text)[0]}
        for i, (oid, entry) in enumerate(entries):
            rec = {"type": "observation", "id": oid, "month": e.name[:-3]}
            o = parsed.get(oid)
            if o is not None:
                rec.update({"date": _iso(o.date), "evidence": o.evidence, "suggests": o.suggests,
                            "therefore": o.therefore, "connects": o.connects, "strength": o.strength,
                            "source": o.source, "session": o.session, "basis": o.basis,
                            "cited": list(o.cited)})
            if i == 0:
                rec["log_heading"] = pre
            rec["text"] = entry
            yield rec
    for e in sorted(note_entries(root / "tensions"), key=lambda e: e.name):
        tid = e.name[:-3]
        text = read(f"tensions/{e.name}", Path(e.path))
        rec = {"type": "tension", "id": tid}
        try:
            t = parse_tension(text, tid)
            rec.update({"date": _iso(t.date), "belief": t.belief, "status": t.status, "title": t.title,
                        "what_happened": t.what_happened, "evidence": list(t.evidence), "suggests": t.suggests,
                        "resolution": t.resolution})
            rec.update({k: v for k, v in (("successor", t.successor), ("rests_on", t.rests_on)) if v})
        except NoteError as err:
            rec["problem"] = f"line {err.line}: {err.message}"
        rec["text"] = text
        yield rec
    for e in sorted(note_entries(root / "reviews"), key=lambda e: e.name):
        yield {"type": "review", "date": e.name[:-3], "text": read(f"reviews/{e.name}", Path(e.path))}


def unreadable(p: Problem) -> VaultError:
    """An export refused for a file it cannot carry (bytes that are not UTF-8): the file named,
    nothing written, rather than an export that leaves the file out."""
    return VaultError(f"{p}, then export again (nothing was exported: leaving the file out would lose it)",
                      path=p.path, line=p.line)


def export(mem: Service, out: IO[str]) -> int:
    """Write the vault as JSON Lines to `out`; the number of records."""
    n = 0
    for rec in records(mem):
        out.write(_line(rec) + "\n")
        n += 1
    return n


def export_file(mem: Service, path: str | Path) -> tuple[Path, int]:
    """Write the export to the file `path` whole or not at all: (the file, the number of records).

    The text goes to a temporary file beside it, renamed over it at the end; a failure (a full
    disk, a vault that cannot be read) removes the temporary file, so nothing is left behind."""
    import os

    out = Path(path).expanduser()
    if out.is_dir() or not out.name or out.name in (".", ".."):
        raise InputError(f"'out' must be a file, and {path} is a folder: give a file name, "
                         f"e.g. {Path(path) / 'vault.jsonl'}", field="out", path=str(path))
    if not out.parent.is_dir():
        raise InputError(f"'out': the folder {out.parent} does not exist; create it first, or choose another",
                         field="out", path=str(path))
    tmp = out.with_name(f".{out.name}.epimem-tmp")
    try:
        with tmp.open("w", encoding="utf-8") as f:
            n = export(mem, f)
        os.replace(tmp, out)
    except OSError as e:
        raise InputError(f"'out': cannot write {out}: {e.strerror or e}", field="out", path=str(out)) from None
    finally:
        tmp.unlink(missing_ok=True)
    return out, n


