"""`epimem mirror portrait|audit|gut-check|interview|answer` (SPEC §5).

Parses options, reads one snapshot, calls the pure analyses in
`epimem.mirror` (one module per mode), renders, and records reviews and gut-check answers
through `epimem.api.memory`. Output is markdown unless `--json` is given; the
JSON carries every figure and list plus the rendered markdown.
"""

from __future__ import annotations

import sys

from .common import answer_json, echo, emit_json, fail, memory, usage, warn
from .spec import Arg, Opt, command, group

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BIG = 2000  # beliefs: above this, --json is printed compact
REVIEWS = ("audit", "gut-check", "interview")  # the modes that can be recorded as a review

JSON_OPT = Opt("--json", dest="as_json", type=bool, help="Every figure and list as JSON (fields in docs/mirror.md).")
MD_OPT = Opt("--markdown", dest="as_md", type=bool, help="Readable markdown (the default).")

group("mirror", "See, and correct, what the assistant believes about you.")


def _lower(value: str) -> str:
    return value.strip().lower()


def _run(ctx, as_json: bool, as_md: bool, mode: str, **kw):
    """The mode, through the one dispatcher (`api/mirror.run`), the format flags checked first."""
    import gc

    from ..api.mirror import run

    if as_json and as_md:
        usage("choose one of --json and --markdown")
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
    import json

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
    echo(m.markdown, nl=False)
    rec = m.recorded
    if rec:
        echo(f"\nRecorded {rec['review']}; the next review is due at session {rec['next_review_at']}.")


# --- commands -----------------------------------------------------------------------

@command("mirror audit", JSON_OPT, MD_OPT,
         Opt("--record", type=bool, help="Write reviews/<date>.md, reset the review counter, commit."),
         Opt("--apply", type=bool, help="Accept every proposal (soften, raise, re-class) in one commit."),
         Opt("--apply-only", multiple=True, metavar="ID", complete="belief",
             help="Accept the proposals for this belief (repeatable)."))
def audit_cmd(ctx, as_json, as_md, record, apply=False, apply_only=()):
    """The dashboard: counts, strongest and weakest, dormancy, tensions, drift, coherence."""
    m = _run(ctx, as_json, as_md, "audit", record=record, apply=apply, apply_only=tuple(apply_only))
    if as_json:
        m.extra.setdefault("applied", None)
    _output(m, as_json)
    applied = m.extra.get("applied")
    if applied and not as_json:
        echo(f"\nApplied in {applied['commit'][:8]}:")
        for c in applied["changes"]:
            echo(f"- {c['belief']}: {c['why']}")


@command("mirror gut-check", JSON_OPT, MD_OPT,
         Opt("--record", type=bool, help="Record this gut-check as a review now."))
def gut_check_cmd(ctx, as_json, as_md, record):
    """The 3 firmest and 3 shakiest interpretive beliefs: still true? still uncertain?"""
    _output(_run(ctx, as_json, as_md, "gut-check", record=record), as_json)


@command("mirror interview", JSON_OPT, MD_OPT,
         Opt("--record", type=bool, help="Record the interview as a review (after asking it)."))
def interview_cmd(ctx, as_json, as_md, record):
    """A plan of 8–12 open questions, each tied to what prompted it."""
    _output(_run(ctx, as_json, as_md, "interview", record=record), as_json)


@command("mirror calibration", JSON_OPT, MD_OPT)
def calibration_cmd(ctx, as_json, as_md):
    """How often you said "still true" per confidence band, against its confidence (SPEC §14)."""
    _output(_run(ctx, as_json, as_md, "calibration"), as_json)


@command("mirror portrait", JSON_OPT, MD_OPT,
         Opt("--llm", type=bool, help="Ask Claude to write the prose (needs ANTHROPIC_API_KEY)."),
         Opt("--model", metavar="MODEL", help="Claude model for --llm (default: mirror_model in epistemology.md, "
                                              "else claude-sonnet-4-6)."),
         Opt("--timeout", type=float, default=60.0, min=0, metavar="SECONDS", help="Seconds to wait for Claude."))
