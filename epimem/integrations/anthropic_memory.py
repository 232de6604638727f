"""The Claude API's memory tool (`memory_20250818`) over an epimem vault (docs/anthropic-memory.md).

    import anthropic
    from epimem.integrations.anthropic_memory import EpimemMemoryTool

    memory = EpimemMemoryTool("~/notes/epimem", session=conversation_id)
    runner = anthropic.Anthropic().beta.messages.tool_runner(
        model=..., max_tokens=..., messages=[...], tools=[memory])

The model sees `/memories` as files (`memory_files`): `README.md` (how this memory works),
`context.md` (what a session starts with, `api/context`), `beliefs/<id>.md` and
`tensions/<id>.md`, read as every reader reads them (redacted; a hand edit that breaks a rule
shown as last committed, with its line). None of them is a file it can overwrite: what
`create`, `str_replace` and `insert` add becomes observations through `Memory.observe` — the
write path of `epimem observe` and MCP's `observe` — and `delete` and `rename` become proposals
the user decides on (`Memory.propose`). Everything the rules refuse comes back as a tool error
that says why and what to do instead.

Sessions (rule 19): every tool is one session, named `session` (a fresh id by default). Its
observations move a belief at most one step a day unless the app says that this conversation is
a session of the user's, with `start_session()` (the vault's own session count, as the
session-start hook counts a Claude Code session).

A fresh `Memory` per command reads the vault as it is now: an edit by hand or by another client
between two commands is seen by the next one.
"""

from __future__ import annotations

import difflib
import secrets
from datetime import date
from pathlib import Path
from typing import Any

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818Command,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from ..api.memory import Memory
from ..api.memory import open as open_vault
from ..api.results import ObserveReport, SessionReport
from ..core import kernel
from ..core.errors import EpimemError, NotFound
from ..core.ids import IdError, check_id, check_tension_id
from ..core.model import Belief, Refused
from ..core.record import view as belief_view
from ..core.redact import redact
from . import memory_files as files
from .memory_files import ROOT, Line

SOURCE = "memory-tool"
# A system prompt line for the app (the API adds the memory tool's own protocol): what this memory is.
INSTRUCTIONS = ("Your memory tool holds the user's epimem vault: what assistants believe about them, with a "
                "confidence that only evidence moves. Read /memories/README.md once before writing to it. Record "
                "what the user did or said, concretely; never a confidence, a date or a status. Cite a belief you "
                "rely on by its file.")
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
LINE_WIDTH = 6  # the line numbers' width, as the SDK's own file backend writes them
OPEN = ("unresolved", "watching")
# How many beliefs (and open tensions) a listing names: the model views /memories at the start of
# every conversation, and a listing of a whole vault (10,000 beliefs: 0.8 MB) is no use to it. The
# strongest beliefs (the listing's order), the newest tensions; the rest are counted.
ROOT_LISTED = 30     # in a view of /memories, as many as the session context shows at most
FOLDER_LISTED = 200  # in a view of /memories/beliefs or /memories/tensions


class MemoryToolError(ToolError):
    """What the model gets back when a command is refused (`is_error`), in words it can act on."""


def _fail(message: str) -> MemoryToolError:
    # Redacted as every error is (`EpimemError`): a refusal may quote what the model sent.
    return MemoryToolError(redact(message))


def _parts(path: Any, what: str = "path") -> tuple[str, ...]:
    """A `/memories/…` path as its names; anything that could name a place outside is refused."""
    if not isinstance(path, str) or not path:
        raise _fail(f"'{what}' must be a path under {ROOT}, e.g. {ROOT}/beliefs/")
    shown = path if len(path) <= 200 else path[:200] + "…"
    if "\x00" in path or "\\" in path:
        raise _fail(f"{shown!r} is not a plain path: use names joined by '/' under {ROOT}")
    if path != ROOT and not path.startswith(ROOT + "/"):
        raise _fail(f"Path must start with {ROOT}, got: {shown}")
    parts = tuple(p for p in path[len(ROOT):].split("/") if p)
    if any(p in (".", "..") for p in parts):
        raise _fail(f"Path {shown} would escape {ROOT}: name files under {ROOT} without '.' or '..' parts")
    return parts


def _size(n: int) -> str:
    """A size as the SDK's own file backend lists it (`812B`, `1.5K`, `4K`): the model reads ours alike."""
    if n < 1024:
        return f"{n}B"
    k = n / 1024
    if k >= 1024:
        k, unit = k / 1024, "M"
    else:
        unit = "K"
    return f"{int(k)}{unit}" if k == int(k) else f"{k:.1f}{unit}"


