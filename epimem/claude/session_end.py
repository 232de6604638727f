"""Observation from a Claude Code transcript: the deterministic pass, then
(when asked for, with an API key) a Claude pass through the `anthropic` SDK.

The Claude pass reads a redacted, condensed transcript and the current
profile and answers through one tool whose input is the observation schema
(at most 3 items). Its answer is checked before anything is recorded: an
answer that is not a single well-formed tool call, names a belief that does
not exist, or holds more observations than the session may record is
refused whole, and the deterministic candidates stand instead.

Nothing is sent anywhere unless the caller passes `use_llm=True` (SPEC §8).
"""

from __future__ import annotations

import os
import re
from typing import Any

from ..api.observe import as_found
from ..core.forget import is_forgotten
from ..core.model import PERMANENCES, STRENGTHS
from ..core.redact import redact
from .transcript import (
    LABELS,
    Transcript,
    cited_beliefs,
    condensed,
    find_statements,
    read_transcript,
    statement_items,
)

TOOL_NAME = "record_observations"
DEFAULT_MODEL = "claude-sonnet-4-6"
SOURCE = "claude-code/transcript"
PROFILE_BELIEFS = 60
LIMITS = {"evidence": 500, "suggests": 300, "therefore": 300, "title": 80}

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


def tool_schema(limit: int = 3) -> dict:
    item = {
        "type": "object",
        "properties": {
            "evidence": {"type": "string", "maxLength": LIMITS["evidence"],
                         "description": "What happened in the session, concretely."},
            "suggests": {"type": "string", "maxLength": LIMITS["suggests"],
                         "description": "The one interpretive step."},
            "therefore": {"type": "string", "maxLength": LIMITS["therefore"],
                          "description": "What the assistant should do differently."},
            "connects": {"type": "string", "description": "A belief id from the profile, or \"new\"."},
            "strength": {"type": "string", "enum": list(STRENGTHS)},
            "basis": {"type": "string", "enum": ["behavioral", "self-report"]},
            "title": {"type": "string", "maxLength": LIMITS["title"],
                      "description": "For connects=\"new\": a short name for the pattern."},
            "kind": {"type": "string", "description": "For new: preference, convention, workflow, trait, value…"},
            "permanence": {"type": "string", "enum": list(PERMANENCES)},
            "scope": {"type": "string", "enum": ["global", "project"],
                      "description": "For new: \"project\" when it only holds in this project."},
        },
        "required": ["evidence", "suggests", "therefore", "connects", "strength", "basis"],
    }
    return {
        "name": TOOL_NAME,
        "description": f"Record 0 to {limit} observations about the user from this session.",
        "input_schema": {"type": "object", "properties": {
            "observations": {"type": "array", "maxItems": limit, "items": item}},
            "required": ["observations"]},
    }


class AnswerRefused(ValueError):
    """Claude's answer was not usable; nothing of it is recorded."""


# --- pure: the request and the check of the answer ----------------------------------------

def _profile_lines(beliefs, today, params) -> list[str]:
    from ..api.listing import ranked

    out = []
    for eff, b in ranked([b for b in beliefs if b.status == "active"], today, params)[:PROFILE_BELIEFS]:
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


def _text(item: dict, key: str, n: int, *, required: bool = False, lo: int = 0) -> str:
    v = item.get(key)
    if v is None or v == "":
        if required:
            raise AnswerRefused(f"observation {n}: '{key}' is missing")
        return ""
    if not isinstance(v, str):
        raise AnswerRefused(f"observation {n}: '{key}' is not text")
    v = " ".join(v.split())
    limit = LIMITS.get(key, 40)
    if len(v) > limit:
        raise AnswerRefused(f"observation {n}: '{key}' is {len(v)} characters, over {limit}")
    if len(v) < lo:
        raise AnswerRefused(f"observation {n}: '{key}' is too short")
    return v


