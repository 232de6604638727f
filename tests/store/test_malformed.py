"""Malformed input is reported, never a traceback or a hang (issue 17).

Each case puts one malformed file in a real vault (or feeds one malformed
payload) and runs what a user runs next. Every command must end with an exit
code and, for a file, a problem naming it; the file must be left as it was.
"""

from __future__ import annotations

import json
import signal
import time

import pytest

GOOD = """---
title: Likes tabs
kind: preference
basis: self-report
confidence: 0.40
permanence: stable
first: 2026-11-01
status: active
scope: global
---
Indents with tabs.

## Evidence
- 2026-11-01 · self-report — said so
"""

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{k}: &{k} [{', '.join(['*' + p] * 9)}]\n" for p, k in zip("abcdefgh", "bcdefghi"))


def _belief(extra_fm: str = "", body_extra: str = "") -> str:
    return GOOD.replace("status: active\n", f"status: active\n{extra_fm}") + body_extra


FILES = {
    "belief-bad-utf8": ("beliefs/bad.md", GOOD.encode() + b"\n\xff\xfe broken\n"),
    "belief-date-9999": ("beliefs/bad.md", _belief(body_extra="- 9999-99-99 · confirming — impossible day\n").encode()),
    "belief-evidence-month-13": ("beliefs/bad.md", _belief(body_extra="- 2026-13-01 · confirming — x\n").encode()),
    "belief-python-tag": ("beliefs/bad.md", _belief("extra: !!python/object/apply:os.system ['true']\n").encode()),
    "belief-alias-bomb-pinned": ("beliefs/bad.md", ("---\n" + BOMB + "pinned: *i\n" + GOOD[4:]).encode()),
    "belief-alias-bomb-basis": ("beliefs/bad.md", GOOD.replace("basis: self-report\n", BOMB + "basis: *i\n").encode()),
    "belief-lone-surrogate-escape": ("beliefs/bad.md", GOOD.replace("Likes tabs", '"\\ud800 tabs"').encode()),
    "observations-bad-utf8": ("observations/2026-11.md", b"# Observations 2026-11\n\n## obs-1\n- date: \xff\n"),
    "observations-date-9999": ("observations/2026-11.md",
                               b"# Observations\n\n## obs-20261101-aaaa\n- date: 9999-99-99\n- evidence: x\n"
                               b"- connects: [[likes-tabs]]\n- strength: confirming\n"),
    "tension-bad-utf8": ("tensions/2026-11-01-x.md", b"---\nbelief: likes-tabs\nstatus: open\n---\n\xc3\x28\n"),
    "tension-python-tag": ("tensions/2026-11-01-x.md", b"---\nbelief: !!python/name:os.system\nstatus: open\n---\nx\n"),
    "epistemology-bad-utf8": ("epistemology.md", b"---\nconfirm_step: 0.05\n---\n\xff\n"),
    "epistemology-alias-bomb": ("epistemology.md", ("---\n" + BOMB + "confirm_step: 0.05\n---\n").encode()),
    "sessions-deep-json": ("state/sessions.json", b"[" * 100000 + b"]" * 100000),
    "sessions-inf": ("state/sessions.json", b'{"count": 1e400}'),
    "sessions-huge-int": ("state/sessions.json", b'{"count": 99999999999999999999, "next_review_at": 1e400}'),
    "sessions-bad-utf8": ("state/sessions.json", b'{"count": "\xff"}'),
    "sessions-day-9999": ("state/sessions.json", b'{"count": 2, "last_session": "9999-99-99"}'),
}

COMMANDS = [
    ("belief", "list", "--json"),
    ("belief", "show", "likes-tabs"),
    ("belief", "show", "bad"),
    ("validate", "--json"),
    ("tensions", "--json"),
    ("observe", "--connects", "likes-tabs", "--strength", "confirming", "--evidence", "Tabs.", "--session", "s1"),
    ("commit",),
    ("session", "start"),
]


class Hang(Exception):
    pass


def _alarm(seconds: int):
    def on_alarm(*_):
        raise Hang(f"no answer within {seconds} s")

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)


@pytest.fixture
def v(tmp_path, cli):
    root = tmp_path / "v"
    assert cli("--vault", root, "init").code == 0
    (root / "beliefs" / "likes-tabs.md").write_text(GOOD, encoding="utf-8")
    assert cli("--vault", root, "commit").code == 0
    return root


@pytest.mark.parametrize("case", sorted(FILES))
def test_malformed_file_is_reported_not_raised(case, v, cli):
    rel, data = FILES[case]
    p = v / rel
    p.write_bytes(data)
    for args in COMMANDS:
        t0 = time.monotonic()
        _alarm(10)
        try:
            r = cli("--vault", v, *args)
        finally:
            signal.alarm(0)
        assert time.monotonic() - t0 < 10
        assert "Traceback" not in r.err, (args, r.err)
        if rel.startswith("beliefs/") and rel != "beliefs/likes-tabs.md":
            assert p.read_bytes() == data, f"{args} rewrote the malformed {rel}"
    r = cli("--vault", v, "validate", "--json")
    if rel != "state/sessions.json" or case != "sessions-huge-int":
        problems = r.json()["problems"] if r.out.strip().startswith("{") else json.loads(r.out)
        assert any(pr["path"] == rel for pr in (problems if isinstance(problems, list) else [])), r.out


PAYLOADS = {
    "bad-utf8": b'[{"connects": "likes-tabs", "strength": "confirming", "evidence": "\xff"}]',
    "deep": b"[" * 100000 + b"]" * 100000,
    "surrogate-evidence": b'[{"connects": "likes-tabs", "strength": "confirming", "evidence": "x \\ud800 y",'
                          b' "session": "s9"}]',
    "surrogate-tag": b'[{"connects": "new", "title": "Lone", "kind": "trait", "strength": "single", '
                     b'"evidence": "e", "tags": ["\\udcff"], "session": "s9"}]',
    "long-connects": json.dumps([{"connects": "a" * 200_000, "strength": "confirming", "evidence": "x"}]).encode(),
    "long-connects-many": json.dumps([{"connects": "a-" * 50_000 + "b", "strength": "confirming",
                                       "evidence": "x"}] * 3).encode(),
    "inf": b'[{"connects": "likes-tabs", "strength": "confirming", "evidence": "x", "date": 1e400}]',
    "not-objects": b'[1, "x", null]',
}


@pytest.mark.parametrize("case", sorted(PAYLOADS))
def test_malformed_observe_input_is_an_error_not_a_crash(case, v, cli, tmp_path):
    f = tmp_path / "in.json"
    f.write_bytes(PAYLOADS[case])
    before = (v / "beliefs" / "likes-tabs.md").read_bytes()
    _alarm(10)
    try:
        r = cli("--vault", v, "observe", "--input", f, "--json")
    finally:
        signal.alarm(0)
    assert r.code != 0, r.out
    assert "Traceback" not in r.err
    assert r.err.startswith("epimem: error:"), r.err
    assert (v / "beliefs" / "likes-tabs.md").read_bytes() == before
    # nothing half-written: the work tree is as the last commit left it
    import subprocess

    st = subprocess.run(["git", "-C", str(v), "status", "--porcelain"], capture_output=True, text=True).stdout
    assert st.strip() == "", st
