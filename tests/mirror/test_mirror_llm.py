"""`mirror portrait --llm` through the real anthropic SDK, with an httpx
MockTransport in place of the network: what is sent (model, the brief, no
secret, no score), and what happens with a good answer, an API error and a
timeout."""

from __future__ import annotations

import json
import re
from datetime import date

import anthropic
import pytest

from epimem.core.model import Belief, Sessions, Snapshot, Tension
from epimem.core.params import DEFAULTS
from epimem.mirror.llm import DEFAULT_MODEL, LLMError, LLMUnavailable, llm_brief, request_text, write_portrait
from epimem.mirror.portrait import portrait_brief

# The SDK's own HTTP library: `httpx`, or its fork `httpx2` in anthropic >= 2.x,
# which refuses plain httpx objects. Same API, MockTransport included.
try:
    import anthropic._base_client as _bc
    httpx = getattr(_bc, "httpx2", None) or _bc.httpx
except (ImportError, AttributeError):  # pragma: no cover - an SDK layout we do not know
    import httpx

T = date(2026, 11, 30)
SECRET = "sk-ant-api03-" + "Z" * 40
API_KEY = "sk-ant-test-" + "k" * 30

GOOD = """# Portrait

You think out loud before you decide, and it seems you care about craft.

## Where I'm hungriest
> What makes work feel worth doing to you?"""


def _brief():
    bs = (
        Belief("thinks-aloud", "Thinks out loud before deciding", "trait", "interpretive", 0.75,
               "durable", date(2026, 10, 31), statement="Talks through options at length."),
        Belief("values-craft", "Values craftsmanship over speed", "value", "interpretive", 0.55,
               "durable", date(2026, 11, 20)),
        Belief("leaky", "Pastes tokens into chat", "trait", "behavioral", 0.45, "durable",
               date(2026, 11, 20), statement=f"Once pasted {SECRET} into a prompt."),
    )
    ts = (Tension("2026-11-01-thinks-aloud", date(2026, 11, 1), "thinks-aloud", "unresolved",
                  "Said I decide fast, then explored for an hour",
                  what_happened=f"Stated a preference for quick decisions; key {SECRET}."),)
    return portrait_brief(Snapshot(bs, (), ts, Sessions(count=3), (), T), DEFAULTS, T)


def _message(text: str) -> dict:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": DEFAULT_MODEL,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 20}}


def _client(handler) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=API_KEY, max_retries=0,
                               http_client=httpx.Client(transport=httpx.MockTransport(handler)))


def test_request_carries_the_brief_in_words_only():
    seen: list = []

    def handler(request):
        seen.append(request)
        return httpx.Response(200, json=_message(GOOD))

    text = write_portrait(_brief(), model="claude-test-model", client=_client(handler))
    assert text == GOOD
    assert len(seen) == 1
    req = seen[0]
    assert req.method == "POST" and req.url.path == "/v1/messages"
    body = json.loads(req.content)
    assert body["model"] == "claude-test-model"
    user = body["messages"][0]["content"]
    assert body["messages"][0]["role"] == "user"
    # The brief is there, item by item, with certainty in words...
    for phrase in ("Thinks out loud before deciding", "Values craftsmanship over speed",
                   "Said I decide fast, then explored for an hour", '"certainty": "it seems"',
                   "what moves you"):
        assert phrase in user, phrase
    assert user.endswith(json.dumps(llm_brief(_brief()), ensure_ascii=False, indent=1))
    # ...and no secret, no API key in the body, no figure, no date, no score asked for.
    raw = req.content.decode()
    assert SECRET not in raw and API_KEY not in raw
    assert "[REDACTED:anthropic-key]" in user
    assert not re.search(r"\b0?\.\d\d\b|\d{4}-\d{2}-\d{2}", user)
    assert "confidence" not in user.lower() and "score" not in user.lower()
    system = body["system"]
    assert "No numbers of any kind" in system and "scores" in system
    assert not re.search(r"\b(give|include|add|rate)\b[^.]*\bscores?\b", system, re.I)
    # The key travels only as a credential header (which one depends on the SDK version).
    assert API_KEY in (req.headers.get("x-api-key", "") + req.headers.get("authorization", ""))


