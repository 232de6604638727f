"""Importing an export (SPEC §12): `epimem import jsonl`'s reading, the rules' admission of each
record (rule 18) and the write of its files into the vault, merged with what the vault holds.

Under `review: required` the files wait in the inbox, one proposal per belief (`groups`), and
accepting them is this same write (`accept_records`, `write_files` with `dry=`/`also=`). Apart
from `api/portability` (the export, which names the package's version) so that the inbox can
call it without importing the package root.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import merge, rules
from ..core.errors import InputError, VaultError
from ..core.ids import check_id, check_tension_id
from ..core.model import Belief, Evidence, Observation
from ..core.notes import (
    NoteError,
    link_target,
    parse_belief,
    parse_observations,
    parse_tension,
    render_belief,
    render_observation,
    render_tension,
    update_belief_text,
)
from ..core.params import DEFAULTS, Params, rules_file_problems
from ..core.vocabulary import date_of
from ..store import sessions as sessions_file
from ..store import transaction as tx
from ..store.files import NotUTF8, read_text, stat_key
from ..store.paths import note_entries

if TYPE_CHECKING:
    from .service import Service

SCHEMA = 1
TYPES = ("header", "epistemology", "sessions", "belief", "observation", "tension", "review")
_MONTH = re.compile(r"^\d{4}-\d{2}\Z")  # `\Z`: `$` took "2026-11\n", a file name with a newline


# --- import --------------------------------------------------------------------------------

@dataclass
class JsonlReport:
    files: dict[str, str] = field(default_factory=dict)   # path -> "created" | "merged" | "unchanged"
    counts: dict[str, int] = field(default_factory=dict)
    commit: str | None = None
    unmapped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # what the rules kept out (rule 18)
    proposed: tuple[str, ...] = ()  # `review: required`: the proposals written to the inbox instead


def read_records(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, record) of a JSONL file; a bad line is an error naming its line."""
    try:
        f = path.open(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}", path=str(path)) from None
    with f:
        for n, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError as e:
                raise InputError(f"not JSON: {e.msg} (column {e.colno})", path=str(path), line=n) from None
            if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
                raise InputError("each line must be a JSON object with a 'type'", path=str(path), line=n)
            yield n, rec


def _text(rec: dict, key: str = "text") -> str | None:
    v = rec.get(key)
    return v if isinstance(v, str) else None


def _belief_text(rec: dict) -> str:
    text = _text(rec)
    if text is not None:
        return text
    ev = tuple(Evidence(date_of(e.get("date"), "'date'"), str(e.get("kind") or "imported"), str(e.get("link") or ""),
                        str(e.get("note") or "")) for e in rec.get("evidence") or [])
    b = Belief(id=rec["id"], title=str(rec.get("title") or ""), kind=str(rec.get("kind") or "fact"),
               basis=str(rec.get("basis") or "interpretive"), confidence=float(rec.get("confidence") or 0.2),
               permanence=str(rec.get("permanence") or "unknown"),
               first=date_of(rec.get("first"), "'first'") or date.today(),
               confirmed=date_of(rec.get("confirmed"), "'confirmed'"),
               challenged=date_of(rec.get("challenged"), "'challenged'"), status=str(rec.get("status") or "active"),
               tags=tuple(rec.get("tags") or ()), scope=str(rec.get("scope") or "global"),
               pinned=bool(rec.get("pinned")), supersedes=tuple(rec.get("supersedes") or ()),
               depends_on=tuple(link_target(str(x)) for x in rec.get("depends_on") or ()),
               statement=str(rec.get("statement") or ""), evidence=ev,
               confirmed_session=str(rec.get("confirmed_session") or ""))
    return render_belief(b)


def _observation_text(rec: dict) -> str:
    text = _text(rec)
    if text is not None:
        return text
    o = Observation(id=rec["id"], date=date_of(rec.get("date"), "'date'") or date.today(),
                    evidence=str(rec.get("evidence") or ""), strength=str(rec.get("strength") or "single"),
                    basis=str(rec.get("basis") or "behavioral"), connects=str(rec.get("connects") or "new"),
                    suggests=str(rec.get("suggests") or ""), therefore=str(rec.get("therefore") or ""),
                    source=str(rec.get("source") or "import"), session=str(rec.get("session") or ""),
                    cited=tuple(str(c) for c in rec.get("cited") or () if isinstance(c, str)))
    return render_observation(o)


