"""A Codex rollout (the documented `rollout-*.jsonl` format) through the same reader and the same
session-end pass as Claude Code's transcripts: human turns only, every other record skipped."""

from __future__ import annotations

from pathlib import Path

from epimem.api.transcripts import record_from_transcript
from epimem.claude.transcript import read_transcript
from epimem.core.statements import find_statements

FIXTURE = next((Path(__file__).parents[1] / "fixtures" / "codex" / "sessions").rglob("rollout-*.jsonl"))


def test_the_reader_takes_the_codex_format_and_keeps_only_people_and_replies():
    t = read_transcript(FIXTURE)
    assert t.agent == "codex"
    assert t.session == "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" and t.cwd == "/home/user/src/shop"
    human = [x.text for x in t.human]
    assert human == ["Add a retry to the payment client. I prefer small commits with one change each.",
                     "No, don't use print statements for logging in production code. Never push straight to main.",
                     "Don't change that file.",
                     "Please always write the migration before the model change."]
    # the UI's echo of a message (event_msg) is not a second turn
    assert sum("payment client" in x.text for x in t.turns) == 1
    assert t.skipped["malformed"] == 1 and t.skipped["reasoning"] == 1
    assert t.skipped["function_call"] == 1 and t.skipped["function_call_output"] == 1
    assert t.skipped["context"] == 4 and t.skipped["developer"] == 1
    assert t.skipped["tool-or-other"] == 2 and t.skipped["compacted"] == 1


def test_statements_come_from_human_turns_only():
    found = {s.title for s in find_statements(read_transcript(FIXTURE))}
    assert found == {"Prefers small commits with one change each",
                     "Asks not to use print statements for logging in production code",
                     "Asks never to push straight to main",
                     "Asks to always write the migration before the model change"}
    # not the AGENTS.md text (marked by prefix, or by Codex's provenance), the reasoning, a tool's
    # output or the assistant's own "I always…"


def test_the_session_end_pass_records_them_as_codex_observations(vault):
    report, notes = record_from_transcript(vault, read_transcript(FIXTURE))
    assert report is not None and report.commit
    assert len(report.results) == 3  # rule 9: at most three a session, the strongest first
    log = "".join(p.read_text() for p in vault.vault.observation_files())
    assert log.count("Said in a Codex session") == 3
    assert "codex/transcript" in log
    assert any("malformed 1" in n for n in notes)
    again, notes = record_from_transcript(vault, read_transcript(FIXTURE))
    assert again is None and "already has 3" in notes[0]


def test_a_claude_code_transcript_still_reads_as_claude_code():
    fixture = Path(__file__).parents[1] / "fixtures" / "claude"
    some = next(fixture.rglob("*.jsonl"))
    assert read_transcript(some).agent == "claude-code"
