"""`epimem recall`, `epimem index …` from the command line: output, batches, errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from recall_support import free_port, mini_vault

from epimem.recall import estimate_tokens

pytestmark = pytest.mark.usefixtures("clean_recall_env")


@pytest.fixture
def root(tmp_path):
    return mini_vault(tmp_path / "v")


def test_recall_builds_the_index_on_first_use_and_says_so(cli, root):
    r = cli("--vault", root, "recall", "small pull requests for review")
    assert r.code == 0, r.err
    assert "Rebuilt the index" in r.err and r.out.startswith("1. small-pull-requests — Keeps pull requests small")
    assert "keyword rank" in r.out and "semantic rank" in r.out
    r = cli("--vault", root, "recall", "small pull requests", "--json", "--limit", "2")
    d = r.json()
    assert r.err == "" and d["query"] == "small pull requests" and len(d["results"]) == 2
    first = d["results"][0]
    assert first["id"] == "small-pull-requests" and first["why"]["keyword_terms"] == ["small", "pull", "requests"]
    assert {"score", "effective_confidence", "title", "text"} <= set(first)


def test_filters_and_budget(cli, root):
    d = cli("--vault", root, "recall", "tests", "--json", "--kind", "convention", "--kind", "workflow",
            "--scope", "billing", "--min-confidence", "0.3").json()
    assert d["results"] and {h["kind"] for h in d["results"]} <= {"convention", "workflow"}
    d = cli("--vault", root, "recall", "mocks in tests", "--json", "--inactive", "--observations").json()
    assert "likes-mocks" in [h["id"] for h in d["results"]]
    md = cli("--vault", root, "recall", "how do they work", "--budget-tokens", "60").out
    assert md.startswith("## ") and estimate_tokens(md) <= 60
    assert cli("--vault", root, "recall", "how do they work", "--budget-tokens", "3").out == ""


def test_queries_file(cli, root, tmp_path):
    f = tmp_path / "q.txt"
    f.write_text("small pull requests\n\n# a comment\n"
                 '{"query": "tests", "kind": "convention", "limit": 1, "id": "t1"}\n'
                 '{"query": ""}\n{oops\n{"query": "x", "since": "never"}\n', encoding="utf-8")
    r = cli("--vault", root, "recall", "--queries", f, "--limit", "3")
    assert r.code == 0, r.err
    rows = [json.loads(ln) for ln in r.out.splitlines()]
    assert [row["line"] for row in rows] == [1, 4, 5, 6, 7]
    assert rows[0]["results"][0]["id"] == "small-pull-requests" and len(rows[0]["results"]) == 3
    assert rows[1]["id"] == "t1" and [h["kind"] for h in rows[1]["results"]] == ["convention"]
    assert "empty" in rows[2]["error"] and "invalid JSON" in rows[3]["error"] and "date" in rows[4]["error"]
    r = cli("--vault", root, "recall", "--queries", "-", "--json", stdin="commit messages\n")
    assert json.loads(r.out)["results"][0]["id"] == "conventional-commits"


def test_errors_are_messages_not_tracebacks(cli, root, tmp_path):
    for args, code, words in [
        (("recall", ""), 2, "empty"),
        (("recall",), 2, "give a QUERY"),
        (("recall", "x", "--queries", "f"), 2, "give a QUERY"),
        (("recall", "x", "--since", "2026-02-30"), 2, "YYYY-MM-DD"),
        (("recall", "x", "--min-confidence", "3"), 2, "between 0 and 1"),
        (("recall", "x", "--mode", "vibes"), 2, "mode"),
        (("recall", "x", "--queries", tmp_path / "missing.txt"), 2, "give a QUERY"),
        (("recall", "x", "--embedder", "bert"), 1, "unknown embedder"),
    ]:
        r = cli("--vault", root, *args)
        assert r.code == code and words in r.err and "Traceback" not in r.err, (args, r.err)
    r = cli("--vault", tmp_path / "nowhere", "recall", "x")
    assert r.code == 1 and "no vault" in r.err


def test_an_unreachable_chroma_server_does_not_stop_recall(cli, root):
    """A query reads the sidecar only; Chroma's update fails on its own, and says so in status."""
    from epimem.recall import follow
    from epimem.recall.config import read_config
    from epimem.recall.errors import RecallIndexError
    from epimem.recall.index import Index

    url = f"http://127.0.0.1:{free_port()}"
    r = cli("--vault", root, "recall", "commit messages", "--chroma-url", url, "--json")
    assert r.code == 0 and r.json()["results"][0]["id"] == "conventional-commits", r.err
    with pytest.raises(RecallIndexError, match="cannot reach the Chroma server"):
        Index(root, read_config(root, chroma_url=url)).update_chroma()
    assert follow.main([str(root), "--chroma-url", url]) == 1   # what the detached process runs
    st = cli("--vault", root, "index", "status", "--json", "--chroma-url", url).json()
    assert st["chroma_pending"] == 10 and "cannot reach the Chroma server" in st["chroma_error"]


