"""Generated arguments for every MCP tool, through the SDK's own client in process (issue 15).

Each tool is called with arguments hypothesis builds from the tool's own input schema: a
valid value, or one of the wrong type, a huge number, NaN or an infinity, a deeply nested
junk value, a 1 MB string, a lone surrogate; with fields missing and unknown fields added.
Every call must come back within 10 s as a valid result or as a tool error with a reason
(a schema error names the field), never as the SDK's bare "Error executing tool X" of a
crash; a call that failed leaves the vault as it was, and nothing is ever written outside
the vault. Marked soak; `EPIMEM_MCP_FUZZ_EXAMPLES` sets the examples per tool (200 by
default: 2,600 cases; the figures in docs/reliability.md were taken with more).
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections import Counter
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from mcp_support import TODAY, git, seed  # noqa: E402

pytestmark = pytest.mark.soak

N = int(os.environ.get("EPIMEM_MCP_FUZZ_EXAMPLES", "200"))
SETTINGS = settings(max_examples=N, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
CALL_TIMEOUT_S = 10.0
TENSION_IDS: list[str] = []  # the fixture's, once it has made them
OUTCOMES: Counter = Counter()  # (tool, "result" | "refused by the schema" | "tool error"): the figures' source

BIG = "x" * (1 << 20)
IDS = ["prefers-small-pull-requests", "thinks-out-loud-before-deciding", "writes-sql-by-hand", "no-such-belief",
       "../outside", "Bad Id", "", "a" * 300, "con", "new"]
STRINGS = ["", "2026-11-30", "2020-01-01", "9999-99-99", "HEAD", "HEAD~1", "--all", "-n1", "../../etc/passwd",
           "\ud800", "\x00", "tabs\r\nspaces", "\ufeffbom", "sql", "small pull requests", "global", "billing",
           "unresolved", "watching", "resolved", "true", "false", "unsure", "audit", "gut-check", "interview",
           "portrait", "confirming", "contradicting", "single", "complicating", "behavioral", "self-report",
           "stable", "unknown", "active", "all", "retired", "${HOME}", "$(touch pwned)", "`id`", "%s%n", "🙂" * 50]

scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(10 ** 30), max_value=10 ** 30),
    st.sampled_from([0, -1, 1, 2 ** 63, -(2 ** 63), 10 ** 400, 101, 1001]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -0.0, 0.5]),
    st.sampled_from(STRINGS + IDS),
    st.text(max_size=40),
)
junk = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)
# Rarely: a 1 MB string, or nesting far past any sane depth.
rare = st.sampled_from([BIG, [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
                        {"a": {"b": {"c": {"d": {"e": {"f": [BIG[:1000]]}}}}}}])
anything = st.one_of(*[junk] * 9, rare)


def observation() -> st.SearchStrategy:
    ok = st.fixed_dictionaries({
        "connects": st.sampled_from(IDS),
        "strength": st.sampled_from(["single", "confirming", "complicating", "contradicting"]),
        "evidence": st.sampled_from(["Split the PR in two.", "Asked for SQL.", BIG, "\ud800", ""]),
    }, optional={
        "title": st.sampled_from(["A new belief", "", BIG[:5000], "\ud800"]),
        "date": st.sampled_from(STRINGS),
        "session": st.text(max_size=20),
        "tags": st.lists(st.text(max_size=10), max_size=3),
        "kind": st.sampled_from(["trait", "workflow", "preference", "", "Made Up"]),
        "basis": st.sampled_from(["behavioral", "self-report", "interpretive", "fact"]),
    })
    return st.one_of(ok, ok, st.dictionaries(st.sampled_from(["connects", "strength", "evidence", "title",
                                                              "bogus", "date", "tags"]), anything, max_size=5),
                     anything)


def _arguments(schema: dict, name: str) -> st.SearchStrategy:
    """Arguments for one tool, three ways alike: every field of the right shape (the case
    reaches the tool and the vault); all but one (that one junk or missing); anything at all
    (any field junk or missing, unknown fields added)."""
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    valid = {k: _plausible(k, spec, name) for k, spec in props.items()}
    extra = st.dictionaries(st.sampled_from(["bogus", "path", "vault", "__proto__", "x" * 200]), anything,
                            max_size=2)
    must = {k: v for k, v in valid.items() if k in required}
    may = {k: v for k, v in valid.items() if k not in required}
    shaped = st.fixed_dictionaries(must, optional=may)

    @st.composite
    def one_wrong(draw):
        args = draw(shaped)
        if props:
            k = draw(st.sampled_from(sorted(props)))
            if draw(st.booleans()):
                args[k] = draw(anything)
            else:
                args.pop(k, None)
        return args

    free = st.tuples(st.fixed_dictionaries({}, optional={k: st.one_of(v, anything) for k, v in valid.items()}),
                     extra).map(lambda t: {**t[1], **t[0]})
    return st.one_of(shaped, one_wrong(), free)


def _plausible(key: str, spec: dict, tool: str) -> st.SearchStrategy:
    """A value of the field's own shape: a valid one mostly, an edge of it sometimes."""
    enum = _enum(spec)
    if enum:
        return st.sampled_from(enum) if _type(spec) != "array" else st.lists(st.sampled_from(enum), max_size=3)
    if key == "id" and tool == "resolve_tension":
        return st.sampled_from(TENSION_IDS + IDS[:4])
    if key in ("id", "by"):
        return st.sampled_from(IDS + TENSION_IDS)
    if key == "old":
        return st.lists(st.sampled_from(IDS), max_size=3)
    if key == "observations":
        return st.lists(observation(), max_size=4)
    t = _type(spec)
    if t == "integer":
        return st.one_of(st.integers(-5, 2000), st.sampled_from([0, 1, 10 ** 30]))
    if t == "number":
        return st.one_of(st.floats(-1, 2), st.sampled_from([math.nan, math.inf]))
    if t == "boolean":
        return st.booleans()
    if t == "array":
        return st.lists(st.sampled_from(STRINGS), max_size=3)
    return st.one_of(st.sampled_from(STRINGS + IDS), st.text(max_size=30))


