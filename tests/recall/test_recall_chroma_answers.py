"""Chroma answers recall where a process lives long enough (the MCP server) and whenever a
server is named; its ranking is the sidecar's. A server URL that is not a URL is refused at
once; one that cannot be reached is said on stderr by the command that needed it."""

from __future__ import annotations

import threading

import pytest
from recall_support import free_port, mini_vault

from epimem.recall import Recaller

pytestmark = pytest.mark.usefixtures("clean_recall_env")

QUERIES = ["small pull requests for review", "how do they like tests", "mocks in tests", "deploys on Friday",
           "error handling", "commit messages"]


def test_chroma_ranks_exactly_as_the_sidecar_table(tmp_path):
    root = mini_vault(tmp_path / "v")
    side = Recaller(root, semantic="sidecar", chroma="inline")
    side.sync()
    chroma = Recaller(root, semantic="chroma", chroma="inline")
    # A long-lived process opens the embedded store beside its first query, which the sidecar
    # answers; here it is opened first, as the MCP server's thread does.
    assert chroma.open_chroma()
    for q in QUERIES:
        for kw in ({}, {"include_observations": True, "include_inactive": True}, {"kind": ["convention"]}):
            a = chroma.search(q, limit=10, mode="semantic", **kw)
            b = side.search(q, limit=10, mode="semantic", **kw)
            assert [h.id for h in a] == [h.id for h in b], (q, kw)
            assert [round(h.semantic_similarity, 4) for h in a] == [round(h.semantic_similarity, 4) for h in b]
            assert [h.id for h in chroma.search(q, limit=10, **kw)] == [h.id for h in side.search(q, limit=10, **kw)]
    assert chroma.chroma_problem == ""
    # It was Chroma that answered: with its collections gone, the sidecar answers and says so.
    import shutil

    from epimem.recall import chroma as ch

    ch.release_embedded(force=True)
    shutil.rmtree(root / ".epimem" / "chroma")
    chroma = Recaller(root, semantic="chroma", chroma="later")
    assert not chroma.open_chroma()
    got = chroma.search(QUERIES[0], limit=5)
    assert [h.id for h in got] == [h.id for h in side.search(QUERIES[0], limit=5)]
    assert "answered from the sidecar" in chroma.chroma_problem


def test_the_mcp_server_reads_chroma():
    import inspect

    from epimem.mcp import server

    assert 'semantic="chroma"' in inspect.getsource(server)


@pytest.mark.parametrize("url", ["not a url", "ftp://host:1", "http://:8000", "http://host:99999", "http://h o:1"])
def test_a_chroma_url_that_is_not_a_url_is_refused_at_once(cli, tmp_path, url):
    root = mini_vault(tmp_path / "v")
    for args in (["recall", "small pull requests", "--json"], ["index", "sync"]):
        r = cli("--vault", root, *args, "--chroma-url", url)
        assert r.code != 0 and "is not a Chroma server URL like http://HOST:PORT" in r.err, (args, r.err)
        assert "--chroma-url" in r.err
        assert not (root / ".epimem" / "recall" / "manifest.json").exists()  # refused before any work


def test_an_unreachable_server_is_said_on_stderr(cli, tmp_path):
    root = mini_vault(tmp_path / "v")
    url = f"http://127.0.0.1:{free_port()}"
    r = cli("--vault", root, "index", "sync", "--chroma-url", url)
    assert r.code == 0 and "cannot reach the Chroma server at " + url in r.err, r.err
    r = cli("--vault", root, "recall", "small pull requests", "--json", "--chroma-url", url)
    assert r.code == 0, r.err
    assert r.json()["results"][0]["id"] == "small-pull-requests"      # the sidecar answered
    assert url in r.err and "answered from the sidecar" in r.err


def test_what_is_said_of_an_unreachable_server_never_shows_its_password(cli, tmp_path):
    root = mini_vault(tmp_path / "v")
    url = f"http://bob:s3cretpw@127.0.0.1:{free_port()}"
    for args in (["index", "sync"], ["recall", "small pull requests", "--json"]):
        r = cli("--vault", root, *args, "--chroma-url", url)
        assert r.code == 0, r.err
        assert "cannot reach the Chroma server" in r.err and "s3cretpw" not in r.err + r.out, r.err


def test_a_long_lived_process_opens_chroma_beside_its_first_query(tmp_path, monkeypatch):
    root = mini_vault(tmp_path / "v")
    r = Recaller(root, semantic="chroma", chroma="inline")
    seen = []
    real = r._semantic_chroma

    def spy(*a):
        got = real(*a)
        seen.append(got is not None)
        return got

    monkeypatch.setattr(r, "_semantic_chroma", spy)
    first = [h.id for h in r.search(QUERIES[0], limit=5)]      # the sidecar answers, Chroma opens
    if isinstance(r._chroma_open, threading.Thread):
        r._chroma_open.join(60)
    second = [h.id for h in r.search(QUERIES[0], limit=5)]     # Chroma answers
    assert seen == [False, True] and first == second and r.chroma_problem == ""
