"""What an import plans, and writing it into the vault as one commit.

An importer maps its source onto vault values (a `Migration`, pure); this
writes them through the one write path: new beliefs are `create`s (an id
already in the vault is a conflict, never an overwrite), the observation logs
and the session counter are compare-and-swap `replace`s of what was read, and
the transaction's rollback and cache update are the importer's too.

With `review: required` the planned batch is proposed instead (`api/import_review`): one
proposal per belief (`groups`), and accepting one (`api/inbox`) is this same write, the
proposal's records read back into a Migration (`from_records`) and screened again that day.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date

from ..core.errors import Conflict, InputError
from ..core.ids import text_key, unique_id
from ..core.inbox import Record
from ..core.model import Belief, Observation, Tension
from ..core.notes import (
    NoteError,
    parse_belief,
    parse_observations,
    parse_tension,
    render_belief,
    render_observation,
    render_tension,
)
from ..store import transaction as tx
from ..store.files import stat_key


@dataclass(frozen=True)
class Migration:
    beliefs: tuple[Belief, ...] = ()
    observations: tuple[Observation, ...] = ()
    tensions: tuple[Tension, ...] = ()
    sessions: dict | None = None
    unmapped: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ImportReport:
    beliefs: tuple[str, ...]
    observations: int
    tensions: tuple[str, ...]
    sessions: bool
    commit: str | None
    unmapped: tuple[str, ...]
    notes: tuple[str, ...]
    # What the rules refused (rule 18): a belief above no cap but breaking a rule, a date
    # after today; what they lowered is in `notes`.
    refused: tuple[str, ...] = ()
    # `review: required`: the proposals written to the inbox instead (nothing else changed),
    # and how many of the batch's proposals were on file already (pending or rejected).
    proposed: tuple[str, ...] = ()
    on_file: int = 0


def screen(m: Migration, params, today) -> tuple[Migration, tuple[str, ...], tuple[str, ...]]:
    """Every importer's beliefs, observations and tensions through the rules (rule 18): caps
    lower, a broken rule or a date after today refuses (and what rested on a refused belief
    goes with it). (what may be written, what was refused, what was lowered)."""
    from ..core import rules

    refused: list[str] = []
    lowered: list[str] = []
    beliefs = []
    for b in m.beliefs:
        ok, why = rules.admit(b, params, today)
        if ok is None:
            refused.append(f"belief '{b.title}' ({b.id}): {why}")
            continue
        if why:
            lowered.append(f"belief '{b.title}' ({b.id}): {why}")
        beliefs.append(ok)
    gone = {b.id for b in m.beliefs} - {b.id for b in beliefs}
    observations = []
    for o in m.observations:
        if o.date > today:
            refused.append(f"observation {o.id}: " + rules.future_date_message("dated", o.date, today)
                           + ": not imported")
        elif o.connects in gone:
            refused.append(f"observation {o.id}: connects to the refused belief {o.connects}: not imported")
        else:
            observations.append(o)
    tensions = []
    for t in m.tensions:
        if t.date > today:
            refused.append(f"tension {t.id}: " + rules.future_date_message("dated", t.date, today) + ": not imported")
        elif t.belief in gone:
            refused.append(f"tension {t.id}: about the refused belief {t.belief}: not imported")
        else:
            tensions.append(t)
    return (replace(m, beliefs=tuple(beliefs), observations=tuple(observations), tensions=tuple(tensions)),
            tuple(refused), tuple(lowered))


# --- a batch as proposals, and back ------------------------------------------------------------

SESSIONS = "state/sessions.json"


def _sessions_text(s: dict) -> str:
    return json.dumps({k: (v.isoformat() if isinstance(v, date) else v) for k, v in s.items()}, sort_keys=True)


def _sessions_of(text: str) -> dict:
    raw = json.loads(text)
    if not isinstance(raw, dict) or not isinstance(raw.get("count"), int) or raw["count"] < 0:
        raise ValueError("not a session counter (a count)")
    nxt = raw.get("next_review_at")
    if nxt is not None and not isinstance(nxt, int):
        raise ValueError("next_review_at must be a number")
    out = {"count": raw["count"], "next_review_at": nxt}
    for k in ("last_session", "last_review"):
        out[k] = date.fromisoformat(raw[k]) if isinstance(raw.get(k), str) else None
    return out


def groups(m: Migration):
    """The batch as proposals (`api/import_review.Group`): each belief with the observations
    that connect to it and the tensions about it; what concerns none of them (the session
    counter, an observation of a belief already in the vault) in one more."""
    from ..api.import_review import Group

    def records(obs: list[Observation], tensions: list[Tension]) -> list[Record]:
        months: dict[str, list[str]] = {}
        for o in obs:
            months.setdefault(o.path, []).append(render_observation(o))
        return ([Record(rel, "\n".join(entries)) for rel, entries in sorted(months.items())]
                + [Record(t.path, render_tension(t)) for t in tensions])

    out = []
    for b in m.beliefs:
        recs = [Record(f"beliefs/{b.id}.md", render_belief(b)),
                *records([o for o in m.observations if o.connects == b.id],
                         [t for t in m.tensions if t.belief == b.id])]
        out.append(Group(f"belief\n{text_key(b.title)}\n{text_key(b.statement)}", tuple(recs)))
    mine = {b.id for b in m.beliefs}
    rest = records([o for o in m.observations if o.connects not in mine],
                   [t for t in m.tensions if t.belief not in mine])
    if m.sessions is not None:
        rest.append(Record(SESSIONS, _sessions_text(m.sessions)))
    if rest:
        out.append(Group("rest\n" + "\n".join(f"{r.path}\n{text_key(r.text)}" for r in rest), tuple(rest)))
    return out


def from_records(records: tuple[Record, ...]) -> Migration:
    """A proposal's records read back as the Migration they were rendered from; a record that
    does not read is an InputError naming it (the proposal is left as it is)."""
    beliefs: list[Belief] = []
    observations: list[Observation] = []
    tensions: list[Tension] = []
    sessions = None
    for r in records:
        name = r.path.rsplit("/", 1)[-1][:-3] if r.path.endswith(".md") else r.path
        try:
            if r.path.startswith("beliefs/"):
                beliefs.append(parse_belief(r.text, name, r.path))
            elif r.path.startswith("observations/"):
                obs, bad = parse_observations(r.text, r.path)
                if bad or not obs:
                    raise ValueError(f"line {bad[0][0]}: {bad[0][1]}" if bad else "no observation")
                observations += [replace(o, path=r.path) for o in obs]
            elif r.path.startswith("tensions/"):
                tensions.append(replace(parse_tension(r.text, name, r.path), path=r.path))
            elif r.path == SESSIONS:
                sessions = _sessions_of(r.text)
            else:
                raise ValueError("not a file this import writes")
        except NoteError as e:
            raise InputError(f"the proposed {r.path} does not read: line {e.line}: {e.message}", path=r.path) from None
        except (ValueError, TypeError, KeyError) as e:
            raise InputError(f"the proposed {r.path} does not read: {e}", path=r.path) from None
    return Migration(tuple(beliefs), tuple(observations), tuple(tensions), sessions)


def _still_new(memory, m: Migration) -> None:
    """Accepting on a later day: the vault may have gained what the import left out as already
    there (a belief of the same id, title or words); then nothing is written and the user is told."""
    existing, _ = memory.vault.load_beliefs()
    ids = {b.id: b for b in existing}
    words = {text_key(b.title): b for b in existing} | {text_key(b.statement.split("\n\n")[0]): b for b in existing}
    for b in m.beliefs:
        same = ids.get(b.id) or words.get(text_key(b.title)) or words.get(text_key(b.statement.split("\n\n")[0]))
        if same is not None:
            raise Conflict(f"the vault has '{same.title}' ({same.id}) since this was proposed; the import would "
                           f"leave '{b.title}' out now: reject the proposal (or connect an observation to {same.id})",
                           path=f"beliefs/{same.id}.md")


def write_migration(memory, m: Migration, *, subject: str, dry_run: bool = False, importer: str = "",
                    source: str = "", dry: list[tx.Write] | None = None,
                    also: tuple[Callable[[], list[tx.Write]], str, str] | None = None) -> ImportReport:
    """Write a planned migration into the vault as one commit (nothing when dry_run).

    With `review: required` (and `importer` named) the batch, screened, is proposed instead.
    `dry`: the writes accepting it would make, in that list, nothing committed (the inbox's
    preview); `also`: (the proposals' removal, the op, a subject prefix) in the same commit (an
    accept). Either is an accept's: the vault must still lack what it creates, and anything the
    rules refuse that day refuses it whole."""
    from ..api import common
    from ..core.scrub import scrub
    from ..store import sessions as sessions_file

    vault = memory.vault
    root = vault.root
    params = memory.params
    accepting = dry is not None or also is not None
    m, refused, lowered = screen(m, params, memory.write_today)
    report = ImportReport(tuple(b.id for b in m.beliefs), len(m.observations), tuple(t.id for t in m.tensions),
                          False, None, m.unmapped, m.notes + lowered, refused)
    if dry_run:
        return replace(report, sessions=m.sessions is not None)
    if accepting and refused:
        raise Conflict(f"the rules refuse it today: {refused[0]}; nothing was written")
    if dry is not None:
        _still_new(memory, m)
    elif also is None and importer and (m.beliefs or m.observations or m.tensions or m.sessions is not None):
        from ..api import import_review

        if import_review.required(memory):
            ids, dup, sha = import_review.propose(memory, importer, source, groups(m))
            notes = report.notes + ((f"{dup} of these proposals are in the inbox already (waiting, or "
                                     "rejected): not asked twice",) if dup else ())
            return replace(report, sessions=m.sessions is not None, commit=sha, proposed=ids, on_file=dup,
                           notes=notes)
    writes: list[tx.Write] = []
    redacted = []
    for b in m.beliefs:
        text = render_belief(b)
        clean = scrub(f"beliefs/{b.id}.md", text, params.redact)
        if clean != text:
            redacted.append(b.id)
        writes.append(tx.create(f"beliefs/{b.id}.md", clean))
    months: dict[str, list[Observation]] = {}
    for o in m.observations:
        months.setdefault(o.path, []).append(o)
    notes = list(report.notes)
    if redacted:
        notes.append(f"what looks like a secret was redacted in {len(redacted)} belief"
                     f"{'s' if len(redacted) != 1 else ''}: {', '.join(redacted[:10])}")
    sessions_written = False
    if dry is None:
        common.writable(memory)
    from contextlib import nullcontext

    with (common.lock(memory) if dry is None else nullcontext()):
        more: list[tx.Write] = []
        if also is not None:
            # under the lock, first: a proposal another accept took meanwhile is said to be gone
            more = also[0]()
            _still_new(memory, m)
        imported_tensions = []
        for t in m.tensions:
            text = render_tension(t)
            p = vault.path(t.path)
            if p.exists():
                if p.read_text(encoding="utf-8") == text:
                    continue  # imported before
                tid = unique_id(t.id, {q.stem for q in (root / "tensions").glob("*.md")})
                t = replace(t, id=tid, path=f"tensions/{tid}.md")
                text = render_tension(t)
            writes.append(tx.create(t.path, text))
            imported_tensions.append(t.id)
        n_obs = 0
        for rel, obs in months.items():
            p = vault.path(rel)
            key = stat_key(p)
            cur = p.read_text(encoding="utf-8") if p.exists() else f"# Observations {rel[13:20]}\n"
            present = set(re.findall(r"^##\s+(obs-\S+)", cur, re.M))
            fresh = [o for o in obs if o.id not in present]
            n_obs += len(fresh)
            if fresh:
                writes.append(tx.replace(rel, cur.rstrip("\n") + "\n\n" + "\n".join(render_observation(o)
                                                                                      for o in fresh), key))
        if m.sessions is not None:
            key = stat_key(vault.path(sessions_file.PATH))
            cur_s = vault.read_sessions()
            if cur_s.count == 0:
                firsts = [b.first for b in m.beliefs]
                new = replace(cur_s, count=m.sessions["count"], last_session=m.sessions["last_session"],
                              last_review=m.sessions["last_review"],
                              next_review_at=m.sessions["next_review_at"] if m.sessions["next_review_at"]
                              is not None else cur_s.next_review_at,
                              created=min([cur_s.created or memory.write_today] + firsts))
                writes.append(tx.replace(sessions_file.PATH, sessions_file.to_json(new), key))
                sessions_written = True
            else:
                notes.append(f"the vault already counts {cur_s.count} sessions; the imported counter "
                             f"({m.sessions['count']}) was not applied")
        report = replace(report, tensions=tuple(imported_tensions), observations=n_obs)
        if dry is not None:
            dry.extend(writes)
            return replace(report, sessions=sessions_written, notes=tuple(notes))
        op = "import"
        if also is not None:
            op, prefix = also[1], also[2]
            writes, subject = [*writes, *more], prefix + subject
        if not writes:
            return replace(report, notes=tuple(notes + ["nothing new to import"]))
        body = "\n".join(f"- could not map: {u}" for u in m.unmapped[:50])
        sha = common.commit(memory, writes, subject, op=op, beliefs=[b.id for b in m.beliefs][:200], body=body)
    return replace(report, sessions=sessions_written, commit=sha, notes=tuple(notes))
