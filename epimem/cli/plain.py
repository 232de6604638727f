"""What the command line prints, without Typer: the JSON, the messages, the exit.

Typer, with the pydantic it now imports, and the building of every command
cost a fresh process 0.3–0.5 s; `epimem recall`, which an assistant may run
at every turn, runs without them (`cli.fast`). Both paths print through here.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from datetime import date, datetime
from typing import Any, NoReturn


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


def echo(message: str = "", err: bool = False) -> None:
    """A line, flushed (a supervisor reading a pipe sees each one)."""
    out = sys.stderr if err else sys.stdout
    out.write(f"{message}\n")
    out.flush()


def say_error(message: str) -> None:
    echo(f"epimem: error: {message}", err=True)


def fail(message: str, code: int = 1) -> NoReturn:
    say_error(message)
    raise SystemExit(code)


def warn(message: str) -> None:
    echo(f"epimem: {message}", err=True)


def error_message(e) -> str:
    """An API error as the command line says it. The API names fields ("'title' is
    required"); here the user set that field with a flag, so the flag is named."""
    from ..core.errors import InputError

    msg = str(e)
    if isinstance(e, InputError) and e.field and msg.startswith(f"'{e.field}'"):
        msg = "--" + e.field.replace("_", "-") + msg[len(e.field) + 2:]
    return msg