def _admit_belief(rel: str, bid: str, text: str, params: Params, today: date,
                  rep: JsonlReport) -> str | None:
    """Rule 18 for an imported belief file: one that does not parse, or breaks a rule, is
    refused; one above its basis's cap is lowered to it, with an evidence line saying so."""
    try:
        b = parse_belief(text, bid, rel)
    except NoteError as e:
        rep.refused.append(f"{rel}: line {e.line}: {e.message}: not imported")
        return None
    ok, why = rules.admit(b, params, today)
    if ok is None:
        rep.refused.append(f"{rel}: {why}")
        return None
    if ok is b:
        return text
    rep.notes.append(f"{rel}: {why}")
    return update_belief_text(text, b, replace(ok, evidence=b.evidence), ok.evidence[len(b.evidence):])


def _admit_entry(rel: str, entry: str, today: date, rep: JsonlReport) -> bool:
    obs, bad = parse_observations(entry, rel)
    if bad or not obs:
        rep.refused.append(f"{rel}: an entry that does not parse ({bad[0] if bad else 'no observation'}): "
                           "not imported")
        return False
    late = [o for o in obs if o.date > today]
    if late:
        rep.refused.append(f"{rel}: {late[0].id}: " + rules.future_date_message("dated", late[0].date, today)
                           + ": not imported")
        return False
    return True


def _admit_tension(rel: str, tid: str, text: str, today: date, rep: JsonlReport) -> bool:
    try:
        t = parse_tension(text, tid)
    except NoteError as e:
        rep.refused.append(f"{rel}: line {e.line}: {e.message}: not imported")
        return False
    if t.date > today:
        rep.refused.append(f"{rel}: " + rules.future_date_message("'date'", t.date, today) + ": not imported")
        return False
    return True


def _admit_sessions(text: str, rep: JsonlReport, today: date) -> bool:
    """Rule 18 for an imported session counter: the record's `text` is written as it comes (and
    `state/sessions.json` is not redacted: numbers only), so it must read as a counter, or a
    crafted export leaves the vault a counter its own `validate` refuses; and none of its days
    may be after today (rule 20: a review or a session dated ahead silences rules 8 and 10)."""
    try:
        counter = sessions_file.from_raw(json.loads(text))
    except (ValueError, TypeError, RecursionError) as e:
        rep.refused.append(f"{sessions_file.PATH}: not a session counter ({e}): the vault's counter was kept")
        return False
    late = rules.counter_future_dates(counter, today)
    if late:
        rep.refused.append(f"{sessions_file.PATH}: " + rules.future_date_message(f"'{late[0][0]}'", late[0][1], today)
                           + ": the vault's counter was kept")
        return False
    return True


