"""The session-end pass: observations from a session's transcript, whichever agent logged it.

The keyword pass (`core/statements`) always runs; when asked for, with an API key, a Claude pass
through the `anthropic` SDK reads a redacted, condensed transcript and the current profile and
answers through one tool (`core/observation_tool`), whose answer is checked before anything is
recorded: a refused answer leaves the keyword pass's candidates standing. The pass records once a
session, in one commit, through `Memory.observe` (the inbox, under `review: required`).

Nothing is sent anywhere unless the caller passes `use_llm=True` (SPEC §8). The transcript comes
read (`core/transcript.Transcript`): each agent's format is its front end's
(`epimem.claude.transcript.read_transcript` reads Claude Code's and Codex's).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..core.citations import cited_beliefs
from ..core.errors import EpimemError, located
from ..core.filters import Filters
from ..core.forget import is_forgotten
from ..core.observation_tool import TOOL_NAME, AnswerRefused, parse_answer, tool_schema
from ..core.redact import redact
from ..core.statements import find_statements, statement_items
from ..core.transcript import Transcript, condensed, project_of, session_day
from ..store import refused_passes
from . import listing
from .inbox import observe_or_propose
from .observe import as_found
from .sessions import recorded_in
from .similar import similar
from .write import lock

if TYPE_CHECKING:
    from .results import ObserveReport
    from .service import Service

DEFAULT_MODEL = "claude-sonnet-4-6"
PROFILE_BELIEFS = 60
ANY_STATUS = Filters.make(status=None)  # the pass reads every belief, retired ones too

SYSTEM = """\
You read one Claude Code session between a person (the user) and an AI assistant, and record
what it showed about the user as a person to work with — or nothing. The user keeps an epistemic
memory: beliefs about them held as weighted hypotheses, each earned from evidence.

Look for judgment calls (what they chose when there was a choice), pushback (what they corrected
or refused), process signals (how they like to work: order, size of steps, checks, pace),
contradictions of the profile below, and things they revealed about themselves unprompted.

Rules:
- Behaviour over self-report: what they did outweighs what they said about themselves. Use basis
  "behavioral" for what they did, "self-report" for what they said about themselves.
- One interpretive step only: from what happened to what it suggests, no further. No psychology.
- 0 to 3 observations. Zero is a good answer for a session that was pure task execution.
- Never record task outcomes (the bug was fixed, the tests pass) or passing opinions about tools.
- Nothing that would feel like surveillance if the user read it: no health, relationships, money,
  mood or anything private they did not offer as relevant to the work.
- connects: the id of the profile belief the observation bears on, or "new". strength: "single"
  for a first sighting (always with "new", and then give title, kind, permanence), "confirming",
  "complicating" (adds nuance, contradicts nothing) or "contradicting".
- evidence says what happened, concretely, in one or two sentences; suggests is the one
  interpretive step; therefore is what the assistant should do differently next time.
