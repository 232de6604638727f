"""Migration into a vault from a hand-kept profile, and from a plain memory file.

`epistemic-memory`: the markdown protocol many people keep by hand — each
belief a heading followed by a metadata line
`` `conf:0.75 | first:2026-03-10 | confirmed:2026-03-25 | challenged:— | perm:durable` ``
and prose, a `tensions.md` of `## YYYY-MM-DD — title` entries with
`**Belief affected:**`, `**What happened:**`, `**Status:**` lines, an
`observations.md` of entries with `**Evidence:**`, `**Suggests:**`,
`**Therefore:**`, `**Connects to:**`, `**Strength:**`, and a
`session-counter.json`.

`claude-memory`: a bullet-list memory file (CLAUDE.md, MEMORY.md): each
bullet becomes a belief at speculative confidence, basis self-report, for the
user to confirm.

Parsing (mistune's AST, so a heading inside a code block is not a heading)
and mapping are pure; `import_*` writes everything under the vault lock as
one commit. Every belief keeps its text and numbers; whatever could not be
mapped is listed in the report, and the source files are never touched.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from ..core.ids import slugify
from ..core.model import BASES, PERMANENCES, STRENGTHS, TENSION_STATUSES, Belief, Evidence, Observation, Tension
from ..core.params import DEFAULTS, Params
from ..core.redact import redact
from ..core.rules import observation_link

SOURCE = "epistemic-memory import"
NEVER = {"", "—", "–", "-", "--", "---", "never", "n/a", "na", "none", "null"}
SPECULATIVE = 0.20
_META = re.compile(r"^[^\w]*\bconf\s*:", re.I)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_LABEL = re.compile(r"^\*\*(?P<label>[^*]+?)\s*:?\s*\*\*\s*:?\s*(?P<value>.*)$")
NOT_PROFILE = {"tensions.md", "observations.md"}


@dataclass(frozen=True)
class Migration:
    beliefs: tuple[Belief, ...] = ()
    observations: tuple[Observation, ...] = ()
    tensions: tuple[Tension, ...] = ()
    sessions: dict | None = None
    unmapped: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


# --- markdown helpers ----------------------------------------------------------------------

def _ast(text: str) -> list[dict]:
    import mistune

    return mistune.create_markdown(renderer=None)(text)


def _render(tokens: list[dict]) -> str:
    from mistune.core import BlockState
    from mistune.renderers.markdown import MarkdownRenderer

    return MarkdownRenderer()(tokens, BlockState()).strip()


def _inline(children: list[dict] | None, marks: bool = False) -> str:
    """Inline tokens as text; with `marks`, strong keeps its `**` and breaks are newlines."""
    out = []
    for c in children or []:
        t = c.get("type")
        if t in ("text", "codespan", "inline_html"):
            out.append(c.get("raw", ""))
        elif t in ("softbreak", "linebreak"):
            out.append("\n" if marks else " ")
        elif t == "strong" and marks:
            out.append("**" + _inline(c.get("children")) + "**")
        else:
            out.append(_inline(c.get("children"), marks))
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
            title = " ".join(_inline(tok.get("children")).split())
            while stack and stack[-1][0] >= level:
                stack.pop()
            out.append(Section(level, title, stack[-1][1] if stack else ""))
            stack.append((level, title))
        elif out:
            out[-1].tokens.append(tok)
    return out


def _fields(tokens: list[dict]) -> tuple[dict[str, str], list[dict]]:
    """`**Label:** value` lines of a section (lower-case labels), and the other tokens."""
    found: dict[str, str] = {}
    rest: list[dict] = []
    for tok in tokens:
        if tok.get("type") != "paragraph":
            if tok.get("type") != "blank_line":
                rest.append(tok)
            continue
        lines = _inline(tok.get("children"), marks=True).split("\n")
        hit = False
        for line in lines:
            m = _LABEL.match(line.strip())
            if m:
                found[m.group("label").strip().lower()] = m.group("value").strip()
                hit = True
        if not hit:
            rest.append(tok)
    return found, rest


def _date(value: str | None) -> date | None:
    if value is None or value.strip().lower() in NEVER:
        return None
    m = _DATE.search(value)
    if not m:
        raise ValueError(f"{value!r} is not a date YYYY-MM-DD")
    return date.fromisoformat(m.group(0))


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _unique(base: str, taken: set[str]) -> str:
    bid, n = base, 2
    while bid in taken:
        bid = f"{base[:70]}-{n}"
        n += 1
    taken.add(bid)
    return bid


def _kind_from(section: str, kinds: tuple[str, ...]) -> str | None:
    word = _norm(section)
    for k in kinds:
        if word in (k, k + "s", k + "es") or (k.endswith("y") and word == k[:-1] + "ies"):
            return k
    return None


# --- the epistemic-memory profile ----------------------------------------------------------

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
            dates[key] = _date(meta.get(key))
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
    kind = meta.get("kind", "").strip().lower() or _kind_from(section, params.kinds) or "trait"
    for key in sorted(set(meta) - {"conf", "first", "confirmed", "challenged", "perm", "permanence",
                                   "basis", "kind"}):
        notes.append(f"{where}: '{title}': metadata {key}:{meta[key]} has no place in a belief; "
                     "kept in its evidence line")
    bid = _unique(slugify(title), taken)
    origin = (f"imported from {where} (conf {conf:.2f}, first {dates['first']}, confirmed "
              f"{dates['confirmed'] or '—'}, challenged {dates['challenged'] or '—'}, perm {perm})")
    extra = {k: v for k, v in meta.items() if k not in ("conf", "first", "confirmed", "challenged", "perm",
                                                        "permanence", "basis", "kind")}
    if extra:
        origin += "; " + ", ".join(f"{k}:{v}" for k, v in extra.items())
    tags = (slugify(section),) if section and not _kind_from(section, params.kinds) else ()
    b = Belief(id=bid, title=title, kind=kind, basis=basis, confidence=conf, permanence=perm,
               first=dates["first"], confirmed=dates["confirmed"], challenged=dates["challenged"],
               tags=tags, statement=statement or title,
               evidence=(Evidence(today, "imported", "", origin),))
    return b, notes


def parse_profile(name: str, text: str, *, today: date, params: Params,
                  taken: set[str]) -> tuple[list[Belief], list[str]]:
    beliefs: list[Belief] = []
    notes: list[str] = []
    for sec in sections(_ast(text)):
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
                    not _inline([c for c in line if c is not codes[0]]).strip(" ━─┄"):
                meta_idx, meta_raw = i, codes[0]["raw"]
                after = kids[brk + 1:]
                break
        if meta_idx is None:
            continue
        meta, bad = parse_meta(meta_raw)
        notes += [f"{name}: '{sec.title}': {b}" for b in bad]
        rest = [{"type": "paragraph", "children": after}] if after else []
        prose = _render(sec.tokens[:meta_idx] + rest + sec.tokens[meta_idx + 1:])
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
    key = _norm(name)
    for b in beliefs:
        if key in (_norm(b.title), _norm(b.id)):
            return b
    return None


def parse_tensions(text: str, beliefs: list[Belief], *, name: str = "tensions.md") -> tuple[list[Tension], list[str]]:
    out: list[Tension] = []
    notes: list[str] = []
    taken: set[str] = set()
    for sec in sections(_ast(text)):
        m = re.match(r"^(\d{4}-\d{2}-\d{2})\s*[—–\-:]+\s*(.+)$", sec.title)
        if not m:
            continue
        f, _ = _fields(sec.tokens)
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
        tid = _unique(f"{d.isoformat()}-{slugify(title, 50)}", taken)
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
    for sec in sections(_ast(text)):
        f, _ = _fields(sec.tokens)
        if "evidence" not in f:
            continue
        where = f"{name}: '{sec.title}'"
        try:
            d = _date(f.get("date") or sec.title)
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
        if label and label.strip().lower() not in NEVER | {"new"}:
            target = _match_belief(label, beliefs)
            if target is None:
                notes.append(f"{where}: connects to {label!r}, which is not among the imported beliefs; "
                             "recorded unconnected")
            else:
                connects = target.id
        evidence = " ".join(f["evidence"].split())
        digest = hashlib.sha1(f"import\n{_norm(evidence)}".encode()).hexdigest()
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
            out[k] = _date(raw.get(k)) if isinstance(raw.get(k), str) else None
        if out["next_review_at"] is not None:
            out["next_review_at"] = int(out["next_review_at"])
        return out, []
    except (ValueError, TypeError) as e:
        return None, [f"session-counter.json: not a session counter ({e}); not imported"]


def plan_epistemic_memory(files: dict[str, str], *, today: date, params: Params = DEFAULTS,
                          existing: list[Belief] = ()) -> Migration:
    """Map the protocol's files (name → text) onto vault values. Pure."""
    notes: list[str] = []
    unmapped: list[str] = []
    taken = {b.id for b in existing}
    have = {_norm(b.title): b for b in existing}
    beliefs: list[Belief] = []
    skipped_existing: list[str] = []
    for name in sorted(files):
        if not name.lower().endswith(".md") or name.lower() in NOT_PROFILE:
            continue
        bs, n = parse_profile(name, files[name], today=today, params=params, taken=taken)
        unmapped += n
        for b in bs:
            if _norm(b.title) in have:
                skipped_existing.append(b.title)
                continue
            b = replace(b, title=redact(b.title, params.redact), statement=redact(b.statement, params.redact))
            beliefs.append(b)
            have[_norm(b.title)] = b
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