def plan(path: Path, params: Params = DEFAULTS, today: date | None = None) -> tuple[dict[str, str], JsonlReport]:
    """The files a JSONL export holds (vault path -> text), what could not be mapped, and what
    the rules refused or lowered (rule 18: caps, validation; redaction is the write path's)."""
    today = today or date.today()
    rep = JsonlReport()
    files: dict[str, str] = {}
    logs: dict[str, tuple[str, list[str]]] = {}
    seen_header = False
    for n, rec in read_records(path):
        kind = rec["type"]
        try:
            if kind == "header":
                schema = rec.get("schema")
                if not isinstance(schema, int) or schema > SCHEMA:
                    raise InputError(f"schema version {schema!r} is newer than this epimem reads ({SCHEMA}); "
                                     "upgrade epimem", path=str(path), line=n)
                seen_header = True
            elif kind == "epistemology" and _text(rec) is not None:
                wrong = rules_file_problems(rec["text"])
                if wrong:
                    rep.refused.append(f"epistemology.md: {wrong[0]}: the vault's rules were kept")
                    continue
                files["epistemology.md"] = rec["text"]
            elif kind == "sessions":
                text = _text(rec)
                if text is None:
                    text = sessions_file.dump(sessions_file.load(rec))
                if not _admit_sessions(text, rep, today):
                    continue
                files[sessions_file.PATH] = text
            elif kind == "belief":
                bid = check_id(str(rec.get("id")))
                admitted = _admit_belief(f"beliefs/{bid}.md", bid, _belief_text(rec), params, today, rep)
                if admitted is None:
                    continue
                files[f"beliefs/{bid}.md"] = admitted
            elif kind == "observation":
                month = str(rec.get("month") or str(rec.get("date") or "")[:7])
                if not _MONTH.match(month):
                    raise InputError(f"observation {rec.get('id')!r}: 'month' must be YYYY-MM", line=n)
                if not re.fullmatch(r"obs-[\w\-]+", str(rec.get("id"))):
                    raise InputError(f"invalid observation id {rec.get('id')!r}", line=n)
                rel = f"observations/{month}.md"
                pre, entries = logs.setdefault(rel, (f"# Observations {month}\n", []))
                if isinstance(rec.get("log_heading"), str):
                    pre = rec["log_heading"]
                entry = _observation_text(rec)
                if not _admit_entry(rel, entry, today, rep):
                    logs[rel] = (pre, entries)
                    continue
                logs[rel] = (pre, entries + [entry])
            elif kind == "tension":
                tid = check_tension_id(str(rec.get("id")))
                text = _text(rec)
                if text is None:
                    from ..core.model import Tension

                    text = render_tension(Tension(
                        id=tid, date=date_of(rec.get("date"), "'date'") or date.today(),
                        belief=check_id(str(rec.get("belief"))), status=str(rec.get("status") or "unresolved"),
                        title=str(rec.get("title") or ""), what_happened=str(rec.get("what_happened") or ""),
                        evidence=tuple(rec.get("evidence") or ()), suggests=str(rec.get("suggests") or ""),
                        resolution=str(rec.get("resolution") or ""),
                        successor=check_id(str(rec["successor"])) if rec.get("successor") else "",
                        rests_on=check_id(str(rec["rests_on"])) if rec.get("rests_on") else ""))
                if not _admit_tension(f"tensions/{tid}.md", tid, text, today, rep):
                    continue
                files[f"tensions/{tid}.md"] = text
            elif kind == "review" and _text(rec) is not None:
                day = date_of(rec.get("date"), "'date'")
                if day is None:
                    raise InputError("a review needs its 'date'", line=n)
                if day > today:
                    rep.refused.append(f"reviews/{day.isoformat()}.md: "
                                       + rules.future_date_message("'date'", day, today) + ": not imported")
                    continue
                files[f"reviews/{day.isoformat()}.md"] = rec["text"]
            else:
                rep.unmapped.append(f"line {n}: a {kind!r} record" + ("" if kind in TYPES else " (unknown type)"))
                continue
        except (ValueError, TypeError, KeyError) as e:
            raise InputError(f"{kind} record: {e}", path=str(path), line=n) from None
        except InputError as e:
            if e.line is None:
                e.line = n
            if e.path is None:
                e.path = str(path)
            raise
        rep.counts[kind] = rep.counts.get(kind, 0) + 1
    if not seen_header:
        rep.notes.append("no header record: read as schema 1")
    for rel, (pre, entries) in logs.items():
        files[rel] = merge.join_log(pre, entries)
    rep.counts.pop("header", None)
    return files, rep


def import_jsonl(mem: Service, path: str | Path, *, dry_run: bool = False) -> JsonlReport:
    """Recreate an export in the vault as one commit; a file the vault already has is merged
    with the imported one by the merge drivers' rules. The vault must exist, as for every other
    importer (`epimem init` makes one): a mistyped `--vault` is said, not created. With `review:
    required` the files wait in the inbox instead, one proposal per belief (`groups`)."""
    from . import common, import_review

    path = Path(path).expanduser()
    if not dry_run:
        common.writable(mem)
    files, rep = plan(path, mem.params if mem.vault.exists() else DEFAULTS, mem.write_today)
    if not dry_run and files and import_review.required(mem):
        files = _redacted(mem, files, rep)
        # what the vault holds already, byte for byte, is not a change to ask about
        files = {rel: text for rel, text in files.items() if _on_disk(mem.root / rel, rel) != text}
        rep.proposed, dup, rep.commit = import_review.propose(mem, "jsonl", path.name, groups(files))
        if dup:
            rep.notes.append(f"{dup} of these proposals are in the inbox already (waiting, or rejected): "
                             "not asked twice")
        return rep
    return write_files(mem, files, rep, subject=f"import: {path.name} ({_summary(rep.counts)})", dry_run=dry_run)