- Secrets appear as [REDACTED:…]; never try to restore them.
Answer only by calling the record_observations tool."""


# --- the request ------------------------------------------------------------------------

def _profile_lines(beliefs, today, params) -> list[str]:
    out = []
    for eff, b in listing.ranked([b for b in beliefs if b.status == "active"], today, params)[:PROFILE_BELIEFS]:
        gist = " ".join(b.statement.split())[:200]
        out.append(f"- {b.id}: {b.title} — {gist} ({params.tier(eff, b.basis)}, {b.basis}, {eff:.2f})")
    return out


def build_request(transcript: Transcript, candidates: list[dict], beliefs, params, today, *,
                  model: str = DEFAULT_MODEL, limit: int = 3, max_chars: int = 60_000) -> dict[str, Any]:
    """Keyword arguments for `client.messages.create`, every text redacted."""
    patterns = params.redact
    profile = "\n".join(_profile_lines(beliefs, today, params)) or "(no beliefs yet)"
    cands = "\n".join(f'- {c["evidence"]}' for c in candidates) or "(none)"
    body = (f"<profile>\n{profile}\n</profile>\n\n"
            f"<stated_by_the_user>\nSentences a keyword pass found in the user's own turns "
            f"(corrections, stated preferences); use them only if they hold up in context:\n{cands}\n"
            f"</stated_by_the_user>\n\n"
            f"<session>\n{condensed(transcript, max_chars)}\n</session>\n\n"
            f"Record 0 to {limit} observations with the {TOOL_NAME} tool.")
    return {
        "model": model,
        "max_tokens": 1500,
        "system": SYSTEM,
        "tools": [tool_schema(limit)],
        "tool_choice": {"type": "tool", "name": TOOL_NAME},
        "messages": [{"role": "user", "content": redact(body, patterns)}],
    }


# --- I/O: the call, and the whole pass ---------------------------------------------------------

def make_client(api_key: str | None = None):
    import anthropic  # only when the user asked for the Claude pass

    return anthropic.Anthropic(api_key=api_key or os.environ.get("ANTHROPIC_API_KEY"), max_retries=1,
                               timeout=90.0)


def llm_observations(transcript: Transcript, candidates: list[dict], beliefs, params, today, *,
                     client=None, model: str | None = None, limit: int = 3, session: str = "") -> list[dict]:
    client = client or make_client()
    req = build_request(transcript, candidates, beliefs, params, today,
                        model=model or os.environ.get("EPIMEM_MODEL") or DEFAULT_MODEL, limit=limit)
    message = client.messages.create(**req)
    items = parse_answer(message.model_dump(), {b.id for b in beliefs if b.status == "active"},
                         limit=limit, session=session, project=project_of(transcript), patterns=params.redact,
                         source=f"{transcript.agent}/transcript")
    day = session_day(transcript)
    return [dict(i, date=day) if day else i for i in items]


def observe_from_transcript(mem: Service, transcript: Transcript, use_llm: bool = False, *,
                            session: str | None = None, client=None, notes: list[str] | None = None) -> list[dict]:
    """Observation items for `observe` from a transcript (nothing is recorded here).

    The deterministic pass always runs; with `use_llm` and an API key (or a
    `client`), Claude's checked answer replaces its candidates. `notes`
    collects what a person may want to know (skipped records, a refusal).
    """
    notes = notes if notes is not None else []
    t = transcript
    if t.skipped:
        notes.append("skipped transcript records: " + ", ".join(f"{k} {v}" for k, v in sorted(t.skipped.items())))
    sess = session or t.session
    params = mem.params
    limit = params.observations_per_session
    beliefs = listing.beliefs(mem, ANY_STATUS)
    candidates = statement_items(find_statements(t), session=sess, beliefs=beliefs, source=f"{t.agent}/transcript",
                                 agent=t.label, project=project_of(t))
    if not use_llm:
        return candidates[:limit]
    if client is None and not os.environ.get("ANTHROPIC_API_KEY"):
        notes.append("no ANTHROPIC_API_KEY: only the keyword pass ran")
        return candidates[:limit]
    try:
        return llm_observations(t, candidates, beliefs, params, mem.today, client=client,
                                limit=limit, session=sess)
    except AnswerRefused as e:
        notes.append(f"Claude's answer was refused ({e}); the keyword pass stands")
    except Exception as e:  # the network, the key, the SDK: never lose the keyword pass
        notes.append(f"the Claude pass failed ({type(e).__name__}: {e}); the keyword pass stands")
    return candidates[:limit]


def record_from_transcript(mem: Service, transcript: Transcript, use_llm: bool = False, *,
                           session: str | None = None, client=None, path: str | None = None
                           ) -> tuple[ObserveReport | None, list[str]]:
    """Run the pass and record its items in one commit: (ObserveReport or None, notes).

    A session that already has observations (the /observe skill ran) gets
    nothing more: the model's own judgment of the session came first.
    `path`: the file the transcript was read from. A pass the vault refuses is then kept on
    `store.refused_passes`' list (what it found is not lost: the file can be passed again), and
    one that goes through takes the file off it.
    """
    if path is None:
        return _record(mem, transcript, use_llm, session=session, client=client)
    try:
        out = _record(mem, transcript, use_llm, session=session, client=client)
    except EpimemError as e:
        _keep(mem, refused_passes.add, path, session or transcript.session, mem.write_today.isoformat(),
              redact(located(e), mem.params.redact))  # rule 23: the vault's own patterns too
        raise
    if refused_passes.read(mem.root):  # the common case, none waiting, takes no lock
        _keep(mem, refused_passes.drop, path)
    return out


def _keep(mem: Service, change, *args) -> None:
    try:
        with lock(mem):
            change(mem.root, *args)
    except (OSError, EpimemError):
        pass  # no vault to keep it in: the hook's log line is then the only record, as before


def _record(mem: Service, transcript: Transcript, use_llm: bool, *, session: str | None,
            client) -> tuple[ObserveReport | None, list[str]]:
    notes: list[str] = []
    t = transcript
    sess = session or t.session
    if sess:
        had = recorded_in(mem, sess)
        if had:
            notes.append(f"session {sess} already has {had} observation(s); the transcript pass adds none")
            return None, notes
    items = observe_from_transcript(mem, t, use_llm, session=sess, client=client, notes=notes)
    if not items:
        notes.append("nothing worth recording in this session")
        return None, notes
    items = connect_similar(mem, items, notes)
    # A transcript's times are UTC: west of Greenwich a turn said this evening is dated tomorrow,
    # a day rule 20 refuses. It is dated no later than today.
    today = mem.write_today.isoformat()
    items = [dict(i, date=min(i["date"], today)) if isinstance(i.get("date"), str) else i for i in items]
    # What the assistant relied on, as it cited it: recorded on each observation of the session.
    cited = cited_beliefs(t, {b.id for b in listing.beliefs(mem, ANY_STATUS) if not is_forgotten(b)})
    if cited:
        items = [dict(i, cited=list(cited)) for i in items]
    source = f"{t.agent}/transcript"
    items, sess = as_found(mem, items, sess, source, notes)
    # Nobody watches this pass write: with `review: required` its items wait in the inbox.
    report = observe_or_propose(mem, items, source=source, session=sess or None, origin="session-end")
    return report, notes


NEW_ONLY = ("title", "kind", "permanence", "scope", "tags")


def connect_similar(mem: Service, items: list[dict], notes: list[str]) -> list[dict]:
    """Rule 17 for the transcript pass: a would-be new belief close to an active one is
    recorded against that belief instead, changing no number (the two may even
    contradict each other; the user decides, not the pass): a self-report is
    reinforcement (rule 3), anything else another first sighting."""
    out = []
    for item in items:
        if item.get("connects") == "new" and item.get("title"):
            near = similar(mem, item["title"], item.get("suggests") or item.get("evidence") or "")
            if near:
                top = near[0]
                item = {k: v for k, v in item.items() if k not in NEW_ONLY}
                item.update(connects=top["id"],
                            strength="confirming" if item.get("basis") == "self-report" else "single")
                notes.append(f"connected to {top['id']} (similarity {top['similarity']:.2f}) instead of "
                             "creating a near-duplicate (rule 17)")
        out.append(item)
    return out
