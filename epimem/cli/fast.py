"""Commands that run without Typer: their options are declared once (`Opt`),
Typer's command is made from the same declaration (`cli.common.typer_command`),
and `parse` reads the usual forms of a command line. Anything else — `--help`,
an unknown option, a value out of range — returns None, and the Typer command
answers it with its own messages."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Opt:
    name: str                   # the parameter's name
    flags: tuple[str, ...]      # ("--limit", "-n"); () for the positional argument
    type: type = str            # str, int, float or bool (a flag)
    default: object = None
    help: str = ""
    multiple: bool = False      # repeatable: a list
    min: float | None = None
    envvar: str | None = None
    metavar: str | None = None
    hidden: bool = False

    @property
    def annotation(self):
        if self.multiple:
            return list[self.type]  # type: ignore[name-defined]
        if self.default is None and self.type is not bool:
            return self.type | None
        return self.type


def parse(options: list[Opt], args: list[str]) -> dict | None:
    """`args` as keyword arguments of the command, or None to let Typer answer."""
    by_flag = {f: o for o in options for f in o.flags}
    positional = [o for o in options if not o.flags]
    out: dict = {o.name: ([] if o.multiple else o.default) for o in options}
    pos: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--" or a in ("-h", "--help"):
            return None
        if a.startswith("-") and a != "-":
            name, eq, value = a.partition("=")
            o = by_flag.get(name)
            if o is None:
                return None
            if o.type is bool:
                if eq:
                    return None
                out[o.name] = True
            else:
                if not eq:
                    if i + 1 >= len(args):
                        return None
                    i += 1
                    value = args[i]
                v = _convert(o, value)
                if v is None:
                    return None
                if o.multiple:
                    out[o.name].append(v)
                else:
                    out[o.name] = v
        else:
            pos.append(a)
        i += 1
    if len(pos) > len(positional):
        return None
    for o, v in zip(positional, pos):
        out[o.name] = v
    for o in options:
        if o.envvar and out[o.name] == o.default and os.environ.get(o.envvar):
            v = _convert(o, os.environ[o.envvar])
            if v is None:
                return None
            out[o.name] = v
    return out


def _convert(o: Opt, value: str):
    try:
        v = o.type(value)
    except ValueError:
        return None
    if o.min is not None and v < o.min:
        return None
    return v


def split_global(opts: list[str]) -> tuple[str | None, str | None] | None:
    """The global `--vault`, `--today` (name, value pairs from `__main__`) as (vault, today);
    None when `--today` is not a date (Typer says so)."""
    got = dict(zip(opts[::2], opts[1::2]))
    vault = got.get("--vault") or os.environ.get("EPIMEM_VAULT") or None
    today = got.get("--today") or None
    if today:
        from ..store.clock import ClockError
        from ..store.clock import today as parse_today

        try:
            parse_today(today)
        except ClockError:
            return None
    return vault, today
