"""Git as the audit log: history, diff in words, undo, hand-edit commits."""

import os
import subprocess
import time

import pytest

from epimem.api.memory import EpimemError, Memory


def git(mem, *args) -> str:
    return subprocess.run(["git", *args], cwd=mem.root, capture_output=True, text=True, check=True).stdout


def setup(tmp_path):
    mem, _ = Memory.init(tmp_path / "v", today="2026-11-01")
    mem.add_belief(title="Prefers small PRs", statement="Splits work into small PRs.", kind="preference",
                   basis="behavioral", permanence="durable")
    return mem


@pytest.mark.seed_rules
def test_history_shows_confidence_and_status_over_time(tmp_path):
    mem = setup(tmp_path)
    Memory(mem.root, today="2026-11-05").observe([{"connects": "prefers-small-prs", "strength": "confirming",
                                                   "evidence": "split a refactor", "session": "a"}])
    Memory(mem.root, today="2026-11-09").retire("prefers-small-prs")
    pts = mem.history("prefers-small-prs")
    assert [(p.confidence, p.status, p.op) for p in pts] == [
        (0.30, "active", "add"), (0.35, "active", "observe"), (0.35, "retired", "retire")]
    assert [p.when.date().isoformat() for p in pts] == ["2026-11-01", "2026-11-05", "2026-11-09"]


@pytest.mark.seed_rules
def test_diff_since_date_and_revision_in_words(tmp_path):
    mem = setup(tmp_path)
    rev = git(mem, "rev-parse", "HEAD").strip()
    m2 = Memory(mem.root, today="2026-11-10")
    m2.observe([{"connects": "prefers-small-prs", "strength": "confirming", "evidence": "e", "session": "a"},
                {"connects": "new", "strength": "single", "evidence": "likes tea", "session": "a",
                 "title": "Drinks tea while reviewing", "kind": "preference", "permanence": "situational"}])
    m3 = Memory(mem.root, today="2026-11-12")
    r = m3.observe([{"connects": "prefers-small-prs", "strength": "contradicting", "evidence": "big", "session": "b"}])
    m3.resolve_tension(r.results[0].tension, "fine")
    words = [c.sentence() for c in mem.diff("2026-11-05")]
    assert ("prefers-small-prs: confidence 0.30 → 0.35; confirmed — → 2026-11-10; challenged — → 2026-11-12; "
            "2 evidence lines added") in words
    assert any(w.startswith("belief drinks-tea-while-reviewing added (Drinks tea while reviewing; 0.30") for w in words)
    assert any(w.startswith("tension 2026-11-12-prefers-small-prs added (on prefers-small-prs; resolved")
               for w in words)
    assert "observations 3 recorded" in words
    assert [c.sentence() for c in mem.diff(rev)] == words
    assert [c.sentence() for c in mem.diff("2026-11-11")][0].startswith("prefers-small-prs: challenged")
    with pytest.raises(EpimemError, match="neither a revision nor a date"):
        mem.diff("last tuesday")


@pytest.mark.seed_rules
def test_undo_reverts_last_epimem_commit_with_a_new_commit(tmp_path):
    mem = setup(tmp_path)
    mem.observe([{"connects": "prefers-small-prs", "strength": "confirming", "evidence": "e", "session": "a"}])
    n = len(git(mem, "log", "--format=%H").split())
    sha, subject = mem.undo()
    assert subject.startswith("observe: confirming")
    assert mem.belief("prefers-small-prs").confidence == 0.30
    assert len(git(mem, "log", "--format=%H").split()) == n + 1
    assert "Epimem-Reverts: " in git(mem, "log", "-1", "--format=%B")
    assert not (mem.root / "observations/2026-11.md").exists()


