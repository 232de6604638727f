"""`mirror portrait --llm`: Claude writes the portrait's prose from the same
brief the offline renderer uses.

What is sent is exactly `llm_brief(brief)`: titles, statements and areas,
each with its certainty in words. No confidence figure, date or id leaves the
machine, and every string passes through the vault's redaction patterns
first. The SDK is imported only here, only when asked for.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from ..core.errors import EpimemError
from ..core.params import DEFAULTS
from ..core.redact import redact
from .phrase import CERTAINTY_WORDS
from .portrait import AREAS, PortraitBrief
from .views import BeliefView

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_TIMEOUT = 60.0
MAX_TOKENS = 1500

SYSTEM = f"""You write a short character study of a person, addressed to them as "you", \
from a brief of what their AI assistant believes about them. It is a mirror: they will read it \
to see, and correct, how the assistant sees them.

Rules:
- No numbers of any kind: no scores, percentages, confidence values, counts or dates.
- Say how sure you are only in words, following each item's "certainty" \
({", ".join(f'"{w}"' for w in CERTAINTY_WORDS)}). Never sound surer than the brief.
- Use only what the brief says. Do not invent facts, history or motives.
- Hold contradictions open: describe both sides, do not resolve them.
- Warm and plain, like a perceptive colleague, not a report or a horoscope.

Shape (markdown, under 450 words): start with "# Portrait"; one paragraph on the person; \
"## Themes" with 4 to 6 short bullets, each opening with a bold theme name; \
"## What I don't see" (the blind spots); "## Contradictions worth holding"; and \
"## Where I'm hungriest" ending with the one question as a block quote."""


class LLMUnavailable(EpimemError):
    """No API key or no SDK: the caller falls back to the offline portrait."""


class LLMError(EpimemError):
    """The call failed (API error, timeout, unusable answer); the message says how."""


def _b(v: BeliefView, patterns) -> dict[str, str]:
    d = {"belief": redact(v.title, patterns), "certainty": v.certainty,
         "kind": AREAS.get(v.kind, v.kind)}
    if v.statement and v.statement.rstrip(".") != v.title.rstrip("."):
        d["detail"] = redact(v.statement, patterns)
    return d


def llm_brief(brief: PortraitBrief, patterns: tuple[tuple[str, str], ...] = DEFAULTS.redact,
              ) -> dict[str, Any]:
    """The brief as sent: words only, redacted."""
    r = lambda s: redact(s or "", patterns)  # noqa: E731
    if brief.empty:
        return {"known": "nothing yet: no beliefs and no observations are recorded",
                "hungriest_question": r(brief.hungriest.question)}
    return {
        "person": [_b(v, patterns) for v in brief.person],
        "themes": [{"theme": r(t.label), "certainty": t.certainty,
                    "beliefs": [_b(v, patterns) for v in t.beliefs[:4]]} for t in brief.themes],
        "blind_spots": [{"area": s.area, "what_is_known": "nothing" if s.reason == "none"
                         else "only guesses"} for s in brief.blind_spots],
        "contradictions": [{"what": r(t.title), "what_happened": r(t.what_happened),
                            "what_it_suggests": r(t.suggests),
                            "about": r(t.belief_title)} for t in brief.contradictions[:4]],
        "hungriest_question": {"question": r(brief.hungriest.question),
                               "why": r(brief.hungriest.why)},
    }


def request_text(brief: PortraitBrief, patterns=DEFAULTS.redact) -> str:
    data = json.dumps(llm_brief(brief, patterns), ensure_ascii=False, indent=1)
    return ("Here is the brief. Write the portrait.\n\n" + data)


_SCORE = re.compile(r"\b0?\.\d{1,3}\b|\b\d{1,3}\s?%|\bconfidence (?:of|score)\b", re.I)


def write_portrait(brief: PortraitBrief, model: str = DEFAULT_MODEL, client: Any = None, *,
                   api_key: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                   patterns: tuple[tuple[str, str], ...] = DEFAULTS.redact) -> str:
    """The portrait in Claude's words (markdown). Raises LLMUnavailable when
    there is no key or SDK, LLMError when the call or its answer fails."""
    try:
        import anthropic
    except ImportError:
        raise LLMUnavailable("the anthropic package is not installed") from None
    if client is None:
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise LLMUnavailable("ANTHROPIC_API_KEY is not set")
        client = anthropic.Anthropic(api_key=key, timeout=timeout, max_retries=1)
    try:
        resp = client.messages.create(
            model=model, max_tokens=MAX_TOKENS, system=SYSTEM, timeout=timeout,
            messages=[{"role": "user", "content": request_text(brief, patterns)}])
    except anthropic.APITimeoutError:
        raise LLMError(f"Claude did not answer within {timeout:g} seconds") from None
    except anthropic.APIStatusError as e:
        detail = ""
        try:
            detail = e.body.get("error", {}).get("message", "") if isinstance(e.body, dict) else ""
        except Exception:  # an odd error body must not hide the status
            detail = ""
        raise LLMError(f"the API answered {e.status_code}" + (f": {detail}" if detail else "")) from None
    except anthropic.APIConnectionError:
        raise LLMError("could not reach the Anthropic API") from None
    except anthropic.APIError as e:
        raise LLMError(f"the API call failed: {e}") from None
    text = "".join(getattr(block, "text", "") for block in (resp.content or [])).strip()
    if not text:
        raise LLMError("the answer was empty")
    if _SCORE.search(text):
        # The mirror promises words, not scores; an answer that breaks that
        # promise is not shown.
        raise LLMError("the answer contained scores or percentages")
    return text
