"""Faults of the sidecar index (SPEC §8): deleted or corrupted under a running vault, or a Chroma
server that goes away. The files are the truth, so recall rebuilds what it lost; it never answers
from a half-empty index; a server that is gone does not stop a query (the sidecar answers) and is a
clear error for what must write to it, losing nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from recall_support import start_chroma_server, stop

from epimem.api.memory import Memory
from epimem.core.params import DEFAULTS

pytestmark = pytest.mark.usefixtures("clean_recall_env")

BELIEFS = [("Prefers tabs over spaces", "Indents code with tabs in every language."),
           ("Reviews pull requests in the morning", "Reads review requests first thing each day."),
           ("Writes tests before the code", "Starts a change with a failing test.")]


def epimem(root: Path, *args: str, stdin: str | None = None):
    return subprocess.run([sys.executable, "-m", "epimem", "--vault", str(root), *args], input=stdin,
                          capture_output=True, text=True, timeout=300, env=os.environ.copy())


def vault(tmp_path: Path) -> Path:
    mem, _ = Memory.init(tmp_path / "v", today="2026-11-01")
    for title, statement in BELIEFS:
        mem.add_belief(title=title, statement=statement, kind="preference", basis="behavioral",
                       permanence="durable")
    return mem.root


def top(root: Path, query: str, *extra: str) -> list[str]:
    p = epimem(root, "recall", query, "--json", *extra)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    rows = data["results"] if isinstance(data, dict) else data
    return [r["id"] for r in rows]


def test_a_deleted_index_is_rebuilt_and_answers_the_same(tmp_path):
    root = vault(tmp_path)
    before = top(root, "tabs or spaces")
    assert before[0] == "prefers-tabs-over-spaces"
    for sub in ("recall", "chroma"):
        shutil.rmtree(root / ".epimem" / sub, ignore_errors=True)
    assert top(root, "tabs or spaces") == before


def test_a_corrupted_index_is_rebuilt_not_trusted(tmp_path):
    root = vault(tmp_path)
    before = top(root, "morning reviews")
    for p in list((root / ".epimem").rglob("*")):
        if p.is_file() and p.suffix in (".sqlite3", ".json", ".npz", ".bin") and "cache" not in p.parts:
            p.write_bytes(b"\0garbage\0" * 64)
    assert top(root, "morning reviews") == before
    st = epimem(root, "index", "status")
    assert st.returncode == 0, st.stderr


def test_an_index_that_lost_entries_is_never_taken_for_a_small_vault(tmp_path):
    # The opposite failure: an index emptied under us must not answer "nothing relevant".
    root = vault(tmp_path)
    assert top(root, "failing test")[0] == "writes-tests-before-the-code"
    shutil.rmtree(root / ".epimem" / "chroma", ignore_errors=True)
    (root / ".epimem" / "chroma").mkdir()
    assert top(root, "failing test")[0] == "writes-tests-before-the-code"


@pytest.mark.slow
def test_a_chroma_server_that_goes_away_is_a_clear_error_and_loses_nothing(tmp_path, monkeypatch):
    root = vault(tmp_path)
    proc, url = start_chroma_server(tmp_path / "chroma-data")
    try:
        assert top(root, "tabs", "--chroma-url", url)[0] == "prefers-tabs-over-spaces"
    finally:
        stop(proc)
    # A query needs no server: it reads the sidecar's own table and vectors (docs/recall.md).
    assert top(root, "tabs", "--chroma-url", url, "--no-sync")[0] == "prefers-tabs-over-spaces"
    # Nor does writing the sidecar: Chroma's own update (detached) fails, and status says so.
    p = epimem(root, "index", "rebuild", "--chroma-url", url)
    assert p.returncode == 0, p.stderr
    # A command told to wait for Chroma says plainly that the server is gone.
    monkeypatch.setenv("EPIMEM_CHROMA_UPDATE", "wait")
    p = epimem(root, "index", "rebuild", "--chroma-url", url)
    assert p.returncode == 1
    assert "Chroma server" in p.stderr and "Traceback" not in p.stderr
    st = json.loads(epimem(root, "index", "status", "--json", "--chroma-url", url).stdout)
    assert st["chroma_pending"] == 3 and "Chroma server" in st["chroma_error"]
    monkeypatch.delenv("EPIMEM_CHROMA_UPDATE")
    # Writing does not need the index: the observation lands, and the files hold it.
    obs = json.dumps([{"connects": "prefers-tabs-over-spaces", "strength": "confirming",
                       "evidence": "used tabs again", "session": "s1"}])
    w = epimem(root, "observe", "--input", "-", stdin=obs)
    assert w.returncode == 0, w.stderr
    start, step = DEFAULTS.start["behavioral"], DEFAULTS.confirm_step
    assert Memory(root).belief("prefers-tabs-over-spaces").confidence == pytest.approx(start + step)
    # The server comes back (a new one, on the same data): recall answers again.
    proc, url2 = start_chroma_server(tmp_path / "chroma-data")
    try:
        assert top(root, "tabs", "--chroma-url", url2)[0] == "prefers-tabs-over-spaces"
    finally:
        stop(proc)