def _type(spec: dict) -> str | None:
    if "type" in spec:
        return spec["type"]
    for alt in spec.get("anyOf", []):
        if alt.get("type") not in (None, "null"):
            return alt["type"]
    return None


def _enum(spec: dict) -> list:
    out = list(spec.get("enum", []))
    for alt in spec.get("anyOf", []) + [spec.get("items", {})]:
        out += alt.get("enum", [])
    return out


class Crashes(logging.Handler):
    """The SDK logs a tool's unexpected exception (a crash) with its traceback; nothing else."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(record.getMessage() + (f": {record.exc_info[1]!r}" if record.exc_info else ""))


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The server on a vault with beliefs and a tension, and a client on a thread of its own."""
    import anyio.from_thread
    from mcp import Client

    from epimem.api.memory import Memory
    from epimem.mcp.server import build

    mp = pytest.MonkeyPatch()
    mp.setenv("EPIMEM_TODAY", TODAY)
    home = tmp_path_factory.mktemp("fuzz-home")
    mp.setenv("HOME", str(home))
    mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
    mp.delenv("EPIMEM_VAULT", raising=False)
    outside = tmp_path_factory.mktemp("fuzz")
    root = outside / "vault"
    vault, _ = Memory.init(root, today=TODAY)
    seed(vault)
    TENSION_IDS[:] = [t.id for t in vault.tensions(None)]
    assert TENSION_IDS
    crashes = Crashes()
    logging.getLogger("mcp").addHandler(crashes)
    with anyio.from_thread.start_blocking_portal() as portal:
        client = portal.wrap_async_context_manager(Client(build(root, today=TODAY)))
        with client as c:
            tools = {t.name: t.input_schema for t in portal.call(c.list_tools).tools}
            yield portal, c, root, outside, tools, crashes
    logging.getLogger("mcp").removeHandler(crashes)
    mp.undo()
    report = os.environ.get("EPIMEM_FUZZ_REPORT")
    if report:  # bench/docs figures: how the generated cases came back
        Path(report).write_text(json.dumps({f"{k[0]} {k[1]}": v for k, v in sorted(OUTCOMES.items())}, indent=1))


def _state(root: Path) -> tuple[str | None, dict[str, bytes]]:
    """HEAD and every vault file's bytes, without a git process (thousands of cases): what a
    failed call must leave as it was. Each tool's run ends with git's own view (`tree_state`)."""
    from epimem.store.journal import head

    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".epimem")]
        for f in filenames:
            p = Path(dirpath) / f
            files[str(p.relative_to(root))] = p.read_bytes()
    return head(root), files


def _outside(outside: Path) -> list[str]:
    return sorted(p.name for p in outside.iterdir())


def _call(served, name: str, args: dict) -> None:
    import anyio

    portal, c, root, outside, _, crashes = served
    before = _state(root)
    around = _outside(outside)
    crashes.seen.clear()

    async def call():
        with anyio.fail_after(CALL_TIMEOUT_S):  # a hang fails the case
            return await c.call_tool(name, args)

    r = portal.call(call)
    assert not crashes.seen, (name, _short(args), crashes.seen)
    assert _outside(outside) == around, (name, _short(args))
    if r.is_error:
        text = r.content[0].text
        assert text.strip() != f"Error executing tool {name}", (name, _short(args))  # a crash hides its reason
        assert text.startswith(f"Error executing tool {name}: ") and len(text) > len(name) + 25, text[:300]
        if "invalid arguments:" in text:  # the schema refused an argument: the message names it, no more
            assert any(k in text for k in args) or "is required" in text, text[:300]
            assert "pydantic" not in text and "http" not in text and "type=" not in text, text[:300]
        after = _state(root)
        assert after == before, (name, _short(args), "a failed call changed the vault")
        OUTCOMES[name, "refused by the schema" if "invalid arguments:" in text else "tool error"] += 1
    else:
        assert r.structured_content is not None, (name, _short(args))
        OUTCOMES[name, "result"] += 1


def _short(args: dict) -> str:
    return repr(args)[:300]


TOOLS = ["describe", "recall", "get", "list", "observe", "answer", "supersede", "retire", "resolve_tension",
         "tensions", "history", "diff", "mirror", "inbox", "record_review"]


@pytest.mark.parametrize("name", TOOLS)
def test_generated_arguments_never_crash_hang_or_change_the_vault_on_failure(served, name):
    tools = served[4]
    assert set(tools) == set(TOOLS)

    @SETTINGS
    @given(_arguments(tools[name], name))
    def case(args):
        _call(served, name, args)

    case()
    root = served[2]
    assert git(root, "status", "--porcelain") == "", name  # nothing left staged or half written
    git(root, "fsck", "--no-progress")  # raises when the history is damaged
    from epimem.api.memory import Memory

    # What the calls that succeeded wrote is a valid vault.
    assert [str(p) for p in Memory(root, today=TODAY).validate()] == [], name
