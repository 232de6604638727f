"""The vault's own commands: init, beliefs, observe, tensions, sessions, history, undo, commit,
validate. Each is declared once, beside its function (`cli.spec`); they parse nothing
themselves: they call `epimem.api` and render (--json, or text).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .common import (
    JSON,
    NOTHING_OBSERVED,
    belief_json,
    change_json,
    echo,
    emit_json,
    fail,
    history_json,
    memory,
    observe_json,
    observed_line,
    problems_json,
    report_problems,
    report_refused,
    session_json,
    tension_json,
    usage,
    warn,
)
from .spec import Arg, Opt, command, group

TYPE_CHECKING = False  # as in cli/spec: `epimem --help` imports this module, and not typing for it
if TYPE_CHECKING:
    from typing import Any

# Closed lists a value must come from: read from the model only when the command runs (the
# help of every command is listed without the rules).
def _bases():
    from ..core.model import BASES
    return BASES


def _permanences():
    from ..core.model import PERMANENCES
    return PERMANENCES


def _strengths():
    from ..core.model import STRENGTHS
    return STRENGTHS


def _statuses():
    from ..core.model import STATUSES
    return (*STATUSES, "all")


def _tension_statuses():
    from ..core.model import TENSION_STATUSES
    return TENSION_STATUSES


def _session_sources():
    from ..api.sessions import SOURCES
    return SOURCES


BELIEF_ID = Arg("belief_id", metavar="ID", help="The belief's id (its file name without .md).", complete="belief")
TENSION_ID = Arg("tension_id", metavar="ID", help="The tension's id.", complete="tension")
CONFIDENCE: dict[str, Any] = dict(type=float, min=0.0, max=1.0, metavar="0-1")
NOTE = Opt("--note", default="", metavar="TEXT", help="Why, in a line (goes into the evidence line).")

group("belief", "Add, show, list and change beliefs.")
group("tension", "Open, watch, resolve and reopen tensions.")
group("session", "Count sessions.")


# --- init ---------------------------------------------------------------------------

@command("init", Arg("path", required=False, help="Where to create the vault (default: --vault, $EPIMEM_VAULT, "
                                                   "else the user data dir).", complete="dir"),
         JSON)
def init(ctx, path, as_json):
    """Create a vault (git repository, rules, folders). Running it twice changes nothing."""
    from ..api.memory import Memory
    from ..store.paths import resolve_root

    mem, created = Memory.init(resolve_root(path or ctx.vault), today=ctx.today)
    if as_json:
        emit_json({"vault": str(mem.root), "created": created})
    else:
        echo(f"{'Created' if created else 'Already a vault:'} {mem.root}")


# --- beliefs ---------------------------------------------------------------------------

@command("belief add",
         Opt("--title", required=True, help="A short name for the belief (its id is made from it)."),
         Opt("--statement", required=True, metavar="TEXT", help="What the belief claims, in a sentence or two."),
         Opt("--kind", required=True, help="What sort of belief: preference, trait, convention, workflow, …"),
         Opt("--basis", required=True, choices=_bases, help="What it rests on (rule 1 sets the start value)."),
         Opt("--permanence", required=True, choices=_permanences, help="How long it is likely to hold."),
         Opt("--confidence", **CONFIDENCE, help="Default: the start value of the basis."),
         Opt("--tag", multiple=True, help="A tag."),
         Opt("--scope", default="global", metavar="PROJECT", help="global, or the project it holds in."),
         Opt("--supersedes", multiple=True, metavar="ID", complete="belief", help="An id this belief replaces."),
         Opt("--depends-on", multiple=True, metavar="ID", complete="belief",
             help="A belief this one rests on (repeatable)."),
         Opt("--pinned/--no-pinned", type=bool, help="Exempt it from decay."),
         Opt("--id", dest="belief_id", metavar="ID", help="Default: a slug of the title."),
         JSON)
def belief_add(ctx, title, statement, kind, basis, permanence, confidence, tag, scope, supersedes, depends_on,
               pinned, belief_id, as_json):
    """Add a belief; its confidence starts where its basis says (rule 1)."""
    mem = memory(ctx)
    b = mem.add_belief(title=title, statement=statement, kind=kind, basis=basis, permanence=permanence,
                       confidence=confidence, tags=tag, scope=scope, supersedes=supersedes,
                       pinned=pinned, belief_id=belief_id, depends_on=depends_on)
    similar = _similar(mem, b)
    if as_json:
        out = belief_json(b, mem.today, mem.params)
        out["similar"] = similar
        emit_json(out)
        return
    echo(f"Added {b.id} ({b.confidence:.2f}, {b.basis}, {b.permanence})")
    if similar:
        echo("Similar beliefs already in the vault (not merged):")
        for s in similar:
            echo(f"  {s['id']}  {s['title']}")


def _similar(mem, b) -> list[dict]:
    """Nearest existing beliefs after an add."""
    from ..recall import similar_beliefs

    try:
        return [s for s in similar_beliefs(mem, b.statement, limit=4) if s.get("id") != b.id][:3]
    except Exception as e:  # similarity is advice: it must never fail an add that landed
        warn(f"could not look for similar beliefs: {e}")
        return []


@command("belief show", BELIEF_ID, JSON)
def belief_show(ctx, belief_id, as_json):
    """Show one belief with its evidence."""
    from ..api.shapes import belief_json as shown_json

    mem = memory(ctx)
    b, refused = mem.shown_belief(belief_id)
    d = shown_json(b, refused, mem.today, mem.params)
    if as_json:
        emit_json(d)
        return
    report_refused([refused] if refused else [])
    echo(f"{b.title}  [{b.id}]")
    echo(f"  {b.kind} · {b.basis} · {b.permanence} · {b.status}"
               + (" · pinned" if b.pinned else "") + (f" · scope {b.scope}" if b.scope != "global" else ""))
    echo(f"  confidence {b.confidence:.2f} → effective {d['effective_confidence']:.2f} ({d['tier']})")
    echo(f"  first {b.first} · confirmed {b.confirmed or 'never'} · challenged {b.challenged or 'never'}")
    if b.tags:
        echo(f"  tags: {', '.join(b.tags)}")
    echo("")
    echo(b.statement)
    if b.evidence:
        echo("\nEvidence:")
        for e in b.evidence:
            link = f" [[{e.link}]]" if e.link else ""
            echo(f"  {e.date} · {e.kind}{link} — {e.note}")


@command("belief list",
         Opt("--kind", help="Only beliefs of this kind."),
         Opt("--permanence", choices=_permanences, help="Only beliefs of this permanence."),
         Opt("--status", default="active", choices=_statuses, help="Which beliefs."),
         Opt("--tag", help="Only beliefs with this tag."),
         Opt("--scope", metavar="PROJECT", help="A project: its beliefs plus global ones."),
         Opt("--min-confidence", **CONFIDENCE, help="On effective (decayed) confidence."),
         JSON)
def belief_list(ctx, kind, permanence, status, tag, scope, min_confidence, as_json):
    """List beliefs, strongest first, with stored → effective confidence."""
    from ..api.shapes import listing_json
    from ..core.filters import Filters

    f = Filters.make(kind=kind, permanence=permanence, status=status, tag=tag, scope=scope,
                     min_confidence=min_confidence)
    mem = memory(ctx)
    listed = mem.listing(f)
    report_problems(listed.problems)
    if as_json:
        emit_json(listing_json(listed, mem.today, mem.params))
        return
    report_refused(listed.refused)
    if not listed.rows:
        echo("No beliefs match." if listed.shown else "No beliefs yet.")
        return
    for eff, b in listed.rows:
        echo(f"{b.confidence:.2f} → {eff:.2f}  {b.permanence:<11} {b.id} — {b.title}"
                   + ("" if b.status == "active" else f"  ({b.status})"))


@command("belief edit", BELIEF_ID,
         Opt("--title", help="A new title (the id stays)."),
         Opt("--statement", metavar="TEXT", help="A new statement."),
         Opt("--kind", help="A new kind."),
         Opt("--basis", choices=_bases, help="A new basis."),
         Opt("--permanence", choices=_permanences, help="A new permanence."),
         Opt("--confidence", **CONFIDENCE, help="A new stored confidence."),
         Opt("--tag", multiple=True, help="Replaces the tags."),
         Opt("--scope", metavar="PROJECT", help="global, or the project it holds in."),
         Opt("--depends-on", multiple=True, default=None, metavar="ID", complete="belief",
             help="Replaces what it rests on ('' for nothing)."),
         Opt("--note", default="", metavar="TEXT", help="Why (goes into the evidence line)."),
         JSON)
def belief_edit(ctx, belief_id, title, statement, kind, basis, permanence, confidence, tag, scope, depends_on, note,
                as_json):
    """Change a belief's fields by hand (a user action, recorded with provenance)."""
    mem = memory(ctx)
    rests = None if depends_on is None else [d for d in depends_on if d.strip()]
    b = mem.edit_belief(belief_id, note=note, title=title, statement=statement, kind=kind, basis=basis,
                        permanence=permanence, confidence=confidence, tags=tag or None, scope=scope,
                        depends_on=rests)
    _done(mem, b, as_json, f"Edited {b.id}")


