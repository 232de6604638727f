"""Reading Claude Code transcripts: its session logs, as one adapter of `epimem.agents.transcripts`.

A transcript is JSON Lines in a format internal to Claude Code that changes
between versions, so the reader is tolerant: a malformed line, an unknown
record type, a tool result, a meta record, a compaction summary or a
sub-agent's exchange is skipped and counted, never fatal.

What is read is a `core/transcript.Transcript`; the passes over it (the user's
statements, the beliefs cited, the session-end pass) take any agent's.
`read_transcript` picks the format (Codex's rollout, or this one) and opens the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ..agents.codex_rollout import CODEX
from ..agents.transcripts import Records, pick
from ..core.transcript import Transcript, Turn

# A user record whose text starts like this is Claude Code talking (a slash
# command, a `!` shell command and its output, a hook's note), not the person.
_NOT_SPEECH = ("<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
               "<local-command-stderr>", "<local-command-caveat>", "<bash-input>", "<bash-stdout>",
               "<bash-stderr>", "<user-prompt-submit-hook>", "[Request interrupted",
               "Caveat: The messages below were generated")
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


def _blocks_text(content) -> tuple[str, bool]:
    """(text, has a tool result) of a message's content."""
    if isinstance(content, str):
        return content, False
    if not isinstance(content, list):
        return "", False
    texts, tool = [], False
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_result":
            tool = True
        elif kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    return "\n".join(texts), tool


def _str(rec: dict, key: str) -> str:
    """A record's field when it is text; the format is Claude Code's own and changes without notice."""
    v = rec.get(key)
    return v if isinstance(v, str) else ""


def parse_lines(lines: Iterable[str]) -> Transcript:
    turns: list[Turn] = []
    skipped: dict[str, int] = {}
    session = cwd = ""
    last_assistant_id = None
    records = Records(lines, skipped)
    skip = records.skip
    for n, rec in records:
        kind = rec.get("type")
        if kind not in ("user", "assistant"):
            skip(kind if kind in ("summary", "system") else "other-type")
            continue
        session = session or _str(rec, "sessionId")
        cwd = cwd or _str(rec, "cwd")
        if rec.get("isSidechain"):
            skip("sidechain")  # a sub-agent's exchange: its "user" is the main agent
            continue
        msg = rec.get("message")
        if not isinstance(msg, dict):
            skip("malformed")
            continue
        text, tool = _blocks_text(msg.get("content"))
        # A lone surrogate (`"\ud800"` in the JSON) is not text: it could be neither
        # written to a file nor sent; it becomes U+FFFD like any undecodable byte.
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        uuid = _str(rec, "uuid")
        ts = _str(rec, "timestamp")
        if kind == "user":
            last_assistant_id = None
            if rec.get("isMeta"):
                skip("meta")
                continue
            if rec.get("isCompactSummary"):
                skip("compact-summary")
                continue
            if tool:
                skip("tool-result")
                continue
            text = _REMINDER.sub("", text).strip()
            if not text:
                skip("empty")
                continue
            if text.startswith(_NOT_SPEECH):
                skip("command")
                continue
            turns.append(Turn("user", text, n, uuid, ts))
        else:
            if not text.strip():
                continue  # thinking and tool_use blocks: the assistant working, not talking
            mid = msg.get("id")
            if mid and mid == last_assistant_id and turns and turns[-1].role == "assistant":
                prev = turns[-1]
                turns[-1] = Turn("assistant", prev.text + "\n" + text, prev.index, prev.uuid, prev.timestamp)
            else:
                turns.append(Turn("assistant", text, n, uuid, ts))
            last_assistant_id = mid
    return Transcript(tuple(turns), session, cwd, records.count, skipped)


class ClaudeCodeFormat:
    """This reader as one adapter of `epimem.agents.transcripts` (Codex's rollouts are another)."""

    name = "claude-code"
    label = "Claude Code"

    def claims(self, record: dict) -> bool:
        return "sessionId" in record or record.get("type") in ("user", "assistant", "summary")

    def parse_lines(self, lines: Iterable[str]) -> Transcript:
        return parse_lines(lines)


FORMATS = (CODEX, ClaudeCodeFormat())  # the last is the default


def read_transcript(path: str | Path) -> Transcript:
    """A session log in any known format (Claude Code's, Codex's rollout), read tolerantly."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.readlines()
    return pick(lines, FORMATS).parse_lines(lines)
