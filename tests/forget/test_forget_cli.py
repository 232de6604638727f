"""`epimem forget` as a user runs it, on a real vault in a real git repository (SPEC §15, issue 29 item 3)."""

from __future__ import annotations

import json

import pytest
from forgetting import SECRET, TYPED, all_objects, assert_no_trace, export_text, files_holding, git, rich_vault

from epimem.api.memory import Memory
from epimem.core.errors import Conflict, InputError


@pytest.fixture
def mem(vault):
    return rich_vault(vault)


def _head(root) -> str:
    return git(root, "rev-parse", "HEAD").stdout.decode().strip()


def test_forget_never_runs_without_a_confirmation(mem, cli):
    """The adversary: a model runs the command it was not given, in its own (non-interactive) shell."""
    head = _head(mem.root)
    r = cli("--vault", mem.root, "forget", "prefers-tabs")
    assert r.code == 1 and "confirmation" in r.err and "--yes" in r.err
    assert "beliefs/prefers-tabs.md — tombstone" in r.out  # the plan is shown, for the user to say yes to
    r = cli("--vault", mem.root, "forget", "prefers-tabs", "--purge", "--json")
    assert r.code == 1 and r.json()["done"] is False
    assert _head(mem.root) == head and mem.belief("prefers-tabs").status != "retired"
    assert git(mem.root, "status", "--porcelain").stdout == b""
    # The API asks for the plan's token: a plan of another vault state, or no token, does nothing.
    p = mem.forget_plan(["prefers-tabs"])
    with pytest.raises(InputError):
        mem.forget(p, confirm="yes")
    mem.observe([{"connects": "short-prs", "strength": "complicating", "evidence": "Merged one big PR.",
                  "basis": "behavioral", "session": "s9"}])
    with pytest.raises(Conflict, match="changed since the plan"):
        mem.forget(p, confirm=p.token)
    assert mem.belief("prefers-tabs").kind != "forgotten"


def test_forget_leaves_a_tombstone_and_takes_the_text_out_of_the_work_tree(mem, cli):
    r = cli("--vault", mem.root, "forget", "prefers-tabs", "--yes")
    assert r.code == 0, r.err
    b = mem.belief("prefers-tabs")
    assert (b.status, b.kind, b.title) == ("retired", "forgotten", "Forgotten")
    assert files_holding(mem.root / "beliefs", SECRET.encode()) == []
    tracked = [p for p in git(mem.root, "ls-files").stdout.decode().split() if p]
    for rel in tracked:
        text = (mem.root / rel).read_text(encoding="utf-8", errors="replace")
        assert SECRET not in text and "Reformatted a file with tabs" not in text, rel
    log = (mem.root / "observations/2026-11.md").read_text()
    assert log.count("## obs-") == 3 and log.count("- forgotten: 2026-11-30") == 2  # the stubs keep their place
    assert "Split a refactor into three" in log  # another belief's observation stays
    assert not list((mem.root / "tensions").glob("*.md"))  # the tension on it went
    old = mem.belief("old-editor")
    assert [e.note for e in old.evidence if e.link == "beliefs/prefers-tabs"] == ["forgotten"]
    review = next((mem.root / "reviews").glob("*.md")).read_text().split("\n---\n", 1)[1]  # the body: the
    assert "prefers-tabs" not in review and "Short pull requests" in review  # frontmatter keeps the id
    assert [x.id for x in mem.beliefs()] == ["short-prs"]
    assert mem.validate() == []
    assert SECRET not in export_text(mem)
    # the caches under .epimem/ were dropped and rebuilt from the files
    assert files_holding(mem.root / ".epimem", SECRET.encode()) == []
    # The history still has it: that is what --purge is for, and the plan said so.
    assert SECRET.encode() in all_objects(mem.root)
    assert "--purge" in r.out
    # An assistant cannot write about it again.
    with pytest.raises(Conflict, match="forgotten"):
        mem.observe([{"connects": "prefers-tabs", "strength": "confirming", "evidence": "Tabs again.",
                      "basis": "behavioral", "session": "s10"}])
    again = cli("--vault", mem.root, "forget", "prefers-tabs", "--yes")
    assert again.code == 1 and "forgotten already" in again.err


