"""Issue 9 point 16: the transcript pass dates observations when they were said, cuts ids
at word boundaries, keeps the user's "you" in quotes, and scopes conventions to the project."""

import shutil
from pathlib import Path

from epimem.core.ids import slugify, text_key

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "transcript.jsonl"


def _copy(tmp_path):
    t = tmp_path / "s.jsonl"
    shutil.copy(FIXTURE, t)
    return t


def test_slugify_cuts_at_a_word_boundary():
    s = slugify("Asks not to use mocks for the database in tests we run a real Postgres in CI")
    assert s == "asks-not-to-use-mocks-for-the-database-in-tests-we-run-a-real"[:len(s)]
    assert not s.endswith("-rea") and len(s) <= 60


def test_api_pass_is_honest_about_when_where_and_who(tmp_path):
    from epimem.api.memory import Memory
    from epimem.api.transcripts import record_from_transcript
    from epimem.claude.transcript import read_transcript

    mem, _ = Memory.init(tmp_path / "v", today="2026-12-05")  # the pass runs days later
    report, _ = record_from_transcript(mem, read_transcript(_copy(tmp_path)))
    assert report.commit
    assert {r.observation.date.isoformat() for r in report.results} == {"2026-11-30"}
    assert (mem.root / "observations" / "2026-11.md").exists()
    created = [mem.belief(r.belief) for r in report.results if r.created]
    assert created
    for b in created:
        words = text_key(b.title).replace(" ", "-")
        assert words.startswith(b.id) and (len(words) == len(b.id) or words[len(b.id)] == "-"), b.id
        if " you " in f" {b.title.lower()} ":
            assert b.title.startswith("Asks: “"), b.title
        assert b.scope == ("webshop" if b.kind == "convention" else "global"), (b.id, b.scope)


def test_cli_pass_dates_from_the_transcript(cli, tmp_path):
    v = tmp_path / "v"
    cli("init", v)
    r = cli("--vault", v, "--today", "2026-12-05", "transcript", _copy(tmp_path), "--json")
    assert r.code == 0, r.err
    ids = [o["id"] for o in r.json()["observations"]]
    assert ids and all(i.startswith("obs-20261130-") for i in ids)
    listed = cli("--vault", v, "--today", "2026-12-05", "belief", "list", "--json", "--scope", "webshop").json()
    assert any(b["scope"] == "webshop" for b in listed["beliefs"])
