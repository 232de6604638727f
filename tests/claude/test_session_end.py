"""The Claude pass over a transcript: the real `anthropic` SDK talking to an
httpx MockTransport. What is sent is asserted (secrets gone), and a bad or
over-long answer is refused with the keyword pass standing in."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anthropic

try:  # the SDK moved to httpx2; its MockTransport is the same API
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx
import pytest

from epimem.api.transcripts import observe_from_transcript, record_from_transcript
from epimem.claude.transcript import read_transcript
from epimem.core.observation_tool import TOOL_NAME, AnswerRefused, parse_answer

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "transcript.jsonl"
SESSION = "5b0c2a8e-1d1f-4a53-9a43-0c8b1f2e7d11"
SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


class Mock:
    def __init__(self, answer: dict | None = None, status: int = 200, text: str | None = None):
        self.requests: list[httpx.Request] = []
        self.answer = answer
        self.status = status
        self.text = text

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.status != 200:
            return httpx.Response(self.status, json={"type": "error", "error": {"type": "api_error",
                                                                                 "message": "boom"}})
        return httpx.Response(200, json=self.answer)

    @property
    def body(self) -> dict:
        return json.loads(self.requests[-1].content)

    def client(self) -> anthropic.Anthropic:
        return anthropic.Anthropic(api_key="sk-ant-test-key-000000000000000000",
                                   http_client=httpx.Client(transport=httpx.MockTransport(self)),
                                   max_retries=0)


def message(observations=None, *, content=None, stop_reason="tool_use"):
    if content is None:
        content = [{"type": "tool_use", "id": "toolu_01", "name": TOOL_NAME,
                    "input": {"observations": observations or []}}]
    return {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
            "content": content, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": 900, "output_tokens": 120}}


GOOD = [
    {"evidence": "Asked for the mocked database in the tests to be replaced by the real Postgres CI runs.",
     "suggests": "Trusts integration tests over mocks for data code.",
     "therefore": "Write database tests against a real database by default.",
     "connects": "tests-against-real-systems", "strength": "confirming", "basis": "behavioral"},
    {"evidence": "Split the checkout change into small commits without being asked.",
     "suggests": "Keeps commits to one concern.",
     "therefore": "Propose commit boundaries as the work goes.",
     "connects": "new", "strength": "single", "basis": "behavioral",
     "title": "Commits one concern at a time", "kind": "workflow", "permanence": "durable", "scope": "project"},
]


@pytest.fixture
def mem(vault):
    vault.add_belief(title="Tests against real systems", statement="Prefers tests that hit real services.",
                     kind="preference", basis="behavioral", permanence="durable", confidence=0.6)
    return vault


@pytest.fixture
def transcript(tmp_path):
    p = tmp_path / "session.jsonl"
    shutil.copy(FIXTURE, p)
    return p


def test_request_is_redacted_and_answer_becomes_items(mem, transcript):
    mock = Mock(message(GOOD))
    notes: list[str] = []
    items = observe_from_transcript(mem, read_transcript(transcript), use_llm=True, client=mock.client(), notes=notes)
    assert len(mock.requests) == 1
    req = mock.requests[0]
    assert req.url.path == "/v1/messages"
    raw = req.content.decode()
    assert SECRET not in raw and "[REDACTED:github-token]" in raw
    body = mock.body
    assert body["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    assert body["tools"][0]["input_schema"]["properties"]["observations"]["maxItems"] == 3
    sent = body["messages"][0]["content"]
    assert "User: Add a discount code field" in sent
    assert "tests-against-real-systems" in sent            # the profile, so it can connect
    assert "Prefers small commits" in sent or "I prefer small commits" in sent  # keyword candidates
    assert "Never deploy on Fridays" not in sent            # tool results are not the session's words
    assert "Behaviour over self-report" in body["system"]
    assert items[0]["connects"] == "tests-against-real-systems"
    assert items[1]["title"] == "Commits one concern at a time" and items[1]["scope"] == "webshop"
    assert all(i["session"] == SESSION and i["source"] == "claude-code/transcript" for i in items)
    assert any("skipped transcript records" in n for n in notes)


TOO_LONG = dict(GOOD[1], evidence="x" * 600)


@pytest.mark.parametrize("answer,why", [
    (message([GOOD[1]] * 4), "more than the 3"),
    (message([dict(GOOD[0], connects="no-such-belief")]), "not a belief in the profile"),
    (message([TOO_LONG]), "over 500"),
    (message([dict(GOOD[0], strength="certain")]), "strength"),
    (message([dict(GOOD[1], strength="confirming")]), "a new pattern is a 'single'"),
    (message([dict(GOOD[0], mood="sad")]), "unexpected field"),
    (message(content=[{"type": "text", "text": "Here are my thoughts..."}], stop_reason="end_turn"), "tool call"),
    (message(GOOD, stop_reason="max_tokens"), "cut off"),
])
def test_bad_answers_are_refused(mem, transcript, answer, why):
    mock = Mock(answer)
    notes: list[str] = []
    items = observe_from_transcript(mem, read_transcript(transcript), use_llm=True, client=mock.client(), notes=notes)
    assert any("refused" in n and why in n for n in notes), notes
    # the keyword pass stands instead
    assert [i.get("title") for i in items] == [
        "Prefers small commits, one concern each",
        "Asks: “Always run the full test suite before you commit”",
        "Asks not to use mocks for the database in tests, we run a real Postgres in CI"]


def test_api_error_keeps_the_keyword_pass(mem, transcript):
    notes: list[str] = []
    items = observe_from_transcript(mem, read_transcript(transcript),
                                    use_llm=True, client=Mock(status=500).client(), notes=notes)
    assert len(items) == 3 and any("Claude pass failed" in n for n in notes)


def test_nothing_is_sent_without_llm_or_key(mem, transcript, monkeypatch):
    monkeypatch.setattr(anthropic, "Anthropic", lambda *a, **k: pytest.fail("no client may be made"))
    notes: list[str] = []
    assert len(observe_from_transcript(mem, read_transcript(transcript), use_llm=False, notes=notes)) == 3
    assert len(observe_from_transcript(mem, read_transcript(transcript), use_llm=True, notes=notes)) == 3
    assert any("no ANTHROPIC_API_KEY" in n for n in notes)


def test_record_is_one_commit_and_once_per_session(mem, transcript):
    mock = Mock(message(GOOD))
    report, notes = record_from_transcript(mem, read_transcript(transcript), use_llm=True, client=mock.client())
    assert report.commit and len(report.results) == 2
    log = (mem.root / "observations" / "2026-11.md").read_text()
    assert f"session {SESSION}" in log and SECRET not in log
    assert mem.belief("tests-against-real-systems").confirmed is not None
    assert mem.belief("commits-one-concern-at-a-time").scope == "webshop"
    report, notes = record_from_transcript(mem, read_transcript(transcript), use_llm=True, client=mock.client())
    assert report is None and any("already has 2 observation" in n for n in notes)
    assert len(mock.requests) == 1


def test_zero_observations_is_a_good_answer(mem, transcript):
    report, notes = record_from_transcript(mem, read_transcript(transcript),
                                           use_llm=True, client=Mock(message([])).client())
    assert report is None and "nothing worth recording in this session" in notes


def test_parse_answer_redacts_what_it_keeps():
    item = dict(GOOD[1], evidence="Pasted the key sk-ant-api03-abcdefghijklmnopqrstuv by mistake, then rotated it.")
    from epimem.core.params import DEFAULTS

    out = parse_answer(message([item]), set(), patterns=DEFAULTS.redact)
    assert "sk-ant-api03" not in out[0]["evidence"]
    with pytest.raises(AnswerRefused):
        parse_answer({"content": [{"type": "tool_use", "name": TOOL_NAME, "input": {"obs": []}}]}, set())


def test_a_turn_dated_tomorrow_in_utc_is_recorded_today(mem, transcript):
    """A transcript's times are UTC: an evening west of Greenwich is already tomorrow there. Rule 20
    refuses a date after today, so the pass dates such a turn today instead of losing it."""
    transcript.write_text(transcript.read_text().replace('"2026-11-30T', '"2026-12-01T'))
    report, notes = record_from_transcript(mem, read_transcript(transcript), use_llm=False)
    assert report is not None and report.commit, notes
    log = (mem.root / "observations" / "2026-11.md").read_text()
    assert "- date: 2026-11-30" in log and "2026-12-01" not in log


def test_what_claude_reports_the_user_said_is_recorded_as_self_report(mem, transcript):
    """Rules 3 and 6 (red team): an item whose evidence is what the user said, labelled behavioral by
    Claude's answer, is refused by observe; the pass records it as self-report rather than lose the
    session's batch, and says so."""
    said = dict(GOOD[0], evidence="The user said they always want the real Postgres in tests.")
    before = mem.belief("tests-against-real-systems").confidence
    report, notes = record_from_transcript(mem, read_transcript(transcript),
                                           use_llm=True, client=Mock(message([said])).client())
    assert report.commit and any("recorded as self-report" in n for n in notes), notes
    assert mem.belief("tests-against-real-systems").confidence == before  # reinforcement, no number moves