@pytest.mark.seed_rules
def test_purge_says_exactly_which_commits_change_and_leaves_no_trace(mem, cli):
    root = mem.root
    before = set(git(root, "rev-list", "--all").stdout.decode().split())
    # What changes, worked out apart from the product: every commit whose own change (against its first
    # parent) holds the belief's file, its text or one of its observations' ids, or whose message holds the text.
    touched = set()
    for sha in before:
        diff = git(root, "show", "--format=%B", "-m", "--first-parent", "--raw", "--no-abbrev", sha).stdout
        blobs = [ln.split()[3] for ln in diff.decode().splitlines() if ln.startswith(":")]
        body = diff + b"".join(git(root, "cat-file", "-p", bl).stdout for bl in blobs if set(bl) != {"0"})
        if SECRET.encode() in body or b"beliefs/prefers-tabs.md" in diff or b"[[prefers-tabs]]" in body:
            touched.add(sha)
    plan = mem.forget_plan(["prefers-tabs"], purge=True)
    own = {c.sha for c in plan.commits if c.how != "parents"}
    assert own == touched
    r = cli("--vault", root, "forget", "prefers-tabs", "--purge", "--yes", "--json")
    assert r.code == 0, r.err
    out = r.json()
    # what the plan listed, and the forget commit made after it, are what got new ids
    assert out["done"] and {c["sha"] for c in out["commits"]} | {out["commit"]} == set(out["rewritten"])
    assert_no_trace(root, SECRET, "Reformatted a file with tabs", "Indents with tabs", old_commits=before)
    assert not before & set(git(root, "rev-list", "--all").stdout.decode().split()) - \
        {c for c in before if c not in out["rewritten"]}
    assert SECRET not in export_text(Memory(root))
    # the vault is whole: fsck, a clean tree, valid files, the other beliefs' history untouched in content
    git(root, "fsck", "--full", "--strict")
    assert git(root, "status", "--porcelain").stdout == b""
    assert Memory(root).validate() == []
    assert Memory(root).belief("short-prs").confidence == pytest.approx(0.35)
    rec = (root / out["record"]).read_text()
    assert SECRET not in rec and "prefers-tabs" in rec
    log = git(root, "log", "--format=%s").stdout.decode()
    # the title edit changed nothing but the belief: nothing is left of it; the add superseded another: kept
    assert "forget: history purged" in log and "edit: prefers-tabs" not in log and "belief: add prefers-tabs" in log


def test_purge_text_removes_a_secret_typed_anywhere(mem, cli):
    root = mem.root
    p = root / "beliefs/short-prs.md"
    p.write_text(p.read_text().replace("title: Short pull requests", f"title: {TYPED}")
                 + f"\n<!-- note to self: {TYPED} -->\n")
    assert cli("--vault", root, "commit").code == 0
    git(root, "commit", "--allow-empty", "-qm", f"a message that quotes {TYPED}")
    git(root, "tag", "-a", "before-purge", "-m", f"tagged with {TYPED}")
    before = set(git(root, "rev-list", "--all").stdout.decode().split())
    r = cli("--vault", root, "forget", "--purge-text", "-", "--yes", stdin=TYPED + "\n")
    assert r.code == 0, r.err
    assert TYPED not in r.out + r.err  # never shown back
    assert_no_trace(root, TYPED, old_commits=before)
    b = Memory(root).belief("short-prs")
    assert b.title == "[forgotten]" and b.status == "active"  # the YAML still reads: quoted where it must be
    assert Memory(root).validate() == []
    assert git(root, "tag", "-l").stdout.decode().split() == ["before-purge"]  # the tag follows its commit
    # the belief that held the secret in its statement keeps everything else
    assert SECRET in (root / "beliefs/prefers-tabs.md").read_text()


def test_bad_texts_are_refused_before_anything(mem, cli):
    head = _head(mem.root)
    for text, why in (("ab", "fewer than"), ("two\nlines", "one line")):
        with pytest.raises(InputError, match=why):
            mem.forget_plan([], texts=[text])
    r = cli("--vault", mem.root, "forget", "no-such-belief", "--yes")
    assert r.code == 1 and "no belief 'no-such-belief'" in r.err
    r = cli("--vault", mem.root, "forget", "../etc/passwd", "--yes")
    assert r.code == 1
    assert _head(mem.root) == head


def test_forget_refuses_a_vault_with_uncommitted_edits(mem, cli):
    p = mem.root / "beliefs/short-prs.md"
    p.write_text(p.read_text() + "\nA hand edit.\n")
    r = cli("--vault", mem.root, "forget", "prefers-tabs", "--purge", "--yes")
    assert r.code == 1 and "not committed" in r.err and "beliefs/short-prs.md" in r.err
    assert "A hand edit." in p.read_text()


def test_a_purge_keeps_a_session_counted_since_the_last_commit(mem, cli):
    assert cli("--vault", mem.root, "forget", "prefers-tabs", "--yes").code == 0
    mem.session_start()
    mem.session_start()  # the day's first count is committed on its own; the second waits for a commit
    counted = (mem.root / "state/sessions.json").read_text()
    assert git(mem.root, "status", "--porcelain").stdout  # the hook's count rides along with the next commit
    assert cli("--vault", mem.root, "forget", "prefers-tabs", "--purge", "--yes").code == 0  # no commit of its own
    assert (mem.root / "state/sessions.json").read_text() == counted