def _on_disk(p: Path, rel: str) -> str | None:
    """The vault's own text of `rel` (None: it has none); a file that is not UTF-8 refuses the
    import, named, since it can be neither merged nor replaced without losing it."""
    if not p.is_file():
        return None
    try:
        return read_text(p, rel)
    except NotUTF8 as e:
        raise VaultError(f"{rel}:{e.line or 1}: {e.message}, then import again (nothing was imported)",
                         path=rel, line=e.line) from None


def _redacted(mem: Service, files: dict[str, str], rep: JsonlReport) -> dict[str, str]:
    from ..core.scrub import scrub

    patterns = mem.params.redact if mem.vault.exists() else ()
    secret = [rel for rel, text in files.items() if scrub(rel, text, patterns) != text]
    if secret:
        rep.notes.append(f"what looks like a secret was redacted in {len(secret)} file"
                         f"{'s' if len(secret) != 1 else ''}: {', '.join(secret[:10])}")
    return {rel: scrub(rel, text, patterns) for rel, text in files.items()}


def write_files(mem: Service, files: dict[str, str], rep: JsonlReport, *, subject: str, dry_run: bool = False,
                dry: list[tx.Write] | None = None,
                also: tuple[Callable[[], list[tx.Write]], str, str] | None = None) -> JsonlReport:
    """The files of an import written into the vault, each merged with the one it has: one
    commit. `dry`: the writes in that list, nothing committed (the inbox's preview); `also`:
    (the proposals' removal, the op, a subject prefix) in the same commit (an inbox accept)."""
    from . import common, hand_edits

    empty = not mem.vault.exists() or _is_fresh(mem)
    files = _redacted(mem, files, rep)
    writes: list[tx.Write] = []
    with (common.lock(mem) if not dry_run and dry is None else nullcontext()):
        if not dry_run and dry is None:
            # The user's uncommitted edits to these files through rule 18 first, as every writer
            # does: a valid one is committed as theirs, one that breaks a rule or does not parse
            # refuses the import naming it, rather than being merged (coerced) and committed.
            hand_edits.settle(mem, list(files))  # a file deleted by hand too: its deletion is theirs
        # an accept's removals first, under the lock: a proposal another accept took is said to be gone
        more = also[0]() if also is not None and dry is None else []
        for rel, text in files.items():
            p = mem.root / rel
            cur = _on_disk(p, rel)
            if cur == text:
                rep.files[rel] = "unchanged"
                continue
            if cur is None or (empty and rel in ("epistemology.md", sessions_file.PATH)):
                new = text
                rep.files[rel] = "created" if cur is None else "replaced"
            elif rel == "epistemology.md":
                rep.notes.append("epistemology.md differs from the vault's; the vault's rules were kept")
                continue
            else:
                m = merge.merge_file(rel, "", cur, text, params=mem.params, load_sessions=sessions_file.loads,
                                     dump_sessions=sessions_file.dump)
                if m is None:
                    continue
                new = m.text
                if new == cur:  # the vault's file holds the imported one already (it moved on since)
                    rep.files[rel] = "unchanged"
                    rep.notes += [f"{rel}: {n}" for n in m.notes]
                    continue
                rep.files[rel] = "merged"
                rep.notes += [f"{rel}: {n}" for n in m.notes]
            writes.append(tx.replace(rel, new, stat_key(p)))
        if dry is not None:
            dry.extend(writes)
            return rep
        op = "import"
        if also is not None:
            op, prefix = also[1], also[2]
            writes, subject = [*writes, *more], prefix + subject
        if dry_run or not writes:
            if not writes:
                rep.notes.append("nothing new to import")
            return rep
        rep.commit = common.commit(mem, writes, subject, op=op,
                                   beliefs=[Path(r).stem for r in files if r.startswith("beliefs/")][:200])
    return rep


# --- under review: one proposal per belief, and back ----------------------------------------------