@command("belief retire", BELIEF_ID, NOTE, JSON)
def belief_retire(ctx, belief_id, note, as_json):
    """Retire a belief: it stays in the vault, out of recall (rule 5)."""
    mem = memory(ctx)
    _done(mem, mem.retire(belief_id, note=note), as_json, f"Retired {belief_id}")


@command("belief reject", BELIEF_ID, NOTE,
         Opt("--retire", type=bool, help="Retire instead of lowering by 0.20."), JSON)
def belief_reject(ctx, belief_id, note, retire, as_json):
    """The user says a belief is no longer true: lower it by 0.20, or retire it (rule 5)."""
    mem = memory(ctx)
    b = mem.reject(belief_id, retire=retire, note=note)
    _done(mem, b, as_json, f"Retired {belief_id}" if retire else f"Lowered {belief_id} to {b.confidence:.2f}")


@command("belief supersede", Arg("old", multiple=True, metavar="OLD", help="The beliefs replaced.",
                                 complete="belief"),
         Opt("--by", required=True, metavar="ID", complete="belief", help="The belief that replaces them."),
         NOTE, JSON)
def belief_supersede(ctx, old, by, note, as_json):
    """Mark beliefs as superseded by another (they stay, out of recall)."""
    mem = memory(ctx)
    _done(mem, mem.supersede(old, by, note=note), as_json, f"{', '.join(old)} superseded by {by}")


