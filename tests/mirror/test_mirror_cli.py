"""`epimem mirror ...` end to end on real vaults (real files, real git):
the four modes in both formats, recording reviews, gut-check answers,
malformed files and an empty vault."""

from __future__ import annotations

import json
import subprocess

import pytest

from epimem.mirror.render import SCREEN_LINES

TODAY = "2026-11-30"
MODES = ("portrait", "audit", "gut-check", "interview")


def git(root, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def sessions(root) -> dict:
    return json.loads((root / "state" / "sessions.json").read_text())


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_on_the_sample_vault(cli, sample_vault, mode):
    md = cli("--vault", sample_vault, "mirror", mode)
    assert md.code == 0, md.err
    lines = md.out.rstrip("\n").splitlines()
    assert len(lines) <= SCREEN_LINES or "runs past one screen" in md.out
    assert cli("--vault", sample_vault, "mirror", mode, "--markdown").out == md.out
    js = cli("--vault", sample_vault, "mirror", mode, "--json")
    assert js.code == 0, js.err
    d = js.json()
    assert d["markdown"] == md.out and d["today"] == TODAY and d["problems"] == []
    assert git(sample_vault, "status", "--porcelain") == ""  # showing never writes the vault


def test_json_and_markdown_together_is_refused(cli, sample_vault):
    r = cli("--vault", sample_vault, "mirror", "audit", "--json", "--markdown")
    assert r.code == 2 and "choose one of --json and --markdown" in r.err  # a usage mistake (docs/cli.md)


def test_audit_record_writes_a_review_and_resets_the_counter(cli, sample_vault):
    count = sessions(sample_vault)["count"]
    r = cli("--vault", sample_vault, "mirror", "audit", "--record", "--json")
    assert r.code == 0, r.err
    rec = r.json()["recorded"]
    assert rec["review"] == f"reviews/{TODAY}.md" and rec["next_review_at"] == count + 10
    text = (sample_vault / "reviews" / f"{TODAY}.md").read_text()
    assert text.startswith(f"---\ndate: {TODAY}\nkind: audit\n---\n")
    assert "## Strongest" in text and "## Needs attention" in text
    s = sessions(sample_vault)
    assert (s["last_review"], s["next_review_at"]) == (TODAY, count + 10)
    assert git(sample_vault, "log", "-1", "--format=%H") .strip() == rec["commit"]
    assert "review: audit recorded" in git(sample_vault, "log", "-1", "--format=%s")
    assert git(sample_vault, "status", "--porcelain") == ""
    # The audit no longer says a review is due.
    assert "review is due" not in cli("--vault", sample_vault, "mirror", "audit").out


def test_interview_and_gut_check_record(cli, sample_vault):
    r = cli("--vault", sample_vault, "mirror", "interview", "--record")
    assert r.code == 0 and f"Recorded reviews/{TODAY}.md" in r.out
    r = cli("--vault", sample_vault, "mirror", "gut-check", "--record", "--json")
    assert r.code == 0 and r.json()["recorded"]["review"] == f"reviews/{TODAY}.md"
    text = (sample_vault / "reviews" / f"{TODAY}.md").read_text()
    assert "## gut-check" in text.lower() and "Interview plan" in text


def test_gut_check_answers_complete_a_review(cli, sample_vault):
    from epimem.api.memory import Memory

    g = cli("--vault", sample_vault, "mirror", "gut-check", "--json").json()
    # The firmest three, the shakiest three, and (SPEC §14) beliefs from the bands where the
    # user's verdicts are still thin: the gut-check is complete when every one is answered.
    ids = [i["belief"]["id"] for i in g["high"] + g["low"] + g["calibrate"]]
    assert len(ids) == 6 + len(g["calibrate"]) and len(g["calibrate"]) <= 2
    mem = Memory(sample_vault)
    before = {i: mem.belief(i) for i in ids}
    count = sessions(sample_vault)["count"]
    verdicts = ["true", "false", "unsure", "true", "unsure", "false", "true", "unsure"][:len(ids)]
    for n, (bid, verdict) in enumerate(zip(ids, verdicts), 1):
        r = cli("--vault", sample_vault, "mirror", "answer", bid, "--verdict", verdict,
                "--note", f"answer {n}", "--json")
        assert r.code == 0, r.err
        d = r.json()
        assert d["gut_check"]["answered"] == n and d["gut_check"]["of"] == len(ids)
        b0, b1 = before[bid], mem.belief(bid)
        assert (d["confidence_before"], d["confidence_after"]) == (b0.confidence, b1.confidence)
        last = b1.evidence[-1]
        if verdict == "false":
            # SPEC §2.5: lowered by 0.20 (never below 0.05), history kept.
            assert b1.confidence == max(0.05, round(b0.confidence - 0.20, 2))
            assert last.kind == "rejected"
        else:
            # True is self-report reinforcement (§2.3): recorded, no number changes;
            # "still true" is the user's word, so decay counts from today (rule 16).
            assert b1.confidence == b0.confidence
            assert b1.confirmed == (mem.today if verdict == "true" else b0.confirmed)
            assert last.kind == ("reinforcing" if verdict == "true" else "unsure")
        assert last.note.startswith(f"gut-check: {verdict}; answer {n}")
        # SPEC §14: the verdict is recorded with the confidence the belief had when asked.
        assert f"(gut-check verdict {verdict} at " in last.note
        assert d["gut_check"]["complete"] is (n == len(ids))
    rec = d["gut_check"]["recorded"]
    assert rec["review"] == f"reviews/{TODAY}.md"
    text = (sample_vault / rec["review"]).read_text()
    assert "kind: gut-check" in text
    assert all(f"`{i}`" in text for i in ids) and "**false**" in text
    assert sessions(sample_vault)["next_review_at"] == count + 10
    assert git(sample_vault, "status", "--porcelain") == ""
    # A new gut-check starts a new round.
    r = cli("--vault", sample_vault, "mirror", "answer", ids[0], "--verdict", "true")
    assert r.code == 0 and "Gut-check:" not in r.out


def test_answer_retire_and_bad_input(cli, sample_vault):
    r = cli("--vault", sample_vault, "mirror", "answer", "small-pull-requests", "--verdict", "maybe")
    assert r.code == 2 and "--verdict must be one of true, false, unsure, not 'maybe'" in r.err
    r = cli("--vault", sample_vault, "mirror", "answer", "small-pull-requests", "--verdict", "true",
            "--retire")
    assert r.code == 2 and "--retire goes with --verdict false" in r.err
    r = cli("--vault", sample_vault, "mirror", "answer", "no-such-belief", "--verdict", "true")
    assert r.code == 1 and "no-such-belief" in r.err
    r = cli("--vault", sample_vault, "mirror", "answer", "../epistemology", "--verdict", "true")
    assert r.code == 1
    r = cli("--vault", sample_vault, "mirror", "answer", "small-pull-requests", "--verdict", "false",
            "--retire")
    assert r.code == 0 and "Retired small-pull-requests" in r.out
    assert "status: retired" in (sample_vault / "beliefs" / "small-pull-requests.md").read_text()


def test_malformed_files_are_listed_and_every_mode_still_works(cli, sample_vault):
    (sample_vault / "beliefs" / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    (sample_vault / "beliefs" / "no-frontmatter.md").write_text("just text\n")
    with open(sample_vault / "observations" / "2026-11.md", "a") as f:
        f.write("\n## obs-20261129-dead\n- date: not-a-date\n- evidence: x\n- strength: single\n")
    (sample_vault / "tensions" / "2026-11-29-bad.md").write_text("---\nstatus: unresolved\n---\n# x\n")
    for mode in MODES:
        r = cli("--vault", sample_vault, "mirror", mode)
        assert r.code == 0, (mode, r.err)
        tail = r.out[r.out.index("Skipped files"):]
        for path in ("beliefs/broken.md:", "beliefs/no-frontmatter.md:1", "observations/2026-11.md",
                     "tensions/2026-11-29-bad.md"):
            assert path in tail, (mode, path)
        d = cli("--vault", sample_vault, "mirror", mode, "--json").json()
        assert len(d["problems"]) == 4
    assert cli("--vault", sample_vault, "mirror", "audit", "--json").json()["totals"]["skipped_files"] == 4
    # Nothing was rewritten.
    assert (sample_vault / "beliefs" / "no-frontmatter.md").read_text() == "just text\n"


def test_empty_vault_is_an_honest_mirror(cli, vault):
    root = vault.root
    a = cli("--vault", root, "mirror", "audit")
    assert a.code == 0 and "Nothing known yet" in a.out
    p = cli("--vault", root, "mirror", "portrait")
    assert p.code == 0 and "I don't know you yet" in p.out and "## Where I'm hungriest" in p.out
    g = cli("--vault", root, "mirror", "gut-check")
    assert g.code == 0 and "Nothing to check yet" in g.out
    i = cli("--vault", root, "mirror", "interview", "--json")
    assert i.code == 0 and len(i.json()["questions"]) == 8
    assert cli("--vault", root, "mirror", "audit", "--json").json()["empty"] is True


def test_not_a_vault_is_a_clear_error(cli, tmp_path):
    r = cli("--vault", tmp_path / "nowhere", "mirror", "audit")
    assert r.code == 1 and "epimem init" in r.err


def test_a_recorded_audit_keeps_every_title_whole(cli, sample_vault):
    # On screen a long title is cut to fit the table; the review file keeps it whole.
    long_title = "Prefers to read the whole design document before writing any code at all, every time"
    r = cli("--vault", sample_vault, "belief", "add", "--title", long_title, "--statement", "Reads designs first.",
            "--kind", "workflow", "--basis", "self-report", "--permanence", "durable", "--confidence", "0.85")
    assert r.code == 0, r.err
    shown = cli("--vault", sample_vault, "mirror", "audit").out
    assert long_title not in shown and long_title[:20] in shown
    assert cli("--vault", sample_vault, "mirror", "audit", "--record").code == 0
    text = (sample_vault / "reviews" / f"{TODAY}.md").read_text()
    assert long_title in text
