"""Every `epimem …` command line the documents show a user or a model parses as the real CLI
parses it: the command exists, every option named is one of its options (or a global one before
it), and a literal value is one the option takes. Tests run the code; a renamed option or a
removed command in README.md, docs/, a skill or the instructions an installer writes fails only
the person who types it, so it is checked here.

Lines come from fenced code blocks, inline code spans, shell scripts and JSON strings. What a
line leaves open is not checked: a placeholder (`ID`, `<id>`, `FILE`, `…`, `${VAR}`, a template's
`{{agent}}`; its `{{cli}}` is `epimem`) stands for any value, `a|b` shows each alternative,
`[--note …]` is optional, and a line may stop before a required argument or an option's value
(a table names a command, it does not run it)."""

from __future__ import annotations

import itertools
import json
import re
import shlex
from pathlib import Path

import pytest

from epimem.cli import dispatch
from epimem.cli.spec import HelpRequested, UsageError, parse

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted({
    ROOT / "README.md", ROOT / "CLAUDE.md.example", *(ROOT / "docs").glob("*.md"),
    *(ROOT / "skills").glob("**/*.md"), *(p for p in (ROOT / "hooks").iterdir() if p.is_file()),
    # What `epimem install <agent>` writes for a model to read, and the Claude Code plugin's files.
    *(ROOT / "epimem" / "templates" / "agents").glob("**/*.md"),
    *(ROOT / "epimem" / "templates" / "agents").glob("**/*.mdc"),
    *(ROOT / "epimem" / "templates" / "claude" / "plugin").glob("**/*.md"),
    *(ROOT / "epimem" / "templates" / "claude" / "plugin").glob("**/*.json"),
}, key=lambda p: ("templates" in p.parts, p))  # a file linked from the top is named as the top names it

# Lines shown on purpose, not to be typed, each with why: (file, the line as checked).
ALLOWED = {
    # What `opencode mcp list` prints for the server, not a command.
    ("README.md", "epimem connected"),
    # The hole rule 22 closed: the old command a skill's permission let a model run.
    ("docs/decisions.md", "epimem observe --from-transcript ~/.claude/projects/…/s.jsonl --llm"),
}

_FENCE = re.compile(r"^\s*(```|~~~)")
_SPAN = re.compile(r"(?<!`)`([^`]+)`(?!`)")
_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_ALLOWED_TOOL = re.compile(r"Bash\(([^)]*)\)")
_SEPARATORS = {"&&", "||", "|", ";"}
_ELLIPSIS = {"…", "...", "*"}


def _lines(path: Path) -> list[tuple[int, str]]:
    """(line number, shell text) of every place in `path` a command line could be."""
    text = path.read_text(encoding="utf-8").replace("{{cli}}", "epimem")
    out: list[tuple[int, str]] = []
    if path.suffix == ".json":
        for n, line in enumerate(text.splitlines(), 1):
            out += [(n, json.loads(f'"{s}"')) for s in _JSON_STRING.findall(line)]
        return out
    if path.suffix not in (".md", ".mdc", ".example"):  # a shell script: its lines, and its comments' spans
        for n, line in enumerate(text.splitlines(), 1):
            out += [(n, s) for s in _SPAN.findall(line)]
            if not line.lstrip().startswith("#"):
                out.append((n, line))
        return out
    prose: list[str] = []
    fenced = False
    pending: tuple[int, str] | None = None  # a fenced line continued with `\`
    for n, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            prose.append("")
            continue
        if fenced:
            prose.append("")
            start, sofar = pending or (n, "")
            joined = sofar + line
            if joined.rstrip().endswith("\\"):
                pending = (start, joined.rstrip()[:-1] + " ")
            else:
                pending = None
                out.append((start, joined))
            continue
        prose.append(line)
        out += [(n, tool) for tool in _ALLOWED_TOOL.findall(line)]  # a skill's allowed-tools
    # A code span may wrap onto the next line of its paragraph.
    body = "\n".join(prose)
    for m in _SPAN.finditer(body):
        out.append((body.count("\n", 0, m.start()) + 1, m.group(1).replace("\n", " ")))
    return out


def _words(text: str) -> list[str] | None:
    """The shell words of a line, markdown's `\\|` (a `|` in a table) as `|`; None when it is not
    shell (prose in a code span)."""
    text = _without_redirections(re.sub(r"^\s*\$ ", "", text.replace("\\|", "|")))
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return None


def invocations(text: str) -> list[list[str]]:
    """The arguments of every `epimem` run by a shell line (`epimem …`, `.venv/bin/epimem …`,
    `exec epimem …`, after `&&`)."""
    words = _words(text)
    if not words:
        return []
    out = []
    segments = [list(g) for sep, g in itertools.groupby(words, lambda w: w in _SEPARATORS) if not sep]
    for seg in segments:
        while seg and seg[0] in ("exec", "command") and len(seg) > 1 and not seg[1].startswith("-"):
            seg = seg[1:]
        if seg and seg[0].rsplit("/", 1)[-1] == "epimem":
            out.append(seg[1:])
        elif len(seg) > 2 and re.fullmatch(r"(.*/)?python3?", seg[0]) and seg[1:3] == ["-m", "epimem"]:
            out.append(seg[3:])
    return out