@command("belief merge", Arg("keep", metavar="KEEP", help="The belief that stays.", complete="belief"),
         Arg("other", metavar="OTHER", help="The belief merged into it.", complete="belief"),
         NOTE, JSON)
def belief_merge(ctx, keep, other, note, as_json):
    """Merge two beliefs you say are one: OTHER's evidence joins KEEP, which supersedes it."""
    mem = memory(ctx)
    _done(mem, mem.merge(keep, other, note=note), as_json, f"Merged {other} into {keep}")


@command("belief pin", BELIEF_ID, JSON)
def belief_pin(ctx, belief_id, as_json):
    """Exempt a belief from decay."""
    mem = memory(ctx)
    _done(mem, mem.set_pinned(belief_id, True), as_json, f"Pinned {belief_id}")


@command("belief unpin", BELIEF_ID, JSON)
def belief_unpin(ctx, belief_id, as_json):
    """Let a belief decay again."""
    mem = memory(ctx)
    _done(mem, mem.set_pinned(belief_id, False), as_json, f"Unpinned {belief_id}")


def _done(mem, b, as_json: bool, text: str) -> None:
    if as_json:
        emit_json(belief_json(b, mem.today, mem.params))
    else:
        echo(text)


# --- observe -------------------------------------------------------------------------------

