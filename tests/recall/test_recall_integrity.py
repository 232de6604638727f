"""A damaged index file (docs/decisions.md, "Index integrity"): `index status` names it, and recall
rebuilds the index and answers as an intact one would, whatever the damage: no traceback, no
answer from bad vectors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from recall_support import mini_vault

from epimem.recall.api import Recaller
from epimem.recall.index import Index

pytestmark = pytest.mark.usefixtures("clean_recall_env")

QUERIES = ["commit messages", "pull requests", "meetings in the morning"]


@pytest.fixture
def vault(tmp_path):
    """A vault with its index, and what the intact index answers."""
    root = mini_vault(tmp_path / "v")
    Index(root).rebuild()
    answers = [[(h.id, round(h.score, 6)) for h in Recaller(root, auto_sync=False).recall(q, limit=4)]
               for q in QUERIES]
    return root, answers


def _damage(path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "flipped":  # the same size: only the bytes tell
        b = bytearray(data)
        for i in range(len(b) // 2, len(b) // 2 + 16):
            b[i] ^= 0xFF
        path.write_bytes(bytes(b))
    elif how == "garbage":
        path.write_bytes(os.urandom(len(data)))
    else:
        path.write_bytes(b"")


def _vectors_array(root):
    return next((root / ".epimem" / "recall").glob("vectors-*.npy")).name


FILES = ["vectors.npz", "vectors-*.npy", "lexical.npz", "texts-*.npy"]
DAMAGES = ["truncated", "flipped", "garbage", "emptied"]
# Each file and each damage once in the default set (a diagonal: 4 of 16); the whole matrix under
# `slow`, which .ci/run runs after it — the default set keeps to its three minutes.
MATRIX = [pytest.param(w, h, marks=() if FILES.index(w) == DAMAGES.index(h) else pytest.mark.slow)
          for w in FILES for h in DAMAGES]


@pytest.mark.parametrize(("which", "how"), MATRIX)
def test_a_damaged_file_is_named_by_status_and_recall_rebuilds(vault, which, how):
    root, answers = vault
    name = next((root / ".epimem" / "recall").glob(which)).name
    _damage(root / ".epimem" / "recall" / name, how)
    st = Index(root).status()
    assert st.stale and name in st.needs_rebuild, st.needs_rebuild
    said: list[str] = []
    got = []
    for q in QUERIES:
        res = Recaller(root, auto_sync=False, progress=said.append).recall(q, limit=4)
        got.append([(h.id, round(h.score, 6)) for h in res])
    assert got == answers
    assert any(name in s and "rebuilding" in s for s in said), said
    assert not Index(root).status().stale


@pytest.mark.parametrize("how", ["truncated", "flipped"])
def test_a_synced_recall_and_index_sync_rebuild_a_damaged_index_too(vault, how):
    root, answers = vault
    _damage(root / ".epimem" / "recall" / "vectors.npz", how)
    res = Recaller(root).recall(QUERIES[0], limit=4)  # a fresh process: it syncs first
    assert [(h.id, round(h.score, 6)) for h in res] == answers[0]
    assert any("vectors.npz" in n for n in res.notes), res.notes
    _damage(root / ".epimem" / "recall" / _vectors_array(root), how)
    rep = Index(root).sync()
    assert rep.action == "rebuilt" and "vectors-" in rep.reason, rep.reason


def test_the_same_bytes_with_another_time_are_not_damage(vault):
    # a copy or a restore (cp without -p, a backup) moves the times and keeps the bytes
    root, answers = vault
    for p in (root / ".epimem" / "recall").iterdir():
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert not Index(root).status().stale
    said: list[str] = []
    res = Recaller(root, progress=said.append).recall(QUERIES[0], limit=4)
    assert [(h.id, round(h.score, 6)) for h in res] == answers[0] and not said and not res.notes
    assert Index(root).sync().action == "unchanged"


def test_an_index_written_before_the_check_is_read_and_checked_from_its_next_write(vault):
    root, answers = vault
    manifest = root / ".epimem" / "recall" / "manifest.json"
    m = json.loads(manifest.read_text())
    m.pop("parts")
    manifest.write_text(json.dumps(m))
    assert not Index(root).status().stale
    # the zip's own checksums still catch a damaged npz, as a clear rebuild, not a traceback
    _damage(root / ".epimem" / "recall" / "vectors.npz", "flipped")
    said: list[str] = []
    res = Recaller(root, auto_sync=False, progress=said.append).recall(QUERIES[0], limit=4)
    assert [(h.id, round(h.score, 6)) for h in res] == answers[0]
    assert any("vectors.npz" in s for s in said), said
    assert "parts" in json.loads(manifest.read_text())


def test_the_commands_say_it_without_a_traceback(vault):
    root, _ = vault
    _damage(root / ".epimem" / "recall" / "vectors.npz", "truncated")
    env = {**os.environ, "EPIMEM_TODAY": "2026-11-30"}
    cmd = [sys.executable, "-m", "epimem", "--vault", str(root)]
    st = subprocess.run(cmd + ["index", "status"], capture_output=True, text=True, env=env, timeout=120)
    assert st.returncode == 0, st.stderr
    assert "vectors.npz" in st.stdout and "Up to date" not in st.stdout, st.stdout
    rc = subprocess.run(cmd + ["recall", "commit messages"], capture_output=True, text=True, env=env, timeout=300)
    assert rc.returncode == 0 and "Traceback" not in rc.stderr, rc.stderr
    assert "conventional-commits" in rc.stdout and "vectors.npz" in rc.stderr
