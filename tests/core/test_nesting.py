"""One depth limit for every reader and walker of a parsed value (issue 30)."""

from __future__ import annotations

import math
import sys

import pytest

from epimem.core.nesting import MAX_DEPTH, TOO_DEEP, TooDeep, depth, loads_json, too_deep
from epimem.core.notes import NoteError, parse_note, yaml_scalar
from epimem.core.scrub import scrubbed


def _list(n: int):
    v: list = []
    for _ in range(n - 1):
        v = [v]
    return v


def test_depth_counts_containers_without_recursion():
    assert depth(1) == 0 and depth("x") == 0
    assert depth([]) == 1 and depth({"a": [1]}) == 2 and depth({"a": ({"b": 1},)}) == 3
    # far past Python's stack: counted all the same, and no further than asked
    assert depth(_list(sys.getrecursionlimit() * 3), stop=10 ** 9) == sys.getrecursionlimit() * 3
    assert depth(_list(10_000)) == MAX_DEPTH + 1


def test_the_limit_is_inclusive():
    assert not too_deep(_list(MAX_DEPTH)) and too_deep(_list(MAX_DEPTH + 1))


def test_json_past_the_limit_is_a_value_error_whether_or_not_the_parser_ran_out_of_stack():
    assert loads_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) == _list(MAX_DEPTH)
    for n in (MAX_DEPTH + 1, 500, 100_000):
        with pytest.raises(TooDeep) as e:
            loads_json("[" * n + "]" * n)
        assert isinstance(e.value, ValueError) and str(e.value) == TOO_DEEP


def test_frontmatter_past_the_limit_is_refused_on_the_key_line():
    ok = "---\ntitle: x\ndeep: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n---\n"
    assert depth(parse_note(ok).meta) == MAX_DEPTH
    bad = "---\ntitle: x\nother: 1\ndeep: " + "{a: " * MAX_DEPTH + "1" + "}" * MAX_DEPTH + "\n---\n"
    with pytest.raises(NoteError) as e:
        parse_note(bad)
    assert e.value.line == 4 and "'deep' is " + TOO_DEEP in e.value.message


def test_a_special_float_is_written_as_yaml_reads_it_back():
    for v in (math.nan, math.inf, -math.inf):
        back = parse_note(f"---\nk: {yaml_scalar(v)}\n---\n").meta["k"]
        assert isinstance(back, float) and (math.isnan(back) if math.isnan(v) else back == v)


@pytest.mark.parametrize("value", [".nan", ".NaN", "!!float nan", ".inf", "-0.0", "[.nan, x]", "{a: .nan}"])
def test_a_note_without_a_secret_comes_back_byte_for_byte(value):
    text = f"---\ntitle: x\nk: {value}\n---\nBody.\n"
    assert scrubbed("beliefs/x.md", text, ()) == (text, 0)


def test_only_the_value_that_held_a_secret_is_written_back():
    text = "---\ntitle: x\nk: .nan\nnote: [password=hunter22, .nan]\n---\nBody.\n"
    out, found = scrubbed("beliefs/x.md", text, ())
    assert found == 1 and "k: .nan\n" in out and "hunter22" not in out
    assert math.isnan(parse_note(out).meta["note"][1])  # the NaN beside the secret reads back as a NaN


def test_json_with_nan_or_nesting_past_the_limit_is_left_as_it_is_or_redacted_line_by_line():
    doc = '{"a": NaN, "b": "x"}\n'
    assert scrubbed("state/x.json", doc, ()) == (doc, 0)
    deep = "[" * 500 + '"password=hunter22"' + "]" * 500
    out, found = scrubbed("state/x.json", deep, ())
    assert found == 1 and "hunter22" not in out and out.count("[") == 500 + 1  # the marker's own
