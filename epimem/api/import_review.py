"""Imports under review (SPEC §15): with `review: required`, `epimem import …` proposes.

An importer plans its batch as it always does (its caps, validation and redaction: rule 18,
rule 23) and hands the result here instead of writing it: one proposal per belief (its file with
the observations and tensions that concern it; `Group`), one for the rest, written to `inbox/` in
one commit. What is accepted later goes through the importer's own write code again
(`importers.migration.write_migration`, `api.jsonl_import.write_files`), so the rules apply twice:
when proposed and on the day the user takes it in.

This module knows the proposal files only, not the importers (so that both write paths can call
it and `api/inbox` can call both of them, without a cycle).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core import inbox as core_inbox
from ..core.inbox import Proposal, Record
from ..core.scrub import scrub
from ..store import transaction as tx
from ..store.paths import note_entries
from . import common

if TYPE_CHECKING:
    from .service import Service

# The op of the commit that proposes an import: `api/inbox` accepts an import proposal only as
# the commit with this op wrote it (a file edited, or made, by anything else is refused).
PROPOSE_OP = "import-propose"


@dataclass(frozen=True)
class Group:
    """What one proposal holds: a key of what it is about (the belief's words, not the day, so
    the same import run again finds it on file) and the files it would write."""
    key: str
    records: tuple[Record, ...]


def required(mem: Service) -> bool:
    return mem.vault.exists() and mem.params.review == "required"


def on_file(mem: Service) -> set[str]:
    """The digests of every proposal on file, pending or rejected: one listing of each folder."""
    return {core_inbox.digest_of(e.name[:-3]) for folder in (core_inbox.FOLDER, core_inbox.REJECTED)
            for e in note_entries(mem.root / folder)}


def propose(mem: Service, importer: str, source: str, groups: list[Group]) -> tuple[tuple[str, ...], int, str | None]:
    """Write each group as a proposal, one commit for the batch; a group already on file (the
    same import run again, pending or rejected) is not proposed twice. (the ids proposed, how
    many were on file already, the commit or None)."""
    if importer not in core_inbox.IMPORTERS:
        raise ValueError(f"unknown importer {importer!r}")
    common.writable(mem)
    patterns = mem.params.redact
    today = mem.write_today
    for attempt in common.attempts(mem):
        with attempt:
            seen = on_file(mem)
            ids: list[str] = []
            writes: list[tx.Write] = []
            dup = 0
            for g in groups:
                pid = core_inbox.import_proposal_id(today, importer, g.key)
                if core_inbox.digest_of(pid) in seen or pid in ids:
                    dup += 1
                    continue
                # rule 23: the importer redacted what it mapped; what it kept whole (a jsonl file's
                # text) is redacted here, each record as the file it would become
                records = tuple(Record(r.path, scrub(r.path, r.text, patterns)) for r in g.records)
                prop = Proposal(id=pid, proposed=today, origin="import", source=source, session="", kind="import",
                                importer=importer, records=records)
                ids.append(pid)
                writes.append(tx.create(prop.path, core_inbox.render(prop)))
            sha = None
            if writes:
                n = len(writes)
                sha = common.commit(mem, writes, f"import: {n} proposal{'s' if n != 1 else ''} from {source} "
                                                 f"({importer}; review required)", op=PROPOSE_OP,
                                    body="\n".join(f"- {i}" for i in ids),
                                    extra={"Epimem-Proposals": ", ".join(ids)})
    return tuple(ids), dup, sha
