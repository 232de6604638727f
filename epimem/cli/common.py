"""What every CLI module shares: the vault from the global options, JSON
output, and errors that end the command with a message, never a traceback."""

from __future__ import annotations

import dataclasses
import json
import sys
from datetime import date, datetime
from typing import Any, NoReturn

import typer


@dataclasses.dataclass
class State:
    vault: str | None = None
    today: str | None = None


def state(ctx: typer.Context) -> State:
    root = ctx.find_root()
    if not isinstance(root.obj, State):
        root.obj = State()
    return root.obj


def memory(ctx: typer.Context):
    from ..api.memory import Memory
    from ..store.paths import resolve_root

    st = state(ctx)
    return Memory(resolve_root(st.vault), today=st.today)


def _default(o: Any) -> Any:
    if isinstance(o, (date, datetime)):
        return o.isoformat()
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return dataclasses.asdict(o)
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    return str(o)


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, default=_default, ensure_ascii=False, indent=2) + "\n")


def fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"epimem: error: {message}", err=True)
    raise typer.Exit(code)


def warn(message: str) -> None:
    typer.echo(f"epimem: {message}", err=True)


def belief_json(b, today: date, params, full: bool = True) -> dict[str, Any]:
    """A belief as `--json` shows it: `core.record.view`."""
    from ..core.record import view

    return view(b, today, params, full)


def problems_json(problems) -> list[dict[str, Any]]:
    return [{"path": p.path, "line": p.line, "message": p.message} for p in problems]


def report_problems(problems) -> None:
    """Every command that meets a malformed file says so, on stderr."""
    for p in problems:
        warn(f"skipped {p}")
