"""The tools, resources and prompts of SPEC §9, over `epimem.api.memory.Memory`.

Every tool is a plain function: the SDK runs it on a worker thread, so a slow
call (a first recall that builds the index, a commit) never stalls the
connection, and two calls that write are serialised by the vault lock, not by
the server. A fresh `Memory` per call reads the files as they are now, so an
edit made by hand while the server runs is seen by the next call, and the
write path's compare-and-swap refuses to overwrite one made during a call.
"""

from __future__ import annotations

import functools
import re
import secrets
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import __version__
from ..api import shapes
from ..api.memory import Memory
from ..core.errors import EpimemError, located
from ..core.filters import Filters
from ..core.ids import IdError, check_id, check_tension_id
from ..core.record import view as belief_view

INSTRUCTIONS = """\
epimem is the user's personal epistemic memory: what assistants believe about them, as weighted,
dated beliefs with evidence, in a git-versioned vault they own and read.
Call `describe` first: it gives the kinds, tags and scopes already in use (reuse them; do not invent
near-duplicates), the rules in brief, and whether a review is due.
Use `recall` with a few words before work where the user's preferences matter.
At the end of a substantive session, `observe` 0–3 observations (zero is a good answer): behaviour over
self-report, one interpretive step, nothing that would feel like surveillance if the user read it.
Only the user decides: `answer`, `supersede`, `retire`, `resolve_tension` and `record_review` record
*their* verdict; ask them first. Nothing you send is merged or rewritten silently; every change is one git commit."""

# Annotations: readOnlyHint / destructiveHint / idempotentHint; the vault is the only world touched.
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
APPEND = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
# mirror remembers which beliefs a gut-check asked about (not read-only); it commits nothing: recording
# a review is the user's decision (`record_review`, destructive), never a model's.
REVIEW = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
DECIDE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)

SESSION_RE = re.compile(r"[^A-Za-z0-9_.:\-]")

BeliefId = Annotated[str, Field(description="A belief id: the lowercase slug of its file name, "
                                            "as `recall`, `list` and `describe` show it (e.g. 'prefers-small-prs').")]
Note = Annotated[str, Field(description="The user's own words, in a line: recorded as the evidence of the change.")]


class ObservationIn(BaseModel):
    """One observation, the object `epimem observe --json` reads (SPEC §1.2)."""

    model_config = ConfigDict(extra="forbid")

    connects: str = Field(description="The id of the belief this bears on, or 'new' (with `title`) to propose a "
                                      "new belief; 'new' without `title` records the observation unconnected.")
    strength: Literal["single", "confirming", "complicating", "contradicting"] = Field(
        description="single: first sighting of a pattern; confirming: behaviour that fits the belief "
                    "(one step of the vault's confirm_step, once per session, rule 3); complicating: adds "
                    "nuance, changes nothing; contradicting: opens a tension, lowers only from the second "
                    "challenge (rule 4).")
    evidence: str = Field(description="What happened, concretely, in a sentence: what the user did or said.")
    suggests: str | None = Field(None, description="The one interpretive step: what it suggests about them.")
    therefore: str | None = Field(None, description="What an assistant should do differently because of it.")
    basis: Literal["behavioral", "self-report", "interpretive"] | None = Field(
        None, description="behavioral (default: what they did), self-report (what they said about themselves) "
                          "or interpretive. Facts come only from the user, never from an observation (rule 14).")
    session: str | None = Field(None, description="Overrides the session this observation counts for (rule 9). "
                                "Only a session the vault counted (the session-start hook's id) moves a number "
                                "once and has its own 3 observations; any other name is recorded, and such names "
                                "together record at most 3 a day (rule 9) and move a belief at most one step a day "
                                "(rule 19). Leave it out: this connection is a session of its own.")
    date: str | None = Field(None, description="YYYY-MM-DD; default today.")
    title: str | None = Field(None, description="With connects='new': the new belief's short title.")
    kind: str | None = Field(None, description="With connects='new': a kind in use (see `describe`), default trait.")
    permanence: Literal["stable", "durable", "situational", "unknown"] | None = Field(
        None, description="With connects='new': how long it is expected to hold; default unknown.")
    tags: list[str] | None = Field(None, description="With connects='new': tags, reusing those `describe` lists.")
    scope: str | None = Field(None, description="With connects='new': 'global' (default) or a project name.")
    new_despite_similar: bool | None = Field(
        None, description="With connects='new': create the belief even though `similar` listed close ones "
                          "(rule 17). Only after checking that none of them is the same belief.")
    successor: str | None = Field(
        None, description="With strength 'contradicting': what seems to hold instead — a new belief's title "
                          "(created of this observation) or an existing belief's id. The tension names both; "
                          "the user's `answer` settles it.")
    depends_on: list[str] | None = Field(
        None, description="Ids of beliefs the connected (or new) belief rests on: when one of them changes, "
                          "it is flagged for the user, never lowered.")
    cited: list[str] | None = Field(
        None, description="The ids of the beliefs you cited ([id]) in this session, the ones you relied on; "
                          "recorded as used, changing no confidence.")