@pytest.mark.seed_rules
def test_undo_skips_user_commits_and_refuses_over_conflicting_edits(tmp_path):
    mem = setup(tmp_path)
    (mem.root / "notes.md").write_text("mine\n")
    git(mem, "add", "notes.md")
    git(mem, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "my own commit")
    sha, subject = mem.undo()
    assert subject.startswith("belief: add prefers-small-prs")
    assert (mem.root / "notes.md").exists()
    mem2 = setup(tmp_path / "b")
    p = mem2.root / "beliefs/prefers-small-prs.md"
    mem2.observe([{"connects": "prefers-small-prs", "strength": "confirming", "evidence": "e", "session": "a"}])
    p.write_text(p.read_text().replace("confidence: 0.35", "confidence: 0.36"))
    with pytest.raises(EpimemError, match="cannot undo"):
        mem2.undo()
    assert "confidence: 0.36" in p.read_text()
    assert git(mem2, "status", "--porcelain").strip() == "M beliefs/prefers-small-prs.md"


@pytest.mark.seed_rules
def test_commit_hand_edits_names_beliefs_and_fields(tmp_path):
    mem = setup(tmp_path)
    p = mem.root / "beliefs/prefers-small-prs.md"
    p.write_text(p.read_text().replace("confidence: 0.30", "confidence: 0.70").replace(
        "permanence: durable", "permanence: stable"))
    sha, changes, problems = mem.commit_hand_edits()
    subject = git(mem, "log", "-1", "--format=%s").strip()
    assert subject == "edit: prefers-small-prs confidence 0.30 → 0.70, permanence durable → stable"
    assert "Epimem-Op: edit" in git(mem, "log", "-1", "--format=%B")
    assert mem.commit_hand_edits() == (None, [], [])


def test_commit_hand_edits_leaves_malformed_files_out(tmp_path):
    mem = setup(tmp_path)
    (mem.root / "beliefs/broken.md").write_text("---\ntitle: [\n---\n")
    (mem.root / "beliefs/fine.md").write_text(
        "---\ntitle: Fine\nkind: trait\nbasis: behavioral\nconfidence: 0.3\npermanence: unknown\n"
        "first: 2026-11-01\n---\nOk.\n")
    sha, changes, problems = mem.commit_hand_edits()
    assert [str(p).split(":")[0] for p in problems] == ["beliefs/broken.md"]
    assert "?? beliefs/broken.md" in git(mem, "status", "--porcelain")
    assert "belief fine added" in changes[0].sentence()


