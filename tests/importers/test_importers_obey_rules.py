"""Issue 24, item 6: every importer applies the caps, validation and redaction, and says what it
refused or lowered (rule 18). The reproductions: `import jsonl` of an export whose behavioural
belief was edited to 0.99, and of a belief record with no frontmatter."""

from __future__ import annotations

import json
import subprocess

import pytest

from epimem.api.memory import Memory

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def commits(root) -> int:
    return int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=root, capture_output=True,
                              text=True).stdout)


def exported(vault, cli, tmp_path):
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference", basis="behavioral",
                     permanence="stable")
    vault.add_belief(title="Reviews diffs", statement="Reads the diff before the summary.", kind="workflow",
                     basis="behavioral", permanence="durable")
    out = tmp_path / "export.jsonl"
    assert cli("--vault", vault.root, "export", "--out", out).code == 0
    return [json.loads(ln) for ln in out.read_text().splitlines()], out


def fresh(cli, path):
    assert cli("init", path).code == 0
    return path


def write(path, records) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


@pytest.mark.seed_rules
def test_an_edited_099_behavioural_export_comes_in_at_the_cap(vault, cli, tmp_path):
    recs, out = exported(vault, cli, tmp_path)
    for r in recs:
        if r["type"] == "belief" and r["id"] == "avoids-orms":
            r["text"] = r["text"].replace("confidence: 0.30", "confidence: 0.99")
            r["confidence"] = 0.99
    write(out, recs)
    new = fresh(cli, tmp_path / "new")
    r = cli("--vault", new, "import", "jsonl", out, "--json")
    assert r.code == 0, r.err
    rep = r.json()
    assert any("avoids-orms" in n and "lowered to the cap" in n and "0.99" in n for n in rep["notes"]), rep
    b = Memory(new).belief("avoids-orms")
    assert b.confidence == 0.90
    assert b.evidence[-1].kind == "lowered" and "0.99" in b.evidence[-1].note
    assert Memory(new).validate() == []
    # the text version says it too
    again = fresh(cli, tmp_path / "again")
    text = cli("--vault", again, "import", "jsonl", out).out
    assert "lowered to the cap" in text


def test_a_record_with_no_frontmatter_is_refused_and_said(vault, cli, tmp_path):
    recs, out = exported(vault, cli, tmp_path)
    recs.append({"type": "belief", "id": "no-frontmatter", "text": "Just a line of prose, no frontmatter.\n"})
    write(out, recs)
    new = fresh(cli, tmp_path / "new")
    r = cli("--vault", new, "import", "jsonl", out, "--json")
    assert r.code == 0, r.err
    assert any(x.startswith("beliefs/no-frontmatter.md") for x in r.json()["refused"]), r.json()
    assert not (new / "beliefs/no-frontmatter.md").exists()
    assert (new / "beliefs/avoids-orms.md").exists()
    assert Memory(new).validate() == []
    text = cli("--vault", fresh(cli, tmp_path / "other"), "import", "jsonl", out).out
    assert "Refused by the rules (1)" in text and "no-frontmatter" in text


@pytest.mark.seed_rules
def test_future_dates_an_invalid_rulebook_and_secrets_in_an_export(vault, cli, tmp_path):
    recs, out = exported(vault, cli, tmp_path)
    for r in recs:
        if r["type"] == "belief" and r["id"] == "reviews-diffs":
            r["text"] = r["text"].replace("confirmed:", "confirmed: 2999-01-01", 1)
        if r["type"] == "belief" and r["id"] == "avoids-orms":
            r["text"] = r["text"].replace("Writes SQL by hand.", f"Writes SQL by hand; token {TOKEN}.")
        if r["type"] == "epistemology":
            r["text"] = r["text"].replace("confirm_step: 0.05", "confirm_step: lots")
    write(out, recs)
    new = fresh(cli, tmp_path / "new")
    rep = cli("--vault", new, "import", "jsonl", out, "--json").json()
    assert any("reviews-diffs" in x and "rule 20" in x for x in rep["refused"]), rep
    assert any(x.startswith("epistemology.md") and "confirm_step" in x for x in rep["refused"]), rep
    assert any("redacted" in n and "beliefs/avoids-orms.md" in n for n in rep["notes"]), rep
    assert TOKEN not in (new / "beliefs/avoids-orms.md").read_text()
    assert "confirm_step: lots" not in (new / "epistemology.md").read_text()
    assert Memory(new).validate() == []


