"""What an import plans, and writing it into the vault as one commit.

An importer maps its source onto vault values (a `Migration`, pure); this
writes them through the one write path: new beliefs are `create`s (an id
already in the vault is a conflict, never an overwrite), the observation logs
and the session counter are compare-and-swap `replace`s of what was read, and
the transaction's rollback and cache update are the importer's too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..core.ids import unique_id
from ..core.model import Belief, Observation, Tension
from ..core.notes import render_belief, render_observation, render_tension
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


def write_migration(memory, m: Migration, *, subject: str, dry_run: bool = False) -> ImportReport:
    """Write a planned migration into the vault as one commit (nothing when dry_run)."""
    from ..api import common
    from ..core.scrub import scrub
    from ..store import sessions as sessions_file

    vault = memory.vault
    root = vault.root
    params = memory.params
    m, refused, lowered = screen(m, params, memory.write_today)
    report = ImportReport(tuple(b.id for b in m.beliefs), len(m.observations), tuple(t.id for t in m.tensions),
                          False, None, m.unmapped, m.notes + lowered, refused)
    if dry_run:
        return replace(report, sessions=m.sessions is not None)
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
    common.writable(memory)
    with common.lock(memory):
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
        if not writes:
            return replace(report, notes=tuple(notes + ["nothing new to import"]))
        body = "\n".join(f"- could not map: {u}" for u in m.unmapped[:50])
        sha = common.commit(memory, writes, subject, op="import", beliefs=[b.id for b in m.beliefs][:200], body=body)
    return replace(report, sessions=sessions_written, commit=sha, notes=tuple(notes))
