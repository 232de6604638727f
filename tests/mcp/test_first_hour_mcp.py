"""Issue 28: what an MCP client is told when its arguments are wrong, and what `answer` echoes."""

from __future__ import annotations

import anyio
from mcp_support import connect, tree_state

SECRET = "sk-ant-api03-" + "a1B2c3D4e5F6g7H8i9J0" * 4


def test_argument_errors_name_the_field_and_carry_nothing_of_pydantic(mvault):
    async def main():
        async with connect("memory", mvault) as c:
            cases = [("recall", {"query": 5}, "'query': Input should be a valid string"),
                     ("get", {}, "'id' is required"),
                     ("recall", {"query": "x", "limit": "many"}, "'limit': Input should be a valid integer"),
                     ("observe", {"observations": [{"connects": "x", "strength": "bogus", "evidence": "e"}]},
                      "'observations[0].strength': Input should be 'single', 'confirming', 'complicating' or "
                      "'contradicting'"),
                     ("answer", {"id": "x", "verdict": "perhaps", "note": SECRET}, "'verdict': Input should be")]
            for name, args, said in cases:
                r = await c.call_tool(name, args)
                text = r.content[0].text
                assert r.is_error and said in text, text
                assert text.startswith(f"Error executing tool {name}: invalid arguments: "), text
                for noise in ("pydantic", "https://", "type=", "validation error for", "Arguments", "input_value"):
                    assert noise not in text, (noise, text)
                assert SECRET not in text
    anyio.run(main)


def test_answer_echoes_the_note_redacted(mvault):
    before = tree_state(mvault)

    async def main():
        async with connect("memory", mvault) as c:
            r = await c.call_tool("answer", {"id": "prefers-small-pull-requests", "verdict": "true",
                                             "note": f"still true; my key is {SECRET}"})
            assert not r.is_error, r.content[0].text
            assert SECRET not in r.content[0].text and "[REDACTED:" in r.structured_content["note"]
    anyio.run(main)
    assert tree_state(mvault) != before
    assert SECRET not in (mvault / "beliefs" / "prefers-small-pull-requests.md").read_text()


def test_a_session_that_is_no_text_is_a_tool_error_not_a_crash(mvault):
    # Found by tests/mcp/test_fuzz_arguments.py: an empty batch echoes its session, and a lone
    # surrogate cannot be sent back as JSON.
    async def main():
        async with connect("memory", mvault) as c:
            r = await c.call_tool("observe", {"observations": [], "session": "\ud800"})
            assert r.is_error and "'session' must be text" in r.content[0].text, r.content[0].text
    anyio.run(main)
