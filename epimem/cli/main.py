"""The `epimem` command line (Typer): parse arguments, call `epimem.api.memory`, render.

Each feature area registers its own commands from `epimem/cli/<area>.py`;
this module holds the vault core's commands and the global options.
"""

# No `from __future__ import annotations` here: Typer reads every command's
# annotations at start-up, and a string annotation costs an eval each (a few ms in all).
import json
import sys
from pathlib import Path

import typer

from .common import (
    NOTHING_OBSERVED,
    belief_json,
    change_json,
    emit_json,
    fail,
    history_json,
    memory,
    observe_json,
    problems_json,
    report_problems,
    report_refused,
    session_json,
    state,
    tension_json,
    warn,
)

# Plain Click help, not Rich's: rendering help with Rich imports rich and
# markdown-it, ~100 ms of the 150 ms `epimem --help` may take (docs/benchmarks.md).
app = typer.Typer(
    name="epimem", no_args_is_help=True, add_completion=False,
    pretty_exceptions_enable=False, rich_markup_mode=None,
    help="A personal epistemic memory: what the assistant believes about you, "
         "as markdown files in a Git-versioned vault.")
belief_app = typer.Typer(no_args_is_help=True, help="Add, show, list and change beliefs.")
tension_app = typer.Typer(no_args_is_help=True, help="Open, watch, resolve and reopen tensions.")
session_app = typer.Typer(no_args_is_help=True, help="Count sessions.")
app.add_typer(belief_app, name="belief")
app.add_typer(tension_app, name="tension")
app.add_typer(session_app, name="session")

JSON = typer.Option(False, "--json", help="Machine-readable output (fields in docs/cli.md).")


def _version(value: bool) -> None:
    # Runs while the options are parsed, so `epimem --vault X --version` needs no command.
    # (`epimem --version` alone never gets here: epimem.__main__ answers it without Typer.)
    if value:
        from .. import __version__

        typer.echo(f"epimem {__version__}")
        raise typer.Exit()


@app.callback()
def _global(ctx: typer.Context,
            vault: str | None = typer.Option(
                None, "--vault", envvar="EPIMEM_VAULT",
                help="Vault directory (default: $EPIMEM_VAULT, else the user data dir)."),
            today: str | None = typer.Option(None, "--today", help="Pretend today is YYYY-MM-DD (also EPIMEM_TODAY)."),
            version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                         help="Print the version and exit.")):
    st = state(ctx)
    st.vault, st.today = vault, today
    if today:
        from ..store.clock import ClockError
        from ..store.clock import today as parse_today

        try:
            parse_today(today)
        except ClockError as e:
            fail(error_message(e))


# --- init ---------------------------------------------------------------------------

@app.command()
def init(ctx: typer.Context, path: str | None = typer.Argument(None, help="Where to create the vault."),
         as_json: bool = JSON):
    """Create a vault (git repository, rules, folders). Running it twice changes nothing."""
    from ..api.memory import Memory
    from ..store.paths import resolve_root

    st = state(ctx)
    mem, created = Memory.init(resolve_root(path or st.vault), today=st.today)
    if as_json:
        emit_json({"vault": str(mem.root), "created": created})
    else:
        typer.echo(f"{'Created' if created else 'Already a vault:'} {mem.root}")


# --- beliefs ---------------------------------------------------------------------------

@belief_app.command("add")
def belief_add(ctx: typer.Context,
               title: str = typer.Option(..., "--title"),
               statement: str = typer.Option(..., "--statement", help="What the belief claims, in a sentence or two."),
               kind: str = typer.Option(..., "--kind"),
               basis: str = typer.Option(..., "--basis", help="fact, behavioral, self-report or interpretive."),
               permanence: str = typer.Option(..., "--permanence", help="stable, durable, situational or unknown."),
               confidence: float | None = typer.Option(None, "--confidence",
                                                       help="Default: the start value of the basis."),
               tag: list[str] = typer.Option([], "--tag"),
               scope: str = typer.Option("global", "--scope"),
               supersedes: list[str] = typer.Option([], "--supersedes", help="Ids this belief replaces."),
               depends_on: list[str] = typer.Option([], "--depends-on", metavar="ID",
                                                    help="A belief this one rests on (repeatable)."),
               pinned: bool = typer.Option(False, "--pinned/--no-pinned"),
               belief_id: str | None = typer.Option(None, "--id", help="Default: a slug of the title."),
               as_json: bool = JSON):
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
    typer.echo(f"Added {b.id} ({b.confidence:.2f}, {b.basis}, {b.permanence})")
    if similar:
        typer.echo("Similar beliefs already in the vault (not merged):")
        for s in similar:
            typer.echo(f"  {s['id']}  {s['title']}")