def _fail(e: Exception) -> ToolError:
    """A domain error as a tool error (isError) whose text names the field, file or line."""
    where = []
    for attr in ("field", "path", "line"):
        v = getattr(e, attr, None)
        if v not in (None, ""):
            where.append(f"{attr} {v!r}" if attr == "field" else f"{attr} {v}")
    msg = located(e)
    field = getattr(e, "field", None)
    if field and repr(field) not in msg and str(field) not in msg:
        msg += f" ({', '.join(where)})"
    similar = getattr(e, "similar", None)
    if similar:
        import json

        msg += "\nsimilar: " + json.dumps(list(similar), ensure_ascii=False, default=str)
    return ToolError(msg)


def argument_errors(e: ValidationError) -> str:
    """Arguments the input schema refused, one line a field, as a model can act on them: the field
    named as the arguments spell it (`observations[0].strength`), what it must be, and nothing of
    pydantic's own (its model name, error codes, documentation URLs) or of the value sent (the
    caller's data, a secret perhaps)."""
    lines = []
    for err in e.errors(include_url=False, include_input=False):
        where = ""
        for part in err.get("loc", ()):
            where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
        msg = "is required" if err.get("type") == "missing" else err.get("msg", "is not valid")
        lines.append(f"'{where or 'arguments'}': {msg}" if msg != "is required" else f"'{where}' is required")
    return "; ".join(lines) or "they do not match the tool's input schema"


class _Server(MCPServer):
    async def call_tool(self, name, arguments, context=None):
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            cause = e.__cause__
            if isinstance(cause, ValidationError) and not isinstance(e, UnexpectedToolError):
                # The SDK's prefix, as on every tool error; it logs the field names of the cause.
                raise ToolError(f"Error executing tool {name}: invalid arguments: {argument_errors(cause)}") from cause
            raise


