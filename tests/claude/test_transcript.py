"""The transcript reader and the deterministic pass, on a fixture written in
Claude Code's documented JSONL format (tool results, meta records, a
compaction summary, a sub-agent exchange, a broken line)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from epimem.claude.transcript import parse_lines, read_transcript
from epimem.core.model import Belief
from epimem.core.statements import find_statements, match_statement, statement_items
from epimem.core.transcript import condensed

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "transcript.jsonl"


@pytest.fixture(scope="module")
def t():
    return read_transcript(FIXTURE)


def test_only_human_prompts_are_the_user(t):
    human = [turn.text for turn in t.human]
    assert len(human) == 4
    assert human[0].startswith("Add a discount code field")
    assert human[1].startswith("No, don't use mocks for the database")
    assert human[2] == "Always run the full test suite before you commit, please."  # reminder stripped
    assert human[3] == "Why don't we just use a feature flag?"
    everything = "\n".join(turn.text for turn in t.turns)
    for not_the_user in ("global state", "Never deploy on Fridays", "always write the tests first",
                         "run the linter", "Set model to opus", "DO NOT respond", "interrupted"):
        assert not_the_user not in everything


def test_assistant_blocks_of_one_reply_are_joined(t):
    replies = [turn.text for turn in t.turns if turn.role == "assistant"]
    assert replies == ["I'll look at the checkout form first.",
                       "I added the field and a mock for the payment service in the tests.",
                       "Understood. Running the full suite now."]


def test_skipped_records_are_counted(t):
    assert t.skipped == {"other-type": 2, "meta": 1, "command": 3, "tool-result": 1, "malformed": 1,
                         "summary": 1, "compact-summary": 1, "system": 1, "sidechain": 1}
    assert t.session == "5b0c2a8e-1d1f-4a53-9a43-0c8b1f2e7d11"
    assert t.cwd == "/home/ada/code/webshop"
    assert t.lines == 22


def test_garbage_never_raises():
    t = parse_lines(["", "null", "[]", "{", '{"type": "user"}', '{"type": "user", "message": {"content": 5}}',
                     '{"type": "assistant", "message": {"content": [{"type": "text"}]}}', "\x00\xff"])
    assert t.turns == ()
    assert t.skipped["malformed"] == 5


def test_statements_found_in_human_turns_only(t):
    found = find_statements(t)
    assert [s.title for s in found] == [
        "Prefers small commits, one concern each",
        "Asks: “Always run the full test suite before you commit”",
        "Asks not to use mocks for the database in tests, we run a real Postgres in CI",
    ]
    assert [s.kind for s in found] == ["preference", "convention", "convention"]
    assert found[0].text == "I prefer small commits, one concern each."
    assert [s.title for s in find_statements(t, limit=1)] == ["Prefers small commits, one concern each"]


@pytest.mark.parametrize("sentence,title", [
    ("I'd rather have the tests first.", "Would rather have the tests first"),
    ("We always squash-merge pull requests", "Says they always squash-merge pull requests"),
    ("ok, never push to main directly!", "Asks never to push to main directly"),
    ("Please stop adding docstrings to private helpers.", "Asks to stop adding docstrings to private helpers"),
    ("I really prefer tabs over spaces", "Prefers tabs over spaces"),
])
def test_general_statements(sentence, title):
    assert match_statement(sentence)[2] == title


@pytest.mark.parametrize("sentence", [
    "don't change that", "Don't worry about the tests", "stop here", "Why don't we use tabs?",
    "never mind", "Don't touch this file", "I don't know what you mean", "always", "Don't do it again",
])
def test_task_bound_or_idle_sentences_are_not_statements(sentence):
    assert match_statement(sentence) is None


def test_items_for_observe(t):
    found = find_statements(t)
    existing = Belief(id="small-commits", title="Prefers small commits, one concern each", kind="preference",
                      basis="self-report", confidence=0.4, permanence="durable", first=date(2026, 11, 1))
    items = statement_items(found, session=t.session, beliefs=[existing])
    assert items[0]["connects"] == "small-commits" and items[0]["strength"] == "confirming"
    assert "title" not in items[0]
    assert items[1]["connects"] == "new" and items[1]["strength"] == "single"
    assert items[1]["title"] == "Asks: “Always run the full test suite before you commit”"
    assert items[1]["kind"] == "convention" and items[1]["permanence"] == "unknown"
    assert all(i["basis"] == "self-report" and i["session"] == t.session for i in items)
    assert items[0]["evidence"] == 'Said in a Claude Code session: "I prefer small commits, one concern each."'
    assert items[1]["suggests"] == ("Asks: “Always run the full test suite before you commit”, "
                                    "said as a standing rule rather than about one task.")


def test_condensed_keeps_start_and_end():
    lines = [json.dumps({"type": "user", "message": {"content": f"message number {i} " + "x" * 80}})
             for i in range(200)]
    text = condensed(parse_lines(lines), max_chars=3000)
    assert len(text) <= 3100
    assert "message number 0 " in text and "message number 199 " in text
    assert "middle of the session left out" in text