def _similar(mem, b) -> list[dict]:
    """Nearest existing beliefs after an add."""
    from ..recall import similar_beliefs

    try:
        return [s for s in similar_beliefs(mem, b.statement, limit=4) if s.get("id") != b.id][:3]
    except Exception as e:  # similarity is advice: it must never fail an add that landed
        warn(f"could not look for similar beliefs: {e}")
        return []


@belief_app.command("show")
def belief_show(ctx: typer.Context, belief_id: str = typer.Argument(..., metavar="ID"), as_json: bool = JSON):
    """Show one belief with its evidence."""
    from ..api.shapes import belief_json as shown_json

    mem = memory(ctx)
    b, refused = mem.shown_belief(belief_id)
    d = shown_json(b, refused, mem.today, mem.params)
    if as_json:
        emit_json(d)
        return
    report_refused([refused] if refused else [])
    typer.echo(f"{b.title}  [{b.id}]")
    typer.echo(f"  {b.kind} · {b.basis} · {b.permanence} · {b.status}"
               + (" · pinned" if b.pinned else "") + (f" · scope {b.scope}" if b.scope != "global" else ""))
    typer.echo(f"  confidence {b.confidence:.2f} → effective {d['effective_confidence']:.2f} ({d['tier']})")
    typer.echo(f"  first {b.first} · confirmed {b.confirmed or 'never'} · challenged {b.challenged or 'never'}")
    if b.tags:
        typer.echo(f"  tags: {', '.join(b.tags)}")
    typer.echo("")
    typer.echo(b.statement)
    if b.evidence:
        typer.echo("\nEvidence:")
        for e in b.evidence:
            link = f" [[{e.link}]]" if e.link else ""
            typer.echo(f"  {e.date} · {e.kind}{link} — {e.note}")


@belief_app.command("list")
def belief_list(ctx: typer.Context,
                kind: str | None = typer.Option(None, "--kind"),
                permanence: str | None = typer.Option(None, "--permanence"),
                status: str = typer.Option("active", "--status", help="active, superseded, retired or all."),
                tag: str | None = typer.Option(None, "--tag"),
                scope: str | None = typer.Option(None, "--scope", help="A project: its beliefs plus global ones."),
                min_confidence: float | None = typer.Option(None, "--min-confidence", min=0.0, max=1.0,
                                                            help="On effective confidence, 0–1."),
                as_json: bool = JSON):
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
        typer.echo("No beliefs match." if listed.shown else "No beliefs yet.")
        return
    for eff, b in listed.rows:
        typer.echo(f"{b.confidence:.2f} → {eff:.2f}  {b.permanence:<11} {b.id} — {b.title}"
                   + ("" if b.status == "active" else f"  ({b.status})"))


@belief_app.command("edit")
def belief_edit(ctx: typer.Context, belief_id: str = typer.Argument(..., metavar="ID"),
                title: str | None = typer.Option(None, "--title"),
                statement: str | None = typer.Option(None, "--statement"),
                kind: str | None = typer.Option(None, "--kind"),
                basis: str | None = typer.Option(None, "--basis"),
                permanence: str | None = typer.Option(None, "--permanence"),
                confidence: float | None = typer.Option(None, "--confidence"),
                tag: list[str] | None = typer.Option(None, "--tag", help="Replaces the tags."),
                scope: str | None = typer.Option(None, "--scope"),
                depends_on: list[str] | None = typer.Option(None, "--depends-on", metavar="ID",
                                                            help="Replaces what it rests on ('' for nothing)."),
                note: str = typer.Option("", "--note", help="Why (goes into the evidence line)."),
                as_json: bool = JSON):
    """Change a belief's fields by hand (a user action, recorded with provenance)."""
    mem = memory(ctx)
    rests = None if depends_on is None else [d for d in depends_on if d.strip()]
    b = mem.edit_belief(belief_id, note=note, title=title, statement=statement, kind=kind, basis=basis,
                        permanence=permanence, confidence=confidence, tags=tag or None, scope=scope,
                        depends_on=rests)
    _done(mem, b, as_json, f"Edited {b.id}")


