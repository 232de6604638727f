"""The review inbox (SPEC §15): proposals from unattended paths, and the user's decision on each.

`propose` writes what an unattended path observed as `inbox/<id>.md` (core/inbox), one commit,
no number moved. `preview` is what accepting one would change, computed by the observe pipeline
itself in its dry mode (`observe.apply(dry=…)`), so the diff shown is the diff made. `accept`
applies the proposals with the rules on today's state and removes them in that same commit;
`reject` marks them rejected (kept on file, so the same observation proposed again is not asked
about twice). Accepting and rejecting are the user's decisions (rule 22): the CLI and the page
offer them, no skill allows them and the MCP server does not offer them.

An import's proposals (`kind: import`, written by `api/import_review`) are previewed and
accepted through the importer's own write code (`importers.migration.write_migration` or
`api.jsonl_import.accept_records`, in their dry mode for the preview), and only as the commit
that proposed them wrote them (`edited_imports`).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..core import inbox as core_inbox
from ..core import kernel, reading, rules
from ..core.errors import Conflict, EpimemError, InputError, NotFound, VaultError
from ..core.inbox import Proposal
from ..core.model import Problem
from ..core.notes import NoteError
from ..core.redact import redact
from ..store import git
from ..store import transaction as tx
from ..store.files import NotUTF8, read_text, stat_key
from ..store.paths import note_entries
from . import common
from . import observe as _observe
from .results import ObservationResult, ObserveReport

if TYPE_CHECKING:
    from .service import Service


@dataclass(frozen=True)
class FileChange:
    path: str
    action: str  # create | change | delete
    diff: str    # a unified diff of the file's text


@dataclass(frozen=True)
class Preview:
    proposal: Proposal
    results: tuple[ObservationResult, ...]
    changes: tuple[FileChange, ...]
    refused: str = ""  # why accepting it today would be refused (a rule, a belief gone)
    # kind import: the beliefs accepting it would create or change, as the import's write made them
    beliefs: tuple[Any, ...] = ()
    notes: tuple[str, ...] = ()  # kind import: what the import's rules lowered or could not apply


def enabled(mem: Service) -> bool:
    return mem.params.review == "required"


# --- reading ---------------------------------------------------------------------------------

def read_all(mem: Service) -> tuple[list[Proposal], list[Problem]]:
    """Every proposal on file (pending and rejected), in id order, and the files that cannot be
    read (each a Problem naming file and line; the file is left as it is)."""
    out: list[Proposal] = []
    problems: list[Problem] = []
    entries = [(core_inbox.FOLDER, e) for e in note_entries(mem.root / core_inbox.FOLDER)]
    entries += [(core_inbox.REJECTED, e) for e in note_entries(mem.root / core_inbox.REJECTED)]
    for folder, e in sorted(entries, key=lambda fe: (fe[0], fe[1].name)):
        rel = f"{folder}/{e.name}"
        try:
            # rule 23: every reader of the inbox (CLI, MCP, page) gets it redacted from here
            out.append(reading.proposal(core_inbox.parse(read_text(e.path, rel), rel), mem.params.redact))
        except NoteError as err:
            problems.append(Problem(rel, err.line or 1, err.message.split(": ", 1)[-1]
                                    if err.message.startswith(rel) else err.message))
        except EpimemError as err:
            problems.append(Problem(rel, getattr(err, "line", None) or 1, str(err)))
    return out, problems


def pending(mem: Service) -> tuple[list[Proposal], list[Problem]]:
    props, problems = read_all(mem)
    return [p for p in props if p.status == "pending"], problems


def count_pending(mem: Service) -> int:
    """What waits, as the session context counts it (one listing: `store.paths.inbox_waiting`)."""
    from ..store.paths import inbox_waiting

    return inbox_waiting(mem.root)


def _load(mem: Service, pid: str) -> tuple[Proposal, tuple[int, int] | None]:
    pid = core_inbox.check_proposal_id(pid)
    rel = f"{core_inbox.FOLDER}/{pid}.md"
    p = mem.root / rel
    key = stat_key(p)
    if key is None and stat_key(mem.root / core_inbox.REJECTED / f"{pid}.md") is not None:
        rel = f"{core_inbox.REJECTED}/{pid}.md"
        p = mem.root / rel
        key = stat_key(p)
    gone = NotFound(f"no proposal '{pid}' in the inbox ({rel} does not exist; it may have been "
                    "accepted already: `epimem inbox` lists what waits)", path=rel)
    if key is None:
        raise gone
    try:
        return core_inbox.parse(read_text(p, rel), rel), key
    except FileNotFoundError:  # accepted by another process between the stat and the read
        raise gone from None
    except NoteError as e:
        raise VaultError(f"{e.message}; fix the file or reject the proposal by hand, nothing was changed",
                         path=rel, line=e.line) from None
    except NotUTF8 as e:  # its message has no path (a NoteError's has, from core_inbox.parse)
        raise VaultError(f"{rel}:{e.line or 1}: {e.message}; fix the file or reject the proposal by hand, "
                         "nothing was changed", path=rel, line=e.line) from None


# --- proposing ------------------------------------------------------------------------------

def observe_or_propose(mem: Service, items: list[dict[str, Any]], *, source: str, session: str | None,
                       origin: str | None = None, own: str | None = None) -> ObserveReport:
    """`Memory.observe`: the batch applied (`observe.apply`), or proposed when it must wait for
    the user. `origin`: the unattended path it comes from (`core.inbox.ORIGINS`: the session-end
    pass, an agent over MCP, the memory tool, an import); with `review: required` in
    `epistemology.md` such a batch is proposed (`propose`) instead of applied. None: the user is
    at the keyboard (the CLI's `observe`, the /observe skill in a session they watch). `own`: the
    session the front end itself vouches for (`observe.apply`)."""
    if origin is not None:
        from . import hand_edits

        hand_edits.refuse_uncommitted_rules(mem)
    params = mem.params
    if origin is not None and params.review == "required":
        return propose(mem, items, source=source, session=session, origin=origin, own=own)
    return _observe.apply(mem, items, source=source, session=session, own=own, by_model=origin is not None)


def propose(mem: Service, items: list[dict[str, Any]], *, source: str, session: str | None,
            origin: str, own: str | None = None) -> ObserveReport:
    """Put a batch in the inbox instead of applying it: checked as observe checks it (a bad
    item refuses the batch), rule 9 counted over what the session has recorded and proposed, one
    commit, no belief, log or tension touched."""
    if origin not in core_inbox.ORIGINS:
        raise InputError(f"unknown origin {origin!r}; one of {', '.join(core_inbox.ORIGINS)}", field="origin")
    params = mem.params
    today = mem.write_today
    parsed = [_observe.check_input(i + 1, item, source, session, today, params) for i, item in enumerate(items)]
    if not parsed:
        return ObserveReport((), None)
    common.writable(mem)
    for attempt in common.attempts(mem):
        with attempt:
            report = _propose(mem, items, parsed, origin, today, params, own)
    return report


def _propose(mem, items, parsed, origin, today, params, own: str | None = None) -> ObserveReport:
    on_file, _ = read_all(mem)
    taken = {p.id for p in on_file}
    # Rule 9 per session, and the trap: a session name is free, so fifty observations naming
    # fifty made-up sessions were fifty proposals (a batch of a thousand, a thousand). Rule 9's
    # session is the one `observe.apply` bounds (`rules.session_key`): a session the hook counted,
    # or the connection the front end vouches for (`own`), is its own; the names the vault never
    # counted share one session's bound a day per source.
    counted = frozenset(kernel.known_sessions(dict(mem.vault.read_sessions().counted), today))
    counted = counted | {own} if own else counted
    per_session: dict[str, int] = {}
    for p in on_file:
        if p.status == "pending" and p.kind == "observation":
            s = rules.session_key(p.session, p.proposed, counted)
            per_session[s] = per_session.get(s, 0) + 1
    writes: list[tx.Write] = []
    results: list[ObservationResult] = []
    ids: list[str] = []
    added: set[str] = set()
    for item, (obs, _) in zip(items, parsed, strict=True):
        # What is stored is what observe will be given: the item as the caller wrote it, with
        # its day, source and session fixed now (rule 19 counts them as the original's).
        stored = {k: v for k, v in item.items() if v is not None and v != "" and v != []}
        stored.update(date=obs.date.isoformat(), source=obs.source)
        if obs.session:
            stored["session"] = obs.session
        for key in ("evidence", "suggests", "therefore"):
            if key in stored:
                stored[key] = getattr(obs, key)  # redacted, one line
        pid, dup = core_inbox.proposal_id(today, obs.session, stored, taken)
        if dup or pid in ids:
            results.append(ObservationResult(obs, None if obs.connects == "new" else obs.connects, duplicate=True,
                                             reason=f"already proposed ({pid})"))
            continue
        key = rules.session_key(obs.session, today, counted)
        per_session[key] = per_session.get(key, 0) + 1
        added.add(key)
        prop = core_inbox.Proposal(id=pid, proposed=today, origin=origin, source=obs.source,
                                   session=obs.session, observation=stored)
        ids.append(pid)
        writes.append(tx.create(prop.path, core_inbox.render(prop)))
        results.append(ObservationResult(replace(obs, id=pid), None if obs.connects == "new" else obs.connects,
                                         reason=f"proposed for the user's review ({pid}): review is required "
                                                "in epistemology.md, so nothing changes until they accept it"))
    # Rule 9 holds for proposals too: an agent cannot queue fifty observations of one session.
    limit = params.observations_per_session
    for s in sorted(added):
        n = per_session[s]
        if n <= limit:
            continue
        if s.startswith("uncounted:"):
            raise Conflict(f"{n} proposals from {origin} today would name sessions the vault never counted; those "
                           f"share one session's bound of {limit} a day (rule 9; rule 19 counts them as one), "
                           "so nothing was proposed. Zero is a good answer: keep the strongest.")
        raise Conflict(f"session {s} would have {n} proposals waiting; at most {limit} per session (rule 9), "
                       "so nothing was proposed. Zero is a good answer: keep the strongest.")
    sha = None
    if writes:
        sha = common.commit(mem, writes, f"inbox: {len(writes)} proposal{'s' if len(writes) != 1 else ''} "
                                         f"from {origin} (review required)", op="propose",
                            body="\n".join(f"- {i}" for i in ids),
                            extra={"Epimem-Proposals": ", ".join(ids)})
    return ObserveReport(tuple(results), sha, proposed=tuple(ids))


# --- what accepting would change --------------------------------------------------------------

def as_now(mem: Service, p: Proposal) -> dict[str, Any]:
    """The observation as accepting makes it: made now, so dated the day of the decision (rule 20:
    never after the machine's day), with its own session and source (rule 19 counts those)."""
    return dict(p.observation, date=mem.write_today.isoformat())


def preview(mem: Service, p: Proposal, proposed: dict[str, str] | None = None) -> Preview:
    """What accepting `p` now would write: the observe pipeline's own writes (an import's: the
    import's own), not committed. `proposed`: `edited_imports`'s refusals, when already read."""
    writes: list[tx.Write] = []
    if p.kind == "import":
        return _preview_import(mem, p, proposed)
    try:
        report = _observe.apply(mem, [as_now(mem, p)], source=p.source or "inbox",
                                session=p.session or None, dry=writes, bounded=False)
    except EpimemError as e:
        return Preview(p, (), (), refused=str(e))
    if report.held:
        return Preview(p, report.results, (), refused=report.results[0].reason)
    # A file the user edited and did not commit: accepting first passes that edit through rule 18
    # (committed on its own, or the accept refused); its text is theirs, not shown as a diff here.
    refused = _dirty(mem, writes)
    if refused:
        return Preview(p, report.results, (), refused=refused)
    return Preview(p, report.results, _changes(mem, writes))


def _dirty(mem: Service, writes: list[tx.Write]) -> str:
    # A file the user edited and did not commit: accepting first passes that edit through rule 18
    # (committed on its own, or the accept refused); its text is theirs, not shown as a diff here.
    dirty = sorted(c.path for c in git.status(mem.root, [w.path for w in writes])) if writes else []
    if not dirty:
        return ""
    return (f"{', '.join(dirty)} {'has' if len(dirty) == 1 else 'have'} a hand edit not yet committed: "
            "`epimem commit` first (accepting commits it on its own first, or is refused if it breaks a rule)")


def _changes(mem: Service, writes: list[tx.Write]) -> tuple[FileChange, ...]:
    changes = []
    patterns = mem.params.redact
    for w in writes:  # the proposal's own removal is not a change to what is believed
        path = mem.root / w.path
        old = read_text(path, w.path) if path.exists() else ""
        new = w.text or ""
        action = "delete" if w.text is None else ("create" if not path.exists() else "change")
        diff = "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                            fromfile=f"a/{w.path}" if old else "/dev/null",
                                            tofile=f"b/{w.path}" if w.text is not None else "/dev/null", n=1))
        # rule 23: what is shown is redacted, as the write path would redact what it writes
        changes.append(FileChange(w.path, action, "\n".join(redact(line, patterns) for line in diff.split("\n"))))
    return tuple(changes)