def _belief_id(name: str) -> str | None:
    if not name.endswith(".md"):
        return None
    try:
        return check_id(name[:-3])
    except IdError:
        return None


def _tension_id(name: str) -> str | None:
    if not name.endswith(".md"):
        return None
    try:
        return check_tension_id(name[:-3])
    except IdError:
        return None


def _words_of(name: str) -> str:
    """A file name as words: `prefers-tabs-in-go.md` → "Prefers tabs in go"."""
    stem = name[:-3] if name.endswith(".md") else name
    words = " ".join(stem.replace("_", " ").replace("-", " ").split())
    return words[:1].upper() + words[1:]


class _Vault:
    """One command's view of the vault: the `/memories` tree, read through the API."""

    def __init__(self, tool: EpimemMemoryTool):
        self.tool = tool
        self.mem = Memory(tool.root, today=tool.today)
        self.mem.vault.require()  # before any read: the context cache would make `.epimem/` at a mistyped path
        self.today: date = self.mem.today
        self.params = self.mem.params

    # -- what there is
    def beliefs(self, limit: int) -> tuple[list[Belief], int]:
        """The `limit` strongest active beliefs in id order (as a folder lists), and how many there are."""
        shown = self.mem.listing(status="active", scope=self.tool.project, limit=limit)
        return sorted(shown.beliefs, key=lambda b: b.id), shown.total

    def belief(self, belief_id: str) -> tuple[Belief, Refused | None] | None:
        try:
            return self.mem.shown_belief(belief_id)
        except NotFound:
            return None

    def tensions(self, limit: int) -> tuple[list, int]:
        """The `limit` newest open tensions in id order (their ids start with their day), and how many."""
        open_ = [t for t in self.mem.tensions() if t.status in OPEN]
        return sorted(open_[-limit:], key=lambda t: t.id), len(open_)

    # -- the files
    def belief_lines(self, b: Belief, refused: Refused | None = None) -> list[Line]:
        v = belief_view(b, self.today, self.params, True)
        return files.belief_file(v, self.params.tier(b.confidence, b.basis),
                                 f"an edit of this file was refused, so it is shown {refused.shown_as}: {refused.why}"
                                 if refused is not None else "")

    def tier(self, b: Belief) -> str:
        return str(belief_view(b, self.today, self.params, False)["tier"])

    def tension_lines(self, t) -> list[Line]:
        from ..api.shapes import tension_json

        shown = self.belief(t.belief)
        return files.tension_file(tension_json(t), f"“{shown[0].title}”" if shown is not None else "no longer held")

    def readme(self) -> list[Line]:
        return files.readme(self.params.observations_per_session, self.params.review == "required")

    def context(self) -> list[Line]:
        from ..api.context import session_context

        text = session_context(str(self.mem.root), self.tool.cwd, self.today)
        return [Line(s, "guide") for s in text.split("\n")]

    def file(self, parts: tuple[str, ...]) -> list[Line] | None:
        """The lines of the file at `parts`, or None when there is no such file."""
        if parts == ("README.md",):
            return self.readme()
        if parts == ("context.md",):
            return self.context()
        if len(parts) == 2 and parts[0] == "beliefs":
            bid = _belief_id(parts[1])
            shown = self.belief(bid) if bid else None
            return self.belief_lines(*shown) if shown is not None else None
        if len(parts) == 2 and parts[0] == "tensions":
            tid = _tension_id(parts[1])
            t = next((t for t in self.mem.tensions() if t.id == tid), None) if tid else None
            return self.tension_lines(t) if t is not None else None
        return None

    def tree(self, limit: int) -> tuple[dict[str, list[tuple[str, int]]], dict[str, int]]:
        """Each folder's entries (name, size in bytes) as a listing shows them, at most `limit`
        beliefs and tensions; and how many of each were left out."""
        size = lambda lines: len(files.text_of(lines).encode())  # noqa: E731
        beliefs, nb = self.beliefs(limit)
        tensions, nt = self.tensions(limit)
        tree = {"": [("README.md", size(self.readme())), ("context.md", size(self.context()))],
                "beliefs": [(f"{b.id}.md", size(self.belief_lines(b))) for b in beliefs],
                "tensions": [(f"{t.id}.md", size(self.tension_lines(t))) for t in tensions]}
        return tree, {"beliefs": nb - len(beliefs), "tensions": nt - len(tensions)}