@belief_app.command("retire")
def belief_retire(ctx: typer.Context, belief_id: str = typer.Argument(..., metavar="ID"),
                  note: str = typer.Option("", "--note"), as_json: bool = JSON):
    """Retire a belief: it stays in the vault, out of recall (rule 5)."""
    mem = memory(ctx)
    _done(mem, mem.retire(belief_id, note=note), as_json, f"Retired {belief_id}")


@belief_app.command("reject")
def belief_reject(ctx: typer.Context, belief_id: str = typer.Argument(..., metavar="ID"),
                  note: str = typer.Option("", "--note"),
                  retire: bool = typer.Option(False, "--retire", help="Retire instead of lowering by 0.20."),
                  as_json: bool = JSON):
    """The user says a belief is no longer true: lower it by 0.20, or retire it (rule 5)."""
    mem = memory(ctx)
    b = mem.reject(belief_id, retire=retire, note=note)
    _done(mem, b, as_json, f"Retired {belief_id}" if retire else f"Lowered {belief_id} to {b.confidence:.2f}")


@belief_app.command("supersede")
def belief_supersede(ctx: typer.Context, old: list[str] = typer.Argument(..., metavar="OLD..."),
                     by: str = typer.Option(..., "--by", help="The belief that replaces them."),
                     note: str = typer.Option("", "--note"), as_json: bool = JSON):
    """Mark beliefs as superseded by another (they stay, out of recall)."""
    mem = memory(ctx)
    _done(mem, mem.supersede(old, by, note=note), as_json, f"{', '.join(old)} superseded by {by}")


@belief_app.command("merge")
def belief_merge(ctx: typer.Context, keep: str = typer.Argument(..., metavar="KEEP"),
                 other: str = typer.Argument(..., metavar="OTHER"),
                 note: str = typer.Option("", "--note"), as_json: bool = JSON):
    """Merge two beliefs you say are one: OTHER's evidence joins KEEP, which supersedes it."""
    mem = memory(ctx)
    _done(mem, mem.merge(keep, other, note=note), as_json, f"Merged {other} into {keep}")


@belief_app.command("pin")
def belief_pin(ctx: typer.Context, belief_id: str = typer.Argument(..., metavar="ID"), as_json: bool = JSON):
    """Exempt a belief from decay."""
    mem = memory(ctx)
    _done(mem, mem.set_pinned(belief_id, True), as_json, f"Pinned {belief_id}")


@belief_app.command("unpin")
def belief_unpin(ctx: typer.Context, belief_id: str = typer.Argument(..., metavar="ID"), as_json: bool = JSON):
    """Let a belief decay again."""
    mem = memory(ctx)
    _done(mem, mem.set_pinned(belief_id, False), as_json, f"Unpinned {belief_id}")


def _choice(name: str, value: str, allowed) -> None:
    """A filter with a closed set of values: a typo is an error, not an empty list."""
    if value not in allowed:
        fail(f"--{name} must be one of {', '.join(allowed)}, not {value!r}")


def _done(mem, b, as_json: bool, text: str) -> None:
    if as_json:
        emit_json(belief_json(b, mem.today, mem.params))
    else:
        typer.echo(text)


# --- observe -------------------------------------------------------------------------------

