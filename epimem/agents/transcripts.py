"""One interface for agents' session logs, each read into a `core/transcript.Transcript`.

Each format is an adapter with a `claims(record)` test on a parsed line and a
`parse_lines(lines)` that turns the file into a Transcript, skipping (and
counting) whatever is not a person or the assistant talking. The session-end
pass reads Transcripts only, so it takes any format an adapter reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from ..core.transcript import Transcript


class Format(Protocol):
    name: str
    label: str

    def claims(self, record: dict) -> bool: ...

    def parse_lines(self, lines: Iterable[str]) -> Transcript: ...


class Records:
    """The JSON objects of a JSON Lines log, each with its 1-based line number. A blank line is
    passed over; anything else that is not an object is counted as `malformed` and skipped, as
    every format's reader must do: an agent's log is its own internal format and changes between
    versions. `count` is the number of lines read so far."""

    def __init__(self, lines: Iterable[str], skipped: dict[str, int]) -> None:
        self.lines, self.skipped, self.count = lines, skipped, 0

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def __iter__(self) -> Iterator[tuple[int, dict]]:
        for n, line in enumerate(self.lines, 1):
            self.count = n
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):  # RecursionError: JSON nested thousands deep
                rec = None
            if isinstance(rec, dict):
                yield n, rec
            else:
                self.skip("malformed")


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