class EpimemMemoryTool(BetaAbstractMemoryTool):
    """A backend of the memory tool over the vault at `vault` (else `$EPIMEM_VAULT`, else the
    user's default vault), under the vault's rules.

    `session`: this conversation's id (letters, digits, `- _ . :`; default a fresh one), the
    session its observations count for (rule 9: at most 3). `project`: the project the app works
    on, a name or a folder: `beliefs/` lists its beliefs beside the global ones (default: every
    belief) and `context.md` has its section (default: the current directory's). `today`: the
    day, for tests and replays (as `--today`; rule 20 keeps writes on the machine's day)."""

    def __init__(self, vault: str | Path | None = None, *, session: str | None = None, project: str | None = None,
                 today: str | date | None = None,
                 cache_control: BetaCacheControlEphemeralParam | None = None) -> None:
        super().__init__(cache_control=cache_control)
        self.root = open_vault(vault).root
        self.session = session or f"memory-{secrets.token_hex(6)}"
        if not kernel.is_session_id(self.session):
            raise ValueError("'session' must be a plain id: letters, digits and - _ . : (at most 80)")
        self.project = project
        # The context's project is a folder's (its git work tree's) name or path; a name alone matches
        # a belief scoped by name or by a folder of that name (`kernel.scope_matches`).
        self.cwd = project or str(Path.cwd())
        self.today = today

    # -- the app's side -------------------------------------------------------------------------
    def start_session(self) -> SessionReport:
        """Count this conversation as a session of the vault (rule 10's count, rule 19's
        counted session): its behavioural confirmations then move a belief once each, as a
        Claude Code session's do. Only for a conversation with the user themselves."""
        return Memory(self.root, today=self.today).session_start("startup", self.session)

    def clear_all_memory(self) -> str:
        raise _fail("epimem never clears the vault: what it holds is the user's, and only they forget it "
                    "(`epimem forget`)")

    # -- the commands ---------------------------------------------------------------------------
    def execute(self, command: BetaMemoryTool20250818Command) -> str:
        name = getattr(command, "command", None)
        if name not in COMMANDS:
            raise _fail(f"unknown command {name!r}; the memory tool's commands are {', '.join(COMMANDS)}")
        try:
            return str(super().execute(command))
        except files.Refused as e:
            raise _fail(e.message) from None
        except EpimemError as e:
            raise _fail(str(e)) from None

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        path = getattr(command, "path", None)
        parts = _parts(path)
        v = _Vault(self)
        if parts in ((), ("beliefs",), ("tensions",)):
            return _listing(str(path).rstrip("/") or ROOT, parts, *v.tree(FOLDER_LISTED if parts else ROOT_LISTED))
        lines = v.file(parts)
        if lines is None:
            raise _fail(f"The path {path} does not exist. " + _where())
        return _numbered(str(path), files.text_of(lines), getattr(command, "view_range", None))

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        path, text = getattr(command, "path", None), getattr(command, "file_text", None)
        parts = _parts(path)
        if not isinstance(text, str):
            raise _fail("'file_text' must be text: what you learned about the user")
        v = _Vault(self)
        if parts in ((), ("beliefs",), ("tensions",)) or v.file(parts) is not None:
            raise _fail(f"File {path} already exists. To add evidence to a belief, insert a line into its file "
                        "(`confirming: …`, `complicating: …` or `contradicting: …`); for something new, create a "
                        "file under another name.")
        if parts[0] == "tensions":
            raise _fail("A tension opens when evidence contradicts a belief: add a line `contradicting: …` to the "
                        "belief's file.")
        # Redacted whole, before it is split into fields: a secret a pattern knows by its context
        # (`password: …` in a heading) may stand again alone in a field of its own.
        return self._observe(v, files.observations(redact(text, v.params.redact)))

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        path = getattr(command, "path", None)
        old, new = getattr(command, "old_str", None), getattr(command, "new_str", None)
        if not isinstance(old, str) or not isinstance(new, str):
            raise _fail("'old_str' and 'new_str' must be text")
        v, lines, bid = self._editable(path)
        text = files.text_of(lines)
        count = text.count(old) if old else 0
        if count == 0:
            raise _fail(f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}. "
                        "View the file again: it shows what epimem holds now.")
        if count > 1:
            at = [text[:i].count("\n") + 1 for i in _find_all(text, old)]
            raise _fail(f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: "
                        f"{', '.join(map(str, at))}. Please ensure it is unique")
        return self._edit(v, bid, lines, text.replace(old, redact(new, v.params.redact), 1).split("\n"))

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        path, at = getattr(command, "path", None), getattr(command, "insert_line", None)
        added = getattr(command, "insert_text", None)
        if not isinstance(added, str):
            raise _fail("'insert_text' must be text")
        v, lines, bid = self._editable(path)
        if not isinstance(at, int) or isinstance(at, bool) or not 0 <= at <= len(lines):
            raise _fail(f"Invalid `insert_line` parameter: {at!r}. It should be within the range [0, {len(lines)}].")
        return self._observe(v, files.observations(redact(added, v.params.redact), connects=bid))

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        path = getattr(command, "path", None)
        parts = _parts(path)
        bid = self._belief_named(parts, path, "delete")
        t, opened = self._propose(bid, "retire")
        return (f"Nothing was deleted: only the user retires a belief. Proposed to them: {t.title!s} — an open "
                f"question ({ROOT}/tensions/{t.id}.md) that they answer with epimem; the belief stays as it is "
                "until they do." if opened else
                f"Nothing was deleted: this was already proposed to the user ({ROOT}/tensions/{t.id}.md), who "
                "decides.")

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old_path, new_path = getattr(command, "old_path", None), getattr(command, "new_path", None)
        parts, target = _parts(old_path, "old_path"), _parts(new_path, "new_path")
        bid = self._belief_named(parts, old_path, "rename")
        v = _Vault(self)
        if len(target) != 2 or target[0] != "beliefs" or not target[1].endswith(".md"):
            raise _fail(f"A belief's file stays in {ROOT}/beliefs/: rename it onto the belief that replaces it, or "
                        f"to a name that words it better ({ROOT}/beliefs/<new-wording>.md). To propose retiring "
                        "it, delete it.")
        other = _belief_id(target[1])
        if other == bid:
            raise _fail(f"{old_path} and {new_path} are the same file: nothing to do")
        shown = v.belief(other) if other else None
        b = shown[0] if shown is not None else None
        if b is not None and b.status == "active":
            t, opened = self._propose(bid, "supersede", by=b.id)
        else:
            t, opened = self._propose(bid, "rename", title=_words_of(target[1]))
        return (f"Nothing was renamed: only the user replaces or rewords a belief. Proposed to them: {t.title} — an "
                f"open question ({ROOT}/tensions/{t.id}.md); both files stay as they are until they answer."
                if opened else
                f"Nothing was renamed: this was already proposed to the user ({ROOT}/tensions/{t.id}.md).")

    # -- writing through the API ------------------------------------------------------------------
    def _observe(self, v: _Vault, items: list[dict[str, Any]]) -> str:
        if not items:
            raise _fail("Nothing was recorded: the text holds no observation. Write what the user did or said, "
                        "one bullet or paragraph each.")
        try:
            # An unattended path (SPEC §15): with `review: required` the batch waits in the inbox.
            # The conversation is the app's to name (`session=`), never the text's: one session for rule 9.
            report = v.mem.observe(items, source=SOURCE, session=self.session, origin="memory-tool",
                                   own=self.session)
        except EpimemError as e:
            raise _fail(f"Nothing was recorded: {e}") from None
        return _report(v, report)

    def _propose(self, bid: str, action: str, **kw: str):
        v = _Vault(self)
        try:
            return v.mem.propose(bid, action, source="An assistant, through the Claude API's memory tool,", **kw)
        except EpimemError as e:
            raise _fail(f"Nothing was proposed: {e}") from None

    def _editable(self, path: Any) -> tuple[_Vault, list[Line], str]:
        """(the vault, the lines of the belief file at `path`, its id), or a refusal saying where
        evidence goes."""
        parts = _parts(path)
        v = _Vault(self)
        lines = v.file(parts)
        if lines is None or parts in ((), ("beliefs",), ("tensions",)):
            raise _fail(f"The path {path} does not exist. " + _where())
        if parts[0] != "beliefs":
            where = "the belief's file" if parts[0] == "tensions" else f"a belief's file in {ROOT}/beliefs/"
            raise _fail(f"{path} is epimem's own view and cannot be edited. Evidence about a belief goes into "
                        f"{where}; something new into a file you create.")
        bid = _belief_id(parts[1])
        assert bid is not None  # v.file found it
        shown = v.belief(bid)
        if shown is not None and shown[0].status != "active":
            raise _fail(f"{bid} is {shown[0].status}: it is no longer held, and evidence goes to the beliefs "
                        "that are.")
        return v, lines, bid

    def _edit(self, v: _Vault, bid: str, before: list[Line], after: list[str]) -> str:
        """An edit of a belief's file: what it adds is evidence; what it changes or removes of
        the file is refused, saying why for the part it touched."""
        old = [ln.text for ln in before] + [""]  # the text ends with a newline
        added: list[str] = []
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, after, autojunk=False).get_opcodes():
            if op == "equal":
                continue
            touched = [ln for ln in before[i1:i2] if ln.text.strip()] if op != "insert" else []
            if touched:
                raise _fail(_changed(touched[0]))
            added += after[j1:j2] + [""]
        return self._observe(v, files.observations("\n".join(added), connects=bid))

    def _belief_named(self, parts: tuple[str, ...], path: Any, verb: str) -> str:
        if parts in ((), ("beliefs",), ("tensions",)):
            raise _fail(f"Nothing was done: epimem never {'deletes' if verb == 'delete' else 'moves'} a folder of "
                        "the user's memory. Only the user decides about each belief, one at a time.")
        v = _Vault(self)
        if v.file(parts) is None:
            raise _fail(f"The path {path} does not exist. " + _where())
        bid = _belief_id(parts[-1]) if parts[0] == "beliefs" else None
        if bid is None:
            what = "tension" if parts[0] == "tensions" else "file"
            raise _fail(f"This {what} is epimem's own view: nothing to {verb}. " +
                        ("Only the user resolves a tension." if what == "tension" else _where()))
        shown = v.belief(bid)
        if shown is None or shown[0].status != "active":
            raise _fail(f"{bid} is no longer held: nothing to {verb}.")
        return bid


