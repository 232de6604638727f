"""`epimem mirror portrait|audit|gut-check|interview|answer` (SPEC §5).

Parses options, reads one snapshot, calls the pure analyses in
`epimem.mirror` (one module per mode), renders, and records reviews and gut-check answers
through `epimem.api.memory`. Output is markdown unless `--json` is given; the
JSON carries every figure and list plus the rendered markdown.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from .common import answer_json, emit_json, fail, memory, warn

BIG = 2000  # beliefs: above this, --json is printed compact
REVIEWS = ("audit", "gut-check", "interview")  # the modes that can be recorded as a review

JSON_OPT = typer.Option(False, "--json", help="Every figure and list as JSON (fields in docs/mirror.md).")
MD_OPT = typer.Option(False, "--markdown", help="Readable markdown (the default).")


def _run(ctx: typer.Context, as_json: bool, as_md: bool, mode: str, **kw):
    """The mode, through the one dispatcher (`api/mirror.run`), the format flags checked first."""
    import gc

    from ..api.mirror import run

    if as_json and as_md:
        fail("choose one of --json and --markdown")
    mem = memory(ctx)
    mem.vault.require()
    snap = mem.snapshot()
    # The snapshot lives until the process ends: keep the collector from
    # rescanning its hundreds of thousands of objects during the analysis.
    gc.freeze()
    return run(mem, mode, snapshot=snap, **kw)


def _size(data: Any) -> int:
    """Active beliefs behind an analysis (0 when it does not say)."""
    totals = getattr(data, "totals", None)
    n = totals.beliefs if totals is not None else getattr(data, "beliefs", 0)
    return n if isinstance(n, int) else 0


def _output(m, as_json: bool) -> None:
    from ..core import vocabulary as vocab
    from ..mirror.data import as_data

    if as_json:
        out = as_data(m.data)
        if m.mode in REVIEWS:
            out["recorded"] = m.recorded
        out.update(m.extra)
        out["markdown"] = m.markdown
        out["refused"] = vocab.refused(m.refused)
        if _size(m.data) > BIG:
            # json's C encoder only runs without indent: a 10,000-belief audit
            # prints in a tenth of the time, on one line.
            sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        else:
            emit_json(out)
        return
    typer.echo(m.markdown, nl=False)
    rec = m.recorded
    if rec:
        typer.echo(f"\nRecorded {rec['review']}; the next review is due at session {rec['next_review_at']}.")


# --- commands -----------------------------------------------------------------------

def audit_cmd(ctx: typer.Context, as_json: bool = JSON_OPT, as_md: bool = MD_OPT,
              record: bool = typer.Option(False, "--record",
                                          help="Write reviews/<date>.md, reset the review counter, commit."),
              apply: bool = typer.Option(False, "--apply",
                                         help="Accept every proposal (soften, raise, re-class) in one commit."),
              apply_only: list[str] = typer.Option([], "--apply-only", metavar="ID",
                                                   help="Accept the proposals for this belief (repeatable).")):
    """The dashboard: counts, strongest and weakest, dormancy, tensions, drift, coherence."""
    m = _run(ctx, as_json, as_md, "audit", record=record, apply=apply, apply_only=tuple(apply_only))
    if as_json:
        m.extra.setdefault("applied", None)
    _output(m, as_json)
    applied = m.extra.get("applied")
    if applied and not as_json:
        typer.echo(f"\nApplied in {applied['commit'][:8]}:")
        for c in applied["changes"]:
            typer.echo(f"- {c['belief']}: {c['why']}")


def gut_check_cmd(ctx: typer.Context, as_json: bool = JSON_OPT, as_md: bool = MD_OPT,
                  record: bool = typer.Option(False, "--record",
                                              help="Record this gut-check as a review now.")):
    """The 3 firmest and 3 shakiest interpretive beliefs: still true? still uncertain?"""
    _output(_run(ctx, as_json, as_md, "gut-check", record=record), as_json)


def interview_cmd(ctx: typer.Context, as_json: bool = JSON_OPT, as_md: bool = MD_OPT,
                  record: bool = typer.Option(False, "--record",
                                              help="Record the interview as a review (after asking it).")):
    """A plan of 8–12 open questions, each tied to what prompted it."""
    _output(_run(ctx, as_json, as_md, "interview", record=record), as_json)


def calibration_cmd(ctx: typer.Context, as_json: bool = JSON_OPT, as_md: bool = MD_OPT):
    """How often you said "still true" per confidence band, against its confidence (SPEC §14)."""
    _output(_run(ctx, as_json, as_md, "calibration"), as_json)


def portrait_cmd(ctx: typer.Context, as_json: bool = JSON_OPT, as_md: bool = MD_OPT,
                 llm: bool = typer.Option(False, "--llm",
                                          help="Ask Claude to write the prose (needs ANTHROPIC_API_KEY)."),
                 model: str | None = typer.Option(None, "--model",
                                                     help="Claude model for --llm (default: mirror_model "
                                                          "in epistemology.md, else claude-sonnet-4-6)."),
                 timeout: float = typer.Option(60.0, "--timeout", help="Seconds to wait for Claude.")):
    """A character study: the person, themes, blind spots, contradictions, one question."""
    m = _run(ctx, as_json, as_md, "portrait", llm=llm, model=model, timeout=timeout)
    if m.extra["llm"]["error"]:
        warn(f"--llm: {m.extra['llm']['error']}; showing the offline portrait")
    _output(m, as_json)


def answer_cmd(ctx: typer.Context,
               belief_id: str = typer.Argument(..., metavar="BELIEF"),
               verdict: str = typer.Option(..., "--verdict", help="true, false or unsure."),
               note: str = typer.Option("", "--note", help="What the person said, in a line."),
               retire: bool = typer.Option(False, "--retire",
                                           help="With --verdict false: retire instead of lowering by 0.20."),
               now: str = typer.Option("", "--now", metavar="TITLE",
                                       help="With --verdict false: what holds instead, in your words; "
                                            "it supersedes the belief in one step."),
               as_json: bool = typer.Option(False, "--json", help="Machine-readable output "
                                                                  "(fields in docs/mirror.md).")):
    """Record a gut-check answer: true is your word (no change), false lowers or retires, unsure is noted."""
    from ..mirror.gutcheck import AnswerError, answer

    mem = memory(ctx)
    mem.vault.require()
    try:
        a = answer(mem, belief_id, verdict, note=note, retire=retire, now=now)
    except AnswerError as e:
        fail(str(e))
    progress = a.progress
    if as_json:
        emit_json(answer_json(a))
        return
    typer.echo(a.said)
    if progress["complete"]:
        rec = progress["recorded"]
        typer.echo(f"Gut-check complete: recorded {rec['review']} as a review; the next review is due "
                   f"at session {rec['next_review_at']}.")
    elif progress["open"]:
        typer.echo(f"Gut-check: {progress['answered']} of {progress['of']} answered.")


def page_cmd(ctx: typer.Context,
             out: str = typer.Option("", "--out", metavar="FILE",
                                     help="Where to write the page (default: mirror-<date>.html here)."),
             open_: bool = typer.Option(False, "--open", help="Open the page in the default browser."),
             top: int = typer.Option(30, "--top", min=1, help="Beliefs per tier shown with their timeline; "
                                                             "the rest are listed in pages.")):
    """One self-contained HTML page: portrait, tiers, each belief's confidence over time, tensions."""
    from pathlib import Path

    from ..mirror.page import build
    from ..mirror.page_cache import default_out, wrote

    # An unchanged vault's page never gets here: epimem/__main__ writes it from the cache.
    mem = memory(ctx)
    built = build(mem, top=top)
    path = Path(out) if out else default_out(mem.today)
    try:
        path.write_text(built.html, encoding="utf-8")
    except OSError as e:
        fail(f"cannot write {path}: {e.strerror or e}")
    typer.echo(wrote(path, len(built.html.encode()), built.cached))
    if open_:
        import webbrowser

        webbrowser.open(path.resolve().as_uri())


