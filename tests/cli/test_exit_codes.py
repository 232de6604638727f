"""The exit-code rule of docs/cli.md, held for every command: 2 when the command line itself is
wrong (found from the declaration, before anything is read), 1 when what it names is wrong (found
in the vault, a file or the rules), 0 always for the hooks."""

from __future__ import annotations

import pytest

from epimem.cli import dispatch
from epimem.cli.spec import COMMANDS

dispatch.load_all()
for _c in list(COMMANDS.values()):
    _c.children()
RUNNABLE = sorted(p for p, c in COMMANDS.items() if c.run is not None and p)
STRICT = [p for p in RUNNABLE if not dispatch.exit_zero(COMMANDS[p]) and not COMMANDS[p].loose]


def _usage(r, path):
    assert r.code == 2, (path, r.code, r.err)
    assert r.err.startswith("epimem: error: ") and f"Usage: epimem {' '.join(path)}" in r.err, r.err
    assert "Traceback" not in r.err and r.out == ""


@pytest.mark.parametrize("path", STRICT, ids=[" ".join(p) for p in STRICT])
def test_an_unknown_option_is_a_usage_error_everywhere(cli, vault, path):
    r = cli("--vault", vault.root, *path, "--no-such-option")
    _usage(r, path)
    assert "no option --no-such-option" in r.err


def _required(path):
    return [o for o in COMMANDS[path].options if o.required]


REQUIRED = [p for p in STRICT if _required(p)]


@pytest.mark.parametrize("path", REQUIRED, ids=[" ".join(p) for p in REQUIRED])
def test_a_missing_argument_or_option_is_a_usage_error(cli, vault, path):
    r = cli("--vault", vault.root, *path)
    _usage(r, path)
    assert "missing" in r.err


TYPED = [(p, o.flags[0], "lots" if o.type in (int, float) else "no-such-choice")
         for p in STRICT for o in COMMANDS[p].options
         if o.flags and not o.is_flag and (o.type in (int, float) or o.choices)]


@pytest.mark.parametrize("path,flag,value", TYPED, ids=[f"{' '.join(p)} {f}" for p, f, _ in TYPED])
def test_a_value_of_the_wrong_kind_is_a_usage_error(cli, vault, path, flag, value):
    r = cli("--vault", vault.root, *path, flag, value)
    _usage(r, path)
    assert f"{flag} must be" in r.err


@pytest.mark.parametrize("args", [
    ("mirror", "audit", "--json", "--markdown"),
    ("mcp", "--host", "0.0.0.0"),
    ("install", "--list", "--all"),
    ("install", "claude-code", "--llm", "--dry-run"),
    ("install", "claude-code", "--plugin", "--mcp", "--dry-run"),
    ("observe", "--connects", "x"),
    ("recall",),
    ("mirror", "answer", "x", "--verdict", "true", "--retire"),
    ("mirror", "answer", "x", "--verdict", "true", "--now", "y"),
    ("belief", "list", "--min-confidence", "1.5"),
    ("belief", "add", "--title", "t", "--statement", "s", "--kind", "k", "--basis", "guess", "--permanence", "stable"),
    ("--today", "someday", "belief", "list"),
    ("belief", "frobnicate"),
    ("frobnicate",),
    ("belief",),
])
def test_options_that_do_not_go_together_and_bad_words_are_usage_errors(cli, vault, args):
    r = cli("--vault", vault.root, *args)
    assert r.code == 2 and (r.err.startswith("epimem: error: ") or r.err.startswith("Usage:")), (args, r.err)
    assert "Traceback" not in r.err


@pytest.mark.parametrize("args, says", [
    (("belief", "show", "nope"), "nope"),
    (("history", "nope"), "nope"),
    (("tension", "resolve", "nope", "--note", "x"), "nope"),
    (("mirror", "answer", "nope", "--verdict", "true"), "nope"),
    (("undo", "bogus"), "COMMIT: 'bogus' is not a commit of this vault"),
    (("diff", "--since", "last tuesday"), "neither a revision nor a date"),
    (("belief", "add", "--title", "t", "--statement", "s", "--kind", "k", "--basis", "behavioral",
      "--permanence", "stable", "--confidence", "0.99"), "above the cap"),
    (("import", "jsonl", "no-such-file.jsonl"), "no-such-file.jsonl"),
    (("observe", "--input", "no-such-file.json"), "no-such-file.json"),
])
def test_what_the_command_names_being_wrong_exits_1(cli, vault, args, says):
    r = cli("--vault", vault.root, *args)
    assert r.code == 1 and r.err.startswith("epimem: error: ") and says in r.err, (args, r.err)
    assert "Usage:" not in r.err and "Traceback" not in r.err


def test_a_missing_vault_exits_1(cli, tmp_path):
    for args in (("belief", "list"), ("recall", "x"), ("mirror", "audit"), ("tensions",)):
        r = cli("--vault", tmp_path / "none", *args)
        assert r.code == 1 and "no vault at" in r.err, (args, r.err)


def test_the_hooks_exit_0_whatever_they_are_given(cli, vault):
    for args in (("hook", "session-start", "--no-such-option", "x"), ("hook", "no-such-event"), ("hook",),
                 ("hook", "session-end", "--llm=yes")):
        r = cli("--vault", vault.root, *args, stdin="")
        assert r.code == 0 and "Traceback" not in r.err, (args, r.err)


def test_undo_names_its_argument_not_an_option(cli, vault):
    r = cli("--vault", vault.root, "undo", "bogus")
    assert "--commit" not in r.err and "COMMIT" in r.err


def test_a_global_option_after_the_command_says_where_it_goes(cli, vault):
    r = cli("belief", "show", "x", "--vault", vault.root)
    assert r.code == 2 and "no option --vault" in r.err
    assert "--vault is a global option: it goes before the command (epimem --vault ... belief show ...)" in r.err
    r = cli("--vault", vault.root, "recall", "q", "--today", "2026-01-01")
    assert r.code == 2 and "--today is a global option" in r.err
    assert "global option" not in cli("--vault", vault.root, "recall", "q", "--titel").err