class AsyncEpimemMemoryTool(BetaAsyncAbstractMemoryTool):
    """`EpimemMemoryTool` for `AsyncAnthropic`'s tool runner: each command runs on a worker thread."""

    def __init__(self, vault: str | Path | None = None, **kw: Any) -> None:
        super().__init__(cache_control=kw.pop("cache_control", None))
        self.sync = EpimemMemoryTool(vault, **kw)

    @property
    def session(self) -> str:
        return self.sync.session

    def start_session(self) -> SessionReport:
        return self.sync.start_session()

    async def _run(self, command: Any) -> str:
        from anyio.to_thread import run_sync

        return await run_sync(self.sync.execute, command)

    async def execute(self, command: BetaMemoryTool20250818Command) -> str:
        return await self._run(command)

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await self._run(command)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await self._run(command)

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await self._run(command)

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await self._run(command)

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await self._run(command)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await self._run(command)

    async def clear_all_memory(self) -> str:
        return self.sync.clear_all_memory()


# --- rendering ------------------------------------------------------------------------------------

def _where() -> str:
    return f"View {ROOT} to see the files there are; {ROOT}/README.md says how this memory works."


def _find_all(text: str, s: str):
    i = text.find(s)
    while i != -1:
        yield i
        i = text.find(s, i + 1)