def previews(mem: Service) -> tuple[list[Preview], list[Problem]]:
    props, problems = pending(mem)
    proposed = edited_imports(mem, props)
    return [preview(mem, p, proposed) for p in props], problems


# --- an import's proposals ----------------------------------------------------------------------

def edited_imports(mem: Service, props: list[Proposal]) -> dict[str, str]:
    """{id: why it is refused} for the import proposals among `props` whose file is not exactly
    what the commit that proposed it wrote: its numbers were set by the import's rules in that
    commit, and a change since (a hand edit, committed or not, a file made by hand) is not the
    import's. One walk of the log for all of them; `validate` reports the same."""
    props = [p for p in props if p.kind == "import"]
    if not props:
        return {}
    from .import_review import PROPOSE_OP

    added = git.first_added(mem.root, core_inbox.FOLDER + "/")
    out: dict[str, str] = {}
    for p in props:
        rel = p.path
        a = added.get(rel)
        try:
            data = (mem.root / rel).read_bytes()
        except OSError:
            continue  # gone: the accept says so
        if a is None or a.trailers.get("Epimem-Op") != PROPOSE_OP or p.id not in [
                x.strip() for x in a.trailers.get("Epimem-Proposals", "").split(",")]:
            out[p.id] = (f"{rel} was not written by `epimem import` (no import's commit proposed it): an import "
                         "proposal is accepted only as the import wrote it; reject it")
        elif git.blob_id(data, a.blob) != a.blob:
            out[p.id] = (f"{rel} was changed after the import proposed it (in {a.sha[:8]}): an import proposal is "
                         "accepted only as the import wrote it, its numbers set by the import's rules; reject it "
                         "and run the import again")
    return out