@app.command(context_settings={"allow_extra_args": True})
def observe(ctx: typer.Context,
            connects: str | None = typer.Option(None, "--connects", help="A belief id, or 'new'."),
            strength: str | None = typer.Option(None, "--strength",
                                                help="single, confirming, complicating or contradicting."),
            evidence: str | None = typer.Option(None, "--evidence", help="What happened, concretely."),
            suggests: str = typer.Option("", "--suggests"),
            therefore: str = typer.Option("", "--therefore"),
            basis: str = typer.Option("behavioral", "--basis",
                                      help="behavioral, self-report or interpretive (never fact: rule 14)."),
            session: str | None = typer.Option(None, "--session"),
            source: str = typer.Option("cli", "--source"),
            date: str | None = typer.Option(None, "--date"),
            title: str | None = typer.Option(None, "--title", help="With --connects new: create a belief."),
            kind: str | None = typer.Option(None, "--kind"),
            permanence: str | None = typer.Option(None, "--permanence"),
            new_despite_similar: bool = typer.Option(
                False, "--new-despite-similar",
                help="With --connects new: create the belief even when a similar one is active (rule 17)."),
            cited: list[str] | None = typer.Option(
                None, "--cited", help="A belief id the assistant cited ([id]) this session; repeatable."),
            successor: str | None = typer.Option(None, "--successor",
                                                 help="With --strength contradicting: what holds instead "
                                                      "(a new belief's title, or an id)."),
            depends_on: list[str] = typer.Option([], "--depends-on", metavar="ID",
                                                 help="A belief the connected (or new) one rests on."),
            batch: str | None = typer.Option(None, "--input", metavar="FILE|-",
                                             help="A JSON array of observations from FILE, or - for stdin."),
            from_transcript: str | None = typer.Option(None, "--from-transcript",
                                                       help="Find observations in a Claude Code transcript (JSONL)."),
            llm: bool = typer.Option(False, "--llm",
                                     help="With --from-transcript: also ask Claude (needs ANTHROPIC_API_KEY)."),
            as_json: bool = JSON,
            ):
    """Record observations (0–3 per session) and apply the rules to the beliefs they connect."""
    if ctx.args:
        # `observe --json FILE|-` read a batch before --json became the output switch; the
        # /observe and /mirror skills installed by an older epimem still call it that way.
        legacy = ctx.args[0]
        if not as_json or batch is not None or len(ctx.args) > 1:
            fail(f"unexpected argument {' '.join(ctx.args)!r}: a batch is read with --input FILE|-")
        warn("`observe --json FILE|-` is deprecated: use `--input FILE|- --json` "
             "(`epimem install claude-code` updates the skills)")
        batch = legacy
    mem = memory(ctx)
    if from_transcript:
        _observe_transcript(mem, from_transcript, llm, session, as_json)
        return
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
            fail("give --connects, --strength and --evidence, or a batch with --input FILE|-")
        item = {"connects": connects, "strength": strength, "evidence": evidence, "suggests": suggests,
                "therefore": therefore, "basis": basis, "session": session, "date": date,
                "title": title, "kind": kind, "permanence": permanence,
                "new_despite_similar": new_despite_similar or None, "successor": successor,
                "depends_on": depends_on or None, "cited": cited or None}
        items = [{k: v for k, v in item.items() if v is not None}]
    report = mem.observe(items, source=source, session=session)
    if as_json:
        emit_json(observe_json(report))
    else:
        _print_observe(report)
    if report.held:
        raise typer.Exit(1)  # nothing was written: a script must notice


def _observe_transcript(mem, path: str, llm: bool, session: str | None, as_json: bool) -> None:
    """The session-end pass by hand: once per session, and it says why when it records nothing."""
    try:
        from ..claude.session_end import record_from_transcript
    except ImportError:
        fail("--from-transcript is not available in this build")
    mem.vault.require()
    if not Path(path).is_file():
        fail(f"cannot read {path}: not a file (give the path of a Claude Code transcript, .jsonl)")
    try:
        report, notes = record_from_transcript(mem, path, use_llm=llm, session=session)
    except OSError as e:
        fail(f"cannot read {path}: {e}")
    for note in notes:
        warn(note)
    if as_json:
        emit_json(observe_json(report) if report else NOTHING_OBSERVED)
    elif report:
        _print_observe(report)
    else:
        typer.echo("Nothing recorded.")


def _print_observe(report) -> None:
    if not report.results:
        typer.echo("Nothing to record.")
    for r in report.results:
        where = r.belief or "unconnected"
        change = f" ({r.before:.2f} → {r.after:.2f})" if r.before is not None and r.after != r.before else ""
        typer.echo(f"{r.observation.id} → {where}{change}: {r.reason}")
        if r.tension:
            typer.echo(f"  tension opened: {r.tension}" if r.tension_opened
                       else f"  added to the open tension {r.tension}")
        for s in r.similar:
            typer.echo(f"  similar: {s['id']} — {s['title']} (similarity {s['similarity']:.2f})")
    if report.held:
        typer.echo("Nothing was written. Connect the observation to one of the similar beliefs, or "
                   "create it anyway with --new-despite-similar (\"new_despite_similar\": true in a batch).")
    for r in report.alerts:
        typer.echo(f"ALERT: {r.belief} was held at {r.before:.2f} and has just been contradicted; "
                   "tell the user.")


# --- tensions ------------------------------------------------------------------------------