def test_api_error_is_reported_not_raised_raw():
    def handler(request):
        return httpx.Response(529, json={"type": "error",
                                         "error": {"type": "overloaded_error", "message": "Overloaded"}})

    with pytest.raises(LLMError, match="529: Overloaded"):
        write_portrait(_brief(), client=_client(handler))


def test_server_error_without_body():
    with pytest.raises(LLMError, match="500"):
        write_portrait(_brief(), client=_client(lambda r: httpx.Response(500, text="boom")))


def test_timeout():
    def handler(request):
        raise httpx.ReadTimeout("timed out", request=request)

    with pytest.raises(LLMError, match="did not answer within 5 seconds"):
        write_portrait(_brief(), client=_client(handler), timeout=5)


def test_answer_with_scores_is_refused():
    bad = GOOD + "\n\nI am 75% sure (confidence 0.75)."
    with pytest.raises(LLMError, match="scores"):
        write_portrait(_brief(), client=_client(lambda r: httpx.Response(200, json=_message(bad))))


def test_empty_answer_is_refused():
    with pytest.raises(LLMError, match="empty"):
        write_portrait(_brief(), client=_client(lambda r: httpx.Response(200, json=_message(" "))))


def test_no_key_means_unavailable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(LLMUnavailable, match="ANTHROPIC_API_KEY is not set"):
        write_portrait(_brief())


def test_empty_brief_sends_nothing_personal():
    brief = portrait_brief(Snapshot(today=T), DEFAULTS, T)
    text = request_text(brief)
    assert "nothing yet" in text and "themes" not in text


# --- through the CLI ----------------------------------------------------------------------

def _mirror_model(vault, model: str) -> None:
    p = vault / "epistemology.md"
    text = p.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    p.write_text(f"---\nmirror_model: {model}\n" + text[4:], encoding="utf-8")


def test_cli_llm_uses_the_configured_model(cli, sample_vault, monkeypatch):
    seen: list[dict] = []

    def handler(request):
        seen.append(json.loads(request.content))
        return httpx.Response(200, json=_message(GOOD))

    real = anthropic.Anthropic

    def fake(**kw):
        kw["http_client"] = httpx.Client(transport=httpx.MockTransport(handler))
        return real(**kw)

    monkeypatch.setattr(anthropic, "Anthropic", fake)
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    _mirror_model(sample_vault, "claude-from-vault")
    r = cli("--vault", sample_vault, "mirror", "portrait", "--llm", "--json")
    assert r.code == 0, r.err
    d = r.json()
    assert d["llm"] == {"requested": True, "used": True, "model": "claude-from-vault", "error": None}
    assert d["markdown"].startswith(GOOD)
    assert "Written by claude-from-vault" in d["markdown"]
    assert seen[0]["model"] == "claude-from-vault"
    r = cli("--vault", sample_vault, "mirror", "portrait", "--llm", "--model", "claude-flag")
    assert r.code == 0 and seen[1]["model"] == "claude-flag"


def test_cli_llm_falls_back_on_api_error(cli, sample_vault, monkeypatch):
    real = anthropic.Anthropic

    def fake(**kw):
        kw["http_client"] = httpx.Client(transport=httpx.MockTransport(
            lambda r: httpx.Response(401, json={"type": "error", "error": {
                "type": "authentication_error", "message": "invalid x-api-key"}})))
        kw["max_retries"] = 0
        return real(**kw)

    monkeypatch.setattr(anthropic, "Anthropic", fake)
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    r = cli("--vault", sample_vault, "mirror", "portrait", "--llm")
    assert r.code == 0
    assert "401: invalid x-api-key" in r.err
    assert "this is the offline portrait" in r.out and "## Themes" in r.out


def test_cli_llm_without_key_says_so_and_falls_back(cli, sample_vault):
    r = cli("--vault", sample_vault, "mirror", "portrait", "--llm")
    assert r.code == 0
    assert "ANTHROPIC_API_KEY is not set" in r.err
    assert "_--llm: ANTHROPIC_API_KEY is not set; this is the offline portrait._" in r.out
    assert "## Where I'm hungriest" in r.out
    d = cli("--vault", sample_vault, "mirror", "portrait", "--llm", "--json").json()
    assert d["llm"]["used"] is False and d["llm"]["model"] == DEFAULT_MODEL