def test_a_hand_kept_profile_above_the_cap_is_lowered(vault, cli, tmp_path):
    d = tmp_path / "profile"
    d.mkdir()
    (d / "profile.md").write_text(
        "# Profile\n\n## Avoids ORMs\n`conf:0.99 | first:2026-03-02 | confirmed:2026-04-11 | challenged:— | "
        "perm:stable | basis:behavioral`\n\nWrites SQL by hand.\n\n"
        "## Plans from the future\n`conf:0.40 | first:2999-03-02 | confirmed:— | challenged:— | perm:stable`\n\n"
        "Dated after today.\n")
    n = commits(vault.root)
    r = cli("--vault", vault.root, "import", "epistemic-memory", d, "--json")
    assert r.code == 0, r.err
    rep = r.json()
    assert rep["beliefs"] == ["avoids-orms"]
    assert any("lowered to the cap" in x for x in rep["notes"]) and any("rule 20" in x for x in rep["refused"])
    assert vault.belief("avoids-orms").confidence == 0.90 and commits(vault.root) == n + 1
    assert vault.validate() == []


def test_a_mem0_export_with_a_secret_is_redacted(vault, cli, tmp_path):
    f = tmp_path / "mem0.json"
    f.write_text(json.dumps([{"id": "m1", "memory": f"Deploys with the token {TOKEN}",
                              "created_at": "2026-05-01T10:00:00Z"}]))
    r = cli("--vault", vault.root, "import", "mem0", f, "--json")
    assert r.code == 0, r.err
    [bid] = r.json()["beliefs"]
    assert TOKEN not in (vault.root / f"beliefs/{bid}.md").read_text()


def test_an_export_whose_id_or_month_ends_in_a_newline_names_no_file(vault, cli, tmp_path):
    # `$` matches before a final "\n": a crafted export's "abc\n" made `beliefs/abc\n.md`, and its
    # month "2026-11\n" `observations/2026-11\n.md`. Both are refused, nothing is written.
    out = tmp_path / "crafted.jsonl"
    belief = {"type": "belief", "id": "abc\n", "title": "T", "statement": "S", "kind": "preference",
              "basis": "self-report", "confidence": 0.3, "permanence": "durable", "first": "2026-11-01"}
    obs = {"type": "observation", "id": "obs-20261101-abcd", "month": "2026-11\n", "date": "2026-11-01",
           "evidence": "E", "strength": "single", "connects": "new"}
    for rec in (belief, obs):
        write(out, [rec])
        n = commits(vault.root)
        r = cli("--vault", vault.root, "import", "jsonl", out, "--json")
        assert r.code != 0, r.out
        assert commits(vault.root) == n
        names = [p.name for d in ("beliefs", "observations") for p in (vault.root / d).iterdir()]
        assert not [x for x in names if "\n" in x], names


def test_an_export_whose_session_counter_is_not_one_keeps_the_vaults(vault, cli, tmp_path):
    # The `sessions` record's `text` was written to state/sessions.json as it came: validate then
    # refused the vault's own counter. It is read as a counter first (rule 18), as an accept does.
    out = tmp_path / "crafted.jsonl"
    before = (vault.root / "state/sessions.json").read_text()
    for text in ('{"count": "lots"}', "not json at all\n", "[]"):
        write(out, [{"type": "sessions", "text": text}])
        r = cli("--vault", vault.root, "import", "jsonl", out, "--json")
        assert r.code == 0, r.err
        assert any(x.startswith("state/sessions.json") for x in r.json()["refused"]), r.json()
        assert (vault.root / "state/sessions.json").read_text() == before
        assert vault.validate() == []
