"""The parse caches: faster reads that never change an answer."""

import os
import time

import pytest

from epimem.store.vault import Vault


def _age(path, seconds=10):
    t = time.time() - seconds
    os.utime(path, (t, t))


def test_observation_cache_follows_changes_and_survives_corruption(vault):
    vault.add_belief(title="A", statement="A.", kind="trait", basis="behavioral", permanence="durable")
    vault.observe([{"connects": "a", "strength": "confirming", "evidence": "one", "session": "s"}])
    log = vault.root / "observations/2026-11.md"
    _age(log)
    v = Vault(vault.root)
    first = v.load_observations()
    assert [o.evidence for o in first[0]] == ["one"]
    assert v.load_observations() == first  # from the cache
    log.write_text(log.read_text() + "\n## obs-20261130-ffff\n- date: 2026-11-30\n- evidence: two\n"
                   "- connects: new\n- strength: single\n- basis: behavioral\n")
    assert [o.evidence for o in v.load_observations()[0]] == ["one", "two"]
    (vault.root / ".epimem/cache/observations.marshal").write_bytes(b"\x00garbage")
    assert [o.evidence for o in Vault(vault.root).load_observations()[0]] == ["one", "two"]


def test_the_observation_log_counts_and_finds_what_the_snapshot_holds(vault):
    from datetime import date

    vault.add_belief(title="A", statement="A.", kind="trait", basis="behavioral", permanence="durable")
    vault.observe([{"connects": "a", "strength": "confirming", "evidence": "one", "session": "s"}])
    log_file = vault.root / "observations/2026-11.md"
    log_file.write_text(log_file.read_text() + "\n## obs-20261001-ffff\n- date: 2026-10-01\n- evidence: two\n"
                        "- connects: new\n- strength: single\n- basis: behavioral\n"
                        "\n## obs-20261002-eeee\n- date: someday\n- evidence: three\n")
    v = Vault(vault.root)
    today = date(2026, 11, 30)
    full = v.snapshot(today)
    snap, log = v.snapshot_and_log(today)
    assert snap.observations == () and snap.beliefs == full.beliefs and snap.problems == full.problems
    assert full.problems  # the broken entry is reported by both
    assert log.observations() == list(full.observations) and len(log) == len(full.observations) == 2
    assert log.count_since(date(2026, 11, 1)) == sum(1 for o in full.observations if o.date >= date(2026, 11, 1)) == 1
    want = {o.id for o in full.observations if o.evidence == "two"} | {"obs-nowhere"}
    assert log.find(want) == {o.id: o for o in full.observations if o.evidence == "two"}


@pytest.mark.seed_rules
def test_belief_cache_follows_edits_and_survives_corruption(vault):
    vault.add_belief(title="A", statement="A.", kind="trait", basis="behavioral", permanence="durable")
    p = vault.root / "beliefs/a.md"
    _age(p)
    v = Vault(vault.root)
    assert v.load_beliefs()[0][0].confidence == 0.30
    p.write_text(p.read_text().replace("confidence: 0.30", "confidence: 0.55"))
    assert v.load_beliefs()[0][0].confidence == 0.55
    (vault.root / ".epimem/cache/beliefs.marshal").write_text("{not marshal")
    assert Vault(vault.root).load_beliefs()[0][0].confidence == 0.55
    p.write_text(p.read_text().replace("confidence: 0.55", "confidence: 7"))
    beliefs, problems = v.load_beliefs()
    assert beliefs == [] and str(problems[0]).startswith("beliefs/a.md:5:")


def test_a_held_lock_times_out_with_a_message(tmp_path):
    import subprocess
    import sys

    import pytest

    from epimem.store.files import LockTimeout, VaultLock

    lock = tmp_path / ".epimem" / "lock"
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, time\nfrom epimem.store.files import VaultLock\n"
                               f"with VaultLock({str(lock)!r}):\n    print('held', flush=True)\n    time.sleep(5)\n"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LockTimeout, match="locked by another epimem process"):
            with VaultLock(lock, timeout=0.2):
                pass
    finally:
        holder.kill()
        holder.wait()
    with VaultLock(lock, timeout=2):  # released when its holder died
        pass


def test_atomic_write_refuses_to_overwrite_a_concurrent_edit(tmp_path):
    import pytest

    from epimem.store.files import ConcurrentEdit, atomic_write, stat_key

    p = tmp_path / "b.md"
    p.write_text("mine v1\n")
    key = stat_key(p)
    p.write_text("the user's edit, longer\n")
    with pytest.raises(ConcurrentEdit):
        atomic_write(p, "epimem's version\n", expect=key)
    assert p.read_text() == "the user's edit, longer\n"
    assert [x.name for x in tmp_path.iterdir()] == ["b.md"]  # no temp file left behind