def portrait_cmd(ctx, as_json, as_md, llm, model, timeout):
    """A character study: the person, themes, blind spots, contradictions, one question."""
    m = _run(ctx, as_json, as_md, "portrait", llm=llm, model=model, timeout=timeout)
    if m.extra["llm"]["error"]:
        warn(f"--llm: {m.extra['llm']['error']}; showing the offline portrait")
    _output(m, as_json)


@command("mirror answer", Arg("belief_id", metavar="BELIEF", help="The belief the gut-check asked about.",
                              complete="belief"),
         Opt("--verdict", required=True, type=_lower, choices=("true", "false", "unsure"),
             help="What the person said."),
         Opt("--note", default="", metavar="TEXT", help="What the person said, in a line."),
         Opt("--retire", type=bool, help="With --verdict false: retire instead of lowering by 0.20."),
         Opt("--now", default="", metavar="TITLE",
             help="With --verdict false: what holds instead, in your words; it supersedes the belief in one step."),
         Opt("--json", dest="as_json", type=bool, help="Machine-readable output (fields in docs/mirror.md)."))
def answer_cmd(ctx, belief_id, verdict, note, retire, now, as_json):
    """Record a gut-check answer: true is your word (no change), false lowers or retires, unsure is noted."""
    from ..mirror.gutcheck import AnswerError, answer, misplaced

    # a usage mistake (exit 2), said before the vault is read
    bad = misplaced(verdict, retire, now)
    if bad == "retire":
        usage("--retire goes with --verdict false")
    if bad == "now":
        usage("--now goes with --verdict false: it names what holds instead")
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
    echo(a.said)
    if progress["complete"]:
        rec = progress["recorded"]
        echo(f"Gut-check complete: recorded {rec['review']} as a review; the next review is due "
                   f"at session {rec['next_review_at']}.")
    elif progress["open"]:
        echo(f"Gut-check: {progress['answered']} of {progress['of']} answered.")


@command("mirror page",
         Opt("--out", default="", metavar="FILE", complete="file",
             help="Where to write the page (default: mirror-<date>.html here)."),
         Opt("--open", dest="open_", type=bool, help="Open the page in the default browser."),
         Opt("--top", type=int, default=30, min=1, metavar="N",
             help="Beliefs per tier shown with their timeline; the rest are listed in pages."))
def page_cmd(ctx, out, open_, top):
    """One self-contained HTML page: portrait, tiers, each belief's confidence over time, tensions."""
    from pathlib import Path

    from ..mirror import page_cache
    from ..store.clock import today
    from ..store.paths import resolve_root

    day = today(ctx.today)
    path = Path(out) if out else page_cache.default_out(day)
    # An unchanged vault's page is a copy of the last one: no snapshot, templates or note parser.
    size = page_cache.copy_cached(resolve_root(ctx.vault), day, top, path)
    if size is not None:
        echo(page_cache.wrote(path, size, True))
    else:
        from ..mirror.page import build

        mem = memory(ctx)
        built = build(mem, top=top)
        try:
            path.write_text(built.html, encoding="utf-8")
        except OSError as e:
            fail(f"cannot write {path}: {e.strerror or e}")
        echo(page_cache.wrote(path, len(built.html.encode()), built.cached))
    if open_:
        import webbrowser

        webbrowser.open(path.resolve().as_uri())


@command("mirror serve",
         Opt("--port", type=int, default=8765, min=0, max=65535, metavar="PORT", help="Port (0: any free port)."),
         Opt("--host", default="127.0.0.1", metavar="ADDRESS",
             help="Address to bind. Anything but 127.0.0.1 also needs --allow-remote."),
         Opt("--allow-remote", type=bool, help="Allow --host to be an address other machines can reach."),
         Opt("--open", dest="open_", type=bool, help="Open the page in the default browser."),
         Opt("--top", type=int, default=30, min=1, metavar="N", help="Beliefs per tier shown with their timeline."))
def serve_cmd(ctx, port, host, allow_remote, open_, top):
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
    echo(f"Serving the mirror of {mem.root} at {server.url}")
    echo("Read-only; rebuilt when the vault changes. Ctrl-C stops.")
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
