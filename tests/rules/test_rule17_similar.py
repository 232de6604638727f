"""Rule 17: a new belief close to an active one is not created silently."""

import json
import subprocess

import pytest

pytestmark = pytest.mark.usefixtures("clean_recall_env")

NEAR = {"connects": "new", "strength": "single", "title": "Prefers hand-written SQL over an ORM",
        "kind": "preference", "permanence": "stable", "basis": "behavioral", "session": "n1",
        "evidence": "Rewrote a GORM query as plain SQL.", "suggests": "Writes SQL by hand rather than use an ORM."}


def _head(root):
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout


def test_api_holds_back_a_near_duplicate_and_writes_nothing(sample_vault):
    from epimem.api.memory import Memory

    mem = Memory(sample_vault)
    head = _head(sample_vault)
    other = {"connects": "sql-over-orm", "strength": "confirming", "evidence": "Used sqlc again.",
             "basis": "behavioral", "session": "n1"}
    r = mem.observe([other, NEAR])
    assert r.commit is None and r.held
    held = r.results[1]
    assert held.similar[0]["id"] == "sql-over-orm" and held.similar[0]["similarity"] == 1.0  # same title
    assert "rule 17" in held.reason and "not recorded" in r.results[0].reason
    assert _head(sample_vault) == head
    assert not (sample_vault / "beliefs" / "prefers-hand-written-sql-over-an-orm.md").exists()
    assert mem.belief("sql-over-orm").confidence == 0.35  # the other observation was not applied either
    # a paraphrase, not the same words, is caught by similarity
    para = dict(NEAR, title="Writes raw SQL instead of using an ORM", session="n2")
    r = mem.observe([para])
    assert r.held and r.results[0].similar[0]["id"] == "sql-over-orm"
    assert 0.45 <= r.results[0].similar[0]["similarity"] < 1.0
    # insisting creates it
    r = mem.observe([dict(para, new_despite_similar=True)])
    assert r.commit and r.results[0].created


def test_api_an_unrelated_new_belief_is_created(sample_vault):
    from epimem.api.memory import Memory

    r = Memory(sample_vault).observe([dict(NEAR, title="Keeps a paper notebook for sketches",
                                           suggests="Sketches designs on paper first.")])
    assert r.commit and r.results[0].created and not r.results[0].similar


def test_threshold_is_a_parameter(sample_vault):
    from epimem.api.memory import Memory

    p = sample_vault / "epistemology.md"
    p.write_text(p.read_text().replace("similar_threshold: 0.45", "similar_threshold: 0.99"))
    para = dict(NEAR, title="Writes raw SQL instead of using an ORM")
    assert Memory(sample_vault).observe([para]).commit


def test_cli_lists_similar_and_exits_1(cli, sample_vault):
    r = cli("--vault", sample_vault, "observe", "--connects", "new", "--strength", "single",
            "--title", "Prefers hand-written SQL over an ORM", "--kind", "preference",
            "--evidence", "Rewrote a GORM query as plain SQL.", "--json")
    assert r.code == 1
    d = r.json()
    assert d["commit"] is None and d["held"] and d["observations"][0]["similar"][0]["id"] == "sql-over-orm"
    r = cli("--vault", sample_vault, "observe", "--connects", "new", "--strength", "single",
            "--title", "Prefers hand-written SQL over an ORM", "--kind", "preference",
            "--evidence", "Rewrote a GORM query as plain SQL.")
    assert r.code == 1 and "similar: sql-over-orm" in r.out and "--new-despite-similar" in r.out
    r = cli("--vault", sample_vault, "observe", "--connects", "new", "--strength", "single",
            "--title", "Prefers hand-written SQL over an ORM", "--kind", "preference",
            "--evidence", "Rewrote a GORM query as plain SQL.", "--new-despite-similar", "--json")
    assert r.code == 0 and r.json()["observations"][0]["created"]
    bad = cli("--vault", sample_vault, "observe", "--input", "-",
              stdin=json.dumps([dict(NEAR, new_despite_similar="yes")]))
    assert bad.code == 1 and "new_despite_similar" in bad.err


def test_transcript_pass_connects_to_the_similar_belief_instead_of_creating_one(vault, tmp_path, cli):
    import shutil
    from pathlib import Path

    from epimem.api.transcripts import record_from_transcript
    from epimem.claude.transcript import read_transcript

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "transcript.jsonl"
    t = tmp_path / "s.jsonl"
    shutil.copy(fixture, t)
    vault.add_belief(title="Makes small commits, one concern per commit",
                     statement="Keeps each commit small and about one concern.", kind="workflow",
                     basis="behavioral", permanence="durable")
    before = {b.id for b in vault.beliefs()}
    report, notes = record_from_transcript(vault, read_transcript(t))
    assert report.commit
    titles = [b.title for b in vault.beliefs() if b.id not in before]
    assert not any("small commits" in t.lower() for t in titles), titles  # no near-duplicate created
    linked = [r for r in report.results if r.belief == "makes-small-commits-one-concern-per-commit"]
    assert linked and all(r.after == r.before for r in linked)  # reinforcement: no number moved
    assert any("rule 17" in n for n in notes)


def test_cli_transcript_pass_connects_too(cli, vault, tmp_path):
    import shutil
    from pathlib import Path

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "transcript.jsonl"
    t = tmp_path / "s.jsonl"
    shutil.copy(fixture, t)
    vault.add_belief(title="Makes small commits, one concern per commit",
                     statement="Keeps each commit small and about one concern.", kind="workflow",
                     basis="behavioral", permanence="durable")
    r = cli("--vault", vault.root, "transcript", t, "--json")
    assert r.code == 0, r.err
    assert "makes-small-commits-one-concern-per-commit" in [o["belief"] for o in r.json()["observations"]]
    assert not any("small-commits" in (o["belief"] or "") and o["created"] for o in r.json()["observations"])
