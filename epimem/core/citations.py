"""The beliefs an assistant relied on in a session, as it cited them (`[small-pull-requests]`, the
way the session context and recall name a belief). Recorded on the session's observations."""

from __future__ import annotations

import re

from .transcript import Transcript

_CITE = re.compile(r"\[([a-z0-9][a-z0-9\-]{0,120})\]")


def cited_beliefs(transcript: Transcript, known: set[str]) -> tuple[str, ...]:
    """The belief ids the assistant cited in its replies, first citation first; only ids of `known`."""
    out: dict[str, None] = {}
    for t in transcript.turns:
        if t.role == "assistant":
            for m in _CITE.finditer(t.text):
                if m.group(1) in known:
                    out.setdefault(m.group(1), None)
    return tuple(out)