# core/inbox.ORIGINS, spelt out: the declarations import nothing the parser does not need.
ORIGINS = ("session-end", "mcp", "memory-tool", "import", "skill", "api")


@command("observe",
         Opt("--connects", metavar="ID|new", complete="belief", help="A belief id, or 'new'."),
         Opt("--strength", choices=_strengths, help="How the observation bears on the belief."),
         Opt("--evidence", metavar="TEXT", help="What happened, concretely."),
         Opt("--suggests", default="", metavar="TEXT", help="What it suggests about the person."),
         Opt("--therefore", default="", metavar="TEXT", help="What to do differently because of it."),
         Opt("--basis", default="behavioral", choices=_bases,
             help="behavioral, self-report or interpretive (never fact: rule 14)."),
         Opt("--session", metavar="ID", help="The session it was seen in (3 observations a session: rule 9)."),
         Opt("--source", default="cli", help="Who recorded it (goes into the evidence line)."),
         Opt("--origin", choices=ORIGINS, metavar="PATH",
             help="The unattended path this comes from (a script, an agent): with `review: required` "
                  "it is proposed to the user (`epimem inbox`) instead of applied."),
         Opt("--date", metavar="YYYY-MM-DD", help="When it happened (default: today)."),
         Opt("--title", help="With --connects new: create a belief with this title."),
         Opt("--kind", help="With --connects new: the new belief's kind."),
         Opt("--permanence", choices=_permanences, help="With --connects new: the new belief's permanence."),
         Opt("--new-despite-similar", type=bool,
             help="With --connects new: create the belief even when a similar one is active (rule 17)."),
         Opt("--cited", multiple=True, metavar="ID", complete="belief",
             help="A belief id the assistant cited ([id]) this session; repeatable."),
         Opt("--successor", metavar="TITLE|ID",
             help="With --strength contradicting: what holds instead (a new belief's title, or an id)."),
         Opt("--depends-on", multiple=True, metavar="ID", complete="belief",
             help="A belief the connected (or new) one rests on."),
         Opt("--input", dest="batch", metavar="FILE|-", complete="file",
             help="A JSON array of observations from FILE, or - for stdin."),
         # The transcript pass moved to `epimem transcript`: kept here, hidden, to say so.
         Opt("--from-transcript", metavar="FILE", hidden=True, help="Moved: `epimem transcript FILE`."),
         Opt("--llm", type=bool, hidden=True, help="Moved: `epimem transcript FILE --llm`."),
         JSON,
         # `observe --json FILE|-` read a batch before --json became the output switch.
         Arg("legacy", multiple=True, required=False, hidden=True, help="The old `--json FILE|-` batch."))
