"""The recall index on real files, the real model and real Chroma — embedded,
and a real `chroma run` server on loopback for the same tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from recall_support import (
    make_belief,
    mini_vault,
    observation,
    start_chroma_server,
    stop,
    write_belief,
    write_observations,
)

from epimem.core.notes import render_belief
from epimem.recall.api import Recaller
from epimem.recall.config import Config, read_config
from epimem.recall.embed import EmbedderError
from epimem.recall.index import Index
from epimem.recall.rank import CONF_WEIGHT, RRF_K

pytestmark = pytest.mark.usefixtures("clean_recall_env")


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    proc, url = start_chroma_server(tmp_path_factory.mktemp("chroma-server") / "data")
    yield url
    stop(proc)


@pytest.fixture(params=["embedded", "server"])
def store(request):
    if request.param == "embedded":
        return Config()
    return Config(chroma_url=request.getfixturevalue("chroma_server"))


@pytest.fixture
def root(tmp_path):
    return mini_vault(tmp_path / "v")


def _recall(root, config, q, **kw):
    return Recaller(root, config=config, auto_sync=False).recall(q, **kw)


def _bump(path: Path, text: str) -> None:
    """Rewrite a file and make sure its mtime moves even on a coarse clock."""
    st = path.stat()
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_rebuild_then_sync_is_a_no_op(root, store):
    ix = Index(root, store)
    rep = ix.rebuild("test")
    assert rep.action == "rebuilt" and rep.items == 10 and rep.files == 8 and not rep.problems
    assert ix.status().stale is False
    again = Index(root, store).sync()
    assert again.action == "unchanged" and again.items == 10
    # A touch (same bytes, new mtime) is confirmed unchanged by the hash.
    p = root / "beliefs" / "tests-first.md"
    os.utime(p, ns=(p.stat().st_atime_ns, p.stat().st_mtime_ns + 5_000_000_000))
    assert Index(root, store).sync().action == "unchanged"
    assert Index(root, store).status().changed == []
    hits = _recall(root, store, "pull requests for review")
    assert hits.ids[0] == "small-pull-requests"


def test_sync_updates_only_what_changed(root, store):
    Index(root, store).rebuild()
    # confidence and permanence only: metadata update, no embedding
    b = make_belief("tests-first", "Writes the failing test first",
                    "Starts every bug fix with a failing regression test before touching the code.",
                    "workflow", 0.70, "stable", ("testing",))
    _bump(root / "beliefs" / "tests-first.md", render_belief(b))
    rep = Index(root, store).sync()
    assert rep.action == "synced" and rep.files_changed == ["beliefs/tests-first.md"]
    assert (rep.updated, rep.embedded, rep.added, rep.removed) == (1, 0, 0, 0)
    ix = Index(root, store)
    st = ix.load()
    col = ix.collections(st)["belief"]
    md = col.get(ids=["tests-first"], include=["metadatas"])["metadatas"][0]
    assert md["confidence"] == 0.70 and md["permanence"] == "stable" and md.get("tag:testing") is True
    # the statement and tags (both part of the text): embedded again
    b2 = make_belief("tests-first", "Writes the failing test first", "Reproduces every bug in a test first.",
                     "workflow", 0.70, "durable", ("tdd",))
    _bump(root / "beliefs" / "tests-first.md", render_belief(b2))
    rep = Index(root, store).sync()
    assert (rep.updated, rep.embedded) == (1, 1)
    md = ix.collections(ix.load())["belief"].get(ids=["tests-first"], include=["metadatas"])["metadatas"][0]
    assert md.get("tag:tdd") is True and "tag:testing" not in md  # Chroma merges: old flags removed
    # a new file, a deleted file, and an observation appended to a month
    write_belief(root, make_belief("pairs-on-incidents", "Pairs during incidents",
                                   "Calls a colleague in to pair whenever production is down."))
    (root / "beliefs" / "terse-answers.md").unlink()
    obs_file = root / "observations" / "2026-11.md"
    _bump(obs_file, obs_file.read_text() + "\n" + "## obs-20261120-ffff\n- date: 2026-11-20\n"
          "- evidence: Paired with the on-call engineer during the outage.\n- connects: new\n"
          "- strength: single\n- basis: behavioral\n")
    rep = Index(root, store).sync()
    assert (rep.added, rep.removed, rep.embedded) == (2, 1, 2)
    assert sorted(rep.files_changed) == ["beliefs/pairs-on-incidents.md", "beliefs/terse-answers.md",
                                         "observations/2026-11.md"]
    res = _recall(root, store, "production outage pairing", include_observations=True, limit=3)
    assert {"pairs-on-incidents", "obs-20261120-ffff"} <= set(res.ids)
    assert "terse-answers" not in _recall(root, store, "short direct answers").ids
    assert Index(root, store).status().stale is False


def test_a_renamed_file_keeps_its_vector(root, store):
    Index(root, store).rebuild()
    (root / "beliefs" / "terse-answers.md").rename(root / "beliefs" / "short-answers.md")
    rep = Index(root, store).sync()
    assert (rep.added, rep.removed, rep.reused, rep.embedded) == (1, 1, 1, 0)
    assert _recall(root, store, "short direct answers without preamble").ids[0] == "short-answers"


def test_malformed_file_is_reported_kept_and_reindexed_when_fixed(root, store):
    Index(root, store).rebuild()
    p = root / "beliefs" / "small-pull-requests.md"
    good = p.read_text()
    broken = good.replace("confidence: 0.70", "confidence: high")
    _bump(p, broken)
    rep = Index(root, store).sync()
    assert [str(x) for x in rep.problems] == [
        "beliefs/small-pull-requests.md:5: 'confidence' must be a number 0.00–1.00, not 'high'"]
    assert p.read_text() == broken  # never rewritten
    # the last good version stays searchable; the file stays stale until fixed
    assert _recall(root, store, "small pull requests").ids[0] == "small-pull-requests"
    st = Index(root, store).status()
    assert st.problems and st.problems[0].path == "beliefs/small-pull-requests.md"
    fixed = good.replace("Splits work into small pull requests", "Splits every change into tiny pull requests")
    _bump(p, fixed)
    rep = Index(root, store).sync()
    assert rep.embedded == 1 and not rep.problems
    assert Index(root, store).status().stale is False


def test_a_deleted_malformed_file_is_no_longer_reported(root):
    # A malformed new file never enters the manifest's files; deleting it must
    # still clear its problem (it was reported by every sync and `watch` start).
    Index(root).rebuild()
    for other_change in (False, True):
        bad = root / "beliefs" / "zz-bad.md"
        bad.write_text("---\ntitle: [bad\n---\n", encoding="utf-8")
        assert [p.path for p in Index(root).sync().problems] == ["beliefs/zz-bad.md"]
        bad.unlink()
        if other_change:
            write_belief(root, make_belief("new-one", "New", "Something new."))
        assert Index(root).status().problems == []
        assert Index(root).sync().problems == []
        st = Index(root).status()
        assert st.problems == [] and st.stale is False


def test_bad_observation_entries_and_duplicate_ids(root, store):
    write_observations(root, "2026-10", [observation("obs-20261102-a1b2", "A copy of an id used in November.")])
    (root / "observations" / "2026-09.md").write_text(
        "## obs-20260901-aaaa\n- date: 2026-13-01\n- evidence: bad date\n- strength: single\n\n"
        "## obs-20260902-bbbb\n- date: 2026-09-02\n- evidence: Fine entry about naming.\n- strength: single\n",
        encoding="utf-8")
    (root / "beliefs" / "Bad Name.md").write_text("---\ntitle: x\n---\n", encoding="utf-8")
    rep = Index(root, store).rebuild()
    msgs = [str(p) for p in rep.problems]
    assert any(m.startswith("observations/2026-09.md:1:") and "date" in m for m in msgs)
    assert any(m.startswith("observations/2026-11.md:") and "duplicate observation id" in m for m in msgs)
    assert any(m.startswith("beliefs/Bad Name.md:1:") for m in msgs)
    res = _recall(root, store, "naming", include_observations=True)
    assert "obs-20260902-bbbb" in res.ids


def test_deleting_the_sidecar_gives_the_same_answers(root):
    queries = ["pull requests", "tests before the fix", "commit messages", "meetings in the morning"]
    before = [[(h.id, round(h.score, 6)) for h in _recall(root, Config(), q, limit=4)] for q in queries]
    shutil.rmtree(root / ".epimem")
    after = [[(h.id, round(h.score, 6)) for h in _recall(root, Config(), q, limit=4)] for q in queries]
    assert before == after


def test_corrupt_or_missing_pieces_are_rebuilt_with_a_message(root):
    Index(root).rebuild()
    said = []
    (root / ".epimem" / "recall" / "manifest.json").write_text("{not json")
    r = Recaller(root, progress=said.append)
    res = r.recall("commit messages")
    assert res.ids[0] == "conventional-commits"
    assert any("rebuilt" in n for n in res.notes) and any("not valid JSON" in s for s in said)
    # table from another write than the manifest
    t = root / ".epimem" / "recall" / "table.json"
    data = json.loads(t.read_text())
    data["stamp"] = "0000"
    t.write_text(json.dumps(data))
    said.clear()
    res = Recaller(root, progress=said.append, auto_sync=False).recall("commit messages")
    assert res.ids[0] == "conventional-commits" and any("different versions" in s for s in said)
    # the Chroma store gone under a valid table
    from epimem.recall.chroma import release_embedded

    release_embedded()
    shutil.rmtree(root / ".epimem" / "chroma")
    res = Recaller(root, progress=said.append, auto_sync=False).recall("commit messages")
    assert res.ids[0] == "conventional-commits"


def test_garbage_chroma_store_is_replaced(root):
    from epimem.recall.chroma import release_embedded

    release_embedded()
    (root / ".epimem" / "chroma").mkdir(parents=True)
    (root / ".epimem" / "chroma" / "chroma.sqlite3").write_bytes(b"this is not a database" * 100)
    rep = Index(root).sync()
    assert rep.action == "rebuilt" and rep.items == 10
    assert _recall(root, Config(), "commit messages").ids[0] == "conventional-commits"


def test_another_process_writing_is_seen_by_a_long_lived_reader(root):
    Index(root).rebuild()
    reader = Recaller(root, auto_sync=False)
    assert "pairs-on-incidents" not in reader.recall("pairs during production incidents").ids
    write_belief(root, make_belief("pairs-on-incidents", "Pairs during incidents",
                                   "Calls a colleague in to pair whenever production is down."))
    code = ("import sys; from epimem.recall.index import Index; "
            "r = Index(sys.argv[1]).sync(); print(r.action, r.added)")
    out = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["synced", "1"], out.stderr
    assert reader.recall("pairs during production incidents").ids[0] == "pairs-on-incidents"


def test_config_precedence_and_embedder_change(root, monkeypatch, tmp_path):
    (root / "epistemology.md").write_text("---\nrecall:\n  embedder: ollama:nomic-embed-text\n"
                                          "chroma_url: http://example.invalid:1\n---\n")
    c = read_config(root)
    assert c.embedder == "ollama:nomic-embed-text" and c.chroma_url == "http://example.invalid:1"
    monkeypatch.setenv("EPIMEM_CHROMA_URL", "embedded")
    monkeypatch.setenv("EPIMEM_EMBEDDER", "wordllama")
    assert read_config(root) == Config()
    assert read_config(root, embedder="minilm").embedder == "minilm"
    assert read_config(root, embedder="chroma-minilm").embedder == "chroma-minilm"
    with pytest.raises(EmbedderError):
        read_config(root, embedder="word2vec")
    monkeypatch.delenv("EPIMEM_CHROMA_URL")
    monkeypatch.delenv("EPIMEM_EMBEDDER")
    (root / "epistemology.md").write_text("---\n---\n")
    Index(root).rebuild()
    # Another embedder means another vector space: status says so, and a sync
    # that cannot load it fails with a message instead of mixing vectors.
    from recall_support import free_port

    other = Config(embedder="ollama:nomic-embed-text", ollama_url=f"http://127.0.0.1:{free_port()}")
    st = Index(root, other).status()
    assert st.needs_rebuild.startswith("the embedder changed")
    with pytest.raises(EmbedderError, match="Ollama"):
        Index(root, other).sync()
    assert _recall(root, Config(), "commit messages").ids[0] == "conventional-commits"


def test_an_unreachable_server_is_a_clear_error(root):
    from recall_support import free_port

    from epimem.recall.errors import RecallIndexError

    cfg = Config(chroma_url=f"http://127.0.0.1:{free_port()}")
    t = time.monotonic()
    with pytest.raises(RecallIndexError, match="cannot reach the Chroma server"):
        Index(root, cfg).rebuild()
    assert time.monotonic() - t < 20


def test_status_lists_stale_files(root):
    assert Index(root).status().exists is False
    Index(root).rebuild()
    write_belief(root, make_belief("new-one", "New", "Something new."))
    (root / "beliefs" / "terse-answers.md").unlink()
    _bump(root / "beliefs" / "tests-first.md", (root / "beliefs" / "tests-first.md").read_text() + "\nMore.\n")
    st = Index(root).status()
    assert (st.new, st.deleted, st.changed) == (["beliefs/new-one.md"], ["beliefs/terse-answers.md"],
                                                ["beliefs/tests-first.md"])
    assert st.stale and st.as_json()["stale"] is True


def test_ranking_parameters_from_the_rules_file(root):
    (root / "epistemology.md").write_text("---\nrecall:\n  rrf_k: 20\n  confidence_weight: 0.2\n---\n")
    c = read_config(root)
    assert (c.rrf_k, c.confidence_weight) == (20, 0.2)
    (root / "epistemology.md").write_text("---\nrecall:\n  rrf_k: lots\n  confidence_weight: 3\n---\n")
    assert (read_config(root).rrf_k, read_config(root).confidence_weight) == (RRF_K, CONF_WEIGHT)


def test_a_busy_index_is_used_as_it_is(root):
    Index(root).rebuild()
    write_belief(root, make_belief("pairs-on-incidents", "Pairs during incidents", "Pairs when production is down."))
    other = Index(root).lock()
    with other:
        code = ("import sys; from epimem.recall.index import Index; "
                "print(Index(sys.argv[1]).sync(wait=False).action)")
        out = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=60)
        assert out.stdout.strip() == "busy", out.stderr
    assert Index(root).sync().added == 1


def test_the_sidecar_vectors_follow_every_sync(root):
    """After edits, a rename and a delete, each row's vector and text in the
    sidecar are those of the item in the same table row — as a rebuild makes them."""
    import numpy as np

    from epimem.recall.embed import get_embedder

    Index(root).rebuild()
    p = root / "beliefs" / "tests-first.md"
    _bump(p, p.read_text(encoding="utf-8").replace("regression test", "regression test, always,"))
    (root / "beliefs" / "conventional-commits.md").rename(root / "beliefs" / "commit-format.md")
    (root / "beliefs" / "small-pull-requests.md").unlink()
    rep = Index(root).sync()
    assert rep.action == "synced" and rep.reused == 1
    st = Index(root).load()
    emb = get_embedder()
    texts = st.vectors.texts()
    assert len(texts) == len(st.table) == st.vectors.matrix.shape[0]
    assert "b/small-pull-requests" not in st.table.row_of and "b/commit-format" in st.table.row_of
    for key, row in st.table.row_of.items():
        assert "always," in texts[row] if key == "b/tests-first" else True
        assert np.allclose(st.vectors.matrix[row], emb.embed([texts[row]])[0], atol=1e-5), key
    # Old arrays are removed once the new ones are written.
    assert len(list(Index(root).paths.dir.glob("vectors-*.npy"))) == 1


def test_a_one_file_sync_marks_only_that_files_items_for_chroma(root):
    """The sidecar is rewritten, but Chroma is told of that file's items only,
    and every other row keeps its vector; update_chroma then applies just those."""
    import numpy as np

    from epimem.recall.manifest import load_chroma_state

    ix = Index(root)
    ix.rebuild()
    assert ix.chroma_pending() == 0 and load_chroma_state(ix.paths)["dirty"] == {}
    before = ix.load()
    vec_before = {k: np.array(before.vectors.matrix[r]) for k, r in before.table.row_of.items()}
    obs_file = root / "observations" / "2026-11.md"
    paths = before.table.columns["path"]
    keys_in_file = {k for k, r in before.table.row_of.items() if paths[r] == "observations/2026-11.md"}
    _bump(obs_file, obs_file.read_text() + "\n" + "## obs-20261120-eeee\n- date: 2026-11-20\n"
          "- evidence: Asked for a smaller diff before reviewing.\n- connects: small-pull-requests\n"
          "- strength: single\n- basis: behavioral\n")
    later = Index(root, chroma="later")
    rep = later.sync()
    assert rep.action == "synced" and rep.files_changed == ["observations/2026-11.md"] and rep.chroma == "pending"
    dirty = set(load_chroma_state(ix.paths)["dirty"])
    assert "o/obs-20261120-eeee" in dirty and dirty <= keys_in_file | {"o/obs-20261120-eeee"}
    after = later.load()
    for k, v in vec_before.items():
        assert np.array_equal(after.vectors.matrix[after.table.row_of[k]], v), k
    cols = later.collections()
    assert cols["observation"].get(ids=["obs-20261120-eeee"])["ids"] == []     # not yet
    done = later.update_chroma()
    assert done["action"] == "updated" and done["items"] == len(dirty) and later.chroma_pending() == 0
    got = later.collections()["observation"].get(ids=["obs-20261120-eeee"], include=["embeddings"])
    row = after.table.row_of["o/obs-20261120-eeee"]
    assert np.allclose(got["embeddings"][0], after.vectors.matrix[row], atol=1e-6)
    assert later.update_chroma()["action"] == "unchanged"


def test_chroma_lost_or_damaged_is_refilled_from_the_sidecar(root):
    from epimem.recall.chroma import release_embedded

    ix = Index(root)
    ix.rebuild()
    release_embedded()
    shutil.rmtree(root / ".epimem" / "chroma")
    (root / ".epimem" / "recall" / "chroma.json").write_text("{not json")
    done = Index(root).update_chroma()
    assert done["action"] == "rebuilt" and done["items"] == 10
    assert sum(c.count() for c in Index(root).collections().values()) == 10


def test_an_inline_sync_does_not_wait_for_another_chroma_update(root):
    """The library updates Chroma at once, unless another process is at it: then the marks
    wait, and the next sync (even one that finds nothing changed) applies them."""
    from epimem.store.files import VaultLock

    ix = Index(root)
    ix.rebuild()
    write_belief(root, make_belief("pairs-on-incidents", "Pairs during incidents", "Pairs when production is down."))
    with VaultLock(ix.paths.chroma_lock, timeout=5):
        rep = Index(root).sync()
    assert rep.action == "synced" and rep.chroma == "pending" and ix.chroma_pending() == 1
    again = Index(root).sync()
    assert again.action == "unchanged" and again.chroma == "updated" and ix.chroma_pending() == 0
    assert Index(root).collections()["belief"].get(ids=["pairs-on-incidents"])["ids"] == ["pairs-on-incidents"]


def test_each_embedder_gets_the_rrf_k_it_was_cross_validated_at_unless_the_vault_sets_one(root):
    from epimem.recall.rank import RRF_K_BY_EMBEDDER

    assert read_config(root, embedder="wordllama").rrf_k == RRF_K
    assert read_config(root, embedder="minilm").rrf_k == RRF_K_BY_EMBEDDER["minilm"] != RRF_K
    (root / "epistemology.md").write_text("---\nrecall:\n  embedder: minilm\n  rrf_k: 20\n---\n")
    assert read_config(root).rrf_k == 20
    (root / "epistemology.md").write_text("---\nrecall:\n  embedder: minilm\n  rrf_k: lots\n---\n")
    assert read_config(root).rrf_k == RRF_K_BY_EMBEDDER["minilm"]
