"""Generated malformed input: only problems or EpimemErrors, never another
exception, never a hang, never a rewrite of the malformed file, nothing written
outside the vault (issue 17).

Each target starts from a valid file and applies generated edits: bytes that
are not UTF-8, impossible days, YAML tags and aliases, deep nesting (at and around
`nesting.MAX_DEPTH` too), huge numbers and special floats, lone surrogates, long values, and
random bytes; `test_fuzz_values.py` puts each special value in each field and runs the
commands that write. About 10,000 cases in
all (`EPIMEM_FUZZ_EXAMPLES` per target scales them); marked soak.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from bounded import bounded

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from epimem.core.errors import EpimemError  # noqa: E402
from epimem.core.nesting import MAX_DEPTH  # noqa: E402

pytestmark = pytest.mark.soak

N = int(os.environ.get("EPIMEM_FUZZ_EXAMPLES", "1250"))  # × 8 targets ≈ 10,000 cases
SETTINGS = settings(max_examples=N, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))

TOKENS = [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"9999-99-99", b"2026-13-45", b"!!python/object/apply:os.system ['x']",
          b"!!python/name:os.system", b"&a [x, x, x]", b"*a", b"[" * 3000, b"{" * 3000, b"1e400", b"-1e400",
          b"99999999999999999999", b"\\ud800", b"\\udcff", b"\x00", b"\r", b"\r\n", b"---\n", b"\n## Evidence\n",
          b": ", b"- ", b"#", b"'", b'"', b"a" * 5000, b"\t", b"~", b"null", b"NaN", b"\xef\xbb\xbf",
          b"[[observations/2026-11#obs-x]]", b"\xe2\x80\xa8", b"\xc2\x85", b"? ", b"|", b">",
          # special floats and nesting at and around the one depth limit (issue 30)
          b".nan", b".NaN", b"!!float nan", b".inf", b"-.inf", b"-0.0", b"1.0e+400", b"Infinity", b"-Infinity",
          b"[" * (MAX_DEPTH - 1), b"[" * MAX_DEPTH, b"[" * (MAX_DEPTH + 1), b"[" * 500,
          b"]" * MAX_DEPTH, b"{a: " * MAX_DEPTH, b'{"a": ' * MAX_DEPTH]

edits = st.lists(st.tuples(st.floats(0, 1), st.one_of(st.sampled_from(TOKENS), st.binary(max_size=40))),
                 min_size=1, max_size=6)

BELIEF = b"""---
title: Likes tabs
kind: preference
basis: self-report
confidence: 0.40
permanence: stable
first: 2026-11-01
confirmed: 2026-11-10
status: active
tags: [style, editor]
scope: global
pinned: false
supersedes: []
---
Indents with tabs.

## Evidence
- 2026-11-01 \xc2\xb7 self-report \xe2\x80\x94 said so
- 2026-11-10 \xc2\xb7 confirming \xc2\xb7 [[observations/2026-11#obs-20261110-aaaa]] \xe2\x80\x94 tabs again
"""
OBSERVATIONS = b"""# Observations 2026-11

## obs-20261110-aaaa
- date: 2026-11-10
- evidence: tabs again
- connects: [[likes-tabs]]
- strength: confirming
- source: cli \xc2\xb7 session s1
- basis: behavioral
"""
TENSION = b"""---
date: 2026-11-10
belief: likes-tabs
status: unresolved
---
# Said tabs, used spaces

- 2026-11-10 \xe2\x80\x94 used spaces in a YAML file
"""
RULES = b"""---
confirm_step: 0.05
challenge_step: 0.10
decay: {stable: 0.001, durable: 0.003, situational: 0.01, unknown: 0.005}
redact:
  - [custom, "tok_[a-z]{8}"]
---
# Rules
"""
SESSIONS = b'{"count": 3, "last_session": "2026-11-10", "last_review": null, "next_review_at": 10, ' \
           b'"created": "2026-11-01", "days": {"2026-11-10": 1}}'
TRANSCRIPT = (json.dumps({"type": "user", "sessionId": "s1", "cwd": "/p", "uuid": "u1",
                          "message": {"role": "user", "content": "I always use tabs, never spaces."}}) + "\n" +
              json.dumps({"type": "assistant", "uuid": "a1", "message": {"id": "m1", "role": "assistant",
                                                                          "content": [{"type": "text",
                                                                                       "text": "Noted."}]}})
              + "\n").encode()
OBSERVE = json.dumps([{"connects": "likes-tabs", "strength": "confirming", "evidence": "tabs", "session": "f1"},
                      {"connects": "new", "title": "Writes tests first", "kind": "workflow", "strength": "single",
                       "evidence": "wrote the test first", "tags": ["tdd"], "session": "f1"}]).encode()


def mutate(seed: bytes, changes) -> bytes:
    data = seed
    for where, token in changes:
        i = int(where * len(data))
        data = data[:i] + token + data[i:]
    return data


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A vault (git included) inside a folder whose other contents must never change."""
    from epimem.api.memory import Memory

    base = tmp_path_factory.mktemp("fuzz")
    (base / "outside.txt").write_text("outside\n", encoding="utf-8")
    mem, _ = Memory.init(base / "v", today="2026-11-20")
    (base / "v" / "beliefs" / "likes-tabs.md").write_bytes(BELIEF)
    (base / "v" / "observations" / "2026-11.md").write_bytes(OBSERVATIONS)
    return base, base / "v"


def _outside(base: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(base)), p.stat().st_size) for p in base.iterdir() if p.name != "v")