def _tool(fn):
    """Domain errors become tool errors; anything else stays the SDK's generic crash message."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except EpimemError as e:
            raise _fail(e) from e
    return wrapper


def _check_id(value: str, field: str, check=check_id) -> str:
    try:
        check(value)
    except IdError as e:
        raise ToolError(f"'{field}': {e}") from None
    return value


class Sessions:
    """Which session a call counts for (rule 9; for rule 3, see `core.rules.counts_for`: an MCP
    connection, however often a client reconnects, moves a belief one step a day).

    1. A `session` argument wins.
    2. Over HTTP, the MCP session: the `mcp-session-id` of the protocol
       versions with a handshake (up to 2025-11-25), one per client session.
    3. Otherwise this server's own id: a stdio server serves exactly one
       client for as long as the process lives. Protocol 2026-07-28 has no
       sessions at all (every request stands alone, and the SDK builds a fresh
       connection object for each), so over HTTP its requests count per
       client name on this daemon; such a client passes `session` to say more.

    The connection (2 and 3) is the server's to name: rule 9 bounds it as one session (SPEC §9;
    `observe(own=…)`), while for rule 19 it stays a session the vault never counted. A `session`
    argument is the model's to choose, so a name the vault never counted shares one session's
    bound a day with every such name (`core.rules.bound_session`): fifty names are not fifty threes.
    """

    def __init__(self) -> None:
        self.default = "mcp-" + secrets.token_hex(6)

    def of(self, ctx: Context | None, given: str | None = None) -> str:
        if given:
            try:
                given.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: echoed back, it would fail the whole reply
                raise ToolError("'session' must be text (it holds a lone surrogate)") from None
            return given
        sid = None
        try:
            headers = ctx.headers if ctx is not None else None
            sid = headers.get("mcp-session-id") if headers else None
            if not sid and ctx is not None:
                sid = getattr(getattr(ctx.session, "_connection", None), "session_id", None)
        except (AttributeError, LookupError, ValueError):
            sid = None
        if sid:
            return "mcp-" + SESSION_RE.sub("", sid)[:40]
        name = _client_name(ctx)
        return f"{self.default}-{name}" if name and ctx is not None and ctx.headers else self.default


def _client_name(ctx: Context | None) -> str:
    try:
        info = ctx.session.client_params.client_info  # type: ignore[union-attr]
        return re.sub(r"[^a-z0-9\-]+", "-", (info.name or "").lower()).strip("-")[:30]
    except (AttributeError, LookupError, ValueError):
        return ""


def _client_source(ctx: Context | None) -> str:
    """`mcp` and the client's own name (`mcp claude-desktop`), as the observation's source."""
    name = _client_name(ctx)
    return f"mcp {name}" if name else "mcp"


def _mirror(m: Memory, mode: str, *, record: bool) -> dict[str, Any]:
    from ..api.mirror import run
    from ..core import vocabulary as vocab
    from ..mirror.data import as_data

    m.vault.require()
    done = run(m, mode, record=record)
    out = as_data(done.data)
    out.update({"mode": mode, "markdown": done.markdown, "recorded": done.recorded,
                "refused": vocab.refused(done.refused)})
    return out


def build(root: str | Path, *, today: str | None = None) -> MCPServer:
    """The server for the vault at `root` (which must exist: `epimem init` makes one)."""
    root = Path(root)
    server: MCPServer = _Server("epimem", title="epimem", version=__version__, instructions=INSTRUCTIONS,
                                  log_level="WARNING")
    sessions = Sessions()
    recaller_box: list[Any] = []

    def mem() -> Memory:
        return Memory(root, today=today)

    def recaller():
        # One per server: its index state stays warm between calls (a recall is then a few ms).
        if not recaller_box:
            from ..recall.api import Recaller
            # A tool call never waits for Chroma: a detached process updates it.
            recaller_box.append(Recaller(root, today=today, chroma="background", semantic="chroma"))
        return recaller_box[0]

    # --- tools: reading -------------------------------------------------------------------------

    @server.tool(annotations=READ, title="Describe the vault")
    @_tool
    def describe() -> dict[str, Any]:
        """Call first in a session. What the vault holds (beliefs by tier, status, permanence), the
        kinds, tags and scopes in use with their counts (reuse them rather than inventing near-duplicates),
        the rules' parameters in brief, the session count and whether a review is due."""
        return mem().describe()

    @server.tool(annotations=READ, title="Recall beliefs")
    @_tool
    def recall(query: Annotated[str, Field(description="What to recall, in a few words.")],
               limit: Annotated[int, Field(ge=1, le=100, description="How many results.")] = 5,
               kind: Annotated[list[str], Field(description="Only these kinds.")] = [],  # noqa: B006
               permanence: Annotated[list[Literal["stable", "durable", "situational", "unknown"]],
                                     Field(description="Only these permanences.")] = [],  # noqa: B006
               tag: Annotated[list[str], Field(description="Only beliefs with one of these tags.")] = [],  # noqa: B006
               scope: Annotated[str | None, Field(description="A project: its beliefs plus global ones.")] = None,
               min_confidence: Annotated[float | None, Field(ge=0, le=1, description="On effective (decayed) "
                                                                                     "confidence.")] = None,
               since: Annotated[str | None, Field(description="Last activity on or after YYYY-MM-DD.")] = None,
               until: Annotated[str | None, Field(description="Last activity on or before YYYY-MM-DD.")] = None,
               observations: Annotated[bool, Field(description="Rank observations too.")] = False,
               inactive: Annotated[bool, Field(description="Include retired and superseded beliefs.")] = False,
               budget_tokens: Annotated[int | None, Field(ge=0, description="Also return `markdown`: compact "
                                                                            "text of at most this many tokens, "
                                                                            "ready for a prompt.")] = None,
               ) -> dict[str, Any]:
        """The active beliefs most relevant to `query`: keyword and semantic relevance fused, weighted by
        effective confidence, with why each matched. Filters as `epimem recall`."""
        res = recaller().recall(query, limit=limit, budget=budget_tokens, kind=kind, permanence=permanence,
                                tag=tag, scope=scope, min_confidence=min_confidence, since=since, until=until,
                                include_observations=observations, include_inactive=inactive)
        return res.as_json()

    @server.tool(annotations=READ, title="Get a belief")
    @_tool
    def get(id: BeliefId) -> dict[str, Any]:  # noqa: A002 - the field is called id everywhere
        """One belief with its statement, stored and effective confidence, evidence, and its history
        (confidence and status at every commit that touched it)."""
        m = mem()
        b, refused = m.shown_belief(_check_id(id, "id"))
        out = shapes.belief_json(b, refused, m.today, m.params)
        out["history"] = shapes.history_json(b.id, m.history(b.id))["history"]
        return out

    @server.tool(name="list", annotations=READ, title="List beliefs")
    @_tool
    def list_beliefs(kind: Annotated[str | None, Field(description="Only this kind.")] = None,
                     permanence: Annotated[Literal["stable", "durable", "situational", "unknown"] | None,
                                           Field(description="Only this permanence.")] = None,
                     status: Annotated[Literal["active", "superseded", "retired", "all"],
                                       Field(description="Which beliefs; default the active ones.")] = "active",
                     tag: Annotated[str | None, Field(description="Only beliefs with this tag.")] = None,
                     scope: Annotated[str | None, Field(description="A project: its beliefs plus global "
                                                                    "ones.")] = None,
                     min_confidence: Annotated[float | None, Field(ge=0, le=1, description="On effective "
                                                                                           "confidence.")] = None,
                     limit: Annotated[int, Field(ge=1, le=1000, description="At most this many, "
                                                                            "strongest first.")] = 50,
                     offset: Annotated[int, Field(ge=0, description="Skip this many (paging).")] = 0,
                     ) -> dict[str, Any]:
        """Beliefs, strongest (effective confidence) first, as `epimem belief list`; `total` says how many
        matched before `limit`; `refused` names hand edits shown as last committed."""
        m = mem()
        listed = m.listing(Filters.make(kind=kind, permanence=permanence, status=status, tag=tag, scope=scope,
                                        min_confidence=min_confidence), limit=limit, offset=offset)
        return {"total": listed.total, "offset": offset, **shapes.listing_json(listed, m.today, m.params)}

    @server.tool(annotations=READ, title="Tensions")
    @_tool
    def tensions(status: Annotated[Literal["unresolved", "watching", "resolved"] | None,
                                   Field(description="Only this status; default every tension.")] = None
                 ) -> dict[str, Any]:
        """Contradictions on record: what happened, the belief, the evidence, and how each was resolved."""
        return {"tensions": [shapes.tension_json(t) for t in mem().tensions(status)]}

    @server.tool(annotations=READ, title="A belief's history")
    @_tool
    def history(id: BeliefId) -> dict[str, Any]:  # noqa: A002
        """A belief's confidence and status at every commit that changed it, oldest first, from git."""
        m = mem()
        return shapes.history_json(id, m.history(_check_id(id, "id")))

    @server.tool(annotations=READ, title="What changed")
    @_tool
    def diff(since: Annotated[str, Field(description="A date YYYY-MM-DD or a git revision.")]) -> dict[str, Any]:
        """What changed since a date or commit, in words: beliefs added, confidence moves, status changes,
        tensions opened and resolved."""
        return {"since": since, "changes": [shapes.change_json(c) for c in mem().diff(since)]}

    @server.tool(annotations=READ, title="The review inbox")
    @_tool
    def inbox() -> dict[str, Any]:
        """What waits for the user's review (`review: required` in epistemology.md): each proposal with
        the change accepting it would make. Accepting or rejecting is the user's decision alone: this
        server offers neither; tell the user `epimem inbox` (or the mirror page) lists them."""
        m = mem()
        m.vault.require()
        previews, problems = m.inbox()
        return {**shapes.inbox_listing_json(m.params.review, previews, problems),
                "decide": "only the user accepts or rejects: `epimem inbox accept|reject ID`, or the page's buttons"}

    @server.tool(annotations=REVIEW, title="Mirror")
    @_tool
    def mirror(mode: Annotated[Literal["audit", "gut-check", "interview", "portrait", "calibration"],
                               Field(description="audit: the dashboard; gut-check: 3 firmest and 3 shakiest "
                                                 "interpretive beliefs to ask the user about (answers go to "
                                                 "`answer`); interview: a plan of questions to ask one at a "
                                                 "time; portrait: the brief of a character study; "
                                                 "calibration: how often the user said still true, per "
                                                 "confidence band.")],
               ) -> dict[str, Any]:
        """See the model the way the user should: the same analyses as `epimem mirror`, as data and as
        `markdown` to show the user. Recording one as a review is the user's decision: `record_review`."""
        return _mirror(mem(), mode, record=False)

    @server.tool(annotations=DECIDE, title="Record a review")
    @_tool
    def record_review(mode: Annotated[Literal["audit", "gut-check", "interview"], Field(
                          description="The review the user went through: audit, gut-check or interview.")]
                      ) -> dict[str, Any]:
        """The user's decision that they have reviewed the model (rule 10): records the audit, gut-check or
        interview as a review (one commit) and resets the review counter, so the next review is due later.
        Only when the user has seen it and says so: a review is how they look at open tensions and
        stale beliefs, and recording one they did not see would hide it from them."""
        return _mirror(mem(), mode, record=True)

    # --- tools: writing ---------------------------------------------------------------------------

    @server.tool(annotations=APPEND, title="Record observations")
    @_tool
    def observe(observations: Annotated[list[ObservationIn], Field(
                    max_length=50,
                    description="0–3 observations from this session (zero is a good answer). The same observation "
                                "sent again is recorded once.")],
                session: Annotated[str | None, Field(description="The session these count for; default this "
                                                                 "connection (stdio) or MCP session (HTTP).")] = None,
                ctx: Context | None = None) -> dict[str, Any]:
        """Record what this session showed about the user, under the rules: at most 3 per session (rule 9),
        confidence moves only as rules 3–4 say, a contradiction opens a tension, a new belief close to an
        existing one is not created but listed in `similar` (rule 17). One commit for the batch. The result says
        what changed, with `alerts` when a firmly held belief was contradicted."""
        items = [o.model_dump(exclude_none=True) for o in observations]
        sess = sessions.of(ctx, session)
        # An agent over MCP is an unattended path (SPEC §15): with `review: required` its batch is
        # proposed to the user, whatever session or source it names. The connection is the
        # server's to name, not the model's: rule 9 bounds it as one session (`own`).
        report = mem().observe(items, source=_client_source(ctx), session=sess, origin="mcp",
                               own=sessions.of(ctx))
        out = shapes.observe_json(report)
        out["session"] = sess
        out.setdefault("similar", list(getattr(report, "similar", None) or ()))
        return out

    @server.tool(annotations=DECIDE, title="The user's verdict on a belief")
    @_tool
    def answer(id: BeliefId,  # noqa: A002
               verdict: Annotated[Literal["true", "false", "unsure"], Field(
                   description="What the user said: true (still true: recorded in their words, no number "
                               "changes), false (no longer true: −0.20, or retired with `retire`), unsure.")],
               note: Note = "",
               retire: Annotated[bool, Field(description="With verdict false: retire the belief instead of "
                                                         "lowering it.")] = False,
               now: Annotated[str, Field(description="With verdict false: what holds instead, in the user's "
                                                     "words (a title); it supersedes the belief in one step.")] = ""
               ) -> dict[str, Any]:
        """Record the user's own verdict on a belief (a gut-check answer, or anything they said about it),
        with the confidence it had when asked. Where an open tension proposes a successor, the verdict
        settles it in one step (false: superseded by the successor; true: kept, the proposal retired).
        Ask them; never answer for them."""
        from ..mirror.gutcheck import answer as record_answer
        from ..mirror.gutcheck import misplaced

        bad = misplaced(verdict, retire, now)
        if bad == "retire":
            raise ToolError("'retire' goes with verdict 'false'")
        if bad == "now":
            raise ToolError("'now' goes with verdict 'false' without 'retire': it names what holds instead")
        m = mem()
        return shapes.answer_json(record_answer(m, _check_id(id, "id"), verdict, note=note, retire=retire,
                                                now=now, source="answer"))

    @server.tool(annotations=DECIDE, title="Supersede beliefs")
    @_tool
    def supersede(old: Annotated[list[str], Field(min_length=1, description="The ids of the beliefs replaced.")],
                  by: Annotated[str, Field(description="The id of the belief that replaces them (it must exist).")],
                  note: Note = "") -> dict[str, Any]:
        """The user's decision that `by` replaces `old`: the old beliefs get status superseded and stay on
        record; `by` lists them in `supersedes`. Ask the user first."""
        for i, o in enumerate(old):
            _check_id(o, f"old[{i}]")
        m = mem()
        b = m.supersede(old, _check_id(by, "by"), note)
        return belief_view(b, m.today, m.params, False)

    @server.tool(annotations=DECIDE, title="Retire a belief")
    @_tool
    def retire(id: BeliefId, note: Note = "") -> dict[str, Any]:  # noqa: A002
        """The user's decision that a belief no longer holds: status retired, out of recall, kept in the vault
        and in git (epimem never deletes a belief). Ask the user first."""
        m = mem()
        b = m.retire(_check_id(id, "id"), note)
        return belief_view(b, m.today, m.params, False)

    @server.tool(annotations=DECIDE, title="Resolve a tension")
    @_tool
    def resolve_tension(id: Annotated[str, Field(description="The tension's id (its file name, as `tensions` "  # noqa: A002
                                                             "shows it).")],
                        note: Annotated[str, Field(min_length=1, description="How the user resolved it, in "
                                                                             "their words (required).")]
                        ) -> dict[str, Any]:
        """Only the user resolves a tension (SPEC §1.3): status resolved with their note; history stays."""
        return shapes.tension_json(mem().resolve_tension(_check_id(id, "id", check_tension_id), note))

    # --- resources ----------------------------------------------------------------------------------

    @server.resource("epimem://belief/{id}", name="belief", mime_type="text/markdown",
                     description="A belief's file as it is in the vault, secrets redacted; when a hand edit "
                                 "to it breaks a rule, the file as last committed and a last line saying so.")
    def belief_file(id: str) -> str:  # noqa: A002
        try:
            check_id(id)
            text, _, refused = mem().shown_file(id)
        except (IdError, EpimemError) as e:
            raise ResourceError(str(e)) from None
        return text if refused is None else f"{text.rstrip(chr(10))}\n\n> epimem: {refused}\n"

    # `cwd` is a client's working directory, an absolute path by nature: it only names the project whose
    # beliefs to show (no file under it is read), so the SDK's path checks are lifted for it alone.
    @server.resource("epimem://context{?cwd}", name="context", mime_type="text/markdown",
                     security=ResourceSecurity(exempt_params={"cwd"}),
                     description="What the session-start hook would give an assistant working in `cwd`: "
                                 "the vault's facts and the beliefs that fit the budget.")
    def context(cwd: str = "") -> str:
        return _context(root, cwd or str(Path.cwd()), today)

    @server.resource("epimem://audit", name="audit", mime_type="text/markdown",
                     description="The mirror's audit dashboard, as markdown.")
    def audit_text() -> str:
        from ..api.mirror import run

        m = mem()
        try:
            m.vault.require()
            return run(m, "audit").markdown
        except EpimemError as e:
            raise ResourceError(str(e)) from None

    # --- prompts ---------------------------------------------------------------------------------------

    @server.prompt(name="observe", title="Observe this session",
                   description="The observe skill's method: record 0–3 observations of this session.")
    def observe_prompt() -> str:
        return _skill_prompt("observe")

    @server.prompt(name="mirror", title="Mirror",
                   description="The mirror skill's method: show the user what epimem believes, and let them "
                               "correct it.")
    def mirror_prompt(mode: str = "portrait") -> str:
        return _skill_prompt("mirror", mode)

    return server