def observe(ctx, connects, strength, evidence, suggests, therefore, basis, session, source, origin, date, title,
            kind, permanence, new_despite_similar, cited, successor, depends_on, batch, from_transcript, llm, as_json,
            legacy):
    """Record observations (0–3 per session) and apply the rules to the beliefs they connect."""
    if legacy:
        # `observe --json FILE|-` read a batch before --json became the output switch; the
        # /observe and /mirror skills installed by an older epimem still call it that way.
        if not as_json or batch is not None or len(legacy) > 1:
            usage(f"unexpected argument {' '.join(legacy)!r}: a batch is read with --input FILE|-")
        warn("`observe --json FILE|-` is deprecated: use `--input FILE|- --json` "
             "(`epimem install claude-code` updates the skills)")
        batch = legacy[0]
    if from_transcript or llm:
        # Not an alias: the skills allow `epimem observe *`, and a prefix cannot exclude a flag, so
        # a model could send the whole transcript to the Anthropic API with the user's key under
        # the skill's own permission. The pass is the user's to start (rule 22).
        usage("the transcript pass is `epimem transcript FILE [--llm]` now "
              "(it is not among the commands a skill runs by itself)")
    mem = memory(ctx)
    if batch is not None:
        where = "stdin" if batch == "-" else batch
        try:
            data = sys.stdin.buffer.read() if batch == "-" and hasattr(sys.stdin, "buffer") else (
                sys.stdin.read().encode("utf-8", "surrogateescape") if batch == "-" else Path(batch).read_bytes())
            raw = data.decode("utf-8")
        except OSError as e:
            fail(f"cannot read {batch}: {e}")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            fail(f"{where}:{line}: not valid UTF-8 (byte {e.start})")
        import json

        try:
            items = json.loads(raw) if raw.strip() else []
        except json.JSONDecodeError as e:
            fail(f"{where}:{e.lineno}: invalid JSON: {e.msg}")
        except RecursionError:
            fail(f"{where}: invalid JSON: nested too deeply")
        if isinstance(items, dict):
            items = items.get("observations", [items])
        if not isinstance(items, list):
            fail("--input expects a JSON array of observation objects")
    else:
        if not (connects and strength and evidence):
            usage("give --connects, --strength and --evidence, or a batch with --input FILE|-")
        item = {"connects": connects, "strength": strength, "evidence": evidence, "suggests": suggests,
                "therefore": therefore, "basis": basis, "session": session, "date": date,
                "title": title, "kind": kind, "permanence": permanence,
                "new_despite_similar": new_despite_similar or None, "successor": successor,
                "depends_on": depends_on or None, "cited": cited or None}
        items = [{k: v for k, v in item.items() if v is not None}]
    report = mem.observe(items, source=source, session=session, origin=origin)
    if as_json:
        emit_json(observe_json(report))
    else:
        _print_observe(report)
    if report.held:
        raise SystemExit(1)  # nothing was written: a script must notice


@command("transcript", Arg("path", metavar="FILE", complete="file",
                           help="A Claude Code transcript or a Codex rollout (JSONL)."),
         Opt("--session", metavar="ID", help="The session it was (default: the transcript's own id)."),
         Opt("--llm", type=bool, help="Also ask Claude (sends the transcript to the Anthropic API; "
                                      "needs ANTHROPIC_API_KEY)."),
         JSON)
def transcript(ctx, path, session, llm, as_json):
    """The session-end pass by hand: record 0–3 observations found in a transcript, once per session."""
    _observe_transcript(memory(ctx), path, llm, session, as_json)


def _observe_transcript(mem, path: str, llm: bool, session: str | None, as_json: bool) -> None:
    """Once per session, and it says why when it records nothing."""
    try:
        from ..api.transcripts import record_from_transcript
        from ..claude.transcript import read_transcript
    except ImportError:
        fail("--from-transcript is not available in this build")
    mem.vault.require()
    if not Path(path).is_file():
        fail(f"cannot read {path}: not a file (give the path of a Claude Code transcript, .jsonl)")
    try:
        report, notes = record_from_transcript(mem, read_transcript(path), use_llm=llm, session=session,
                                              path=os.path.abspath(path))
    except OSError as e:
        fail(f"cannot read {path}: {e}")
    for note in notes:
        warn(note)
    if as_json:
        emit_json(observe_json(report) if report else NOTHING_OBSERVED)
    elif report:
        _print_observe(report)
    else:
        echo("Nothing recorded.")


def _print_observe(report) -> None:
    if not report.results:
        echo("Nothing to record.")
    for r in report.results:
        echo(observed_line(r))
        if r.tension:
            echo(f"  tension opened: {r.tension}" if r.tension_opened
                 else f"  added to the open tension {r.tension}")
        for s in r.similar:
            echo(f"  similar: {s['id']} — {s['title']} (similarity {s['similarity']:.2f})")
    if report.held:
        echo("Nothing was written. Connect the observation to one of the similar beliefs, or "
                   "create it anyway with --new-despite-similar (\"new_despite_similar\": true in a batch).")
    for r in report.alerts:
        echo(f"ALERT: {r.belief} was held at {r.before:.2f} and has just been contradicted; "
                   "tell the user.")


# --- tensions ------------------------------------------------------------------------------

