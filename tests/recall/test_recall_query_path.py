"""A query reads the sidecar (table, BM25 arrays, vectors): a fresh
`epimem recall` on a current index never imports chromadb (0.9 s of a fresh
process). Writes from the command line — rebuild, sync of a changed file —
write the sidecar and leave Chroma to a detached `epimem.recall.follow`."""

import json
import os
import subprocess
import sys

import pytest
from recall_support import mini_vault

pytestmark = pytest.mark.usefixtures("clean_recall_env")

PROBE = """
import json, runpy, sys
sys.argv = ["epimem"] + sys.argv[1:]
try:
    runpy.run_module("epimem", run_name="__main__", alter_sys=True)
except SystemExit as e:
    code = e.code
heavy = sorted(m for m in ("chromadb", "onnxruntime", "torch", "wordllama", "typer", "pydantic") if m in sys.modules)
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


def _run(root, *args):
    env = {**os.environ, "EPIMEM_TODAY": "2026-11-30"}
    p = subprocess.run([sys.executable, "-c", PROBE, "--vault", str(root), *args], capture_output=True,
                       text=True, env=env, timeout=300)
    probe = json.loads(p.stderr.strip().splitlines()[-1])
    return p, probe


def test_a_fresh_recall_on_a_current_index_imports_no_chromadb_nor_typer(tmp_path):
    root = mini_vault(tmp_path / "v")
    p, probe = _run(root, "index", "rebuild")
    assert probe["code"] in (0, None), p.stderr
    assert "chromadb" not in probe["heavy"], probe   # Chroma is written by a detached process
    _chroma_holds(root, 10)
    p, probe = _run(root, "recall", "how do they write tests?", "--json")
    assert probe["code"] in (0, None), p.stderr
    assert json.loads(p.stdout)["results"][0]["id"] == "tests-first"
    assert probe["heavy"] == [], probe
    # With observations and filters too.
    p, probe = _run(root, "recall", "pull requests", "--observations", "--scope", "billing", "--json")
    assert probe["code"] in (0, None) and probe["heavy"] == [], (p.stderr, probe)
    assert json.loads(p.stdout)["results"]
    # A sync of one changed file: the sidecar now, Chroma a moment later.
    f = root / "beliefs" / "tests-first.md"
    f.write_text(f.read_text(encoding="utf-8").replace("regression test", "regression test, always,"),
                 encoding="utf-8")
    p, probe = _run(root, "index", "sync", "--json")
    assert probe["code"] in (0, None) and "chromadb" not in probe["heavy"], (p.stderr, probe)
    assert json.loads(p.stdout)["chroma"] == "pending"
    _chroma_holds(root, 10)


def _chroma_holds(root, n):
    """Wait for the detached update (it holds chroma.lock), then look into Chroma itself."""
    from epimem.recall.index import Index

    ix = Index(root)
    ix.update_chroma()   # waits for the lock; then finds nothing left to do, or finishes the job
    assert ix.chroma_pending() == 0
    cols = ix.collections()
    assert sum(c.count() for c in cols.values()) == n