def _without_redirections(text: str) -> str:
    """`text` without its shell redirections (`> out.jsonl`, `2>/dev/null`, `2>&1`); `<id>` is a
    placeholder, and a `<` or `>` in quotes is text."""
    out: list[str] = []
    quote = None
    i = 0
    while i < len(text):
        c = text[i]
        if quote or c not in "'\"<>":
            quote = None if c == quote else quote
            out.append(c)
            i += 1
            continue
        if c in "'\"":
            quote = c
            out.append(c)
            i += 1
            continue
        placeholder = c == "<" and re.match(r"<[^<>\s]+>", text[i:])
        if placeholder or (i and text[i - 1] not in " \t0123456789&"):  # `<id>`, or inside a word
            out.append(c)
            i += 1
            continue
        op = re.match(r"[<>]+(&\d)?\s*", text[i:]).group(0)
        target = "" if "&" in op else re.match(r"\S*", text[i + len(op):]).group(0)
        if out and out[-1].isdigit():
            out.pop()
        i += len(op) + len(target)
    return "".join(out)


def _placeholder(word: str) -> bool:
    """A word that stands for a value: `ID`, `FILE`, `<id>`, `…`, `$X`, `{{agent}}`, `YYYY-MM-DD`."""
    if word.startswith("[") and not word.startswith("[-"):
        return True  # `[PATH]`, `[options]`
    w = word.strip("[]")
    return (not w or w == "*" or "…" in w or "..." in w or w.startswith(("<", "$", "{{", "~"))
            or bool(re.fullmatch(r"[A-Z][A-Z0-9_-]*(\|[A-Z][A-Z0-9_-]*)*…?", w)) or "YYYY" in w or w.endswith(">"))


def _variants(args: list[str]) -> list[list[str]]:
    """One argument list per alternative `a|b` shows; `[--x]`'s brackets dropped."""
    choices = []
    for a in args:
        if a.startswith("[") and a.endswith("]") and not a.startswith("[-"):
            continue  # `[PATH]`: optional, and left out is one way to type it
        a = a.lstrip("[") if a.startswith("[-") else a
        a = a.rstrip("]") if not a.startswith("[") else a
        if a and re.fullmatch(r"-{0,2}[\w.-]+(\|-{0,2}[\w.-]*)+", a) and not _placeholder(a):
            choices.append(a.split("|"))
        elif a:
            choices.append([a])
    return [list(v) for v in itertools.product(*choices)]


def check(args: list[str]) -> str | None:
    """What is wrong with `epimem ARGS` as the CLI would parse it; None when it parses, or when what
    is left out (a required argument, an option's value) is all that stops it."""
    try:
        _, rest = dispatch.split_global(_filled(args, {f: o for o in dispatch.GLOBAL for f in o.flags}))
        lead = next((i for i, w in enumerate(rest) if w.startswith("-") or _placeholder(w)), len(rest))
        if lead == 0:
            return None  # `epimem …`: no command named
        if lead < len(rest) and _placeholder(rest[lead]):
            # `install AGENT`, `hook …`: one of the group's commands, whichever takes the rest.
            kids = [c.path[-1] for c in dispatch.find(rest[:lead])[0].children() if not c.hidden]
            if kids:
                problems = [check([*args[:len(args) - len(rest) + lead], kid, *rest[lead + 1:]]) for kid in kids]
                return None if None in problems else problems[0]
        cmd, words = dispatch.find(rest)
        if cmd.run is None:
            return None  # a group named alone: its help
        by_flag = {f: o for o in cmd.options for f in (*o.flags, *o.negative)}
        words = _positionals_filled(cmd, _filled(words, by_flag))
        if cmd.loose:  # the hooks take what is not theirs without a word: a misspelt option would do nothing
            flags = words[:words.index("--")] if "--" in words else words
            unknown = [w.split("=")[0] for w in flags
                       if w.startswith("-") and w != "-" and w.split("=")[0] not in by_flag]
            if unknown:
                return f"no option {unknown[0]} (`epimem {' '.join(cmd.path)}` would ignore it)"
        old = [w.split("=")[0] for w in words if by_flag.get(w.split("=")[0]) in _old_spellings(cmd)]
        if old:
            return f"{old[0]} is an old spelling (`epimem {' '.join(cmd.path)} --help` shows the current one)"
        parse(cmd, words)
    except HelpRequested:
        return None
    except UsageError as e:
        if re.match(r"missing (argument|option) |\S+ needs a value", str(e)):
            return None
        return str(e)
    return None


def _old_spellings(cmd) -> list:
    """The hidden options kept to say where their job went, or as deprecated aliases (their help
    says which): typed from a document, they warn or exit 2."""
    return [o for o in cmd.options if o.hidden and o.help.startswith(("Deprecated", "Moved"))]