def serve_cmd(ctx: typer.Context,
              port: int = typer.Option(8765, "--port", min=0, max=65535, help="Port (0: any free port)."),
              host: str = typer.Option("127.0.0.1", "--host",
                                       help="Address to bind. Anything but 127.0.0.1 also needs --allow-remote."),
              allow_remote: bool = typer.Option(False, "--allow-remote",
                                                help="Allow --host to be an address other machines can reach."),
              open_: bool = typer.Option(False, "--open", help="Open the page in the default browser."),
              top: int = typer.Option(30, "--top", min=1, help="Beliefs per tier shown with their timeline.")):
    """The page, live on 127.0.0.1: rebuilt when the vault changes, read-only, behind a token."""
    import time

    from ..mirror.serve import LOOPBACK, Server

    if host != LOOPBACK and not allow_remote:
        fail(f"--host {host}: the mirror shows everything believed about you; binding anything but "
             f"{LOOPBACK} needs --allow-remote")
    mem = memory(ctx)
    mem.vault.require()
    try:
        server = Server(mem, host=host, port=port, top=top).start()
    except OSError as e:
        fail(f"cannot listen on {host}:{port}: {e.strerror or e}")
    if host != LOOPBACK:
        warn(f"serving on {host}: anyone who can reach it and has the token can read the page")
    typer.echo(f"Serving the mirror of {mem.root} at {server.url}", err=False)
    typer.echo("Read-only; rebuilt when the vault changes. Ctrl-C stops.")
    sys.stdout.flush()
    if open_:
        import webbrowser

        webbrowser.open(server.url)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


def register(app: typer.Typer) -> None:
    mirror_app = typer.Typer(no_args_is_help=True,
                             help="See, and correct, what the assistant believes about you.")
    mirror_app.command("portrait")(portrait_cmd)
    mirror_app.command("audit")(audit_cmd)
    mirror_app.command("gut-check")(gut_check_cmd)
    mirror_app.command("interview")(interview_cmd)
    mirror_app.command("answer")(answer_cmd)
    mirror_app.command("calibration")(calibration_cmd)
    mirror_app.command("page")(page_cmd)
    mirror_app.command("serve")(serve_cmd)
    app.add_typer(mirror_app, name="mirror")