def test_commits_work_without_a_git_identity(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    from epimem.store import gitrun
    gitrun._identity.clear()
    mem = setup(tmp_path)
    assert "epimem" in git(mem, "log", "-1", "--format=%an")


@pytest.mark.seed_rules
def test_undo_again_goes_further_back_and_redo_reapplies(tmp_path):
    # SPEC §4: a second undo is not a redo of the first; `redo` is.
    mem = setup(tmp_path)
    mem.observe([{"connects": "prefers-small-prs", "strength": "confirming", "evidence": "e", "session": "a"}])
    mem.undo()
    assert mem.belief("prefers-small-prs").confidence == 0.30
    mem.undo()
    assert git(mem, "log", "-1", "--format=%s").strip() == \
        "undo: belief: add prefers-small-prs (0.30, behavioral, durable)"
    assert not (mem.root / "beliefs/prefers-small-prs.md").exists()
    sha, subject = mem.redo()
    assert subject == "belief: add prefers-small-prs (0.30, behavioral, durable)"
    assert mem.belief("prefers-small-prs").confidence == 0.30
    mem.redo()
    assert git(mem, "log", "-1", "--format=%s").strip() == "redo: observe: confirming → prefers-small-prs (0.30 → 0.35)"
    assert mem.belief("prefers-small-prs").confidence == 0.35
    with pytest.raises(EpimemError, match="nothing to redo"):
        mem.redo()


@pytest.mark.seed_rules
def test_undo_leaves_what_the_user_staged_out_of_its_commit(tmp_path):
    # Undo commits exactly the files it takes back (`commit --only`): a file the user
    # staged stays staged, and out of epimem's commit.
    mem = setup(tmp_path)
    mem.observe([{"connects": "prefers-small-prs", "strength": "confirming", "evidence": "e", "session": "a"}])
    (mem.root / "notes.md").write_text("mine\n")
    git(mem, "add", "notes.md")
    mem.undo()
    assert git(mem, "diff", "--cached", "--name-only").strip() == "notes.md"
    assert "notes.md" not in git(mem, "show", "--name-only", "--format=", "HEAD")
    assert mem.belief("prefers-small-prs").confidence == 0.30


def test_hand_edited_observation_is_named_in_the_commit_and_the_diff(tmp_path):
    mem = setup(tmp_path)
    mem.observe([{"connects": "prefers-small-prs", "strength": "confirming", "evidence": "split it", "session": "a"}])
    log = mem.root / "observations/2026-11.md"
    log.write_text(log.read_text().replace("split it", "split it into three"))
    sha, changes, _ = mem.commit_hand_edits()
    [c] = [c for c in changes if c.what == "observation"]
    assert c.action == "edited" and "append-only" in c.sentence()
    assert "observation obs-20261101-" in git(mem, "log", "-1", "--format=%s")
    assert any(x.what == "observation" for x in mem.diff("HEAD~1"))


def test_a_git_that_cannot_run_is_an_epimem_error(tmp_path, monkeypatch):
    from epimem.core.errors import StorageError
    from epimem.store import git as store_git

    mem = setup(tmp_path)

    def gone(*a, **k):
        raise FileNotFoundError(2, "No such file or directory", "git")
    monkeypatch.setattr(store_git, "show_many", gone)
    with pytest.raises(StorageError, match="cannot read the vault's history"):
        mem.history("prefers-small-prs")
    with pytest.raises(StorageError, match="cannot read the vault's history"):
        mem.diff("2026-10-01")


# --- values that reach a commit message (issue: trailer injection) ----------------------------

def test_a_newline_in_a_session_id_cannot_inject_a_trailer(tmp_path):
    from epimem.claude.hook import commit_session
    from epimem.store import git as gitmod

    mem = setup(tmp_path)
    (mem.root / "state").mkdir(exist_ok=True)
    (mem.root / "state" / "sessions.json").write_text('{"count": 7}\n', encoding="utf-8")
    commit_session(str(mem.root), "abc\n\nEpimem-Op: init\nEpimem-Beliefs: everything")
    raw = git(mem, "log", "-1", "--format=%B")
    assert "\nEpimem-Op: init" not in raw
    assert [ln for ln in raw.splitlines() if ln.startswith("Epimem-Op:")] == ["Epimem-Op: session"]
    last = gitmod.log(mem.root, limit=1)[0]
    assert last.trailers["Epimem-Op"] == "session"
    assert last.trailers["Epimem-Session"] == "abc Epimem-Op: init Epimem-Beliefs: everything"
    assert "Epimem-Beliefs" not in last.trailers


def test_trailers_are_read_only_from_epimems_own_block():
    from epimem.store.git import message, one_line, trailers_of

    msg = message("subject\nEpimem-Op: init", op="observe", body="Epimem-Op: init\nsaid so\n\nmore",
                  session="s1\r\nEpimem-Op: x", extra={"Epimem-Observations\nEpimem-Op": "a\nb"})
    body = msg.split("\n\n", 1)[1]
    t = trailers_of(body)
    assert t["Epimem-Op"] == "observe"
    assert t["Epimem-Session"] == "s1 Epimem-Op: x"
    assert t["Epimem-Observations-Epimem-Op"] == "a b"
    assert msg.splitlines()[0] == "subject Epimem-Op: init"
    assert trailers_of("Epimem-Op: init\nwritten by hand") == {}
    assert one_line("a\x00b\u2028c" + "x" * 600).startswith("a b c") and len(one_line("y" * 600)) == 500


# --- git's own index.lock ----------------------------------------------------------------------

def _git_holding_the_index_lock(mem, seconds: int):
    """A real `git commit` waiting in its editor: git holds `.git/index.lock` all that time."""
    (mem.root / "scratch.txt").write_text("x\n", encoding="utf-8")
    subprocess.run(["git", "add", "scratch.txt"], cwd=mem.root, check=True)
    env = {**os.environ, "GIT_EDITOR": f"sleep {seconds}; true"}
    p = subprocess.Popen(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-a"],
                         cwd=mem.root, env=env, start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lock = mem.root / ".git" / "index.lock"
    for _ in range(200):
        if lock.exists():
            break
        time.sleep(0.02)
    assert lock.exists()
    return p, lock


def _confirm(mem):
    return mem.observe([{"connects": "prefers-small-prs", "strength": "confirming", "evidence": "split it",
                         "session": "s"}])


def test_a_lock_left_by_a_killed_git_is_removed_and_said(tmp_path, caplog):
    import signal

    mem = setup(tmp_path)
    p, lock = _git_holding_the_index_lock(mem, 60)
    os.killpg(p.pid, signal.SIGKILL)  # git and its editor die; git's lock stays behind
    p.wait()
    assert lock.exists()
    t = time.monotonic()
    with caplog.at_level("WARNING", logger="epimem"):
        r = _confirm(mem)
    assert r.commit and time.monotonic() - t < 8  # was: 31 s, then git's "remove the file manually"
    assert not lock.exists()
    assert "no longer running" in caplog.text


@pytest.mark.slow
def test_a_lock_a_running_git_holds_is_never_removed(tmp_path):
    mem = setup(tmp_path)
    p, lock = _git_holding_the_index_lock(mem, 5)
    inode = lock.stat().st_ino
    t = time.monotonic()
    r = _confirm(mem)  # waits for the user's git, then commits
    assert p.wait(timeout=30) is not None
    assert time.monotonic() - t >= 4
    assert r.commit
    # The user's git found its own lock where it left it: no "index.lock: No such file" from it.
    assert inode  # the lock existed; epimem waited instead of unlinking it


def test_head_sha_reads_loose_packed_and_detached_heads_like_git(tmp_path):
    from epimem.store.git import head_sha

    mem = setup(tmp_path)
    want = git(mem, "rev-parse", "HEAD").strip()
    assert head_sha(mem.root) == want
    git(mem, "pack-refs", "--all")
    assert not (mem.root / ".git" / "refs" / "heads" / "main").exists() or head_sha(mem.root) == want
    assert head_sha(mem.root) == want
    git(mem, "checkout", "-q", "--detach")
    assert head_sha(mem.root) == want


def test_a_replace_of_a_file_git_never_saw_is_still_committed(tmp_path):
    # `commit --only` skips `git add` for replaced files; one the user made and never committed
    # is not tracked, and the commit falls back to adding it.
    from epimem.store import transaction as tx
    from epimem.store.files import stat_key

    mem = setup(tmp_path)
    p = mem.root / "reviews" / "by-hand.md"
    p.parent.mkdir(exist_ok=True)
    p.write_text("# mine\n", encoding="utf-8")
    tx.apply(mem.root, [tx.replace("reviews/by-hand.md", "# mine, updated\n", stat_key(p))],
             tx.Commit("review: updated", "review"))
    assert git(mem, "show", "HEAD:reviews/by-hand.md") == "# mine, updated\n"
    assert git(mem, "status", "--porcelain").strip() == ""


def test_the_attributes_guard_is_written_once_when_two_first_runs_race(tmp_path):
    """`ensure_guarded` runs outside the vault lock (a read may be a cloned vault's first command),
    so two processes could both see the guard missing and both append it. The check and the
    append happen under the file's own lock: a second writer waits, reads again, and adds nothing."""
    import fcntl
    import threading

    from epimem.store import drivers

    mem = setup(tmp_path)
    attrs = mem.root / ".git" / "info" / "attributes"
    attrs.write_text("*.png binary\n")  # the user's own line, no guard yet
    done = []
    with open(attrs, "r+", encoding="utf-8") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # the other first run, between its read and its append
        t = threading.Thread(target=lambda: done.append(drivers.ensure_guarded(mem.root)))
        t.start()
        t.join(0.3)
        assert t.is_alive(), "the second writer did not wait for the file's lock"
        held.seek(0, os.SEEK_END)
        held.write(drivers.GUARD)
        held.flush()
        fcntl.flock(held, fcntl.LOCK_UN)
    t.join(5)
    text = attrs.read_text()
    assert done == [False] and text.count(drivers.GUARD_MARK) == 1 and text.startswith("*.png binary\n")
