"""Codex session logs: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.

Each line is `{"timestamp", "type", "payload"}`: `session_meta` (the id and
cwd), `turn_context`, `event_msg` (UI events, which repeat the messages),
`compacted`, and `response_item`, the model's history: `message` (role
`user`, `assistant` or `developer`, content blocks `input_text` /
`output_text`), `reasoning`, `function_call` / `function_call_output`,
`local_shell_call`, `custom_tool_call`… Only `response_item` messages are
read, so nothing is counted twice. Codex puts its own context in user
messages too (AGENTS.md instructions, `<environment_context>`, skills, shell
commands the user ran with `!`): those are not the person speaking. Newer
versions (0.171) say so themselves: each content item carries a `provenance`
(`user`, `agents_md`, `skills`, `harness`…) in the message's
`internal_chat_message_metadata_passthrough`; where it is there it decides,
and the known prefixes are the fallback for older logs.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.transcript import Transcript, Turn
from .transcripts import Records

_CONTEXT = ("# AGENTS.md instructions", "<user_instructions>", "<environment_context>", "<skill",
            "<user_shell_command>", "<turn_aborted>", "<subagent_notification>")
_KINDS = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")


class CodexRollout:
    name = "codex"
    label = "Codex"

    def claims(self, record: dict) -> bool:
        return record.get("type") in _KINDS and isinstance(record.get("payload"), dict)

    def parse_lines(self, lines: Iterable[str]) -> Transcript:
        turns: list[Turn] = []
        skipped: dict[str, int] = {}
        session = cwd = ""
        records = Records(lines, skipped)
        skip = records.skip
        for n, rec in records:
            payload = rec.get("payload")
            if not isinstance(payload, dict):
                skip("malformed")
                continue
            kind = rec.get("type")
            if kind == "session_meta":
                session = session or _str(payload.get("id"))
                cwd = cwd or _str(payload.get("cwd"))
                continue
            if kind == "turn_context":
                cwd = cwd or _str(payload.get("cwd"))
                continue
            if kind != "response_item":
                skip(kind if kind in ("event_msg", "compacted") else "other-type")
                continue
            item = payload.get("type")
            if item != "message":
                skip(item if item in ("reasoning", "function_call", "function_call_output") else "tool-or-other")
                continue
            role = payload.get("role")
            text = _text(payload.get("content"))
            ts = _str(rec.get("timestamp"))
            if role == "user":
                said = _provenance(payload)
                if not text:
                    skip("empty")
                elif said is False or (said is None and text.lstrip().startswith(_CONTEXT)):
                    skip("context")
                else:
                    turns.append(Turn("user", text, n, _str(payload.get("id")), ts))
            elif role == "assistant":
                if text:
                    turns.append(Turn("assistant", text, n, _str(payload.get("id")), ts))
            else:
                skip("developer" if role in ("developer", "system") else "other-role")
        return Transcript(tuple(turns), session, cwd, records.count, skipped, agent=self.name,
                          label=self.label)


def _provenance(payload: dict) -> bool | None:
    """True when Codex marks the message as typed by the user, False when as its own, None: unmarked."""
    meta = payload.get("internal_chat_message_metadata_passthrough")
    items = meta.get("content_item_metadata") if isinstance(meta, dict) else None
    if not isinstance(items, list):
        return None
    kinds = {i["provenance"].get("type") for i in items
             if isinstance(i, dict) and isinstance(i.get("provenance"), dict)}
    return None if not kinds else "user" in kinds


def _str(v) -> str:
    return v if isinstance(v, str) else ""


def _text(content) -> str:
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    parts = [b["text"] for b in content
             if isinstance(b, dict) and b.get("type") in ("input_text", "output_text", "text")
             and isinstance(b.get("text"), str)]
    return "\n".join(parts).strip()


CODEX = CodexRollout()
