"""A session's conversation, whichever agent logged it: the turns of a person and an assistant.

Each agent's log format has its adapter (`epimem.agents.transcripts`: Codex's rollouts, Claude
Code's transcripts in `epimem.claude.transcript`); what is read comes out as this value, so the
passes over it (`core/statements`, `core/citations`, the session-end pass in `api/transcripts`)
take any format. Pure: an adapter does the reading.
"""

from __future__ import annotations

import os.path  # the project's name from the recorded cwd, as the platform splits it
import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Turn:
    role: str  # "user" (a human prompt) or "assistant" (reply text only)
    text: str
    index: int  # line number in the file, 1-based
    uuid: str = ""
    timestamp: str = ""


@dataclass(frozen=True)
class Transcript:
    turns: tuple[Turn, ...]
    session: str = ""
    cwd: str = ""
    lines: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    agent: str = "claude-code"   # the adapter's name: the observations' source
    label: str = "Claude Code"   # the adapter's label: how evidence names the session's agent

    @property
    def human(self) -> list[Turn]:
        return [t for t in self.turns if t.role == "user"]


def project_of(transcript: Transcript) -> str:
    """The project a transcript's session ran in: the last part of its recorded `cwd`."""
    return os.path.basename(transcript.cwd.rstrip("/")) if transcript.cwd else ""


def session_day(transcript: Transcript) -> str:
    """The day the session ended, from the transcript's own timestamps (UTC), or ""."""
    for t in reversed(transcript.turns):
        if re.match(r"^\d{4}-\d{2}-\d{2}", t.timestamp or ""):
            return t.timestamp[:10]
    return ""


def condensed(transcript: Transcript, max_chars: int = 60_000, per_turn: int = 1_500) -> str:
    """The conversation as `User:`/`Assistant:` lines for a model to read.

    Human turns are what matter; assistant replies are cut shorter. When the
    whole does not fit, the middle goes: the start sets the task, the end
    holds the session's judgment calls.
    """
    parts = []
    for t in transcript.turns:
        limit = per_turn if t.role == "user" else per_turn // 3
        text = " ".join(t.text.split())
        if len(text) > limit:
            text = text[:limit] + " […]"
        parts.append(("User: " if t.role == "user" else "Assistant: ") + text)
    out = "\n".join(parts)
    if len(out) <= max_chars:
        return out
    head = out[: max_chars // 3]
    tail = out[-(max_chars - len(head) - 40):]
    return head + "\n[… middle of the session left out …]\n" + tail