@app.command()
def tensions(ctx: typer.Context, status: str | None = typer.Option(None, "--status"), as_json: bool = JSON):
    """List tensions (contradictions kept on record)."""
    from ..core.model import TENSION_STATUSES

    if status is not None:
        _choice("status", status, TENSION_STATUSES)
    mem = memory(ctx)
    mem.vault.require()
    ts, problems = mem.vault.load_tensions()
    report_problems(problems)
    ts = [t for t in ts if status is None or t.status == status]
    if as_json:
        emit_json({"tensions": [tension_json(t) for t in ts], "problems": problems_json(problems)})
        return
    if not ts:
        typer.echo("No tensions.")
    for t in ts:
        typer.echo(f"{t.status:<10} {t.id}  — {t.title}  [{t.belief}]")


@tension_app.command("resolve")
def tension_resolve(ctx: typer.Context, tension_id: str = typer.Argument(..., metavar="ID"),
                    note: str = typer.Option(..., "--note", help="How it was resolved."), as_json: bool = JSON):
    """Resolve a tension with a note (never by rewriting history)."""
    mem = memory(ctx)
    t = mem.resolve_tension(tension_id, note)
    if as_json:
        emit_json(tension_json(t))
    else:
        typer.echo(f"Resolved {t.id}")


@tension_app.command("open")
def tension_open(ctx: typer.Context, belief_id: str = typer.Argument(..., metavar="BELIEF"),
                 note: str = typer.Option(..., "--note", help="What does not fit."),
                 title: str = typer.Option("", "--title"), as_json: bool = JSON):
    """Open a tension on a belief yourself (status unresolved)."""
    mem = memory(ctx)
    t = mem.open_tension(belief_id, note, title)
    if as_json:
        emit_json(tension_json(t))
    else:
        typer.echo(f"Opened {t.id} on {t.belief}")


@tension_app.command("reopen")
def tension_reopen(ctx: typer.Context, tension_id: str = typer.Argument(..., metavar="ID"),
                   note: str = typer.Option(..., "--note", help="Why it is open again."), as_json: bool = JSON):
    """Reopen a resolved tension (status unresolved)."""
    mem = memory(ctx)
    t = mem.reopen_tension(tension_id, note)
    if as_json:
        emit_json(tension_json(t))
    else:
        typer.echo(f"Reopened {t.id}")


@tension_app.command("watch")
def tension_watch(ctx: typer.Context, tension_id: str = typer.Argument(..., metavar="ID"),
                  note: str = typer.Option("", "--note"), as_json: bool = JSON):
    """Keep watching a tension (status watching)."""
    mem = memory(ctx)
    t = mem.watch_tension(tension_id, note)
    if as_json:
        emit_json(tension_json(t))
    else:
        typer.echo(f"Watching {t.id}")


# --- sessions --------------------------------------------------------------------------------

@session_app.command("start")
def session_start(ctx: typer.Context,
                  source: str = typer.Option("startup", "--source", help="startup, resume, clear, compact or fork."),
                  session: str | None = typer.Option(None, "--session",
                                                     help="The session's id: its observations then move numbers."),
                  as_json: bool = JSON):
    """Count a session (only `startup`) and say whether a review is due or the vault was dormant."""
    mem = memory(ctx)
    r = mem.session_start(source, session)
    if as_json:
        emit_json(session_json(r))
    else:
        for line in r.lines():
            typer.echo(line)


# --- history ---------------------------------------------------------------------------------

@app.command("history")
def history_cmd(ctx: typer.Context, belief_id: str = typer.Argument(..., metavar="ID"), as_json: bool = JSON):
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
        typer.echo(f"{p.when:%Y-%m-%d %H:%M}  {p.sha[:8]}  {arrow:<12} {p.status or '':<10} {p.subject}")
        prev = conf


@app.command()
def diff(ctx: typer.Context, since: str = typer.Option(..., "--since", help="A date YYYY-MM-DD or a git revision."),
         as_json: bool = JSON):
    """What changed since a date or revision, in words."""
    mem = memory(ctx)
    changes = mem.diff(since)
    if as_json:
        emit_json({"since": since, "changes": [change_json(c) for c in changes]})
        return
    if not changes:
        typer.echo(f"Nothing changed since {since}.")
    for c in changes:
        typer.echo(f"- {c.sentence()}")


