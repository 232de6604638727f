"""The command line's one declaration, and its parser.

Every command declares its options once, with `@command("belief add", Opt(...), ...)`
beside the function that runs it; the parser (`parse`), the help (`cli.help`) and the
shell completion (`cli.completion`) are all made from that declaration. Nothing else
parses a command line: the session-start hook, `recall` and `mcp` go through this
parser too, which is why it is the standard library only and builds nothing it is not
asked for (no dataclasses: the hook path does not import them).

A function receives `ctx` (the global options, `Context`) and one keyword argument per
option, named by its `dest`.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hook's path must not import typing for it
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any


class UsageError(Exception):
    """The command line itself is wrong (exit 2, docs/cli.md "Exit codes")."""

    def __init__(self, message: str, command: tuple[str, ...] = (), option: str | None = None):
        super().__init__(message)
        self.command = command
        self.option = option  # the unknown option, when that is what is wrong


class HelpRequested(Exception):
    def __init__(self, command: tuple[str, ...]):
        super().__init__(" ".join(command))
        self.command = command


# What a value of each type is called in a message (`--limit must be a whole number`).
_KINDS: dict[Callable, str] = {int: "a whole number", float: "a number"}
_METAVARS: dict[Callable, str] = {int: "N", float: "X"}


_UNSET = object()  # no default given: [] for a repeatable option, False for a flag, else None


class Opt:
    """An option (`flags` given) or a positional argument (`Arg`). A repeatable option declared
    with `default=None` receives None when it is not given (to tell "not given" from "given
    empty")."""

    __slots__ = ("flags", "negative", "dest", "type", "default", "help", "metavar", "multiple", "required",
                 "_choices", "min", "max", "envvar", "hidden", "complete")

    def __init__(self, *flags: str, help: str, dest: str | None = None, type: Callable = str,
                 default: Any = _UNSET, metavar: str | None = None, multiple: bool = False,
                 required: bool = False, choices: Iterable[str] | Callable[[], Iterable[str]] | None = None,
                 min: float | None = None,
                 max: float | None = None, envvar: str | None = None, hidden: bool = False,
                 complete: str | None = None):
        names: list[str] = []
        negative: list[str] = []
        for f in flags:
            on, _, off = f.partition("/")  # "--pinned/--no-pinned"
            names.append(on)
            if off:
                negative.append(off)
        self.flags = tuple(names)
        self.negative = tuple(negative)
        self.dest = dest or next((f for f in self.flags if f.startswith("--")), self.flags[0])[2:].replace("-", "_")
        self.type = type
        if default is _UNSET:
            default = [] if multiple else (False if type is bool else None)
        self.default = list(default) if multiple and default is not None else default
        self.help = help
        self.metavar = metavar
        self.multiple = multiple
        self.required = required
        # A callable: the list lives elsewhere (`core.model`) and is read only when this command runs.
        self._choices = choices if choices is None or callable(choices) else tuple(choices)
        self.min, self.max = min, max
        self.envvar = envvar
        self.hidden = hidden
        # What the shell completes for the value: "file", "dir", "belief", "tension", or None (the choices).
        self.complete = complete

    @property
    def choices(self) -> tuple[str, ...] | None:
        if callable(self._choices):
            self._choices = tuple(self._choices())
        return self._choices

    @property
    def is_flag(self) -> bool:
        return self.type is bool

    @property
    def positional(self) -> bool:
        return not self.flags

    @property
    def name(self) -> str:
        """How a message names it: its long flag, or its metavar."""
        return self.flags[0] if self.flags else self.shown_metavar

    @property
    def shown_metavar(self) -> str:
        if self.metavar:
            return self.metavar
        if self.choices and len("|".join(self.choices)) <= 40:
            return "|".join(self.choices)
        return _METAVARS.get(self.type, self.dest.upper())

    def convert(self, value: str):
        """The value as the function receives it; UsageError naming the option when it is not one."""
        try:
            v = self.type(value)
        except ValueError as e:
            what = _KINDS.get(self.type)
            raise UsageError(f"{self.name} must be {what}, not {value!r}" if what else f"{self.name} {e}") from None
        if self.choices is not None and v not in self.choices:
            raise UsageError(f"{self.name} must be one of {', '.join(self.choices)}, not {value!r}")
        if self.min is not None and v < self.min:
            raise UsageError(f"{self.name} must be at least {_num(self.min)}, not {value}")
        if self.max is not None and v > self.max:
            raise UsageError(f"{self.name} must be at most {_num(self.max)}, not {value}")
        return v


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def Arg(dest: str, *, help: str, metavar: str | None = None, required: bool = True, multiple: bool = False,
        default: object = _UNSET, type: Callable = str, choices: Iterable[str] | Callable | None = None,
        hidden: bool = False, complete: str | None = None) -> Opt:
    """A positional argument."""
    return Opt(help=help, dest=dest, type=type, default=default, metavar=metavar or dest.upper(),
               multiple=multiple, required=required, choices=choices, hidden=hidden, complete=complete)


class Command:
    """A command (`run` set) or a group of commands (children in the registry), or both:
    `install` runs itself when no agent is named."""

    __slots__ = ("path", "options", "run", "help", "hidden", "loose", "exit_zero", "expand")

    def __init__(self, path: tuple[str, ...], options: tuple[Opt, ...], run: Callable | None, help: str,
                 hidden: bool = False, loose: bool = False, exit_zero: bool = False,
                 expand: Callable[[], None] | None = None):
        self.path = path
        # expand: declares the group's commands when they are first needed (`install`'s agents come
        # from a table `epimem --help` need not import).
        self.expand = expand
        # exit_zero: a usage error under it is said on stderr and exits 0 (the hooks: a hook that
        # fails would disturb the session it runs for).
        self.exit_zero = exit_zero
        self.options = options
        self.run = run
        self.help = help
        self.hidden = hidden
        # loose: unknown options and extra words are no error: they go to the last positional that
        # takes many, else are ignored (`skill mirror`, the hooks: what they are given is not theirs).
        self.loose = loose

    @property
    def summary(self) -> str:
        return self.help.strip().split("\n\n", 1)[0].replace("\n", " ") if self.help else ""

    def children(self) -> list[Command]:
        if self.expand is not None:
            declare, self.expand = self.expand, None
            declare()
        n = len(self.path)
        return [c for p, c in COMMANDS.items() if len(p) == n + 1 and p[:n] == self.path]


COMMANDS: dict[tuple[str, ...], Command] = {}


def _path(path: str | tuple[str, ...]) -> tuple[str, ...]:
    return tuple(path.split()) if isinstance(path, str) else tuple(path)


def command(path: str | tuple[str, ...], *options: Opt, help: str | None = None, hidden: bool = False,
            loose: bool = False):
    """Declare the command `path` ("belief add"): its options, its help (the function's docstring)."""
    def register(fn):
        p = _path(path)
        if p in COMMANDS:
            raise ValueError(f"`{' '.join(p)}` is declared twice")
        COMMANDS[p] = Command(p, options, fn, help if help is not None else (fn.__doc__ or ""), hidden, loose)
        return fn
    return register


def group(path: str | tuple[str, ...], help: str, *options: Opt, run: Callable | None = None,
          hidden: bool = False, exit_zero: bool = False, expand: Callable[[], None] | None = None) -> None:
    """Declare a group of commands (`belief`); `run` with `options` when it is given no command."""
    p = _path(path)
    if p in COMMANDS:
        raise ValueError(f"`{' '.join(p)}` is declared twice")
    COMMANDS[p] = Command(p, options, run, help, hidden, exit_zero=exit_zero, expand=expand)


class Context:
    """What every command is given besides its options: the global options and where it is."""

    __slots__ = ("vault", "today", "command", "vault_source")

    def __init__(self, vault: str | None = None, today: str | None = None, command: tuple[str, ...] = (),
                 vault_source: str = "default"):
        self.vault = vault
        self.today = today
        self.command = command
        self.vault_source = vault_source  # where `vault` came from: "flag", "env" or "default"


# --- parsing ----------------------------------------------------------------------------------

def parse(cmd: Command, args: list[str]) -> dict:
    """`args` (what follows the command's name) as the keyword arguments of `cmd.run`."""
    by_flag: dict[str, tuple[Opt, bool]] = {}
    for o in cmd.options:
        for f in o.flags:
            by_flag[f] = (o, True)
        for f in o.negative:
            by_flag[f] = (o, False)
    positional = [o for o in cmd.options if o.positional]
    out: dict = {o.dest: (list(o.default) if o.multiple and o.default is not None else o.default)
                 for o in cmd.options}
    given: set[str] = set()
    words: list[str] = []
    i = 0
    try:
        while i < len(args):
            a = args[i]
            i += 1
            if a == "--":
                words += args[i:]
                break
            if a in ("--help", "-h"):
                raise HelpRequested(cmd.path)
            if not a.startswith("-") or a == "-":
                words.append(a)
                continue
            if a.startswith("--"):
                name, eq, value = a.partition("=")
            else:  # -n 3, -n3
                name, value = a[:2], a[2:]
                eq = "=" if value else ""
            hit = by_flag.get(name)
            if hit is None:
                if cmd.loose:
                    words.append(a)
                    continue
                raise UsageError(_unknown(cmd, name), option=name)
            o, on = hit
            if o.is_flag:
                if eq:
                    raise UsageError(f"{name} takes no value")
                out[o.dest] = on
            else:
                if not eq:
                    if i >= len(args):
                        raise UsageError(f"{name} needs a value ({o.shown_metavar})")
                    value = args[i]
                    i += 1
                v = o.convert(value)
                if o.multiple:
                    out[o.dest] = [*(out[o.dest] or ()), v]
                else:
                    out[o.dest] = v
            given.add(o.dest)
        for o in positional:
            if o.multiple:
                taken, words = words, []
                out[o.dest] = [o.convert(w) for w in taken] or out[o.dest]
                if not taken and o.required:
                    raise UsageError(f"missing argument {o.shown_metavar}")
            elif words:
                out[o.dest] = o.convert(words.pop(0))
            elif o.required:
                raise UsageError(f"missing argument {o.shown_metavar}")
            given.add(o.dest)
        if words and not cmd.loose:
            raise UsageError(f"unexpected argument {words[0]!r}")
        for o in cmd.options:
            if o.dest in given:
                continue
            if o.envvar and os.environ.get(o.envvar):
                out[o.dest] = o.convert(os.environ[o.envvar])
            elif o.required:
                raise UsageError(f"missing option {o.flags[0]}")
    except UsageError as e:
        e.command = cmd.path
        raise
    return out


def _unknown(cmd: Command, name: str) -> str:
    known = [f for o in cmd.options if not o.hidden for f in (*o.flags, *o.negative) if f.startswith("--")]
    from difflib import get_close_matches

    near = get_close_matches(name, known, n=1)
    return f"no option {name}" + (f" (did you mean {near[0]}?)" if near else "")


def resolve(words: list[str]) -> tuple[Command, list[str]]:
    """The command a command line names, and the words after its name."""
    path: tuple[str, ...] = ()
    i = 0
    while i < len(words) and (*path, words[i]) in COMMANDS:
        path = (*path, words[i])
        COMMANDS[path].children()  # a group declares its commands now if it waited
        i += 1
    if not path:
        raise KeyError(words[0] if words else "")
    return COMMANDS[path], words[i:]
