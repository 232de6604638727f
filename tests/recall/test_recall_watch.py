"""`epimem watch`: the handler on real files with synthetic change events, and
once end to end with a real watcher process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from recall_support import make_belief, mini_vault, write_belief
from watchfiles import Change

from epimem.recall.api import Recaller
from epimem.recall.index import Index
from epimem.recall.watch import WatchHandler, is_temp_name, relative

pytestmark = pytest.mark.usefixtures("clean_recall_env")


def ids(root, q, **kw):
    return Recaller(root, auto_sync=False).recall(q, **kw).ids


@pytest.fixture
def root(tmp_path):
    r = mini_vault(tmp_path / "v")
    Index(r).rebuild()
    return r


@pytest.fixture
def handler(root):
    said: list[str] = []
    h = WatchHandler(root, echo=said.append)
    h.said = said
    return h


def ev(root, *pairs):
    return {(c, str(root / p)) for c, p in pairs}


def test_noise_is_ignored(root):
    for noise in (".git/index", ".git/objects/ab/cd", ".epimem/recall/manifest.json",
                  ".obsidian/workspace.json", "beliefs/.x.md.swp", "beliefs/x.md~", "beliefs/4913",
                  "beliefs/.#x.md", "beliefs/.x.md.epimem-12-34.tmp", "beliefs/x.md.tmp"):
        assert relative(root, root / noise) is None, noise
    assert relative(root, root / "beliefs" / "x.md") == "beliefs/x.md"
    assert relative(root, "/elsewhere/beliefs/x.md") is None
    assert is_temp_name("#x.md#") and not is_temp_name("x.md")


def test_only_noise_does_nothing(root, handler):
    out = handler.handle(ev(root, (Change.modified, ".git/index"), (Change.added, ".obsidian/app.json")))
    assert out.paths == [] and out.synced is None


def test_atomic_save_by_rename(root, handler):
    target = root / "beliefs" / "terse-answers.md"
    text = target.read_text().replace("without preamble", "in a single crisp sentence")
    tmp = root / "beliefs" / ".terse-answers.md.tmp1234"
    tmp.write_text(text)
    os.replace(tmp, target)
    out = handler.handle(ev(root, (Change.added, "beliefs/.terse-answers.md.tmp1234"),
                            (Change.deleted, "beliefs/.terse-answers.md.tmp1234"),
                            (Change.added, "beliefs/terse-answers.md")))
    assert out.paths == ["beliefs/terse-answers.md"]
    assert out.synced.action == "synced" and out.synced.embedded == 1
    assert ids(root, "single crisp sentence")[0] == "terse-answers"


def test_delete_then_recreate(root, handler):
    p = root / "beliefs" / "tests-first.md"
    text = p.read_text()
    p.unlink()
    # both events in one batch: the file is back, nothing is lost
    p.write_text(text)
    out = handler.handle(ev(root, (Change.deleted, "beliefs/tests-first.md"), (Change.added, "beliefs/tests-first.md")))
    assert out.synced.removed == 0
    assert "tests-first" in ids(root, "failing regression test before the fix")
    # in two batches: removed, then indexed again
    p.unlink()
    assert handler.handle(ev(root, (Change.deleted, "beliefs/tests-first.md"))).synced.removed == 1
    assert "tests-first" not in ids(root, "failing regression test before the fix")
    p.write_text(text)
    assert handler.handle(ev(root, (Change.added, "beliefs/tests-first.md"))).synced.added == 1
    assert "tests-first" in ids(root, "failing regression test before the fix")


def test_malformed_file_is_reported_once_skipped_and_reindexed_when_fixed(root, handler):
    p = root / "beliefs" / "morning-deep-work.md"
    good = p.read_text()
    bad = good.replace("permanence: situational", "permanence: forever")
    p.write_text(bad)
    out = handler.handle(ev(root, (Change.modified, "beliefs/morning-deep-work.md")))
    assert [str(x) for x in out.new_problems] == [
        "beliefs/morning-deep-work.md:6: "
        "'permanence' must be one of stable, durable, situational, unknown, not 'forever'"]
    assert any(s.startswith("beliefs/morning-deep-work.md:6:") for s in handler.said)
    assert p.read_text() == bad
    # another change elsewhere: the same problem is not said again
    write_belief(root, make_belief("new-belief", "New belief", "Something else entirely."))
    out = handler.handle(ev(root, (Change.added, "beliefs/new-belief.md")))
    assert out.new_problems == [] and out.synced.added == 1
    p.write_text(good.replace("focused programming", "focused programming and writing"))
    out = handler.handle(ev(root, (Change.modified, "beliefs/morning-deep-work.md")))
    assert out.fixed == ["beliefs/morning-deep-work.md"] and out.synced.embedded == 1
    assert any("fixed, indexed again" in s for s in handler.said)


def test_commit_hand_edits(vault):
    """--commit: one commit per settled change, named by Memory.commit_hand_edits()."""
    mem = vault
    b = mem.add_belief(title="Prefers small PRs", statement="Keeps pull requests small.", kind="preference",
                       basis="behavioral", permanence="durable", confidence=0.55)
    said: list[str] = []
    h = WatchHandler(mem.root, commit=True, memory=mem, echo=said.append)
    h.start()
    p = mem.root / "beliefs" / f"{b.id}.md"
    p.write_text(p.read_text().replace("confidence: 0.55", "confidence: 0.70"))
    out = h.handle(ev(mem.root, (Change.modified, f"beliefs/{b.id}.md")))
    assert out.commit and out.synced.action == "synced"
    log = subprocess.run(["git", "log", "-1", "--format=%s"], cwd=mem.root, capture_output=True, text=True).stdout
    assert log.strip() == "edit: prefers-small-prs confidence 0.55 → 0.70"
    assert h.handle(ev(mem.root, (Change.modified, f"beliefs/{b.id}.md"))).commit is None  # nothing new
    # a malformed edit is reported and not committed
    p.write_text(p.read_text().replace("confidence: 0.70", "confidence: lots"))
    out = h.handle(ev(mem.root, (Change.modified, f"beliefs/{b.id}.md")))
    assert out.commit is None and out.new_problems
    # tensions are committed too, though not indexed
    (mem.root / "tensions").mkdir(exist_ok=True)
    (mem.root / "tensions" / "2026-11-30-note.md").write_text(
        "---\ndate: 2026-11-30\nbelief: prefers-small-prs\nstatus: unresolved\n---\n# A note\n")
    out = h.handle(ev(mem.root, (Change.added, "tensions/2026-11-30-note.md")))
    assert out.synced is None and out.commit


def test_real_watcher_process(root):
    """End to end: `epimem watch` as its own process notices an editor's save."""
    env = {**os.environ, "EPIMEM_TODAY": "2026-11-30"}
    proc = subprocess.Popen([sys.executable, "-m", "epimem", "--vault", str(root), "watch",
                             "--debounce", "300", "--step", "50"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: [lines.append(ln) for ln in proc.stdout], daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 30
        while not any(ln.startswith("Watching") for ln in lines):
            assert proc.poll() is None, "".join(lines)
            assert time.monotonic() < deadline, "".join(lines)
            time.sleep(0.05)
        p = root / "beliefs" / "conventional-commits.md"
        p.write_text(p.read_text().replace("Every commit message follows Conventional Commits",
                                           "Every commit message follows the gitmoji convention"))
        while not any(ln.startswith("Synced 1 changed file") for ln in lines):
            assert proc.poll() is None, "".join(lines)
            assert time.monotonic() < deadline, "".join(lines)
            time.sleep(0.05)
        assert ids(root, "gitmoji convention", limit=1) == ["conventional-commits"]
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_save_before_the_os_watch_is_set_is_not_missed(root):
    """The editor saves in the moment between the watcher's first sync and the OS watch being
    set: no event will ever come for it, so the watcher syncs once more when the watch is set."""
    from epimem.recall import watch

    reports: list[str] = []

    class SavesRightAfterTheFirstSync(Index):
        def sync(self, *a, **kw):
            rep = super().sync(*a, **kw)
            reports.append(rep.summary())
            if len(reports) == 1:
                p = root / "beliefs" / "conventional-commits.md"
                p.write_text(p.read_text().replace("Every commit message follows Conventional Commits",
                                                   "Every commit message follows the gitmoji convention"))
            return rep

    said: list[str] = []
    stop = threading.Event()
    t = threading.Thread(target=watch.run, args=(root,), daemon=True,
                         kwargs={"index": SavesRightAfterTheFirstSync(root), "echo": said.append,
                                 "stop_event": stop, "debounce_ms": 100, "step_ms": 20})
    t.start()
    try:
        deadline = time.monotonic() + 30
        while not any(s.startswith("Watching") for s in said):
            assert t.is_alive() and time.monotonic() < deadline, said
            time.sleep(0.02)
    finally:
        stop.set()
        t.join(10)
    # the save was indexed without any event for it, before "Watching" was said
    assert any(r.startswith("Synced 1 changed file") for r in reports[1:]), (reports, said)
    assert ids(root, "gitmoji convention", limit=1) == ["conventional-commits"], said
