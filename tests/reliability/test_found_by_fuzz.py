"""Defects the fuzzers found (tests/mcp/test_fuzz_arguments.py, tests/store/test_fuzz*.py, and runs from
outside the project), each as its smallest case."""

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


# --- found by a fuzz run of malformed vault files (issue 30) --------------------------------

BELIEF_WITH = ("---\ntitle: X\nkind: preference\nbasis: behavioral\nconfidence: 0.45\npermanence: durable\n"
               "first: 2026-01-05\n{extra}---\nBody.\n")


def _git_status(root) -> str:
    import subprocess

    return subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True).stdout


@pytest.mark.parametrize("nan", [".NaN", ".nan", "!!float nan", ".inf", "-.inf", "-0.0", "1.0e+400"])
@pytest.mark.parametrize("where", ["permanence", "custom_key"])
def test_a_special_float_in_the_frontmatter_never_gets_the_file_rewritten(vault, cli, caplog, nan, where):
    # `nv != v` was true for NaN against itself: commit re-rendered the value (`permanence: nan`)
    # and said the file "held what looks like a secret", though no pattern matched.
    if where == "permanence":
        text = BELIEF_WITH.format(extra="").replace("permanence: durable", f"permanence: {nan}")
    else:
        text = BELIEF_WITH.format(extra=f"custom_key: {nan}\n")
    p = vault.root / "beliefs" / "fz.md"
    p.write_text(text, encoding="utf-8")
    data = p.read_bytes()
    r = cli("--vault", vault.root, "commit")
    assert "Traceback" not in r.err and "redacted" not in caplog.text + r.err, caplog.text
    if where == "permanence":
        assert p.read_bytes() == data  # not committed: the user's to fix, byte for byte
        assert "fz.md:6" in r.err
    else:
        assert p.read_text(encoding="utf-8").startswith(text.split("---\nBody")[0])  # frontmatter as typed
    r = cli("--vault", vault.root, "observe", "--connects", "fz", "--strength", "confirming",
            "--evidence", "seen again", "--session", "s1")
    assert "Traceback" not in r.err and "redacted" not in caplog.text + r.err, caplog.text
    if where == "permanence":
        assert r.code != 0 and p.read_bytes() == data
    else:
        assert r.code == 0, r.err
        assert f"custom_key: {nan}\n" in p.read_text(encoding="utf-8")


def test_a_hand_typed_secret_is_still_redacted_and_said(vault, cli, caplog):
    p = vault.root / "beliefs" / "fz.md"
    p.write_text(BELIEF_WITH.format(extra="custom_key: .nan\nnote: password=hunter22\n"), encoding="utf-8")
    r = cli("--vault", vault.root, "commit")
    assert r.code == 0, r.err
    assert "held what looks like a secret" in caplog.text  # stderr, outside pytest
    text = p.read_text(encoding="utf-8")
    assert "hunter22" not in text and "custom_key: .nan\n" in text  # only the value that held it


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_a_list_nested_500_deep_is_a_problem_on_its_line_not_a_traceback(vault, cli):
    # validate called it valid (libyaml nests 1,000 deep) and the redaction pass of commit and
    # observe crashed on it with a RecursionError.
    p = vault.root / "beliefs" / "deep.md"
    p.write_text(BELIEF_WITH.format(extra=f"custom_key: {_deep(500)}\n"), encoding="utf-8")
    data = p.read_bytes()
    r = cli("--vault", vault.root, "validate")
    assert r.code == 1 and "beliefs/deep.md:8:" in r.out + r.err and "nested" in r.out + r.err, (r.out, r.err)
    for args in (("commit",), ("observe", "--connects", "deep", "--strength", "confirming", "--evidence", "x",
                               "--session", "s1")):
        r = cli("--vault", vault.root, *args)
        assert "Traceback" not in r.err and "RecursionError" not in r.err, r.err
        assert "beliefs/deep.md:8" in r.err, r.err
        assert p.read_bytes() == data
    assert _git_status(vault.root).strip() == "?? beliefs/deep.md"


def test_nesting_at_the_limit_is_valid_and_one_past_it_is_the_problem_validate_reports(vault, cli):
    from epimem.core.nesting import MAX_DEPTH

    p = vault.root / "beliefs" / "deep.md"
    # the frontmatter mapping is the first level, so a key's value may nest MAX_DEPTH - 1 lists
    p.write_text(BELIEF_WITH.format(extra=f"custom_key: {_deep(MAX_DEPTH - 1)}\n"), encoding="utf-8")
    assert cli("--vault", vault.root, "validate").code == 0
    r = cli("--vault", vault.root, "commit")
    assert r.code == 0 and "Traceback" not in r.err, r.err
    assert _git_status(vault.root) == ""
    p.write_text(BELIEF_WITH.format(extra=f"custom_key: {_deep(MAX_DEPTH)}\n"), encoding="utf-8")
    r = cli("--vault", vault.root, "validate")
    assert r.code == 1 and f"nested more than {MAX_DEPTH} levels deep" in r.out, r.out
    r = cli("--vault", vault.root, "commit")
    assert f"nested more than {MAX_DEPTH} levels deep" in r.err and "Traceback" not in r.err, r.err


@pytest.mark.parametrize("comments", [False, True])
@pytest.mark.parametrize("levels", [500, 900])
def test_an_agent_settings_file_nested_500_deep_is_a_syntax_error_not_a_crash(comments, levels):
    # The other agents' settings editor (JSON and JSONC) descends recursively: 500 levels passed
    # the standard parser's check and ran out of stack in the editor's own.
    from epimem.agents.jsonc import JsonSyntaxError, parse_spans
    from epimem.core.nesting import MAX_DEPTH

    parse_spans('{"mcpServers": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}", comments=comments)
    with pytest.raises(JsonSyntaxError) as e:
        parse_spans('{"mcpServers": ' + "[" * levels + "]" * levels + "}", comments=comments)
    assert "line 1" in str(e.value) and f"nested more than {MAX_DEPTH} levels deep" in str(e.value)
