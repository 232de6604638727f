"""Every command is declared once (`epimem.cli.spec`), and the parser, the help and the shell
completion are all made from that declaration: a command line built from it parses back into
it, in every spelling, whichever way the command is reached; the help and the completion show
exactly what it declares; every option says what it is for and what goes in it."""

from __future__ import annotations

import inspect
import re

import pytest

from epimem.cli import completion, dispatch
from epimem.cli.help import render
from epimem.cli.spec import COMMANDS, UsageError, parse, resolve

dispatch.load_all()
for _c in list(COMMANDS.values()):
    _c.children()  # the groups that declare their commands late
RUNNABLE = sorted((p, c) for p, c in COMMANDS.items() if c.run is not None and p)
IDS = [" ".join(p) for p, _ in RUNNABLE]


def _sample(o):
    """A value the option takes, as typed on a command line, and as the function receives it."""
    if o.choices:
        return o.choices[-1], o.convert(o.choices[-1])
    if o.type is int:
        n = int(o.min if o.min is not None else 0) + 1
        return str(n), n
    if o.type is float:
        v = (o.min if o.min is not None else 0.0) + 0.25
        return str(v), v
    return "sample-value", o.convert("sample-value")


def _command_line(cmd, equals: bool):
    """Every option of `cmd` given once (repeatable ones twice), and what parse must make of it."""
    args, want = [], {}
    for o in cmd.options:
        if o.positional:
            continue
        if o.is_flag:
            args.append(o.flags[0])
            want[o.dest] = True
            continue
        text, value = _sample(o)
        for _ in range(2 if o.multiple else 1):
            args += [f"{o.flags[0]}={text}"] if equals else [o.flags[0], text]
        want[o.dest] = [value, value] if o.multiple else value
    positionals = []
    for o in cmd.options:
        if o.positional and not o.hidden:
            text, value = _sample(o)
            n = 2 if o.multiple else 1
            positionals += [text] * n
            want[o.dest] = [value] * n if o.multiple else value
    return args, positionals, want


@pytest.mark.parametrize("path,cmd", RUNNABLE, ids=IDS)
def test_every_command_parses_back_what_its_declaration_says(path, cmd, monkeypatch):
    for o in cmd.options:
        if o.envvar:
            monkeypatch.delenv(o.envvar, raising=False)
    args, positionals, want = _command_line(cmd, equals=False)
    spellings = [args + positionals, positionals + args,
                 _command_line(cmd, equals=True)[0] + positionals]
    if positionals and not any(o.multiple and o.positional for o in cmd.options):
        spellings.append(args + ["--"] + positionals)
    got = [parse(cmd, list(s)) for s in spellings]
    for g in got:
        assert {k: g[k] for k in want} == want, (path, g)
    assert all(g == got[0] for g in got)
    # resolved from the whole command line as the entry point does
    found, rest = resolve([*path, *spellings[0]])
    assert found is cmd and parse(found, rest) == got[0]


@pytest.mark.parametrize("path,cmd", RUNNABLE, ids=IDS)
def test_every_function_takes_what_its_command_declares(path, cmd):
    params = list(inspect.signature(cmd.run).parameters)
    assert params[0] == "ctx", path
    assert sorted(params[1:]) == sorted(o.dest for o in cmd.options), path
    dests = [o.dest for o in cmd.options]
    assert len(dests) == len(set(dests)), path
    flags = [f for o in cmd.options for f in (*o.flags, *o.negative)]
    assert len(flags) == len(set(flags)), path


# A metavar says what goes there: a NAME, a list (a|b), a form (YYYY-MM-DD, 0-1, FILE|-).
METAVAR = re.compile(r"^(?:[A-Z][A-Z0-9_]*|[a-z0-9-]+(?:\|[a-z0-9-]+)+|YYYY-MM-DD|0-1|[A-Z]+\|[-a-zA-Z]+|ID\|new)$")


@pytest.mark.parametrize("path,cmd", sorted(COMMANDS.items()), ids=[" ".join(p) or "epimem" for p in sorted(COMMANDS)])
def test_every_option_says_what_it_is_for_and_what_goes_in_it(path, cmd):
    assert cmd.summary or cmd.hidden, path
    for o in (dispatch.GLOBAL if not path else cmd.options):
        assert len(o.help.split()) >= 2, (path, o.dest, o.help)
        if not o.is_flag and not o.hidden:
            assert METAVAR.match(o.shown_metavar), (path, o.dest, o.shown_metavar)
            assert not re.search(r"<|>|\bstr\b|\bint\b|\bfloat\b|list\[", o.shown_metavar)


@pytest.mark.parametrize("path,cmd", sorted(COMMANDS.items()), ids=[" ".join(p) or "epimem" for p in sorted(COMMANDS)])
def test_the_help_and_the_completion_show_exactly_the_declaration(path, cmd):
    text = render(cmd)
    assert "<str>" not in text and "list[" not in text
    visible = [f for o in cmd.options if not o.positional and not o.hidden for f in (*o.flags, *o.negative)]
    hidden = [f for o in cmd.options if o.hidden for f in o.flags]
    for f in visible:
        assert re.search(rf"(^|[\s,/]){re.escape(f)}([\s,]|$)", text, re.M), (path, f)
    for f in hidden:
        assert not re.search(rf"(^|\s){re.escape(f)}(\s|$)", text, re.M), (path, f)
    offered = {v for _, v, _ in completion.complete([*path, "--"])} if cmd.run or cmd.options else set()
    assert offered == ({f for f in visible if f.startswith("--")} | {"--help"} if offered else set()), path
    for child in cmd.children():
        if not child.hidden:
            assert child.path[-1] in text
            assert child.path[-1] in {v for _, v, _ in completion.complete([*path, ""])}


def test_every_first_word_is_routed_to_the_module_that_declares_it():
    for path, cmd in COMMANDS.items():
        if not path:
            continue
        assert path[0] in dispatch.AREAS, path
        module = cmd.run.__module__ if cmd.run else None
        if len(path) == 1 and module:
            assert module == f"epimem.cli.{dispatch.AREAS[path[0]]}", (path, module)
    assert set(dispatch.AREAS) == {p[0] for p in COMMANDS if p}


def test_an_unknown_option_names_the_nearest_one():
    cmd = COMMANDS[("belief", "add")]
    with pytest.raises(UsageError, match=r"no option --titel \(did you mean --title\?\)"):
        parse(cmd, ["--titel", "x"])
