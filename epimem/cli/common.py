"""What every CLI module shares: the vault from the global options, JSON
output, and errors that end the command with a message, never a traceback."""

from __future__ import annotations

import dataclasses
from datetime import date
from typing import Any, NoReturn

import typer

from ..api.shapes import (  # the shapes the MCP server shows too: their one home, used by every CLI module
    NOTHING_OBSERVED,  # noqa: F401
    answer_json,  # noqa: F401
    change_json,  # noqa: F401
    history_json,  # noqa: F401
    observe_json,  # noqa: F401
    session_json,  # noqa: F401
    tension_json,  # noqa: F401
)
from ..core import vocabulary as vocab
from ..core.record import view as _belief_view  # standard library only: cheap at start-up
from .plain import emit_json, say_error, warn  # noqa: F401  (their home is typer-free: cli.fast prints too)


@dataclasses.dataclass
class State:
    vault: str | None = None
    today: str | None = None


def state(ctx: typer.Context) -> State:
    root = ctx.find_root()
    if not isinstance(root.obj, State):
        root.obj = State()
    return root.obj


def typer_command(fn, options) -> None:
    """Give `fn(ctx, **kw)` the signature Typer reads, made from `cli.fast.Opt`
    declarations (the command's one list of options, which cli.fast parses too)."""
    import inspect

    params = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)]
    for o in options:
        extra = {"help": o.help}
        if o.metavar:
            extra["metavar"] = o.metavar
        if o.flags:
            if o.min is not None:
                extra["min"] = o.min
            if o.envvar:
                extra["envvar"] = o.envvar
            info = typer.Option([] if o.multiple else o.default, *o.flags, hidden=o.hidden, **extra)
        else:
            info = typer.Argument(o.default, **extra)
        params.append(inspect.Parameter(o.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=info,
                                        annotation=o.annotation))
    fn.__signature__ = inspect.Signature(params)
    fn.__annotations__ = {p.name: p.annotation for p in params}


def memory(ctx: typer.Context):
    from ..api.memory import Memory
    from ..store.paths import resolve_root

    st = state(ctx)
    mem = Memory(resolve_root(st.vault), today=st.today)
    # Every command that reads the rules says what in them is invalid (key and line),
    # not only `validate`; the default is used meanwhile (SPEC §3).
    mem.vault.on_rules_problems = lambda problems: [warn(str(p)) for p in problems]
    return mem


def fail(message: str, code: int = 1) -> NoReturn:
    say_error(message)
    raise typer.Exit(code)


# --- the shapes of the JSON output ---------------------------------------------------------
# One function per shape; every command that prints a shape calls it. The
# shared field names and types come from `core.vocabulary` (table in docs/cli.md).

def belief_json(b, today: date, params, full: bool = True) -> dict[str, Any]:
    """A belief as `--json` shows it: `core.record.view`, the projection of the one record."""
    return _belief_view(b, today, params, full)


def import_json(report, dry_run: bool) -> dict[str, Any]:
    """An import: the ids it brought in, and how many of each thing."""
    return {"beliefs": list(report.beliefs), "tensions": list(report.tensions),
            "totals": {"beliefs": len(report.beliefs), "observations": report.observations,
                       "tensions": len(report.tensions)},
            "session_counter": report.sessions, "commit": report.commit, "dry_run": dry_run,
            "unmapped": list(report.unmapped), "notes": list(report.notes), "refused": list(report.refused)}


problems_json = vocab.problems


def report_problems(problems) -> None:
    """Every command that meets a malformed file says so, on stderr."""
    for p in problems:
        warn(f"skipped {p}")


def report_refused(refused) -> None:
    """Every command that shows a belief whose hand edit was refused says so (SPEC rule 21)."""
    for r in refused:
        warn(str(r))