def test_epistemology_md_has_one_reader_for_rules_and_settings(tmp_path, monkeypatch):
    from epimem.api.mirror import _configured_model
    from epimem.recall.config import read_config

    monkeypatch.delenv("EPIMEM_EMBEDDER", raising=False)
    monkeypatch.delenv("EPIMEM_CHROMA_URL", raising=False)
    rules = tmp_path / "epistemology.md"
    rules.write_text("---\ndormancy_days: 40\nmirror_model: claude-test\nrecall:\n  embedder: chroma-minilm\n---\n")
    v = Vault(tmp_path)
    assert v.params()[0].dormancy_days == 40
    assert v.settings()["mirror_model"] == "claude-test"
    assert read_config(tmp_path).embedder == "chroma-minilm"
    assert _configured_model(type("M", (), {"vault": v})()) == "claude-test"
    rules.write_text("---\ndormancy_days: [\n---\n")  # broken: defaults, a problem, no settings
    _age(rules, -5)
    params, problems = v.params()
    assert params.dormancy_days == 30 and [p.path for p in problems] == ["epistemology.md"]
    assert v.settings() == {} and read_config(tmp_path).embedder == "wordllama"


def test_every_reader_lists_the_same_notes(tmp_path):
    """`store.paths.note_entries`: the vault, the context cache and recall agree on what a note is."""
    from epimem.recall.manifest import scan
    from epimem.store.paths import note_entries

    b = tmp_path / "beliefs"
    b.mkdir()
    for name in ("tea.md", ".tea.md.epimem-1-2.tmp", ".hidden.md", "notes.txt", "tea.md~"):
        (b / name).write_text("x")
    (b / "folder.md").mkdir()
    assert [e.name for e in note_entries(b)] == ["tea.md"]
    assert list(scan(tmp_path)) == ["beliefs/tea.md"]
    assert note_entries(tmp_path / "missing") == []


def test_a_reader_never_sees_half_of_a_change(tmp_path):
    """validate while another process is between two files of one change: it waits for the
    change and sees it whole (the soak saw an observation linking to a belief not yet written)."""
    import subprocess as _sp
    import sys as _sys
    import time as _time

    from epimem.api.memory import Memory

    mem, _ = Memory.init(tmp_path / "v", today="2026-11-01")
    root = mem.root
    # Another process makes a change: journal first, the observation log, then (0.8 s later)
    # the belief it links to, then the commit, then the journal goes.
    code = r'''
import os, sys, time, subprocess
from pathlib import Path
from epimem.store import journal
from epimem.store.files import VaultLock, lock_path
root = Path(sys.argv[1])
lock = VaultLock(lock_path(root))
lock.acquire()  # as the write path does: the whole change under the vault lock
journal.begin(root, [("observations/2026-11.md", None), ("beliefs/likes-tea.md", None)], subject="x", commit=True)
(root / "observations").mkdir(exist_ok=True)
(root / "observations" / "2026-11.md").write_text(
    "# Observations 2026-11\n\n## obs-20261101-aaaa\n- date: 2026-11-01\n- connects: likes-tea\n"
    "- strength: single\n- evidence: drank tea\n- suggests: likes tea\n- therefore: new belief\n", encoding="utf-8")
print("half", flush=True)
time.sleep(0.8)
(root / "beliefs" / "likes-tea.md").write_text(
    "---\ntitle: Likes tea\nkind: preference\nbasis: behavioral\nconfidence: 0.3\npermanence: durable\n"
    "first: 2026-11-01\nconfirmed:\nchallenged:\nstatus: active\ntags: []\nscope: global\npinned: false\n"
    "supersedes: []\n---\nDrinks tea.\n\n## Evidence\n- 2026-11-01 · single — drank tea "
    "[[observations/2026-11#obs-20261101-aaaa]] (0.30)\n", encoding="utf-8")
subprocess.run(["git", "add", "-A"], cwd=root, check=True)
subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x"], cwd=root, check=True)
journal.end(root)
lock.release()
'''
    p = _sp.Popen([_sys.executable, "-c", code, str(root)], stdout=_sp.PIPE, text=True)
    assert p.stdout.readline().strip() == "half"
    t = _time.monotonic()
    problems = mem.validate()  # a Memory made before the change began (a long-lived server, say)
    waited = _time.monotonic() - t
    p.wait(timeout=30)
    assert p.returncode == 0
    assert [str(x) for x in problems] == []  # whole: the belief and its observation, or neither
    assert waited > 0.3
