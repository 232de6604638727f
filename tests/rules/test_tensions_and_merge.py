"""Issue 9 points 7 and 9: tensions the user opens, reopens and watches; tensions closed when
their belief is retired or superseded; merging two beliefs the user says are one."""

import subprocess

import pytest

from epimem.core.errors import Conflict


def _add(mem, title, statement, **kw):
    return mem.add_belief(title=title, statement=statement, kind=kw.pop("kind", "preference"),
                          basis=kw.pop("basis", "behavioral"), permanence=kw.pop("permanence", "durable"), **kw)


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def test_api_open_watch_resolve_reopen(vault):
    _add(vault, "Likes tabs", "Indents with tabs.")
    t = vault.open_tension("likes-tabs", "Used spaces all week in the Go repo")
    assert t.status == "unresolved" and t.belief == "likes-tabs"
    assert vault.watch_tension(t.id).status == "watching"
    vault.resolve_tension(t.id, "gofmt decides in Go")
    with pytest.raises(Conflict):
        vault.watch_tension(t.id)
    assert vault.reopen_tension(t.id, "spaces in Python too").status == "unresolved"
    [again] = vault.tensions()
    assert again.status == "unresolved" and "spaces in Python too" in (vault.root / again.path).read_text()
    assert _git(vault.root, "log", "-1", "--format=%s").strip() == \
        f"tension: reopen {t.id} (resolved → unresolved)"


def test_api_retire_and_supersede_close_open_tensions(vault):
    _add(vault, "Likes tabs", "Indents with tabs.")
    _add(vault, "Uses spaces", "Indents with spaces.")
    t1 = vault.open_tension("likes-tabs", "odd")
    vault.retire("likes-tabs")
    assert {t.id: t.status for t in vault.tensions()}[t1.id] == "resolved"
    assert "likes-tabs was retired" in vault.tensions()[0].resolution
    _add(vault, "Indents by language", "Tabs in Go, spaces in Python.")
    t2 = vault.open_tension("uses-spaces", "tabs in Go")
    vault.supersede(["uses-spaces"], "indents-by-language")
    t = {t.id: t for t in vault.tensions()}[t2.id]
    assert t.status == "resolved" and "superseded by indents-by-language" in t.resolution
    assert _git(vault.root, "status", "--porcelain").strip() == ""  # one commit each


def test_cli_tension_commands(cli, vault):
    _add(vault, "Likes tabs", "Indents with tabs.")
    r = cli("--vault", vault.root, "tension", "open", "likes-tabs", "--note", "spaces in Go", "--json")
    assert r.code == 0, r.err
    tid = r.json()["id"]
    assert r.json()["status"] == "unresolved"
    assert cli("--vault", vault.root, "tension", "watch", tid, "--json").json()["status"] == "watching"
    assert cli("--vault", vault.root, "tension", "resolve", tid, "--note", "ok").code == 0
    assert cli("--vault", vault.root, "tension", "reopen", tid).code == 2  # --note is required
    assert cli("--vault", vault.root, "tension", "reopen", tid, "--note", "again").out.startswith("Reopened")
    assert cli("--vault", vault.root, "belief", "retire", "likes-tabs").code == 0
    ts = cli("--vault", vault.root, "tensions", "--json").json()["tensions"]
    assert ts[0]["status"] == "resolved" and "retired" in ts[0]["resolution"]


@pytest.mark.seed_rules
def test_api_merge_unites_evidence_and_supersedes(vault):
    _add(vault, "Keeps pull requests small", "Splits work into small pull requests.")
    _add(vault, "Prefers small PRs", "Opens small PRs.", confidence=0.45)
    vault.observe([{"connects": "prefers-small-prs", "strength": "confirming", "evidence": "split in three",
                    "session": "a"}])
    t = vault.open_tension("prefers-small-prs", "one big PR last week")
    b = vault.merge("keeps-pull-requests-small", "prefers-small-prs", note="the same thing")
    assert b.supersedes == ("prefers-small-prs",) and b.confidence == 0.30
    kept = vault.belief("keeps-pull-requests-small")
    notes = [e.note for e in kept.evidence]
    assert any("split in three" in n for n in notes)
    assert kept.evidence[-1].kind == "merged" and "prefers-small-prs (0.50)" in kept.evidence[-1].note
    old = vault.belief("prefers-small-prs")
    assert old.status == "superseded" and len(old.evidence) == 3  # its history kept, plus the line
    assert {x.id: x.belief for x in vault.tensions()}[t.id] == "keeps-pull-requests-small"
    assert vault.validate() == []
    assert _git(vault.root, "log", "-1", "--format=%s").strip().startswith(
        "merge: prefers-small-prs → keeps-pull-requests-small")


def test_cli_merge(cli, vault):
    _add(vault, "Keeps pull requests small", "Splits work into small pull requests.")
    _add(vault, "Prefers small PRs", "Opens small PRs.")
    r = cli("--vault", vault.root, "belief", "merge", "keeps-pull-requests-small", "prefers-small-prs", "--json")
    assert r.code == 0, r.err
    assert r.json()["supersedes"] == ["prefers-small-prs"]
    assert cli("--vault", vault.root, "belief", "show", "prefers-small-prs", "--json").json()["status"] == "superseded"
    again = cli("--vault", vault.root, "belief", "merge", "keeps-pull-requests-small", "prefers-small-prs")
    assert again.code == 1 and "superseded" in again.err
