"""Defects the MCP argument fuzz found (tests/mcp/test_fuzz_arguments.py), each as its smallest case."""

from __future__ import annotations

import pytest

from epimem.core.errors import InputError


@pytest.mark.parametrize("since", ["x" * (1 << 20), "--all", "-n1", "a\0b", "\ud800"])
def test_diff_since_that_cannot_be_a_revision_is_refused_naming_the_field(vault, since):
    # A 1 MB `since` went to git as one argument: "Argument list too long", an OSError that
    # crashed the MCP tool; a leading dash was read by git as an option.
    with pytest.raises(InputError) as e:
        vault.diff(since)
    assert e.value.field == "since"
    assert len(str(e.value)) < 300  # the refusal does not echo a megabyte back


def test_diff_over_mcp_with_a_huge_since_is_a_tool_error(vault):
    import anyio
    from mcp import Client

    from epimem.mcp.server import build

    async def go():
        async with Client(build(vault.root)) as c:
            r = await c.call_tool("diff", {"since": "x" * (1 << 20)})
            assert r.is_error and "since" in r.content[0].text
            assert not (await c.call_tool("diff", {"since": "2020-01-01"})).is_error  # the server lives on

    anyio.run(go)


def test_resolve_tension_over_mcp_names_its_own_field_and_kind_of_id(vault):
    # It was checked as a belief id ("invalid belief id"), and the API's refusal named
    # `tension_id`, a field the tool does not have.
    import anyio
    from mcp import Client

    from epimem.mcp.server import build

    async def go():
        async with Client(build(vault.root)) as c:
            for bad in ("writes-sql-by-hand", "Bad Id", "x" * 100_000):
                text = (await c.call_tool("resolve_tension", {"id": bad, "note": "done"})).content[0].text
                assert "'id'" in text and "tension id" in text and "tension_id" not in text, text[:200]
                assert len(text) < 400  # not the 100,000 characters back

    anyio.run(go)


def test_recall_of_a_query_that_is_not_text_is_refused_naming_the_query(vault):
    # A lone surrogate (what Python makes of argv bytes that are not UTF-8) reached the
    # tokenizer, which raised a TypeError: the MCP tool crashed.
    from epimem.recall.api import Recaller

    vault.add_belief(title="Likes tabs", statement="Indents with tabs.", kind="preference", basis="self-report",
                     permanence="stable")
    r = Recaller(vault.root)
    for q in ("\ud800", "tabs \udcff"):
        with pytest.raises(InputError) as e:
            r.recall(q)
        assert e.value.field == "query"
    assert r.recall("tabs").hits  # and the index still answers