def _read_all(root: Path) -> None:
    """What commands do with a vault's files, through the store and the API."""
    from epimem.api.memory import Memory
    from epimem.store import context_cache

    mem = Memory(root, today="2026-11-20")
    mem.validate()
    mem.beliefs()
    mem.tensions()
    context_cache.refresh_context(root)
    try:
        mem.belief("likes-tabs")
    except EpimemError:
        pass


def _file_case(world, rel: str, seed: bytes, changes) -> None:
    base, root = world
    data = mutate(seed, changes)
    p = root / rel
    before_out = _outside(base)
    p.write_bytes(data)
    try:
        bounded(lambda: _read_all(root))
    except EpimemError:
        pass
    assert p.read_bytes() == data, f"{rel} was rewritten"
    assert _outside(base) == before_out


@SETTINGS
@given(edits)
def test_fuzz_belief_file(world, changes):
    _file_case(world, "beliefs/fuzzed.md", BELIEF, changes)


@SETTINGS
@given(edits)
def test_fuzz_observation_log(world, changes):
    _file_case(world, "observations/2026-10.md", OBSERVATIONS, changes)


@SETTINGS
@given(edits)
def test_fuzz_tension(world, changes):
    _file_case(world, "tensions/2026-11-10-fuzzed.md", TENSION, changes)


@SETTINGS
@given(edits)
def test_fuzz_epistemology(world, changes):
    _file_case(world, "epistemology.md", RULES, changes)


@SETTINGS
@given(edits)
def test_fuzz_sessions(world, changes):
    from epimem.claude import hook

    _file_case(world, "state/sessions.json", SESSIONS, changes)
    _, root = world
    data = (root / "state" / "sessions.json").read_bytes()
    # the hook's own reader, which counts sessions before every session
    bounded(lambda: hook.update_sessions(str(root), "resume", __import__("datetime").date(2026, 11, 20),
                                         hook.FALLBACK_PARAMS))
    assert (root / "state" / "sessions.json").read_bytes() == data


@SETTINGS
@given(edits)
def test_fuzz_transcript(world, changes):
    from epimem.claude.transcript import read_transcript
    from epimem.core.statements import find_statements, statement_items
    from epimem.core.transcript import condensed

    base, root = world
    data = mutate(TRANSCRIPT, changes)
    p = base / "transcript.jsonl"
    p.write_bytes(data)
    before_out = _outside(base)

    def run():
        t = read_transcript(p)
        statements = find_statements(t)
        statement_items(statements, session="fz")
        condensed(t)

    bounded(run)
    assert p.read_bytes() == data
    assert _outside(base) == before_out


@SETTINGS
@given(edits)
def test_fuzz_observe_input(world, changes):
    """The payload checks `observe --input` runs before anything is written."""
    from epimem.api.observe import check_input
    from epimem.core.params import DEFAULTS

    data = mutate(OBSERVE, changes)

    def run():
        try:
            items = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return  # the CLI reports these as input errors (tests/store/test_malformed.py)
        if not isinstance(items, list):
            return
        for n, it in enumerate(items, 1):
            try:
                check_input(n, it, "cli", None, __import__("datetime").date(2026, 11, 20), DEFAULTS)
            except EpimemError:
                pass

    bounded(run)


@settings(max_examples=N, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(title=st.text(min_size=1, max_size=80), statement=st.text(max_size=200),
       tags=st.lists(st.text(min_size=1, max_size=20), max_size=3))
def test_any_belief_epimem_writes_reads_back(title, statement, tags):
    """A belief built from any text (a transcript's phrase, a title typed in) is
    either refused or written so that it parses back to what was meant."""
    from dataclasses import replace
    from datetime import date

    from epimem.core.model import Belief
    from epimem.core.notes import parse_belief, render_belief

    title, statement = " ".join(title.split()), statement.strip()
    tags = [" ".join(t.split()) for t in tags if t.strip()]
    if not title:
        return
    b = Belief(id="any", title=title, statement=statement, kind="trait", basis="self-report", confidence=0.4,
               permanence="stable", first=date(2026, 11, 1))
    b = replace(b, tags=tuple(tags))
    try:
        text = render_belief(b)
        text.encode("utf-8")
    except UnicodeEncodeError:
        return  # a lone surrogate: the write path refuses it (test_malformed)
    back = parse_belief(text, "any")
    assert back.title == title
    assert back.tags == tuple(tags)