def _context(root: Path, cwd: str, today: str | None) -> str:
    """The hook's own rendering (`api/context`), from the context cache brought up to date first."""
    from ..api.context import session_context
    from ..store import clock

    try:
        return session_context(str(root), cwd, clock.today(today))
    except (OSError, EpimemError, ValueError) as e:
        raise ResourceError(f"cannot read the vault at {root}: {e}") from None


# A client without skills gets the skill's method with the CLI commands named as tools.
_TOOLS_FOR_COMMANDS = """\
(Served over MCP: where the method below names an `epimem` command, use the tool of the same name —
`epimem observe` → `observe`, `epimem recall` → `recall`, `epimem belief list`/`show` → `list`/`get`,
`epimem mirror MODE` → `mirror`, `epimem mirror answer` → `answer`. Call `describe` first for the
vocabulary in use.)

"""


def _skill_prompt(name: str, mode: str | None = None) -> str:
    from ..agents.claude_code import SKILLS_DIR  # the skills' one copy

    try:
        text = (SKILLS_DIR / name / "SKILL.md").read_text(encoding="utf-8")
    except OSError as e:
        raise ResourceError(f"the {name} skill is missing from this installation: {e}") from None
    from ..core.notes import parse_note

    note = parse_note(text, lenient=True)
    text = note.body if note is not None else text
    # `!` lines are Claude Code's shell expansions: meaningless to another client.
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("!`")).strip()
    head = _TOOLS_FOR_COMMANDS
    if mode:
        head += f"Mode asked for: {mode}.\n\n"
    return head + body + "\n"