@command("tensions", Opt("--status", choices=_tension_statuses, help="Only tensions with this status."), JSON)
def tensions(ctx, status, as_json):
    """List tensions (contradictions kept on record)."""
    from ..api.tensions import listed

    mem = memory(ctx)
    mem.vault.require()
    ts, problems = listed(mem, status)
    report_problems(problems)
    if as_json:
        emit_json({"tensions": [tension_json(t) for t in ts], "problems": problems_json(problems)})
        return
    if not ts:
        echo("No tensions.")
    for t in ts:
        echo(f"{t.status:<10} {t.id}  — {t.title}  [{t.belief}]")


@command("tension resolve", TENSION_ID, Opt("--note", required=True, metavar="TEXT", help="How it was resolved."),
         JSON)
def tension_resolve(ctx, tension_id, note, as_json):
    """Resolve a tension with a note (never by rewriting history)."""
    mem = memory(ctx)
    t = mem.resolve_tension(tension_id, note)
    if as_json:
        emit_json(tension_json(t))
    else:
        echo(f"Resolved {t.id}")


@command("tension open", Arg("belief_id", metavar="BELIEF", help="The belief it is about.", complete="belief"),
         Opt("--note", required=True, metavar="TEXT", help="What does not fit."),
         Opt("--title", default="", help="A title (default: made from the note)."), JSON)
def tension_open(ctx, belief_id, note, title, as_json):
    """Open a tension on a belief yourself (status unresolved)."""
    mem = memory(ctx)
    t = mem.open_tension(belief_id, note, title)
    if as_json:
        emit_json(tension_json(t))
    else:
        echo(f"Opened {t.id} on {t.belief}")


@command("tension reopen", TENSION_ID, Opt("--note", required=True, metavar="TEXT", help="Why it is open again."),
         JSON)
def tension_reopen(ctx, tension_id, note, as_json):
    """Reopen a resolved tension (status unresolved)."""
    mem = memory(ctx)
    t = mem.reopen_tension(tension_id, note)
    if as_json:
        emit_json(tension_json(t))
    else:
        echo(f"Reopened {t.id}")


@command("tension watch", TENSION_ID, Opt("--note", default="", metavar="TEXT", help="Why it is watched."), JSON)
def tension_watch(ctx, tension_id, note, as_json):
    """Keep watching a tension (status watching)."""
    mem = memory(ctx)
    t = mem.watch_tension(tension_id, note)
    if as_json:
        emit_json(tension_json(t))
    else:
        echo(f"Watching {t.id}")


# --- sessions --------------------------------------------------------------------------------

@command("session start", Opt("--source", default="startup", choices=_session_sources,
                              help="How the session began (only startup is counted)."),
         Opt("--session", metavar="ID", help="The session's id: its observations then move numbers."), JSON)
def session_start(ctx, source, session, as_json):
    """Count a session (only `startup`) and say whether a review is due or the vault was dormant."""
    mem = memory(ctx)
    r = mem.session_start(source, session)
    if as_json:
        emit_json(session_json(r))
    else:
        for line in r.lines():
            echo(line)


# --- history ---------------------------------------------------------------------------------

@command("history", BELIEF_ID, JSON)
def history_cmd(ctx, belief_id, as_json):
    """A belief's confidence and status over time, from git."""
    mem = memory(ctx)
    pts = mem.history(belief_id)
    if as_json:
        emit_json(history_json(belief_id, pts))
        return
    prev = None
    for p in pts:
        conf = "—" if p.confidence is None else f"{p.confidence:.2f}"
        arrow = f"{prev} → {conf}" if prev not in (None, conf) else conf
        refused = f" (an edit was refused, so it is shown as before: {p.refused})" if p.refused else ""
        echo(f"{p.when:%Y-%m-%d %H:%M}  {p.sha[:8]}  {arrow:<12} {p.status or '':<10} {p.subject}{refused}")
        prev = conf


@command("diff", Opt("--since", required=True, metavar="DATE|REV", help="A date YYYY-MM-DD or a git revision."),
         JSON)
