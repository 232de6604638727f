"""Migration from a hand-kept epistemic-memory profile and from a bullet-list
memory file, into a real vault (a git repository), as one commit."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from epimem.core.notes import parse_belief
from epimem.importers.claude_memory import import_claude_memory
from epimem.importers.epistemic_memory import import_epistemic_memory, plan_epistemic_memory, read_profile_dir

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "epistemic-memory"
TODAY = date(2026, 11, 30)


def commits(root):
    return subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True).stdout.splitlines()


@pytest.fixture(scope="module")
def plan():
    return plan_epistemic_memory(read_profile_dir(FIXTURE), today=TODAY)


def test_every_belief_keeps_its_text_and_numbers(plan):
    by = {b.id: b for b in plan.beliefs}
    assert sorted(by) == ["background", "decides-by-prototyping", "morning-focus", "small-pull-requests",
                          "terse-commit-messages", "weird-permanence"]
    b = by["decides-by-prototyping"]
    assert (b.title, b.confidence, b.permanence) == ("Decides by Prototyping", 0.70, "durable")
    assert (b.first, b.confirmed, b.challenged) == (date(2026, 3, 5), date(2026, 4, 2), date(2026, 3, 28))
    assert "Reads the prototype's failures as the\nreal specification." in b.statement
    assert "*Challenged 2026-03-28: wrote a full design doc first for the billing rewrite.*" in b.statement
    assert "- prototypes usually live a day" in b.statement
    assert by["morning-focus"].confirmed is None and by["morning-focus"].challenged is None
    assert by["morning-focus"].statement.startswith("Said twice that mornings")  # prose on the next line
    # only a fact may exceed 0.90; the rest is held as interpretation
    assert by["background"].basis == "fact" and by["decides-by-prototyping"].basis == "interpretive"
    # conf:82 written as a percentage, `━` weight mark, kind from the section it sits in
    sp = by["small-pull-requests"]
    assert (sp.confidence, sp.kind) == (0.82, "preference")
    assert "Example Belief" not in {b.title for b in plan.beliefs}  # inside a code block


def test_observations_become_evidence(plan):
    b = {b.id: b for b in plan.beliefs}["decides-by-prototyping"]
    assert [e.kind for e in b.evidence] == ["confirming", "imported"]
    assert b.evidence[0].link == "observations/2026-04#obs-20260402-9fad"
    assert "conf 0.70" in b.evidence[-1].note
    obs = {o.id: o for o in plan.observations}
    assert len(obs) == 4
    secret = next(o for o in plan.observations if "linter" in o.evidence)
    assert "abcd1234efgh5678" not in secret.evidence and secret.connects == "new"


def test_tensions_map_to_beliefs(plan):
    ts = {t.id: t for t in plan.tensions}
    assert set(ts) == {"2026-03-28-design-doc-before-code", "2026-04-01-late-night-session"}
    t = ts["2026-03-28-design-doc-before-code"]
    assert (t.belief, t.status) == ("decides-by-prototyping", "watching")
    assert t.suggests.startswith("Prototyping may be the default")
    assert ts["2026-04-01-late-night-session"].belief == "morning-focus"
    assert ts["2026-04-01-late-night-session"].status == "unresolved"


def test_report_names_what_could_not_be_mapped(plan):
    text = "\n".join(plan.unmapped)
    assert "'Broken Number': conf 'high' is not a number" in text
    assert "permanence 'forever'" in text and "mood:curious" in text
    assert "'Undated note': no date" in text
    assert "strength 'complicated'" in text
    assert "'Likes Pair Programming' is not among the imported beliefs; tension not imported" in text
    assert plan.sessions["count"] == 23


def test_import_is_one_commit_and_idempotent(vault):
    source = snapshot()
    before = len(commits(vault.root))
    report = import_epistemic_memory(vault, FIXTURE)
    assert report.commit and len(report.beliefs) == 6 and report.observations == 4
    assert len(report.tensions) == 2 and report.sessions
    log = commits(vault.root)
    assert len(log) == before + 1
    assert log[0] == "import: 6 beliefs, 4 observations, 2 tensions from epistemic-memory (epistemic-memory)"
    body = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=vault.root, capture_output=True,
                          text=True).stdout
    assert "Epimem-Op: import" in body and "could not map" in body
    # the files are valid vault files, and the vault says so
    text = (vault.root / "beliefs" / "decides-by-prototyping.md").read_text()
    assert parse_belief(text, "decides-by-prototyping").confidence == 0.70
    assert vault.validate() == []
    s = vault.vault.read_sessions()
    assert (s.count, s.next_review_at, s.last_review) == (23, 30, date(2026, 4, 1))
    assert "obs-20260402-9fad" in (vault.root / "observations" / "2026-04.md").read_text()
    # a second run finds everything in place
    again = import_epistemic_memory(vault, FIXTURE)
    assert again.commit is None and again.beliefs == () and again.observations == 0
    assert len(commits(vault.root)) == before + 1
    assert snapshot() == source  # the source files are never touched


def snapshot():
    return {p.name: p.read_bytes() for p in FIXTURE.iterdir()}


def test_dry_run_writes_nothing(vault):
    before = commits(vault.root)
    report = import_epistemic_memory(vault, FIXTURE, dry_run=True)
    assert len(report.beliefs) == 6 and report.commit is None
    assert commits(vault.root) == before
    assert not (vault.root / "beliefs" / "background.md").exists()


MEMORY = """# Memory

- Prefers pnpm over npm for every JS project.
- Always runs `make check` before pushing.
  - make check includes the type checker
- Lives in Lisbon (UTC+0/+1).

## Tooling

- Uses ruff for linting; the config is in pyproject.toml. My api_key=sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaa is in .env

```
- not a bullet, inside code
```
"""


def test_claude_memory_bullets_become_speculative_self_reports(vault, tmp_path):
    f = tmp_path / "CLAUDE.md"
    f.write_text(MEMORY)
    report = import_claude_memory(vault, f)
    assert len(report.beliefs) == 4 and report.commit
    bs = {b.id: b for b in vault.beliefs()}
    assert all(b.basis == "self-report" and b.confidence == 0.20 and b.permanence == "unknown"
               for b in bs.values())
    pnpm = bs["prefers-pnpm-over-npm-for-every-js-project"]
    assert pnpm.kind == "preference"
    make = next(b for b in bs.values() if "make check" in b.title)
    assert "make check includes the type checker" in make.statement and make.kind == "convention"
    ruff = next(b for b in bs.values() if "ruff" in b.title)
    assert ruff.tags == ("tooling",) and "sk-ant-api03" not in ruff.statement
    assert "confirm or retire" in ruff.evidence[0].note
    assert len(import_claude_memory(vault, f).beliefs) == 0  # already there


def test_cli_import(vault, tmp_path):
    epimem = str(Path(sys.executable).parent / "epimem")
    src = tmp_path / "profile"
    shutil.copytree(FIXTURE, src)
    r = subprocess.run([epimem, "--vault", str(vault.root), "import", "epistemic-memory", str(src), "--dry-run"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "6 beliefs" in r.stdout and "Dry run" in r.stdout and "Broken Number" in r.stdout
    r = subprocess.run([epimem, "--vault", str(vault.root), "import", "epistemic-memory", str(src), "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    import json

    out = json.loads(r.stdout)
    assert len(out["beliefs"]) == 6 and out["commit"] and len(out["unmapped"]) == 7
    r = subprocess.run([epimem, "--vault", str(vault.root), "import", "epistemic-memory", str(tmp_path / "nope")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "not a directory" in r.stderr
