"""Rule 21: a file whose hand edit breaks a rule is read everywhere as its last valid state, with
one line saying that an edit was refused and why; no reader presents a number `validate` refuses.

The reproduction of issue 24 (item 5): a belief edited by hand to `confidence: 0.99` (basis
behavioral). `epimem commit` leaves it out (rule 18), yet `belief show`, `belief list`, `recall`
("0.99 factual"), the portrait and gut-check all used 0.99. Here a model edits the file as its
Edit tool does and reads it back through every front end.
"""

from __future__ import annotations

import json

import anyio
import pytest
from readers_support import edit_in_place, export_records, hook_context, mcp_reads, page

LINE = ("beliefs/avoids-orms.md: an edit was refused, so it is shown as last committed: "
        "confidence 0.99 is above the cap for basis 'behavioral' (0.90)")


def shows_099(text: str) -> bool:
    """Whether a reader presents 0.99 anywhere but in the line that says the edit was refused."""
    return "0.99" in text.replace("confidence 0.99 is above", "")


@pytest.fixture
def orms(vault):
    """A committed behavioural belief at 0.30, then the model's hand edit to 0.99."""
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand rather than through an ORM.",
                     kind="preference", basis="behavioral", permanence="durable")
    edit_in_place(vault.root / "beliefs" / "avoids-orms.md", "confidence: 0.30", "confidence: 0.99")
    return vault


@pytest.mark.seed_rules
def test_commit_still_refuses_the_edit(cli, orms):
    r = cli("--vault", orms.root, "commit")
    assert r.out.strip() == "Nothing to commit." and "rule 18" in r.err
    assert "confidence: 0.99" in (orms.root / "beliefs" / "avoids-orms.md").read_text()  # the edit is kept


@pytest.mark.seed_rules
def test_the_cli_shows_the_committed_state_and_says_why(cli, orms):
    v = orms.root
    r = cli("--vault", v, "belief", "show", "avoids-orms")
    assert "confidence 0.30 → effective 0.30 (tentative)" in r.out and not shows_099(r.out)
    assert LINE in r.err
    d = cli("--vault", v, "belief", "show", "avoids-orms", "--json").json()
    assert d["confidence"] == 0.30 and d["tier"] == "tentative"
    assert d["refused"][0]["path"] == "beliefs/avoids-orms.md" and d["refused"][0]["message"].startswith(LINE)

    r = cli("--vault", v, "belief", "list")
    assert "0.30 → 0.30" in r.out and not shows_099(r.out) and LINE in r.err
    d = cli("--vault", v, "belief", "list", "--json").json()
    assert [b["confidence"] for b in d["beliefs"]] == [0.30] and d["refused"][0]["message"].startswith(LINE)
    assert cli("--vault", v, "belief", "list", "--min-confidence", "0.9", "--json").json()["beliefs"] == []


@pytest.mark.seed_rules
def test_recall_shows_the_committed_state(cli, orms):
    r = cli("--vault", orms.root, "recall", "orms sql")
    assert "(0.30 tentative)" in r.out and "factual" not in r.out and LINE in r.err
    d = cli("--vault", orms.root, "recall", "orms sql", "--json").json()
    assert d["results"][0]["confidence"] == 0.30 and d["results"][0]["tier"] == "tentative"
    assert d["refused"][0]["message"].startswith(LINE)


@pytest.mark.seed_rules
@pytest.mark.parametrize("mode", ["portrait", "gut-check", "audit", "interview"])
def test_the_mirror_uses_the_committed_state(cli, orms, mode):
    r = cli("--vault", orms.root, "mirror", mode)
    assert r.code == 0 and not shows_099(r.out) and LINE in r.out
    d = cli("--vault", orms.root, "mirror", mode, "--json").json()
    assert not shows_099(json.dumps(d)) and d["refused"][0]["message"].startswith(LINE)
    skill = cli("--vault", orms.root, "skill", "mirror", mode)  # what /mirror starts from
    assert not shows_099(skill.out) and LINE in skill.out


@pytest.mark.seed_rules
def test_the_session_context_uses_the_committed_state(orms, tmp_path):
    text = hook_context(orms.root, tmp_path)
    assert "(tentative) Avoids ORMs" in text and "factual" not in text and LINE in text


@pytest.mark.seed_rules
def test_mcp_shows_the_committed_state(orms):
    reads = anyio.run(mcp_reads, orms.root, "avoids-orms")
    for name, text in reads.items():
        assert not shows_099(text), name
    get = json.loads(reads["get"])
    assert get["confidence"] == 0.30 and get["refused"][0]["message"].startswith(LINE)
    assert json.loads(reads["list"])["refused"][0]["message"].startswith(LINE)
    assert json.loads(reads["describe"])["beliefs"]["by_tier"]["factual"] == 0
    assert json.loads(reads["recall"])["results"][0]["tier"] == "tentative"
    assert "confidence: 0.30" in reads["epimem://belief/avoids-orms"] and LINE in reads["epimem://belief/avoids-orms"]
    for name in ("mirror portrait", "mirror gut-check", "mirror audit", "epimem://context?cwd=" + str(orms.root),
                 "epimem://audit"):
        assert LINE in reads[name], name