def diff(ctx, since, as_json):
    """What changed since a date or revision, in words."""
    mem = memory(ctx)
    changes = mem.diff(since)
    if as_json:
        emit_json({"since": since, "changes": [change_json(c) for c in changes]})
        return
    if not changes:
        echo(f"Nothing changed since {since}.")
    for c in changes:
        echo(f"- {c.sentence()}")


@command("undo", Arg("commit", required=False, help="An epimem commit (default: the last change not yet undone)."),
         JSON)
def undo(ctx, commit, as_json):
    """Take back an epimem change with a new commit; again goes one further back (history is never rewritten)."""
    mem = memory(ctx)
    sha, subject = mem.undo(commit)
    if as_json:
        emit_json({"commit": sha, "undone": subject})
    else:
        echo(f"Undid: {subject}")


@command("redo", JSON)
def redo(ctx, as_json):
    """Re-apply what the last undo took back."""
    mem = memory(ctx)
    sha, subject = mem.redo()
    if as_json:
        emit_json({"commit": sha, "redone": subject})
    else:
        echo(f"Redid: {subject}")


@command("commit", JSON)
def commit(ctx, as_json):
    """Commit hand edits (Obsidian, an editor) with a message naming what changed."""
    mem = memory(ctx)
    sha, changes, problems = mem.commit_hand_edits()
    report_problems(problems)
    if as_json:
        emit_json({"commit": sha, "changes": [change_json(c) for c in changes], "problems": problems_json(problems)})
        return
    if sha is None:
        echo("Nothing to commit.")
        return
    echo(f"Committed {sha[:8]}:")
    for c in changes:
        echo(f"- {c.sentence()}")


@command("validate", JSON,
         Opt("--fix", type=bool, help="Rewrite references written as bare ids before (supersedes, a tension's "
                                      "belief, a review's beliefs) as [[wikilinks]], in one commit."))
def validate(ctx, as_json, fix):
    """Check every file; problems as path:line: message; exit 1 when any."""
    mem = memory(ctx)
    mem.vault.on_rules_problems = None  # listed below with the rest, not twice
    sha, fixed = mem.upgrade_links() if fix else (None, [])
    bare = [] if fix else mem.bare_links()
    problems = mem.validate()
    if as_json:
        emit_json({"ok": not problems, "problems": problems_json(problems), "bare_links": bare,
                   "fixed": fixed, "commit": sha})
    else:
        if fixed:
            echo(f"Committed {sha[:8] if sha else ''}: {len(fixed)} note{'s' if len(fixed) != 1 else ''} "
                       "now name beliefs as [[wikilinks]].")
        for p in problems:
            echo(str(p))
        if bare:
            echo(f"{len(bare)} note{'s' if len(bare) != 1 else ''} written before name beliefs by bare id "
                       f"({', '.join(bare[:3])}{', …' if len(bare) > 3 else ''}); `epimem validate --fix` makes "
                       "them [[wikilinks]] Obsidian's graph follows, in one commit.")
        if not problems:
            echo("Vault is valid.")
    if problems:
        raise SystemExit(1)


@command("doctor", JSON)
def doctor(ctx, as_json):
    """Say what state the vault, its wiring and its index are in, with the fix for each problem; exit 1 on any."""
    from ..agents.install import wiring
    from ..api import doctor as doctor_api
    from ..store.paths import resolve_root

    root = resolve_root(ctx.vault)
    rep = doctor_api.run(root, source=ctx.vault_source, today=ctx.today, agents=tuple(wiring(str(root))))
    if as_json:
        emit_json(rep.as_json())
    else:
        for c in rep.checks:
            echo(f"{c.status:<8} {c.name:<14} {c.said}" + (f"\n{'':<23} fix: {c.fix}" if c.fix else ""))
        n = len(rep.problems)
        echo("Healthy." if not n else f"{n} problem{'s' if n != 1 else ''}: each says its fix.")
    if not rep.healthy:
        raise SystemExit(1)
