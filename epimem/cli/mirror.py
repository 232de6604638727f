"""`epimem mirror portrait|audit|gut-check|interview|answer` (SPEC §5).

Parses options, reads one snapshot, calls the pure analyses in
`epimem.mirror.analysis`, renders, and records reviews and gut-check answers
through `epimem.memory`. Output is markdown unless `--json` is given; the
JSON carries every figure and list plus the rendered markdown.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Optional

import typer

from .common import emit_json, fail, memory, warn

PENDING = "gut-check.json"
BIG = 2000  # beliefs: above this, --json is printed compact  # in .epimem/: the open gut-check, so answers can complete it

JSON_OPT = typer.Option(False, "--json", help="Every figure and list as JSON (fields in docs/mirror.md).")
MD_OPT = typer.Option(False, "--markdown", help="Readable markdown (the default).")


def _load(ctx: typer.Context):
    from ..mirror import analysis  # noqa: F401 - fail early if the package is broken

    import gc

    mem = memory(ctx)
    mem.vault.require()
    params, _ = mem.vault.params()
    snap = mem.snapshot()
    # The snapshot lives until the process ends: keep the collector from
    # rescanning its hundreds of thousands of objects during the analysis.
    gc.freeze()
    return mem, params, snap


def _check_format(as_json: bool, as_md: bool) -> None:
    if as_json and as_md:
        fail("choose one of --json and --markdown")


def _recorded(mem, kind: str, markdown: str, beliefs=()) -> dict[str, Any]:
    sha = mem.record_review(kind, markdown, beliefs=beliefs)
    s = mem.vault.read_sessions()
    return {"review": f"reviews/{mem.today.isoformat()}.md", "commit": sha,
            "next_review_at": s.next_review_at}


def _say_recorded(rec: dict[str, Any]) -> None:
    typer.echo(f"\nRecorded {rec['review']}; the next review is due at session "
               f"{rec['next_review_at']}.")


def _size(data: Any) -> int:
    """Active beliefs behind an analysis (0 when it does not say)."""
    totals = getattr(data, "totals", None)
    n = totals.beliefs if totals is not None else getattr(data, "beliefs", 0)
    return n if isinstance(n, int) else 0


def _output(data: Any, markdown: str, as_json: bool, extra: dict[str, Any] | None = None) -> None:
    from ..mirror.analysis import as_data

    if as_json:
        out = as_data(data)
        out.update(extra or {})
        out["markdown"] = markdown
        if _size(data) > BIG:
            # json's C encoder only runs without indent: a 10,000-belief audit
            # prints in a tenth of the time, on one line.
            sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        else:
            emit_json(out)
    else:
        typer.echo(markdown, nl=False)


# --- the open gut-check ------------------------------------------------------------

def _pending_path(mem):
    return mem.vault.internal / PENDING


def _read_pending(mem) -> dict[str, Any] | None:
    p = _pending_path(mem)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # a lost or broken cache only means the gut-check is not counted
    if not isinstance(raw, dict) or not isinstance(raw.get("beliefs"), list):
        return None
    raw.setdefault("answers", {})
    return raw


def _write_pending(mem, data: dict[str, Any] | None) -> None:
    from ..vault import atomic_write

    p = _pending_path(mem)
    if data is None:
        p.unlink(missing_ok=True)
        return
    p.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(p, json.dumps(data, ensure_ascii=False, indent=1))


def _open_gut_check(mem, beliefs: tuple[str, ...]) -> None:
    """Remember what was asked; answers already given today carry over."""
    old = _read_pending(mem) or {}
    answers = {k: v for k, v in (old.get("answers") or {}).items()
               if k in beliefs and old.get("date") == mem.today.isoformat()}
    with mem.vault.lock():
        _write_pending(mem, {"date": mem.today.isoformat(), "beliefs": list(beliefs),
                             "answers": answers})


# --- commands -----------------------------------------------------------------------

def audit_cmd(ctx: typer.Context, as_json: bool = JSON_OPT, as_md: bool = MD_OPT,
              record: bool = typer.Option(False, "--record",
                                          help="Write reviews/<date>.md, reset the review counter, commit.")):
    """The dashboard: counts, strongest and weakest, dormancy, tensions, drift, coherence."""
    from ..mirror import analysis, render

    _check_format(as_json, as_md)
    mem, params, snap = _load(ctx)
    a = analysis.audit(snap, params, mem.today)
    md = render.audit_markdown(a)
    rec = _recorded(mem, "audit", md) if record else None
    _output(a, md, as_json, {"recorded": rec})
    if rec and not as_json:
        _say_recorded(rec)


def gut_check_cmd(ctx: typer.Context, as_json: bool = JSON_OPT, as_md: bool = MD_OPT,
                  record: bool = typer.Option(False, "--record",
                                              help="Record this gut-check as a review now.")):
    """The 3 firmest and 3 shakiest interpretive beliefs: still true? still uncertain?"""
    from ..mirror import analysis, render

    _check_format(as_json, as_md)
    mem, params, snap = _load(ctx)
    g = analysis.gut_check(snap, params, mem.today)
    md = render.gut_check_markdown(g)
    if g.beliefs:
        _open_gut_check(mem, g.beliefs)
    rec = None
    if record:
        rec = _recorded(mem, "gut-check", md, beliefs=g.beliefs)
        _write_pending(mem, None)
    _output(g, md, as_json, {"recorded": rec})
    if rec and not as_json:
        _say_recorded(rec)


def interview_cmd(ctx: typer.Context, as_json: bool = JSON_OPT, as_md: bool = MD_OPT,
                  record: bool = typer.Option(False, "--record",
                                              help="Record the interview as a review (after asking it).")):
    """A plan of 8–12 open questions, each tied to what prompted it."""
    from ..mirror import analysis, render

    _check_format(as_json, as_md)
    mem, params, snap = _load(ctx)
    iv = analysis.interview(snap, params, mem.today)
    md = render.interview_markdown(iv)
    rec = None
    if record:
        rec = _recorded(mem, "interview", md,
                        beliefs=sorted({q.belief for q in iv.questions if q.belief}))
    _output(iv, md, as_json, {"recorded": rec})
    if rec and not as_json:
        _say_recorded(rec)


def _configured_model(mem) -> str | None:
    from ..core.notes import NoteError, parse_note

    try:
        meta = parse_note(mem.vault.read_text("epistemology.md")).meta
    except (OSError, NoteError):
        return None
    v = meta.get("mirror_model")
    return v.strip() if isinstance(v, str) and v.strip() else None


def portrait_cmd(ctx: typer.Context, as_json: bool = JSON_OPT, as_md: bool = MD_OPT,
                 llm: bool = typer.Option(False, "--llm",
                                          help="Ask Claude to write the prose (needs ANTHROPIC_API_KEY)."),
                 model: Optional[str] = typer.Option(None, "--model",
                                                     help="Claude model for --llm (default: mirror_model "
                                                          "in epistemology.md, else claude-sonnet-4-6)."),
                 timeout: float = typer.Option(60.0, "--timeout", help="Seconds to wait for Claude.")):
    """A character study: the person, themes, blind spots, contradictions, one question."""
    from ..mirror import analysis, render

    _check_format(as_json, as_md)
    mem, params, snap = _load(ctx)
    brief = analysis.portrait_brief(snap, params, mem.today)
    info: dict[str, Any] = {"requested": llm, "used": False, "model": None, "error": None}
    md = None
    if llm:
        from ..mirror.llm import DEFAULT_MODEL, LLMError, LLMUnavailable, write_portrait

        info["model"] = model or _configured_model(mem) or DEFAULT_MODEL
        try:
            prose = write_portrait(brief, model=info["model"], timeout=timeout, patterns=params.redact)
            md = render.llm_portrait_markdown(prose, info["model"], brief)
            info["used"] = True
        except (LLMUnavailable, LLMError) as e:
            info["error"] = str(e)
            warn(f"--llm: {e}; showing the offline portrait")
    if md is None:
        note = f"--llm: {info['error']}; this is the offline portrait." if info["error"] else ""
        md = render.portrait_markdown(brief, note=note)
    _output(brief, md, as_json, {"llm": info})


def answer_cmd(ctx: typer.Context,
               belief_id: str = typer.Argument(..., metavar="BELIEF"),
               verdict: str = typer.Option(..., "--verdict", help="true, false or unsure."),
               note: str = typer.Option("", "--note", help="What the person said, in a line."),
               retire: bool = typer.Option(False, "--retire",
                                           help="With --verdict false: retire instead of lowering by 0.20."),
               as_json: bool = typer.Option(False, "--json", help="The result as JSON.")):
    """Record a gut-check answer: true is your word (no change), false lowers or retires, unsure is noted."""
    from ..mirror import render

    verdict = verdict.strip().lower()
    if verdict not in ("true", "false", "unsure"):
        fail(f"--verdict must be true, false or unsure, not {verdict!r}")
    if retire and verdict != "false":
        fail("--retire goes with --verdict false")
    mem = memory(ctx)
    mem.vault.require()
    before = mem.belief(belief_id)
    text = f"gut-check: {verdict}" + (f"; {note.strip()}" if note.strip() else "")
    if verdict == "true":
        after = mem.reinforce(belief_id, note=text, kind="reinforcing")
        said = f"Recorded: {belief_id} is still true, in your words (no number changes)."
    elif verdict == "false":
        after = mem.reject(belief_id, retire=retire, note=text)
        said = (f"Retired {belief_id}." if retire else
                f"Lowered {belief_id}: {before.confidence:.2f} → {after.confidence:.2f}.")
    else:
        after = mem.reinforce(belief_id, note=text, kind="unsure")
        said = f"Noted: unsure about {belief_id} (no number changes)."

    progress: dict[str, Any] = {"open": False, "answered": 0, "of": 0, "complete": False,
                                "recorded": None}
    with mem.vault.lock():
        pending = _read_pending(mem)
        if pending and belief_id in pending["beliefs"]:
            pending["answers"][belief_id] = {"verdict": verdict, "note": note.strip(),
                                             "title": before.title}
            done = all(b in pending["answers"] for b in pending["beliefs"])
            progress.update(open=True, answered=len(pending["answers"]), of=len(pending["beliefs"]),
                            complete=done)
            if done:
                rows = [(b, pending["answers"][b].get("title", b), pending["answers"][b]["verdict"],
                         pending["answers"][b].get("note", "")) for b in pending["beliefs"]]
                md = render.review_of_answers(mem.today, rows)
                progress["recorded"] = _recorded(mem, "gut-check", md, beliefs=pending["beliefs"])
                _write_pending(mem, None)
            else:
                _write_pending(mem, pending)
    if as_json:
        emit_json({"belief": belief_id, "verdict": verdict, "note": note.strip(),
                   "confidence_before": round(before.confidence, 2),
                   "confidence_after": round(after.confidence, 2),
                   "status": after.status, "gut_check": progress})
        return
    typer.echo(said)
    if progress["complete"]:
        rec = progress["recorded"]
        typer.echo(f"Gut-check complete: recorded {rec['review']} as a review; the next review is due "
                   f"at session {rec['next_review_at']}.")
    elif progress["open"]:
        typer.echo(f"Gut-check: {progress['answered']} of {progress['of']} answered.")


def register(app: typer.Typer) -> None:
    mirror_app = typer.Typer(no_args_is_help=True,
                             help="See, and correct, what the assistant believes about you.")
    mirror_app.command("portrait")(portrait_cmd)
    mirror_app.command("audit")(audit_cmd)
    mirror_app.command("gut-check")(gut_check_cmd)
    mirror_app.command("interview")(interview_cmd)
    mirror_app.command("answer")(answer_cmd)
    app.add_typer(mirror_app, name="mirror")
