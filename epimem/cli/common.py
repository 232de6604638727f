"""What every CLI module shares: the vault from the global options, what a command prints (JSON,
lines, warnings), and errors that end the command with a message, never a traceback."""

from __future__ import annotations

import sys

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
from .spec import Context, Opt, UsageError

TYPE_CHECKING = False  # every command's module imports this one: nothing here it does not use
if TYPE_CHECKING:
    from datetime import date
    from typing import Any, NoReturn

JSON = Opt("--json", dest="as_json", type=bool, help="Machine-readable output (fields in docs/cli.md).")


def memory(ctx: Context):
    from ..api.memory import Memory
    from ..store.paths import resolve_root

    mem = Memory(resolve_root(ctx.vault), today=ctx.today)
    # Every command that reads the rules says what in them is invalid (key and line),
    # not only `validate`; the default is used meanwhile (SPEC §3).
    def said(problems) -> None:
        for p in problems:
            warn(str(p))

    mem.vault.on_rules_problems = said
    return mem


# --- what a command prints ---------------------------------------------------------------------

def _default(o: Any) -> Any:
    import dataclasses
    from datetime import date, datetime

    if isinstance(o, (date, datetime)):
        return o.isoformat()
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return dataclasses.asdict(o)
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    return str(o)


def emit_json(obj: Any) -> None:
    import json

    sys.stdout.write(json.dumps(obj, default=_default, ensure_ascii=False, indent=2) + "\n")


def echo(message: str = "", err: bool = False, nl: bool = True) -> None:
    """A line, flushed (a supervisor reading a pipe sees each one). Every text the command line
    prints for a person passes here: a title or a file name a remote pushed may hold escape
    sequences, written out visibly (`core.display.visible`) instead of run by the terminal."""
    out = sys.stderr if err else sys.stdout
    message = terminal(message)
    out.write(f"{message}\n" if nl else message)
    out.flush()


def terminal(text: str) -> str:
    """`text` as a terminal may be given it: line breaks and tabs kept, other control characters shown."""
    from ..core.display import visible

    return visible(text, keep="\n\t")


def say_error(message: str) -> None:
    echo(f"epimem: error: {message}", err=True)


def warn(message: str) -> None:
    echo(f"epimem: {message}", err=True)


def fail(message: str, code: int = 1) -> NoReturn:
    """End the command: an error found in the vault, a file or the rules (exit 1, docs/cli.md)."""
    say_error(message)
    raise SystemExit(code)


def usage(message: str) -> NoReturn:
    """End the command: the command line itself is wrong, as options that go together or exclude
    each other (exit 2, with the usage line, as every error the parser finds)."""
    raise UsageError(message)


def error_message(e, cmd=None) -> str:
    """An API error as the command line says it. The API names fields ("'title' is
    required"); here the user set that field with an option or an argument, so that is named
    (`--title is required`, `COMMIT: 'x' is not a commit`) as the command declares it."""
    from ..core.errors import InputError, located

    msg = located(e)
    if not (isinstance(e, InputError) and e.field and msg.startswith(f"'{e.field}'")):
        return msg
    named = next((o for o in (cmd.options if cmd is not None else ()) if o.dest == e.field), None)
    if named is None and cmd is not None:
        return msg  # not a field the command line sets: said as the API says it
    name = named.name if named is not None else "--" + e.field.replace("_", "-")
    return name + msg[len(e.field) + 2:]


# --- the shapes of the JSON output ---------------------------------------------------------
# One function per shape; every command that prints a shape calls it. The
# shared field names and types come from `core.vocabulary` (table in docs/cli.md).

def belief_json(b, today: date, params, full: bool = True) -> dict[str, Any]:
    """A belief as `--json` shows it: `core.record.view`, the projection of the one record."""
    return _belief_view(b, today, params, full)


def import_json(report, dry_run: bool) -> dict[str, Any]:
    """An import: the ids it brought in, and how many of each thing."""
    if report.proposed or report.on_file:  # `review: required`: nothing brought in, proposals written
        return {"beliefs": [], "tensions": [], "totals": {"beliefs": 0, "observations": 0, "tensions": 0},
                "session_counter": False, "commit": report.commit, "dry_run": dry_run,
                "proposed": list(report.proposed), "already_proposed": report.on_file,
                "unmapped": list(report.unmapped), "notes": list(report.notes), "refused": list(report.refused)}
    return {"beliefs": list(report.beliefs), "tensions": list(report.tensions),
            "totals": {"beliefs": len(report.beliefs), "observations": report.observations,
                       "tensions": len(report.tensions)}, "proposed": [],
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


def observed_line(r) -> str:
    """One observation's result as `observe` and `inbox accept` print it, the move of its belief
    said once: the reason of a confirmation or a challenge carries it already."""
    return f"{r.observation.id} → {r.belief or 'unconnected'}{moved(r, ' ({})')}: {r.reason}"


def moved(r, shape: str = "{}") -> str:
    """`before → after` in `shape` when the observation moved its belief and its reason does not say so."""
    if r.before is None or r.after is None or r.after == r.before:
        return ""
    move = f"{r.before:.2f} → {r.after:.2f}"
    return "" if move in r.reason else shape.format(move)