def _import_write(mem: Service, props: list[Proposal], *, dry: list[tx.Write] | None = None,
                  also: tuple[Any, str, str] | None = None) -> tuple[Any, str]:
    """The import's own write of the proposals' records (one importer family per call): (its
    report, a subject)."""
    records = tuple(r for p in props for r in p.records)
    sources = ", ".join(dict.fromkeys(p.source for p in props))
    if props[0].importer == "jsonl":
        from . import jsonl_import

        rep = jsonl_import.accept_records(mem, records, subject=f"import: {sources} (jsonl, from the inbox)",
                                         dry=dry, also=also)
        return rep, sources
    from ..importers import migration

    m = migration.from_records(records)
    importers = ", ".join(dict.fromkeys(p.importer for p in props))
    n = len(m.beliefs)
    rep = migration.write_migration(mem, m, subject=f"import: {n} belief{'s' if n != 1 else ''} from {sources} "
                                                    f"({importers}, from the inbox)", dry=dry, also=also)
    return rep, sources


def _preview_import(mem: Service, p: Proposal, proposed: dict[str, str] | None) -> Preview:
    from ..core.notes import parse_belief

    why = (proposed if proposed is not None else edited_imports(mem, [p])).get(p.id)
    if why:
        return Preview(p, (), (), refused=why)
    writes: list[tx.Write] = []
    try:
        rep, _ = _import_write(mem, [p], dry=writes)
    except EpimemError as e:
        return Preview(p, (), (), refused=str(e))
    refused = _dirty(mem, writes)
    if refused:
        return Preview(p, (), (), refused=refused)
    beliefs = []
    for w in writes:
        if w.path.startswith("beliefs/") and w.text is not None:
            try:
                beliefs.append(parse_belief(w.text, w.path[8:-3], w.path))
            except NoteError:
                pass
    notes = tuple(rep.notes) + tuple(rep.unmapped)
    return Preview(p, (), _changes(mem, writes), beliefs=tuple(beliefs), notes=notes)