def _listing(path: str, parts: tuple[str, ...], tree: dict[str, list[tuple[str, int]]],
             more: dict[str, int]) -> str:
    """A folder as the SDK's own file backend lists it: by name, each folder followed by its files;
    a line after a folder says how many it holds beyond those listed."""
    def folder(name: str) -> list[tuple[int, str]]:
        entries = tree[name]
        rows = [(sum(n for _, n in entries), f"{ROOT}/{name}/")] + [(n, f"{ROOT}/{name}/{e}") for e, n in entries]
        if more[name] and parts:
            which = ("weaker belief" if name == "beliefs" else "older tension") + ("s" if more[name] != 1 else "")
            rows.append((-1, f"(and {more[name]} {which}, not listed: {ROOT}/context.md names what matters most; "
                             "view a file by its name)"))
        elif more[name]:
            rows.append((-1, f"(and {more[name]} more in {ROOT}/{name}/: view it to list more)"))
        return rows

    if parts:
        rows = folder(parts[0])
        total = rows.pop(0)[0]
    else:
        named = [(e, [(n, f"{ROOT}/{e}")]) for e, n in tree[""]] + [(d, folder(d)) for d in ("beliefs", "tensions")]
        rows = [row for _, group in sorted(named) for row in group]
        total = sum(n for n, p in rows if n >= 0 and not p.endswith("/"))
    head = f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
    return "\n".join([head, f"{_size(total)}\t{path}"] + [p if n < 0 else f"{_size(n)}\t{p}" for n, p in rows])