@pytest.mark.slow  # the real embedding model and a real Chroma store
def test_the_recall_index_and_chroma_hold_nothing_of_it_after_a_purge(mem, cli, monkeypatch):
    monkeypatch.setenv("EPIMEM_CHROMA_UPDATE", "wait")  # Chroma written inside the command, not later
    root = mem.root
    assert cli("--vault", root, "index", "rebuild").code == 0
    held = files_holding(root / ".epimem", SECRET.encode())
    assert any("chroma" in h for h in held) and any("recall" in h for h in held), held  # the test can fail
    r = cli("--vault", root, "forget", "prefers-tabs", "--purge", "--yes")
    assert r.code == 0, r.err
    assert "recall index was erased and rebuilt" in r.out
    assert files_holding(root / ".epimem", SECRET.encode()) == []
    assert (root / ".epimem" / "chroma").is_dir() and (root / ".epimem" / "recall" / "manifest.json").exists()
    found = cli("--vault", root, "recall", "tabs indentation editor", "--json", "--observations").json()
    assert all(h["id"] != "prefers-tabs" for h in found["results"])
    hits = cli("--vault", root, "recall", SECRET, "--json", "--observations").json()["results"]
    assert SECRET not in str(hits) and "Reformatted" not in str(hits)
    assert_no_trace(root, SECRET)


def test_a_purge_keeps_this_machines_entry_in_the_session_counter(mem, cli):
    """The counter is per machine (SPEC §1.4): a purge drops the caches under .epimem/, never the
    clone's machine id, so the next session counts on this machine's entry, not on a new one."""
    root = mem.root
    had = json.loads((root / "state/sessions.json").read_text())["count"]  # the sessions rich_vault counted
    mem.session_start(session="before-purge")
    mid = (root / ".epimem/machine").read_text()
    assert cli("--vault", root, "forget", "prefers-tabs", "--purge", "--yes").code == 0
    assert (root / ".epimem/machine").read_text() == mid
    Memory(root).session_start(session="after-purge")
    counter = json.loads((root / "state/sessions.json").read_text())
    assert list(counter["machines"]) == [mid.strip()] and counter["machines"][mid.strip()] == had + 2
    assert {"before-purge", "after-purge"} <= set(counter.get("counted", {}))


def test_a_tombstone_is_never_dated_in_the_future(tmp_path, monkeypatch, cli):
    """Rule 20: the tombstone's and the stubs' day is the machine's, whatever `--today` says; a
    future `--today` writes nothing (the history is not rewritten either)."""
    from datetime import date, timedelta

    from vaults import new_vault

    real = date.today()
    m = rich_vault(new_vault(tmp_path / "vault", today=(real - timedelta(days=5)).isoformat()))
    monkeypatch.delenv("EPIMEM_TEST_CLOCK", raising=False)
    monkeypatch.delenv("EPIMEM_TODAY", raising=False)
    head = _head(m.root)
    future = (real + timedelta(days=30)).isoformat()
    r = cli("--vault", m.root, "--today", future, "forget", "prefers-tabs", "--purge", "--yes")
    assert r.code == 1 and "rule 20" in r.err
    assert _head(m.root) == head and SECRET.encode() in all_objects(m.root)
    assert cli("--vault", m.root, "forget", "prefers-tabs", "--yes").code == 0
    text = (m.root / "beliefs/prefers-tabs.md").read_text()
    assert f"forgotten: {real.isoformat()}" in text and future not in text
    log = next((m.root / "observations").glob("*.md")).read_text()
    assert log.count(f"- forgotten: {real.isoformat()}") == 2


def test_what_git_ignores_under_the_vault_loses_it_too(mem, cli):
    """Every file under the vault, not only git's: a note the user deleted in Obsidian (kept in the
    ignored `.trash/`) and Obsidian's ignored layout file hold a typed secret and what the belief said."""
    root = mem.root
    (root / ".trash").mkdir()
    trashed = root / ".trash" / "scratch.md"
    trashed.write_text(f"# Scratch\n\nThe key was {TYPED}. Indents with tabs; mentioned {SECRET} once.\n")
    layout = root / ".obsidian" / "workspace.json"
    layout.parent.mkdir()
    layout.write_text(f'{{"lastOpenFiles": ["beliefs/prefers-tabs.md"], "search": "{TYPED}"}}\n')
    assert git(root, "status", "--porcelain").stdout == b""  # both ignored: nothing to commit first
    plan = mem.forget_plan(["prefers-tabs"], texts=[TYPED])
    assert {(c.path, c.what) for c in plan.files} >= {(".trash/scratch.md", "text replaced (not in git)"),
                                                      (".obsidian/workspace.json", "text replaced (not in git)")}
    r = cli("--vault", root, "forget", "prefers-tabs", "--purge-text", TYPED, "--yes")
    assert r.code == 0, r.err
    assert_no_trace(root, TYPED, SECRET, "Indents with tabs")
    assert trashed.read_text().startswith("# Scratch\n") and "[forgotten]" in trashed.read_text()
    import json

    assert json.loads(layout.read_text())["lastOpenFiles"] == ["beliefs/prefers-tabs.md"]  # still valid JSON
    assert git(root, "status", "--porcelain").stdout == b""  # they stay out of git
