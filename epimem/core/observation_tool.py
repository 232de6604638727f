"""The tool a model answers through with observations of a session, and the check of its answer.

The Claude pass of the session-end pass (`api/transcripts`) asks for one call of this tool, whose
input is the observation schema (at most the session's limit of items). An answer that is not a
single well-formed call, names a belief that is not in the profile, or holds more observations
than the session may record is refused whole (`AnswerRefused`): nothing of it is recorded.
"""

from __future__ import annotations

import re
from typing import Any

from .model import PERMANENCES, STRENGTHS
from .redact import redact

TOOL_NAME = "record_observations"
SOURCE = "claude-code/transcript"
LIMITS = {"evidence": 500, "suggests": 300, "therefore": 300, "title": 80}


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