# --- a plain memory file ----------------------------------------------------------------------

_PREFER = re.compile(r"\b(prefer|prefers|like|likes|want|wants|rather|dislike|dislikes|hate|hates)\b", re.I)
_CONVENTION = re.compile(r"\b(always|never|don't|do not|must|should|use|uses)\b", re.I)


def plan_claude_memory(text: str, *, name: str, today: date, params: Params = DEFAULTS,
                       existing: list[Belief] = ()) -> Migration:
    """Every top-level bullet a belief at speculative confidence (self-report); nested bullets
    stay in its statement; the heading above becomes a tag (or the kind, when it names one)."""
    taken = {b.id for b in existing}
    have = {_norm(b.statement.split("\n\n")[0]) for b in existing} | {_norm(b.title) for b in existing}
    beliefs: list[Belief] = []
    notes: list[str] = []
    dup = 0
    heading = ""

    def items(tokens: list[dict]):
        nonlocal heading
        for tok in tokens:
            if tok.get("type") == "heading":
                heading = " ".join(_inline(tok.get("children")).split())
            elif tok.get("type") == "list":
                for li in tok.get("children") or []:
                    yield heading, li

    for section, li in items(_ast(text)):
        kids = li.get("children") or []
        head = [k for k in kids if k.get("type") in ("block_text", "paragraph")]
        if not head:
            continue
        first = redact(" ".join(_inline(head[0].get("children")).split()), params.redact)
        rest = _render([k for k in kids if k is not head[0]])
        statement = first + ("\n\n" + redact(rest, params.redact) if rest else "")
        if not first:
            continue
        if _norm(first) in have:
            dup += 1
            continue
        have.add(_norm(first))
        title = re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0].rstrip(".")
        if len(title) > 80:
            title = title[:80].rsplit(" ", 1)[0] + "…"
        kind = _kind_from(section, params.kinds) or (
            "preference" if _PREFER.search(first) else "convention" if _CONVENTION.search(first) else "fact")
        tags = (slugify(section),) if section and not _kind_from(section, params.kinds) else ()
        bid = _unique(slugify(title), taken)
        beliefs.append(Belief(
            id=bid, title=title, kind=kind, basis="self-report",
            confidence=SPECULATIVE, permanence="unknown", first=today, tags=tags, statement=statement,
            evidence=(Evidence(today, "imported", "", f"imported from {name}; confirm or retire it "
                               "(a gut-check, or `epimem belief edit`)"),)))
    if dup:
        notes.append(f"{dup} bullet(s) already in the vault were left out")
    if not beliefs and not dup:
        notes.append(f"{name}: no bullets found")
    return Migration(tuple(beliefs), notes=tuple(notes))