# --- the user's decisions ---------------------------------------------------------------------

def _decide(mem: Service, ids: list[str], seen: Mapping[str, str] | None = None
            ) -> list[tuple[Proposal, tuple[int, int] | None]]:
    """The proposals decided on, as their files say now; `seen`: id → `fingerprint` of what the
    user was shown (the page's buttons send it), refused when the file says something else now."""
    if not ids:
        raise InputError("name at least one proposal (`epimem inbox` lists them)", field="id")
    out = []
    for pid in dict.fromkeys(ids):
        p, key = _load(mem, pid)
        if p.status != "pending":
            raise Conflict(f"{p.id} was rejected on {p.decided}; it is kept on record and cannot be "
                           "accepted (observe it again if it holds after all)", path=p.path)
        if seen and seen.get(p.id) not in (None, core_inbox.fingerprint(p)):
            raise _changed(p)
        out.append((p, key))
    return out


def _changed(p: Proposal) -> Conflict:
    return Conflict(f"{p.path} changed after it was shown to you; nothing was changed: look at it again "
                    "(reload the page, or `epimem inbox`) and decide on what it says now", path=p.path)


def _still(mem: Service, props: list[Proposal]) -> list[tuple[Proposal, tuple[int, int] | None]]:
    """Under the lock, each proposal as the decision read it: another process that accepted or
    rejected one meanwhile wins, and one edited since refuses the whole decision (what would be
    applied is what was read, and the removal must not take the edited file with it)."""
    now = _decide(mem, [p.id for p in props])
    for p, (q, _) in zip(props, now):
        if q != p:
            raise _changed(q)
    return now