def groups(files: dict[str, str]) -> list[Any]:
    """An export's files as proposals (`api/import_review.Group`): each belief's file with the
    log entries that connect to it and the tensions about it; everything else in one more."""
    from ..core.ids import text_key
    from ..core.inbox import Record
    from .import_review import Group

    beliefs = sorted(rel for rel in files if rel.startswith("beliefs/"))
    mine: dict[str, list[Record]] = {Path(rel).stem: [Record(rel, files[rel])] for rel in beliefs}
    rest: list[Record] = []
    for rel in sorted(files):
        text = files[rel]
        if rel.startswith("observations/"):
            pre, entries = merge.split_log(text)
            by: dict[str, list[str]] = {}
            for _oid, entry in entries:
                obs = parse_observations(entry)[0]
                owner = obs[0].connects if obs and obs[0].connects in mine else ""
                by.setdefault(owner, []).append(entry)
            for owner, es in by.items():
                rec = Record(rel, merge.join_log(pre, es))
                (mine[owner] if owner else rest).append(rec)
        elif rel.startswith("tensions/"):
            try:
                owner = parse_tension(text, Path(rel).stem).belief
            except NoteError:
                owner = ""
            (mine[owner] if owner in mine else rest).append(Record(rel, text))
        elif not rel.startswith("beliefs/"):
            rest.append(Record(rel, text))
    out = []
    for bid, recs in mine.items():
        try:
            b = parse_belief(recs[0].text, bid, recs[0].path)
            words = f"{text_key(b.title)}\n{text_key(b.statement)}"
        except NoteError:
            words = text_key(recs[0].text)
        out.append(Group(f"belief\n{bid}\n{words}", tuple(recs)))
    if rest:
        out.append(Group("rest\n" + "\n".join(f"{r.path}\n{text_key(r.text)}" for r in rest), tuple(rest)))
    return out


def accept_records(mem: Service, records: tuple[Any, ...], *, subject: str, dry: list[tx.Write] | None = None,
                   also: tuple[Callable[[], list[tx.Write]], str, str] | None = None) -> JsonlReport:
    """Proposed files of an export, admitted again by today's rules (rule 18: caps, validation,
    dates; redaction in `write_files`) and written as the import writes them. Anything the rules
    refuse today refuses the whole accept (InputError), so what is accepted is what was shown."""
    from ..core.errors import Conflict

    params, today = mem.params, mem.write_today
    rep = JsonlReport()
    files: dict[str, str] = {}
    # Several proposals accepted at once each hold their entries of one month's log: one log again.
    logs: dict[str, tuple[str, list[str]]] = {}
    for r in records:
        if r.path.startswith("observations/"):
            pre, entries = merge.split_log(r.text)
            logs.setdefault(r.path, (pre, []))[1].extend(e for _, e in entries)
    merged = [type(r)(r.path, merge.join_log(*logs[r.path])) for r in records if r.path.startswith("observations/")]
    records = tuple(dict.fromkeys([r for r in records if not r.path.startswith("observations/")]
                                  + list({m.path: m for m in merged}.values())))
    for r in records:
        rel, text = r.path, r.text
        if rel.startswith("beliefs/"):
            admitted = _admit_belief(rel, Path(rel).stem, text, params, today, rep)
            if admitted is not None:
                files[rel] = admitted
        elif rel.startswith("observations/"):
            pre, entries = merge.split_log(text)
            if all(_admit_entry(rel, e, today, rep) for _, e in entries) and entries:
                files[rel] = text
            elif not entries:
                rep.refused.append(f"{rel}: no observation in it")
        elif rel.startswith("tensions/"):
            if _admit_tension(rel, Path(rel).stem, text, today, rep):
                files[rel] = text
        elif rel == "epistemology.md":
            wrong = rules_file_problems(text)
            if wrong:
                rep.refused.append(f"epistemology.md: {wrong[0]}")
            else:
                files[rel] = text
        elif rel == sessions_file.PATH:
            if _admit_sessions(text, rep, today):
                files[rel] = text
        elif rel.startswith("reviews/") and (day := rules.review_ahead(rel, today)) is not None:
            rep.refused.append(f"{rel}: " + rules.future_date_message("'date'", day, today))
        else:
            files[rel] = text
    if rep.refused:
        raise Conflict(f"the rules refuse it today: {rep.refused[0]}; nothing was written")
    return write_files(mem, files, rep, subject=subject, dry=dry, also=also)


def _summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {k}{'s' if n != 1 and k not in ('sessions', 'epistemology') else ''}"
                     for k, n in counts.items()) or "nothing"


def _is_fresh(mem: Service) -> bool:
    """A vault `init` made and nothing wrote to since: its rules and counter are the template's."""
    root = mem.root
    return not any(note_entries(root / d) for d in ("beliefs", "observations", "tensions", "reviews"))