# --- writing (one commit) --------------------------------------------------------------------------

@dataclass(frozen=True)
class ImportReport:
    beliefs: tuple[str, ...]
    observations: int
    tensions: tuple[str, ...]
    sessions: bool
    commit: str | None
    unmapped: tuple[str, ...]
    notes: tuple[str, ...]


def read_profile_dir(path: Path) -> dict[str, str]:
    if not path.is_dir():
        raise FileNotFoundError(f"{path} is not a directory")
    files = {}
    for p in sorted(path.iterdir()):
        if p.is_file() and (p.suffix.lower() == ".md" or p.name == "session-counter.json"):
            files[p.name] = p.read_text(encoding="utf-8")
    return files


def write_migration(memory, m: Migration, *, subject: str, dry_run: bool = False) -> ImportReport:
    """Write a planned migration into the vault as one commit (nothing when dry_run)."""
    from ..store import git as history
    from ..core.notes import render_belief, render_observation, render_tension
    from ..store.vault import sessions_to_json

    vault = memory.vault
    root = vault.root
    writes: dict[str, str] = {}
    for b in m.beliefs:
        writes[f"beliefs/{b.id}.md"] = render_belief(b)
    tensions = list(m.tensions)
    months: dict[str, list[Observation]] = {}
    for o in m.observations:
        months.setdefault(o.path, []).append(o)
    sessions_written = False
    report = ImportReport(tuple(b.id for b in m.beliefs), len(m.observations), tuple(t.id for t in m.tensions),
                          False, None, m.unmapped, m.notes)
    if dry_run:
        return replace(report, sessions=m.sessions is not None)
    vault.require()
    with vault.lock():
        for rel in list(writes):
            if vault.path(rel).exists():
                raise FileExistsError(f"{rel} already exists in the vault; nothing was imported")
        imported_tensions = []
        for t in tensions:
            text = render_tension(t)
            if vault.path(t.path).exists():
                if vault.path(t.path).read_text(encoding="utf-8") == text:
                    continue  # imported before
                tid = _unique(t.id, {p.stem for p in (root / "tensions").glob("*.md")})
                t = replace(t, id=tid, path=f"tensions/{tid}.md")
                text = render_tension(t)
            writes[t.path] = text
            imported_tensions.append(t.id)
        n_obs = 0
        for rel, obs in months.items():
            p = vault.path(rel)
            cur = p.read_text(encoding="utf-8") if p.exists() else f"# Observations {rel[13:20]}\n"
            present = set(re.findall(r"^##\s+(obs-\S+)", cur, re.M))
            fresh = [o for o in obs if o.id not in present]
            n_obs += len(fresh)
            if fresh:
                writes[rel] = cur.rstrip("\n") + "\n\n" + "\n".join(render_observation(o) for o in fresh)
        notes = list(m.notes)
        if m.sessions is not None:
            cur = vault.read_sessions()
            if cur.count == 0:
                firsts = [b.first for b in m.beliefs]
                new = replace(cur, count=m.sessions["count"], last_session=m.sessions["last_session"],
                              last_review=m.sessions["last_review"],
                              next_review_at=m.sessions["next_review_at"] if m.sessions["next_review_at"]
                              is not None else cur.next_review_at,
                              created=min([cur.created or memory.today] + firsts))
                writes["state/sessions.json"] = sessions_to_json(new)
                sessions_written = True
            else:
                notes.append(f"the vault already counts {cur.count} sessions; the imported counter "
                             f"({m.sessions['count']}) was not applied")
        report = replace(report, tensions=tuple(imported_tensions), observations=n_obs)
        if not writes:
            return replace(report, notes=tuple(notes + ["nothing new to import"]))
        done: list[str] = []
        old: dict[str, str | None] = {}
        try:
            for rel, text in writes.items():
                p = vault.path(rel)
                old[rel] = p.read_text(encoding="utf-8") if p.exists() else None
                vault.write_text(rel, text)
                done.append(rel)
            body = "\n".join(f"- could not map: {u}" for u in m.unmapped[:50])
            sha = history.commit(root, list(writes), subject, op="import",
                                 beliefs=[b.id for b in m.beliefs][:200], body=body)
        except Exception:
            for rel in reversed(done):  # all or nothing: the vault is as it was
                if old[rel] is None:
                    vault.path(rel).unlink(missing_ok=True)
                else:
                    vault.write_text(rel, old[rel])
            raise
    try:
        from ..store.context_cache import refresh_context

        refresh_context(root)
    except Exception:
        pass  # the cache is rebuilt by the next write or session
    return replace(report, sessions=sessions_written, commit=sha, notes=tuple(notes))


def import_epistemic_memory(memory, path: str | Path, *, dry_run: bool = False) -> ImportReport:
    path = Path(path).expanduser()
    files = read_profile_dir(path)
    existing, _ = memory.vault.load_beliefs() if memory.vault.exists() else ([], [])
    m = plan_epistemic_memory(files, today=memory.today, params=memory.params, existing=existing)
    subject = (f"import: {len(m.beliefs)} beliefs, {len(m.observations)} observations, "
               f"{len(m.tensions)} tensions from epistemic-memory ({path.name})")
    return write_migration(memory, m, subject=subject, dry_run=dry_run)


def import_claude_memory(memory, path: str | Path, *, dry_run: bool = False) -> ImportReport:
    path = Path(path).expanduser()
    text = path.read_text(encoding="utf-8")
    existing, _ = memory.vault.load_beliefs() if memory.vault.exists() else ([], [])
    m = plan_claude_memory(text, name=path.name, today=memory.today, params=memory.params, existing=existing)
    subject = f"import: {len(m.beliefs)} beliefs from {path.name} (speculative, self-report)"
    return write_migration(memory, m, subject=subject, dry_run=dry_run)