def accept(mem: Service, ids: list[str], seen: Mapping[str, str] | None = None) -> ObserveReport:
    """Apply the proposals as if just observed: the rules on today's state, each observation
    dated today with its own source and session (rule 19 counts the original's), in one commit
    that also removes them from the inbox. An import's proposals: the import's own write of
    them, today, in one commit that removes them (`accept_imports`)."""
    common.writable(mem)
    chosen = _decide(mem, ids, seen)
    props = [p for p, _ in chosen]
    families = {("import-jsonl" if p.importer == "jsonl" else "import") if p.kind == "import" else "observation"
                for p in props}
    if len(families) > 1:
        raise InputError("these proposals are of different kinds (an observation, an import, an export's files): "
                         "accept each kind in its own `epimem inbox accept`, nothing was changed", field="id")
    if props[0].kind == "import":
        return accept_imports(mem, props)

    def removals() -> list[tx.Write]:
        return [tx.replace(p.path, None, key) for p, key in _still(mem, props)]  # compare-and-swap

    items = [as_now(mem, p) for p in props]
    for p, item in zip(props, items):
        # A proposal's observation edited by hand into one observe refuses ("strength: enormous"):
        # said of its file, where the batch's "observation 1: …" named none.
        try:
            _observe.check_input(1, item, "inbox", None, mem.write_today, mem.params)  # as apply checks it
        except InputError as e:
            why = e.message.removeprefix("observation 1: ")
            raise VaultError(f"{p.path}: its observation: {why}; fix the file or reject the proposal, nothing "
                             "was changed", path=p.path) from None
    # Rule 9 bounded each proposal when it was made; the user accepting them is not a session
    # recording them again (`bounded=False`).
    report = _observe.apply(mem, items, source="inbox", session=None, bounded=False,
                            also=(removals, "inbox-accept", f"inbox accept {', '.join(p.id for p in props)}: "))
    return replace(report, accepted=tuple(p.id for p in props) if report.commit else ())


def accept_imports(mem: Service, props: list[Proposal]) -> ObserveReport:
    """The import's own write of the proposals, under the vault lock, in one commit that removes
    them (compare-and-swap on each file as read: of two accepts at once, one writes, the other is
    told it is gone); refused whole when a file is not as the import proposed it."""
    why = edited_imports(mem, props)
    if why:
        raise Conflict(next(iter(why.values())), path=f"{core_inbox.FOLDER}/{next(iter(why))}.md")

    def removals() -> list[tx.Write]:
        return [tx.replace(p.path, None, key) for p, key in _still(mem, props)]  # compare-and-swap

    names = ", ".join(p.id for p in props)
    rep, _ = _import_write(mem, props, also=(removals, "inbox-accept", f"inbox accept {names}: "))
    return ObserveReport((), rep.commit, accepted=tuple(p.id for p in props) if rep.commit else (),
                         imported=tuple(b for p in props for r in p.records if r.path.startswith("beliefs/")
                                        for b in (r.path[8:-3],)))


def reject(mem: Service, ids: list[str], note: str = "", seen: Mapping[str, str] | None = None
           ) -> tuple[str, tuple[str, ...]]:
    """Mark the proposals rejected (kept on file; nothing else changes): (commit, ids)."""
    common.writable(mem)
    today = mem.write_today
    for attempt in common.attempts(mem):
        with attempt:
            chosen = _decide(mem, ids, seen)
            writes = []
            for p, key in chosen:
                done_p = replace(p, status="rejected", decided=today, note=" ".join(note.split()))
                # moved, not rewritten in place: the delete's file must still be the one read
                writes += [tx.create(done_p.path, core_inbox.render(done_p)), tx.replace(p.path, None, key)]
            done = tuple(p.id for p, _ in chosen)
            sha = common.commit(mem, writes, f"inbox reject {', '.join(done)}", op="inbox-reject",
                                body=note, extra={"Epimem-Proposals": ", ".join(done)})
    return sha, done