def _positionals_filled(cmd, words: list[str]) -> list[str]:
    """A placeholder where a positional with fixed values goes (`SHELL`) stands for one of them; a
    lone `…` or `*` is "and more", not a word."""
    words = [w for w in words if w not in _ELLIPSIS]
    positional = iter(o for o in cmd.options if o.positional)
    by_flag = {f: o for o in cmd.options for f in o.flags}
    i, rest = 0, False
    while i < len(words):
        w = words[i]
        if w == "--":
            rest = True
        elif w.startswith("-") and not rest:
            o = by_flag.get(w.split("=")[0])
            i += 2 if o and not o.is_flag and "=" not in w else 1
            continue
        else:
            o = next(positional, None)
            if o is None or o.multiple:
                break
            if o.choices and _placeholder(w):
                words[i] = o.choices[0]
        i += 1
    return words


def _filled(args: list[str], by_flag: dict) -> list[str]:
    """`args` with each placeholder an option is given replaced by a value that option takes."""
    out = list(args)
    for i, a in enumerate(out):
        name, eq, value = a.partition("=")
        o = by_flag.get(name)
        if o is None or o.is_flag:
            continue
        if eq and _placeholder(value):
            out[i] = f"{name}={_sample(o)}"
        elif not eq and i + 1 < len(out) and _placeholder(out[i + 1]):
            out[i + 1] = _sample(o)
    return out


def _sample(o) -> str:
    if o.choices:
        return o.choices[0]
    if o.type in (int, float):
        return str(int(o.min if o.min is not None else 1))
    if o.dest == "today":
        return "2026-01-01"
    return "x"


def _documented() -> list[tuple[str, int, list[str]]]:
    out = []
    seen = set()
    for path in SOURCES:
        if path.resolve() in seen:  # skills/ is the plugin's skills folder
            continue
        seen.add(path.resolve())
        rel = str(path.relative_to(ROOT))
        for n, text in _lines(path):
            for args in invocations(text):
                out.append((rel, n, args))
    return out


DOCUMENTED = _documented()


def test_the_documents_show_commands_to_check():
    files = {f for f, _, _ in DOCUMENTED}
    assert len(DOCUMENTED) > 200 and {"README.md", "docs/cli.md", "skills/observe/SKILL.md",
                                      "hooks/session-start", "CLAUDE.md.example"} <= files, files


def test_every_documented_command_parses():
    wrong = []
    for rel, n, args in DOCUMENTED:
        line = " ".join(["epimem", *args])
        if (rel, line) in ALLOWED:
            continue
        for variant in _variants(args):
            problem = check(variant)
            if problem:
                wrong.append(f"{rel}:{n}: `{line}`: {problem}")
                break
    assert not wrong, "\n".join(wrong)


def test_every_allowed_line_is_still_there_and_still_wrong():
    shown = {(rel, " ".join(["epimem", *args])): args for rel, _, args in DOCUMENTED}
    for rel, line in ALLOWED:
        assert (rel, line) in shown, f"{rel}: `{line}` is no longer shown: take it off ALLOWED"
        assert any(check(v) for v in _variants(shown[rel, line])), f"{rel}: `{line}` parses now"


@pytest.mark.parametrize("line,problem", [
    ("epimem belief list --scpoe x", "no option --scpoe"),
    ("epimem belief lsit", "no command 'lsit'"),
    ("epimem nothing", "no command 'nothing'"),
    ("epimem recall tea --limit many", "--limit must be"),
    ("epimem mirror answer ID --verdict true|maybe", "--verdict must be one of"),
    ("epimem belief show ID --vault V", "no option --vault"),
    ("cp -r a b && .venv/bin/epimem --vault V index rebuild|sink", "no command 'sink'"),
    ("epimem observe --from-transcript FILE", "--from-transcript is an old spelling"),
    ("epimem install AGENT --frobnicate", "no option --frobnicate"),
    ("epimem hook session-start --budget-token 800", "no option --budget-token"),  # a hook ignores it
])
def test_the_check_catches(line, problem):
    [args] = invocations(line)
    assert any(problem in (check(v) or "") for v in _variants(args)), [check(v) for v in _variants(args)]


@pytest.mark.parametrize("line", [
    "epimem tension resolve ID --note",  # a table's mention: the value left out
    "epimem mirror answer ID --verdict true|false|unsure [--note ...]",
    "epimem index rebuild|sync|status",
    "epimem …",
    "epimem --vault ~/notes/me install claude-code",
    "exec epimem hook session-start \"$@\"",
    "epimem observe --input FILE|-",
    "epimem recall --queries queries.jsonl > results.jsonl 2>&1",
    "epimem skill recall QUERY [options]",
    "epimem __complete SHELL -- WORDS…",
    "epimem install AGENT [--scope user|project] [--dry-run]",
])
def test_the_check_passes(line):
    [args] = invocations(line)
    assert [check(v) for v in _variants(args)] == [None] * len(_variants(args))
