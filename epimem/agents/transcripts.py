"""One interface for agents' session logs: a `Transcript` of human and assistant turns.

Each format is an adapter with a `claims(record)` test on a parsed line and a
`parse_lines(lines)` that turns the file into a Transcript, skipping (and
counting) whatever is not a person or the assistant talking. The session-end
pass reads Transcripts only, so it takes any format an adapter reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol


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

    @property
    def human(self) -> list[Turn]:
        return [t for t in self.turns if t.role == "user"]


class Format(Protocol):
    name: str
    label: str

    def claims(self, record: dict) -> bool: ...

    def parse_lines(self, lines: Iterable[str]) -> Transcript: ...


def pick(lines: Sequence[str], formats: Sequence[Format], sniff: int = 20) -> Format:
    """The format that claims the first parseable records; the last one (the default) otherwise."""
    for line in lines[:sniff]:
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: JSON nested thousands deep
            continue
        if isinstance(rec, dict):
            for f in formats:
                if f.claims(rec):
                    return f
    return formats[-1]