def parse_answer(message: dict, known_ids: set[str], *, limit: int = 3, session: str = "",
                 project: str = "", patterns=None, source: str = SOURCE) -> list[dict]:
    """Observation items from Claude's answer (a Message as a dict), or AnswerRefused."""
    if message.get("stop_reason") == "max_tokens":
        raise AnswerRefused("the answer was cut off (max_tokens)")
    calls = [b for b in message.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"]
    if len(calls) != 1 or calls[0].get("name") != TOOL_NAME:
        raise AnswerRefused(f"expected one {TOOL_NAME} call, got {len(calls)} tool call(s)")
    data = calls[0].get("input")
    obs = data.get("observations") if isinstance(data, dict) else None
    if not isinstance(obs, list):
        raise AnswerRefused("the tool input has no 'observations' list")
    if len(obs) > limit:
        raise AnswerRefused(f"{len(obs)} observations, more than the {limit} this session may record")
    allowed = set(tool_schema()["input_schema"]["properties"]["observations"]["items"]["properties"])
    items = []
    for n, raw in enumerate(obs, 1):
        if not isinstance(raw, dict):
            raise AnswerRefused(f"observation {n} is not an object")
        extra = set(raw) - allowed
        if extra:
            raise AnswerRefused(f"observation {n}: unexpected field(s) {', '.join(sorted(extra))}")
        item: dict[str, Any] = {
            "evidence": _text(raw, "evidence", n, required=True, lo=10),
            "suggests": _text(raw, "suggests", n, required=True),
            "therefore": _text(raw, "therefore", n, required=True),
        }
        strength, basis, connects = raw.get("strength"), raw.get("basis"), raw.get("connects")
        if strength not in STRENGTHS:
            raise AnswerRefused(f"observation {n}: strength {strength!r} is not one of {', '.join(STRENGTHS)}")
        if basis not in ("behavioral", "self-report"):
            raise AnswerRefused(f"observation {n}: basis {basis!r} is not behavioral or self-report")
        if connects != "new" and connects not in known_ids:
            raise AnswerRefused(f"observation {n}: connects to {connects!r}, which is not a belief in the profile")
        item.update(strength=strength, basis=basis, connects=connects, source=source)
        if connects == "new":
            if strength != "single":
                raise AnswerRefused(f"observation {n}: a new pattern is a 'single' sighting, not {strength!r}")
            item["title"] = _text(raw, "title", n, required=True, lo=3)
            kind = raw.get("kind") or "trait"
            if not isinstance(kind, str) or not re.fullmatch(r"[a-z][a-z0-9\-]{1,30}", kind):
                raise AnswerRefused(f"observation {n}: kind {kind!r} is not a lowercase word")
            perm = raw.get("permanence") or "unknown"
            if perm not in PERMANENCES:
                raise AnswerRefused(f"observation {n}: permanence {perm!r} is not one of {', '.join(PERMANENCES)}")
            item.update(kind=kind, permanence=perm)
            if raw.get("scope") == "project" and project:
                item["scope"] = project
        if session:
            item["session"] = session
        if patterns is not None:
            item = {k: redact(v, patterns) if isinstance(v, str) else v for k, v in item.items()}
        items.append(item)
    return items


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


def project_of(transcript: Transcript) -> str:
    """The project a transcript's session ran in: the last part of its recorded `cwd`."""
    return os.path.basename(transcript.cwd.rstrip("/")) if transcript.cwd else ""


def session_day(transcript: Transcript) -> str:
    """The day the session ended, from the transcript's own timestamps (UTC), or ""."""
    for t in reversed(transcript.turns):
        if re.match(r"^\d{4}-\d{2}-\d{2}", t.timestamp or ""):
            return t.timestamp[:10]
    return ""


def observe_from_transcript(memory, path, use_llm: bool = False, *, session: str | None = None,
                            client=None, notes: list[str] | None = None) -> list[dict]:
    """Observation items for `memory.observe` from a transcript file (nothing is recorded here).

    The deterministic pass always runs; with `use_llm` and an API key (or a
    `client`), Claude's checked answer replaces its candidates. `notes`
    collects what a person may want to know (skipped records, a refusal).
    """
    notes = notes if notes is not None else []
    t = read_transcript(path)
    if t.skipped:
        notes.append("skipped transcript records: " + ", ".join(f"{k} {v}" for k, v in sorted(t.skipped.items())))
    sess = session or t.session
    params = memory.params
    limit = params.observations_per_session
    beliefs = memory.beliefs(status=None)
    candidates = statement_items(find_statements(t), session=sess, beliefs=beliefs, source=f"{t.agent}/transcript",
                                 agent=LABELS.get(t.agent, t.agent), project=project_of(t))
    if not use_llm:
        return candidates[:limit]
    if client is None and not os.environ.get("ANTHROPIC_API_KEY"):
        notes.append("no ANTHROPIC_API_KEY: only the keyword pass ran")
        return candidates[:limit]
    try:
        return llm_observations(t, candidates, beliefs, params, memory.today, client=client,
                                limit=limit, session=sess)
    except AnswerRefused as e:
        notes.append(f"Claude's answer was refused ({e}); the keyword pass stands")
    except Exception as e:  # the network, the key, the SDK: never lose the keyword pass
        notes.append(f"the Claude pass failed ({type(e).__name__}: {e}); the keyword pass stands")
    return candidates[:limit]


def record_from_transcript(memory, path, use_llm: bool = False, *, session: str | None = None,
                           client=None):
    """Run the pass and record its items in one commit: (ObserveReport or None, notes).

    A session that already has observations (the /observe skill ran) gets
    nothing more: the model's own judgment of the session came first.
    """
    notes: list[str] = []
    t = read_transcript(path)
    sess = session or t.session
    if sess:
        from ..api.sessions import recorded_in

        had = recorded_in(memory, sess)
        if had:
            notes.append(f"session {sess} already has {had} observation(s); the transcript pass adds none")
            return None, notes
    items = observe_from_transcript(memory, path, use_llm, session=sess, client=client, notes=notes)
    if not items:
        notes.append("nothing worth recording in this session")
        return None, notes
    items = connect_similar(memory, items, notes)
    # A transcript's times are UTC: west of Greenwich a turn said this evening is dated tomorrow,
    # a day rule 20 refuses. It is dated no later than today.
    today = memory.write_today.isoformat()
    items = [dict(i, date=min(i["date"], today)) if isinstance(i.get("date"), str) else i for i in items]
    # What the assistant relied on, as it cited it: recorded on each observation of the session.
    cited = cited_beliefs(t, {b.id for b in memory.beliefs(status=None) if not is_forgotten(b)})
    if cited:
        items = [dict(i, cited=list(cited)) for i in items]
    source = f"{t.agent}/transcript"
    items, sess = as_found(memory, items, sess, source, notes)
    # Nobody watches this pass write: with `review: required` its items wait in the inbox.
    report = memory.observe(items, source=source, session=sess or None, origin="session-end")
    return report, notes


NEW_ONLY = ("title", "kind", "permanence", "scope", "tags")


def connect_similar(memory, items: list[dict], notes: list[str]) -> list[dict]:
    """Rule 17 for the transcript pass: a would-be new belief close to an active one is
    recorded against that belief instead, changing no number (the two may even
    contradict each other; the user decides, not the pass): a self-report is
    reinforcement (rule 3), anything else another first sighting."""
    out = []
    for item in items:
        if item.get("connects") == "new" and item.get("title"):
            near = memory.similar(item["title"], item.get("suggests") or item.get("evidence") or "")
            if near:
                top = near[0]
                item = {k: v for k, v in item.items() if k not in NEW_ONLY}
                item.update(connects=top["id"],
                            strength="confirming" if item.get("basis") == "self-report" else "single")
                notes.append(f"connected to {top['id']} (similarity {top['similarity']:.2f}) instead of "
                             "creating a near-duplicate (rule 17)")
        out.append(item)
    return out
