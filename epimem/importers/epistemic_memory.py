"""Import from `epistemic-memory`: the markdown protocol many people keep by hand.

Each belief is a heading followed by a metadata line
`` `conf:0.75 | first:2026-03-10 | confirmed:2026-03-25 | challenged:— | perm:durable` ``
and prose; a `tensions.md` of `## YYYY-MM-DD — title` entries with
`**Belief affected:**`, `**What happened:**`, `**Status:**` lines; an
`observations.md` of entries with `**Evidence:**`, `**Suggests:**`,
`**Therefore:**`, `**Connects to:**`, `**Strength:**`; and a
`session-counter.json`.

Parsing and mapping are pure (`plan_epistemic_memory`); every belief keeps its
text and numbers, whatever could not be mapped is listed in the report, and
the source files are never touched.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path

from ..core.errors import InputError, NotFound
from ..core.ids import slugify, text_key
from ..core.model import BASES, PERMANENCES, STRENGTHS, TENSION_STATUSES, Belief, Evidence, Observation, Tension
from ..core.params import DEFAULTS, Params
from ..core.redact import redact
from ..core.rules import observation_link
from . import markdown as md
from .migration import ImportReport, Migration, write_migration

SOURCE = "epistemic-memory import"
_META = re.compile(r"^[^\w]*\bconf\s*:", re.I)
NOT_PROFILE = {"tensions.md", "observations.md"}


def parse_meta(raw: str) -> tuple[dict[str, str], list[str]]:
    """`conf:0.75 | first:… | perm:durable` → ({key: value}, [problems])."""
    out: dict[str, str] = {}
    bad: list[str] = []
    text = re.sub(r"^[^\w]+", "", raw.strip())
    for part in text.split("|"):
        if not part.strip():
            continue
        key, sep, value = part.partition(":")
        if not sep:
            bad.append(f"metadata part {part.strip()!r} is not key:value")
            continue
        out[key.strip().lower()] = value.strip()
    return out, bad


def map_belief(title: str, meta: dict[str, str], statement: str, *, where: str, section: str,
               today: date, params: Params, taken: set[str]) -> tuple[Belief | None, list[str]]:
    """One profile belief as a vault belief, and what could not be mapped about it."""
    notes: list[str] = []
    try:
        conf = float(meta.get("conf", ""))
    except ValueError:
        return None, [f"{where}: '{title}': conf {meta.get('conf')!r} is not a number; belief not imported"]
    if conf > 1.0:
        conf = conf / 100.0  # some profiles write conf:82
    if not 0.0 <= conf <= 1.0:
        return None, [f"{where}: '{title}': conf {meta.get('conf')} is outside 0–1; belief not imported"]
    conf = round(conf, 2)
    dates: dict[str, date | None] = {}
    for key in ("first", "confirmed", "challenged"):
        try:
            dates[key] = md.parse_date(meta.get(key))
        except ValueError as e:
            dates[key] = None
            notes.append(f"{where}: '{title}': {key} {e}; left empty")
    if dates["first"] is None:
        dates["first"] = dates["confirmed"] or today
        notes.append(f"{where}: '{title}': no first date; set to {dates['first']}")
    perm = meta.get("perm", meta.get("permanence", "unknown")).strip().lower() or "unknown"
    if perm not in PERMANENCES:
        notes.append(f"{where}: '{title}': permanence {perm!r} is not one of {', '.join(PERMANENCES)}; "
                     "set to unknown")
        perm = "unknown"
    basis = meta.get("basis", "").strip().lower()
    if basis and basis not in BASES:
        notes.append(f"{where}: '{title}': basis {basis!r} unknown; chosen from the confidence")
        basis = ""
    if not basis:
        # Only a fact may exceed 0.90 (rule 2); the protocol holds everything
        # else as interpretation.
        basis = "fact" if conf > 0.90 else "interpretive"
    kind = meta.get("kind", "").strip().lower() or md.kind_from(section, params.kinds) or "trait"
    for key in sorted(set(meta) - {"conf", "first", "confirmed", "challenged", "perm", "permanence",
                                   "basis", "kind"}):
        notes.append(f"{where}: '{title}': metadata {key}:{meta[key]} has no place in a belief; "
                     "kept in its evidence line")
    bid = md.unique(slugify(title), taken)
    origin = (f"imported from {where} (conf {conf:.2f}, first {dates['first']}, confirmed "
              f"{dates['confirmed'] or '—'}, challenged {dates['challenged'] or '—'}, perm {perm})")
    extra = {k: v for k, v in meta.items() if k not in ("conf", "first", "confirmed", "challenged", "perm",
                                                        "permanence", "basis", "kind")}
    if extra:
        origin += "; " + ", ".join(f"{k}:{v}" for k, v in extra.items())
    tags = (slugify(section),) if section and not md.kind_from(section, params.kinds) else ()
    b = Belief(id=bid, title=title, kind=kind, basis=basis, confidence=conf, permanence=perm,
               first=dates["first"] or today, confirmed=dates["confirmed"], challenged=dates["challenged"],
               tags=tags, statement=statement or title,
               evidence=(Evidence(today, "imported", "", origin),))
    return b, notes


def parse_profile(name: str, text: str, *, today: date, params: Params,
                  taken: set[str]) -> tuple[list[Belief], list[str]]:
    beliefs: list[Belief] = []
    notes: list[str] = []
    for sec in md.sections(md.ast(text)):
        meta_idx, meta_raw = None, ""
        for i, tok in enumerate(sec.tokens):
            if tok.get("type") != "paragraph":
                continue
            kids = tok.get("children") or []
            # The metadata is a code span on a line of its own; prose may follow
            # on the next line of the same paragraph.
            brk = next((j for j, c in enumerate(kids) if c.get("type") in ("softbreak", "linebreak")), len(kids))
            line = kids[:brk]
            codes = [c for c in line if c.get("type") == "codespan"]
            if len(codes) == 1 and _META.match(codes[0].get("raw", "")) and \
                    not md.inline([c for c in line if c is not codes[0]]).strip(" ━─┄"):
                meta_idx, meta_raw = i, codes[0]["raw"]
                after = kids[brk + 1:]
                break
        if meta_idx is None:
            continue
        meta, bad = parse_meta(meta_raw)
        notes += [f"{name}: '{sec.title}': {b}" for b in bad]
        rest = [{"type": "paragraph", "children": after}] if after else []
        prose = md.render(sec.tokens[:meta_idx] + rest + sec.tokens[meta_idx + 1:])
        b, n = map_belief(sec.title, meta, prose, where=name, section=sec.parent if sec.level > 2 else "",
                          today=today, params=params, taken=taken)
        notes += n
        if b is not None:
            beliefs.append(b)
    return beliefs, notes


def _match_belief(label: str, beliefs: list[Belief]) -> Belief | None:
    if not label:
        return None
    name = re.sub(r"\(.*?\)", "", label)
    name = re.sub(r"[\[\]`*]", "", name).strip().strip("\"'“”")
    key = text_key(name)
    for b in beliefs:
        if key in (text_key(b.title), text_key(b.id)):
            return b
    return None


def parse_tensions(text: str, beliefs: list[Belief], *, name: str = "tensions.md") -> tuple[list[Tension], list[str]]:
    out: list[Tension] = []
    notes: list[str] = []
    taken: set[str] = set()
    for sec in md.sections(md.ast(text)):
        m = re.match(r"^(\d{4}-\d{2}-\d{2})\s*[—–\-:]+\s*(.+)$", sec.title)
        if not m:
            continue
        f, _ = md.fields(sec.tokens)
        title = m.group(2).strip()
        where = f"{name}: '{sec.title}'"
        target = _match_belief(f.get("belief affected", ""), beliefs)
        if target is None:
            notes.append(f"{where}: belief {f.get('belief affected', '(none given)')!r} is not among the "
                         "imported beliefs; tension not imported")
            continue
        status = (f.get("status", "unresolved").split() or ["unresolved"])[0].lower().strip(".*")
        if status not in TENSION_STATUSES:
            notes.append(f"{where}: status {f.get('status')!r} is not one of "
                         f"{', '.join(TENSION_STATUSES)}; set to unresolved")
            status = "unresolved"
        d = date.fromisoformat(m.group(1))
        tid = md.unique(f"{d.isoformat()}-{slugify(title, 50)}", taken)
        known = {"belief affected", "what happened", "status", "what this suggests", "resolution"}
        for k in sorted(set(f) - known):
            notes.append(f"{where}: field '{k}' has no place in a tension; left out")
        out.append(Tension(id=tid, date=d, belief=target.id, status=status, title=title,
                           what_happened=f.get("what happened", ""), suggests=f.get("what this suggests", ""),
                           resolution=f.get("resolution", ""), path=f"tensions/{tid}.md"))
    return out, notes


def parse_observation_log(text: str, beliefs: list[Belief], *, name: str = "observations.md",
                          params: Params = DEFAULTS) -> tuple[list[Observation], list[str]]:
    out: list[Observation] = []
    notes: list[str] = []
    ids: set[str] = set()
    for sec in md.sections(md.ast(text)):
        f, _ = md.fields(sec.tokens)
        if "evidence" not in f:
            continue
        where = f"{name}: '{sec.title}'"
        try:
            d = md.parse_date(f.get("date") or sec.title)
        except ValueError:
            d = None
        if d is None:
            notes.append(f"{where}: no date (in the heading or a **Date:** line); observation not imported")
            continue
        strength = (f.get("strength", "").split() or [""])[0].lower().strip(".*,")
        if strength not in STRENGTHS:
            notes.append(f"{where}: strength {f.get('strength')!r} is not one of {', '.join(STRENGTHS)}; "
                         "recorded as single")
            strength = "single"
        basis = (f.get("basis", "behavioral").split() or ["behavioral"])[0].lower()
        if basis not in BASES:
            notes.append(f"{where}: basis {f.get('basis')!r} unknown; recorded as behavioral")
            basis = "behavioral"
        connects = "new"
        label = f.get("connects to", f.get("connects", ""))
        if label and label.strip().lower() not in md.NEVER | {"new"}:
            target = _match_belief(label, beliefs)
            if target is None:
                notes.append(f"{where}: connects to {label!r}, which is not among the imported beliefs; "
                             "recorded unconnected")
            else:
                connects = target.id
        evidence = " ".join(f["evidence"].split())
        digest = hashlib.sha1(f"import\n{text_key(evidence)}".encode()).hexdigest()
        oid = next(f"obs-{d:%Y%m%d}-{digest[:n]}" for n in (4, 6, 8, 12, 40)
                   if f"obs-{d:%Y%m%d}-{digest[:n]}" not in ids)
        ids.add(oid)
        out.append(Observation(id=oid, date=d, evidence=redact(evidence, params.redact), strength=strength,
                               basis=basis, connects=connects,
                               suggests=redact(f.get("suggests", ""), params.redact),
                               therefore=redact(f.get("therefore", ""), params.redact),
                               source=SOURCE, path=f"observations/{d:%Y-%m}.md"))
    return out, notes


def parse_counter(text: str) -> tuple[dict | None, list[str]]:
    try:
        raw = json.loads(text)
        if not isinstance(raw, dict):
            raise ValueError("not an object")
        out = {"count": int(raw.get("count") or 0), "next_review_at": raw.get("next_review_at")}
        for k in ("last_session", "last_review"):
            out[k] = md.parse_date(raw.get(k)) if isinstance(raw.get(k), str) else None
        if out["next_review_at"] is not None:
            out["next_review_at"] = int(out["next_review_at"])
        return out, []
    except (ValueError, TypeError) as e:
        return None, [f"session-counter.json: not a session counter ({e}); not imported"]


def plan_epistemic_memory(files: dict[str, str], *, today: date, params: Params = DEFAULTS,
                          existing: Sequence[Belief] = ()) -> Migration:
    """Map the protocol's files (name → text) onto vault values. Pure."""
    notes: list[str] = []
    unmapped: list[str] = []
    taken = {b.id for b in existing}
    have = {text_key(b.title): b for b in existing}
    beliefs: list[Belief] = []
    skipped_existing: list[str] = []
    for name in sorted(files):
        if not name.lower().endswith(".md") or name.lower() in NOT_PROFILE:
            continue
        bs, n = parse_profile(name, files[name], today=today, params=params, taken=taken)
        unmapped += n
        for b in bs:
            if text_key(b.title) in have:
                skipped_existing.append(b.title)
                continue
            b = replace(b, title=redact(b.title, params.redact), statement=redact(b.statement, params.redact))
            beliefs.append(b)
            have[text_key(b.title)] = b
        if not bs and name.lower() not in ("index.md", "readme.md", "epistemic-protocol.md"):
            notes.append(f"{name}: no belief headings with a conf: line; nothing taken from it")
    if skipped_existing:
        notes.append(f"{len(skipped_existing)} belief(s) already in the vault under the same title were "
                     "left as they are: " + ", ".join(skipped_existing[:10])
                     + ("…" if len(skipped_existing) > 10 else ""))
    known = beliefs + list(existing)
    obs: list[Observation] = []
    if "observations.md" in {k.lower() for k in files}:
        name = next(k for k in files if k.lower() == "observations.md")
        obs, n = parse_observation_log(files[name], known, name=name, params=params)
        unmapped += n
    tensions: list[Tension] = []
    if "tensions.md" in {k.lower() for k in files}:
        name = next(k for k in files if k.lower() == "tensions.md")
        tensions, n = parse_tensions(files[name], known, name=name)
        unmapped += n
    sessions = None
    if "session-counter.json" in files:
        sessions, n = parse_counter(files["session-counter.json"])
        unmapped += n
    # Observations become each imported belief's evidence, oldest first, before
    # the line that records the import itself.
    linked: dict[str, list[Evidence]] = {}
    for o in sorted(obs, key=lambda o: o.date):
        linked.setdefault(o.connects, []).append(Evidence(o.date, o.strength, observation_link(o), o.evidence))
    beliefs = [replace(b, evidence=tuple(linked.get(b.id, ())) + b.evidence) for b in beliefs]
    return Migration(tuple(beliefs), tuple(obs), tuple(tensions), sessions, tuple(unmapped), tuple(notes))


def read_profile_dir(path: Path) -> dict[str, str]:
    if not path.is_dir():
        raise NotFound(f"{path} is not a directory", path=str(path))
    files = {}
    for p in sorted(path.iterdir()):
        if p.is_file() and (p.suffix.lower() == ".md" or p.name == "session-counter.json"):
            try:
                files[p.name] = p.read_text(encoding="utf-8")
            except UnicodeDecodeError as e:
                raise InputError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start}); nothing was imported",
                                 path=str(p)) from None
    return files


def import_epistemic_memory(memory, path: str | Path, *, dry_run: bool = False) -> ImportReport:
    path = Path(path).expanduser()
    files = read_profile_dir(path)
    existing, _ = memory.vault.load_beliefs() if memory.vault.exists() else ([], [])
    m = plan_epistemic_memory(files, today=memory.write_today, params=memory.params, existing=existing)
    subject = (f"import: {len(m.beliefs)} beliefs, {len(m.observations)} observations, "
               f"{len(m.tensions)} tensions from epistemic-memory ({path.name})")
    return write_migration(memory, m, subject=subject, dry_run=dry_run, importer="epistemic-memory",
                           source=path.name)