@pytest.mark.seed_rules
def test_the_page_and_the_export_use_the_committed_state(cli, orms, tmp_path):
    html = page(cli, orms.root, tmp_path)
    assert LINE.replace("'", "&#39;") in html and ">0.99<" not in html and "0.990" not in html
    [b] = [r for r in export_records(cli, orms.root) if r["type"] == "belief"]
    assert b["confidence"] == 0.30 and "confidence: 0.30" in b["text"] and b["refused"].startswith(LINE)


def test_a_malformed_edit_of_a_committed_belief_is_shown_as_committed(cli, vault):
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference",
                     basis="behavioral", permanence="durable")
    edit_in_place(vault.root / "beliefs" / "avoids-orms.md", "status: active", "status: maybe")
    r = cli("--vault", vault.root, "belief", "list")
    assert "avoids-orms" in r.out
    assert "an edit was refused, so it is shown as last committed: line 10: 'status' must be one of" in r.err
    assert cli("--vault", vault.root, "validate").code == 1  # validate reads the file as it is


def test_a_new_file_that_breaks_a_rule_is_not_shown_at_all(cli, vault):
    # Never committed: there is no valid state to show, so it is a problem, as a malformed file is.
    (vault.root / "beliefs" / "made-up.md").write_text(
        "---\ntitle: Made up\nkind: trait\nbasis: behavioral\nconfidence: 0.99\npermanence: stable\n"
        "first: 2026-11-01\n---\nA belief a model wrote by hand.\n", encoding="utf-8")
    r = cli("--vault", vault.root, "belief", "list", "--json")
    assert r.json()["beliefs"] == [] and "above the cap" in r.json()["problems"][0]["message"]
    r = cli("--vault", vault.root, "belief", "show", "made-up")
    assert r.code == 1 and "above the cap" in r.err
    assert "made-up" not in cli("--vault", vault.root, "recall", "made up belief").out


@pytest.mark.seed_rules
def test_once_fixed_the_edit_is_shown_and_the_line_goes(cli, orms):
    p = orms.root / "beliefs" / "avoids-orms.md"
    edit_in_place(p, "confidence: 0.99", "confidence: 0.50")
    r = cli("--vault", orms.root, "belief", "show", "avoids-orms")
    assert "confidence 0.50" in r.out and "refused" not in r.err
    assert "refused" not in cli("--vault", orms.root, "recall", "orms sql").err


@pytest.mark.seed_rules
def test_a_broken_edit_committed_by_plain_git_is_shown_as_its_last_valid_commit(cli, orms, tmp_path):
    """HEAD is not always epimem's: Obsidian's git plugin commits every few minutes, and a plain
    `git commit` (or another machine's push, through sync) commits the edit epimem would refuse.
    The belief used to vanish from every reader; it is shown as the newest valid commit of it."""
    import subprocess

    v = orms.root
    good = subprocess.run(["git", "-C", str(v), "rev-parse", "--short=7", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    obsidian = ["git", "-C", str(v), "-c", "user.name=Obsidian", "-c", "user.email=o@example.com", "commit", "-qam"]
    subprocess.run([*obsidian, "vault backup: 2026-12-04 10:00"], check=True)
    p = v / "beliefs" / "avoids-orms.md"
    edit_in_place(p, "Writes SQL by hand", "Writes SQL by hand, always")  # and one more commit on top
    subprocess.run([*obsidian, "vault backup: 2026-12-04 10:05"], check=True)
    line = (f"beliefs/avoids-orms.md: an edit was refused, so it is shown as committed in {good}, its last "
            "valid state: confidence 0.99 is above the cap for basis 'behavioral' (0.90)")

    r = cli("--vault", v, "belief", "show", "avoids-orms")
    assert r.code == 0 and "confidence 0.30 → effective 0.30 (tentative)" in r.out and not shows_099(r.out)
    assert line in r.err and "always" not in r.out  # the last valid state, not the broken one's words
    assert cli("--vault", v, "belief", "list", "--json").json()["beliefs"][0]["confidence"] == 0.30
    d = cli("--vault", v, "recall", "orms sql", "--json").json()
    assert d["results"][0]["confidence"] == 0.30 and d["refused"][0]["message"].startswith(line)
    text = hook_context(v, tmp_path)
    assert "(tentative) Avoids ORMs" in text and line in text
    [b] = [r for r in export_records(cli, v) if r["type"] == "belief"]
    assert b["confidence"] == 0.30 and b["refused"].startswith(line)
    assert cli("--vault", v, "validate").code == 1  # validate reads the file as it is