@app.command()
def undo(ctx: typer.Context,
         commit: str | None = typer.Argument(None, metavar="[COMMIT]",
                                             help="An epimem commit (default: the last change not yet undone)."),
         as_json: bool = JSON):
    """Take back an epimem change with a new commit; again goes one further back (history is never rewritten)."""
    mem = memory(ctx)
    sha, subject = mem.undo(commit)
    if as_json:
        emit_json({"commit": sha, "undone": subject})
    else:
        typer.echo(f"Undid: {subject}")


@app.command()
def redo(ctx: typer.Context, as_json: bool = JSON):
    """Re-apply what the last undo took back."""
    mem = memory(ctx)
    sha, subject = mem.redo()
    if as_json:
        emit_json({"commit": sha, "redone": subject})
    else:
        typer.echo(f"Redid: {subject}")


@app.command()
def commit(ctx: typer.Context, as_json: bool = JSON):
    """Commit hand edits (Obsidian, an editor) with a message naming what changed."""
    mem = memory(ctx)
    sha, changes, problems = mem.commit_hand_edits()
    report_problems(problems)
    if as_json:
        emit_json({"commit": sha, "changes": [change_json(c) for c in changes], "problems": problems_json(problems)})
        return
    if sha is None:
        typer.echo("Nothing to commit.")
        return
    typer.echo(f"Committed {sha[:8]}:")
    for c in changes:
        typer.echo(f"- {c.sentence()}")


@app.command()
def validate(ctx: typer.Context, as_json: bool = JSON,
             fix: bool = typer.Option(False, "--fix", help="Rewrite references written as bare ids before "
                                                           "(supersedes, a tension's belief, a review's beliefs) "
                                                           "as [[wikilinks]], in one commit.")):
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
            typer.echo(f"Committed {sha[:8] if sha else ''}: {len(fixed)} note{'s' if len(fixed) != 1 else ''} "
                       "now name beliefs as [[wikilinks]].")
        for p in problems:
            typer.echo(str(p))
        if bare:
            typer.echo(f"{len(bare)} note{'s' if len(bare) != 1 else ''} written before name beliefs by bare id "
                       f"({', '.join(bare[:3])}{', …' if len(bare) > 3 else ''}); `epimem validate --fix` makes "
                       "them [[wikilinks]] Obsidian's graph follows, in one commit.")
        if not problems:
            typer.echo("Vault is valid.")
    if problems:
        raise typer.Exit(1)


@app.command()
def doctor(ctx: typer.Context, as_json: bool = JSON):
    """Say what state the vault, its wiring and its index are in, with the fix for each problem; exit 1 on any."""
    from ..agents.install import wiring
    from ..api import doctor as doctor_api
    from ..claude.install import doctor_row
    from ..store.paths import resolve_root

    st = state(ctx)
    root = resolve_root(st.vault)
    given = getattr(ctx.find_root().get_parameter_source("vault"), "name", "")  # Typer's own click
    source = {"COMMANDLINE": "flag", "ENVIRONMENT": "env"}.get(given, "default")
    rep = doctor_api.run(root, source=source, today=st.today, agents=(doctor_row(root), *wiring(str(root))))
    if as_json:
        emit_json(rep.as_json())
    else:
        for c in rep.checks:
            typer.echo(f"{c.status:<8} {c.name:<14} {c.said}" + (f"\n{'':<23} fix: {c.fix}" if c.fix else ""))
        n = len(rep.problems)
        typer.echo("Healthy." if not n else f"{n} problem{'s' if n != 1 else ''}: each says its fix.")
    if not rep.healthy:
        raise typer.Exit(1)


# --- feature areas ------------------------------------------------------------------------------

def _register_areas() -> None:
    from . import claude, forget, install, mcp, mirror, portability, recall

    for mod in (mirror, recall, install, claude, mcp, portability, forget):
        mod.register(app)


def _plain_help(t: typer.Typer) -> None:
    """Every group, the areas' too, renders its help without Rich (see `app`)."""
    t.rich_markup_mode = None
    for group in t.registered_groups:
        _plain_help(group.typer_instance)


_register_areas()
_plain_help(app)


from .plain import error_message  # noqa: E402  (its home is typer-free: cli.fast uses it too)


def run(args: list[str]) -> int:
    """The one place where a domain error becomes a message and an exit code (docs/cli.md, "Exit codes")."""
    from ..core.errors import EpimemError

    try:
        app(args=args, prog_name="epimem")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except EpimemError as e:
        typer.echo(f"epimem: error: {error_message(e)}", err=True)
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    return 0