def _numbered(path: str, text: str, view_range: Any) -> str:
    lines = text.split("\n")
    start, shown = 1, lines
    if view_range is not None:
        if (not isinstance(view_range, list) or len(view_range) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in view_range)):
            raise _fail("'view_range' must be two line numbers [first, last] (last -1: to the end)")
        first, last = view_range
        if not 1 <= first <= len(lines) or not (last == -1 or first <= last):
            raise _fail(f"Invalid `view_range` {view_range}: {path} has lines 1 to {len(lines)}")
        start, shown = first, lines[first - 1:len(lines) if last == -1 else last]
    numbered = [f"{str(i + start).rjust(LINE_WIDTH)}\t{line}" for i, line in enumerate(shown)]
    return f"Here's the content of {path} with line numbers:\n" + "\n".join(numbered)


def _changed(line: Line) -> str:
    part = line.part
    if part == "key:confidence":
        return files.CONFIDENCE
    if part in ("key:first", "key:confirmed", "key:challenged"):
        return files.DATES
    if part == "key:basis":
        return ("A belief's basis says where it comes from; only the user changes it (and only the user makes a "
                "belief a fact), so nothing was recorded. " + files.SAY_INSTEAD)
    if part in ("key:status", "key:supersedes"):
        return files.STATUS
    if part == "key:pinned":
        return files.PINNED
    if part in ("title", "statement"):
        return files.WORDING
    if part == "evidence":
        return files.EVIDENCE
    if part.startswith("key:") and part[4:] in ("kind", "permanence", "tags", "scope", "depends_on"):
        return files._field(part[4:].replace("_", " "))
    return files.VIEW


def _report(v: _Vault, report: ObserveReport) -> str:
    """What an observe did, as the model reads it: tiers in words, where each result is."""
    if report.held:
        out = ["Nothing was recorded: a new belief would sit beside one that looks the same, and epimem "
               "never keeps two of one belief (rule 17)."]
        for r in report.results:
            for s in r.similar:
                out.append(f"- close to “{s.get('title', s['id'])}” ({ROOT}/beliefs/{s['id']}.md): to add to it, "
                           "add a line to that file — `confirming: …`, `complicating: …` or `contradicting: …`.")
        out.append("If it really is a different belief, write it again with the line `new despite similar: yes`.")
        return "\n".join(out)
    if report.proposed:
        return "\n".join(
            ["Nothing was recorded yet: this vault is set to `review: required` (epistemology.md), so what you "
             "wrote waits for the user's review; they accept or reject it (`epimem inbox`). Do not write it "
             "again: it is on file."]
            + [f"- proposed ({pid})" for pid in report.proposed]
            + [f"- already proposed: {r.reason}" for r in report.results if r.duplicate])
    out = []
    for r in report.results:
        o = r.observation
        if r.duplicate:
            out.append(f"- already recorded ({o.id}): the same observation is kept once.")
            continue
        shown = v.belief(r.belief) if r.belief else None
        if r.created and shown is not None:
            out.append(f"- recorded as an observation ({o.id}); it proposes a new belief, “{shown[0].title}”, "
                       f"{v.tier(shown[0])} for now ({ROOT}/beliefs/{r.belief}.md): only more evidence raises it.")
            continue
        if not r.belief:
            out.append(f"- recorded as an observation ({o.id}), not connected to a belief.")
            continue
        line = f"- recorded as {o.strength} evidence of {ROOT}/beliefs/{r.belief}.md ({o.id})"
        if shown is not None and r.before is not None and r.after is not None and r.after != r.before:
            word = "up" if r.after > r.before else "down"
            line += f": its confidence moved {word} a step, by the rules; it is {v.tier(shown[0])} now"
        else:
            line += f": {files.without_numbers(r.reason)}"
        if r.tension:
            line += f"; tension {ROOT}/tensions/{r.tension}.md" + (" opened" if r.tension_opened else "")
        if r.alert:
            line += " — a firmly held belief was contradicted: tell the user"
        out.append(line + ".")
    return "\n".join(out) + "\nThe files show what epimem holds now, not your text: view them again to see it."
