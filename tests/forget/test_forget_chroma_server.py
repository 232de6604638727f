"""A purge and a Chroma server (SPEC §15: "no Chroma collection holds it"): the vault's
collections on a real server on loopback hold nothing of what was forgotten afterwards."""

from __future__ import annotations

import pytest
from forgetting import SECRET, assert_no_trace, rich_vault
from recall_support import start_chroma_server, stop

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("clean_recall_env")]  # a real server, the real model


@pytest.fixture
def server(tmp_path):
    (tmp_path / "chroma-server").mkdir()  # outside the vault: the server's own files are not the vault's
    proc, url = start_chroma_server(tmp_path / "chroma-server" / "data")
    yield url
    stop(proc)


def _documents(url: str, root) -> list[str]:
    """Every document and metadata value of this vault's collections on the server, as text."""
    import chromadb

    from epimem.recall.chroma import collection_names

    host, port = url.removeprefix("http://").rsplit(":", 1)
    client = chromadb.HttpClient(host=host, port=int(port))
    prefix = collection_names(root, "")[0]
    out = []
    for c in client.list_collections():
        name = c if isinstance(c, str) else c.name
        if name.startswith(prefix):
            got = client.get_collection(name).get(include=["documents", "metadatas"])
            out += [str(d) for d in got["documents"] or []] + [str(m) for m in got["metadatas"] or []]
    return out


def test_the_vaults_collections_on_a_chroma_server_hold_nothing_of_it_after_a_purge(vault, cli, server,
                                                                                    monkeypatch):
    monkeypatch.setenv("EPIMEM_CHROMA_URL", server)
    monkeypatch.setenv("EPIMEM_CHROMA_UPDATE", "wait")  # Chroma written inside the command, not later
    mem = rich_vault(vault)
    assert cli("--vault", mem.root, "index", "rebuild").code == 0
    before = _documents(server, mem.root)
    assert any(SECRET in d for d in before), before  # the test can fail: the server held it
    r = cli("--vault", mem.root, "forget", "prefers-tabs", "--purge", "--yes")
    assert r.code == 0, r.err
    assert "recall index was erased and rebuilt" in r.out
    after = _documents(server, mem.root)
    assert after and not any(SECRET in d or "Reformatted a file with tabs" in d for d in after)
    assert any("Short pull requests" in d or "Split a refactor" in d for d in after)  # rebuilt, not just dropped
    assert_no_trace(mem.root, SECRET)
