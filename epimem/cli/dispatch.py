"""The `epimem` command line: the one place where a command line becomes a call and an error
becomes a message and an exit code. What exists is `cli.registry`; how a command is declared and
parsed, `cli.spec`. `epimem --help` imports the declarations without anything they run.
"""

from __future__ import annotations

import sys

from .registry import AREAS, GLOBAL, TOP, load, load_all, today_value
from .spec import COMMANDS, Command, Context, HelpRequested, UsageError, resolve


def split_global(args: list[str]) -> tuple[dict, list[str]]:
    """The global options before the command (as given: `--today` is checked by `check_today`)
    and the rest."""
    by_flag = {f: o for o in GLOBAL for f in o.flags}
    got: dict = {o.dest: o.default for o in GLOBAL}
    i = 0
    while i < len(args) and args[i].startswith("-"):
        a = args[i]
        i += 1
        if a in ("--help", "-h"):
            raise HelpRequested(())
        name, eq, value = a.partition("=")
        o = by_flag.get(name)
        if o is None:
            from .spec import _unknown

            raise UsageError(_unknown(TOP, name))
        if o.is_flag:
            if eq:
                raise UsageError(f"{name} takes no value")
            got[o.dest] = True
            continue
        if not eq:
            if i >= len(args):
                raise UsageError(f"{name} needs a value ({o.shown_metavar})")
            value = args[i]
            i += 1
        got[o.dest] = value
    return got, args[i:]


def check_today(today: str | None) -> None:
    if today:
        try:
            today_value(today)
        except ValueError as e:
            raise UsageError(f"--today {e}") from None


def _say(message: str) -> None:
    from .common import terminal

    sys.stderr.write(terminal(message) + "\n")
    sys.stderr.flush()


def main(args: list[str]) -> int:
    """Run `epimem ARGS`; the exit code (docs/cli.md, "Exit codes")."""
    from ..core.errors import EpimemError

    running: list[Command] = []
    try:
        return _run(args, running)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except EpimemError as e:
        from .common import error_message

        _say(f"epimem: error: {error_message(e, running[-1] if running else None)}")
        return e.exit_code
    except KeyboardInterrupt:
        return 130


def _run(args: list[str], running: list[Command]) -> int:
    cmd = TOP
    try:
        got, rest = split_global(args)
        if got["version"]:
            from .. import __version__

            sys.stdout.write(f"epimem {__version__}\n")
            return 0
        if got["install_completion"] or got["show_completion"]:
            from .completion import completion_cmd

            completion_cmd(Context(), shell=None, install=got["install_completion"])
            return 0
        if not rest:
            _help(TOP, err=True)
            return 2
        cmd, words = find(rest)
        if cmd.run is None:
            _help(cmd, err=True)
            return 0 if exit_zero(cmd) else 2
        from .spec import parse

        kwargs = parse(cmd, words)
        if not exit_zero(cmd):  # the hooks take `--today` as given: a bad one is logged, not an error
            check_today(got["today"])
        vault, source = got["vault"], "flag"
        if vault is None:
            import os

            vault = os.environ.get("EPIMEM_VAULT") or None
            source = "env" if vault else "default"
        running.append(cmd)
        cmd.run(Context(vault, got["today"], cmd.path, source), **kwargs)
        return 0
    except HelpRequested as h:
        _help(COMMANDS.get(h.command, TOP), err=False)
        return 0
    except UsageError as e:
        where = COMMANDS.get(e.command, cmd)
        from .help import prog, usage

        _say(f"epimem: error: {e}")
        if e.option in {f for o in GLOBAL for f in o.flags}:
            # `epimem belief show X --vault V` is the habit of every CLI whose options go anywhere.
            _say(f"{e.option} is a global option: it goes before the command "
                 f"(epimem {e.option} ... {' '.join(where.path)} ...)")
        _say(usage(where))
        _say(f"Try '{prog(where)} --help' for help.")
        return 0 if exit_zero(where) else 2


def find(rest: list[str]) -> tuple[Command, list[str]]:
    """The command `rest` (the words after the global options) names, and the words that are its
    own; a group given nothing more comes back as itself with no words (its help is the answer)."""
    if rest[0] not in AREAS:
        raise UsageError(_no_command(TOP, rest[0]))
    load(rest[0])
    cmd, words = resolve(rest)
    # A group runs itself only when it is given options, not a word (`install --list`).
    while cmd.run is None or (words and not words[0].startswith("-") and cmd.children()):
        if not words:
            return cmd, words
        if words[0] in ("--help", "-h"):
            raise HelpRequested(cmd.path)
        raise UsageError(_no_command(cmd, words[0]), cmd.path)
    return cmd, words


def exit_zero(cmd: Command) -> bool:
    """Whether `cmd` or a group it is in always exits 0 (the hooks)."""
    return any(getattr(COMMANDS.get(cmd.path[:n]), "exit_zero", False) for n in range(1, len(cmd.path) + 1))


def _no_command(cmd: Command, word: str) -> str:
    from .help import visible_children

    if cmd.path == ():
        load_all()
    names = [c.path[-1] for c in visible_children(cmd)]
    from difflib import get_close_matches

    near = get_close_matches(word, names, n=1)
    where = " ".join(("epimem", *cmd.path))
    return (f"no command {word!r} in {where}" + (f" (did you mean {near[0]}?)" if near else "")
            + f"; one of {', '.join(names)}")


def _help(cmd: Command, err: bool) -> None:
    from .help import print_help

    if cmd is TOP:
        load_all()
    print_help(cmd, err=err)