def test_index_commands(cli, root):
    st = cli("--vault", root, "index", "status", "--json").json()
    assert st["exists"] is False and st["stale"] is True
    assert "No index yet" in cli("--vault", root, "index", "status").out
    rep = cli("--vault", root, "index", "rebuild", "--json").json()
    assert rep["action"] == "rebuilt" and rep["items"] == 10
    assert cli("--vault", root, "index", "sync", "--json").json()["action"] == "unchanged"
    (root / "beliefs" / "terse-answers.md").unlink()
    out = cli("--vault", root, "index", "status").out
    assert "deleted  beliefs/terse-answers.md" in out and "Stale" in out
    assert "Synced 1 changed file" in cli("--vault", root, "index", "sync").out
    (root / ".epimem" / "recall" / "table.json").write_text("garbage")
    r = cli("--vault", root, "recall", "commit messages", "--no-sync")
    assert r.code == 0 and "rebuilding" in r.err and "Traceback" not in r.err
    assert r.out.startswith("1. conventional-commits")


def test_fresh_process(root):
    """`epimem recall` as a new process answers from the built index. Its speed is measured in
    bench/bench_recall.py beside a baseline, not timed here: a wall clock on a shared CI machine
    fails for the machine's reasons, not the code's."""
    cmd = [sys.executable, "-m", "epimem", "--vault", str(root), "recall", "commit messages", "--json"]
    subprocess.run(cmd, capture_output=True, timeout=60, check=True)  # builds the index
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and json.loads(out.stdout)["results"][0]["id"] == "conventional-commits"


@pytest.mark.parametrize("args, expected", [
    (["commit messages"], {"query": "commit messages", "limit": 5, "kind": [], "mode": "fused"}),
    (["commit messages", "--json", "-n", "3", "--kind", "convention", "--kind", "workflow", "--scope=billing"],
     {"as_json": True, "limit": 3, "kind": ["convention", "workflow"], "scope": "billing"}),
    (["--observations", "tests", "--min-confidence", "0.3", "--since", "2026-01-01", "--budget-tokens", "80"],
     {"query": "tests", "observations": True, "min_confidence": 0.3, "since": "2026-01-01", "budget": 80}),
    (["--queries", "-", "--no-sync", "--mode", "keyword", "--inactive", "--budget", "5"],
     {"query": None, "queries": "-", "no_sync": True, "mode": "keyword", "inactive": True, "old_budget": 5}),
    (["-n5", "--", "-x"], {"query": "-x", "limit": 5}),
])
def test_recall_parses_every_spelling_into_its_call(args, expected, monkeypatch):
    from epimem.cli.registry import load
    from epimem.cli.spec import COMMANDS, parse

    monkeypatch.setenv("EPIMEM_EMBEDDER", "wordllama")
    load("recall")
    kw = parse(COMMANDS[("recall",)], list(args))
    assert {k: kw[k] for k in expected} == expected
    assert kw["embedder"] == "wordllama"  # the environment fills what the line leaves out


@pytest.mark.parametrize("args, says", [
    (["x", "--limit", "0"], "--limit must be at least 1, not 0"),
    (["x", "--limit", "many"], "--limit must be a whole number, not 'many'"),
    (["x", "--frob"], "no option --frob"),
    (["x", "y"], "unexpected argument 'y'"),
    (["x", "--json=yes"], "--json takes no value"),
    (["x", "--scope"], "--scope needs a value"),
    (["x", "--mode", "fuzzy"], "--mode must be one of fused, keyword, semantic"),
    ([], "give a QUERY, or --queries FILE"),
])
def test_a_bad_recall_command_line_is_a_usage_error(cli, root, args, says):
    r = cli("--vault", root, "recall", *args)
    assert r.code == 2 and says in r.err and "Usage: epimem recall" in r.err, r.err
    assert r.out == ""


def test_recall_help_and_a_bad_today(cli, root):
    r = cli("--vault", root, "recall", "--help")
    assert r.code == 0 and "--budget-tokens N" in r.out and "--budget " not in r.out   # the old spelling is hidden
    r = cli("--vault", root, "--today", "2026-02-30", "recall", "x")
    assert r.code == 2 and "2026-02-30" in r.err


def test_a_failed_chroma_update_is_not_retried_by_every_recall(root):
    from epimem.recall import follow
    from epimem.recall.config import read_config
    from epimem.recall.index import Index
    from epimem.recall.manifest import load_chroma_state, save_chroma_state

    url = f"http://127.0.0.1:{free_port()}"
    ix = Index(root, read_config(root, chroma_url=url), chroma="later")
    ix.rebuild("test")
    ix.chroma_mode = "background"
    assert follow.main([str(root), "--chroma-url", url]) == 1
    assert load_chroma_state(ix.paths).get("error_at")
    spawned = []
    ix.update_chroma_later = lambda: spawned.append(1)   # type: ignore[method-assign]
    assert ix.sync().action == "unchanged" and spawned == []
    m = load_chroma_state(ix.paths)
    m["error_at"] -= 3600                                  # an hour ago: try again
    save_chroma_state(ix.paths, m)
    assert ix.sync().chroma == "pending" and spawned == [1]
