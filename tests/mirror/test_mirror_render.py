"""The mirror's words: how beliefs are said to the person, the portrait's
promise of no numbers, terminal fitting, and the generated examples page."""

from __future__ import annotations

import re
import sys
from datetime import date
from pathlib import Path

import pytest

from epimem.core.model import Belief, Problem, Sessions, Snapshot, Tension
from epimem.core.params import DEFAULTS
from epimem.mirror import render as R
from epimem.mirror.audit import audit
from epimem.mirror.gutcheck import gut_check
from epimem.mirror.interview import interview
from epimem.mirror.phrase import CERTAINTY_WORDS, say, sentence, verb_phrase
from epimem.mirror.portrait import portrait_brief

ROOT = Path(__file__).resolve().parents[2]
T = date(2026, 11, 30)


@pytest.mark.parametrize("title, phrase", [
    ("Thinks out loud before deciding", "think out loud before deciding"),
    ("Prefers small pull requests", "prefer small pull requests"),
    ("Is a night owl", "are a night owl"),
    ("Has two kids", "have two kids"),
    ("Does code review in the morning", "do code review in the morning"),
    ("Watches the logs during deploys", "watch the logs during deploys"),
    ("Tries the boring option first", "try the boring option first"),
    ("Retries without an idempotency key are a bug", None),   # a clause, not a verb phrase
    ("Tests are run against real Postgres", None),
    ("Readability beats cleverness", None),
    ("Python developer", None),
    ("Always reviews twice", None),
    ("API design matters", None),
])
def test_verb_phrase(title, phrase):
    assert verb_phrase(title) == phrase


def test_say_in_words_for_every_tier():
    assert [say("Thinks out loud", w) for w in CERTAINTY_WORDS] == [
        "You think out loud.", "Clearly, you think out loud.", "It seems you think out loud.",
        "I've seen hints that you think out loud.", "I'm guessing you think out loud."]
    assert say("Readability beats cleverness", "I'm guessing") == "A guess: Readability beats cleverness."
    assert say("Working toward a staff role", "I'm guessing") == "I'm guessing you are working toward a staff role."
    assert say("Energised by incidents", "clearly") == "Clearly, you are energised by incidents."
    assert say("Boring tech, except here?", "clearly") == "Boring tech, except here?: that much is clear."
    # Variants keep a paragraph from repeating one formula.
    assert len({say("Thinks out loud", "I'm guessing", n) for n in range(3)}) == 3
    assert sentence("Done?") == "Done?" and sentence("Done") == "Done." and sentence("") == ""


def _digit_free_snapshot() -> Snapshot:
    def b(i, title, kind, conf, perm="durable", basis="interpretive", tags=()):
        return Belief(f"b-{i}", title, kind, basis, conf, perm, date(2026, 11, 1), tags=tags)

    bs = (b("a", "Thinks out loud before deciding", "trait", 0.80, tags=("decisions",)),
          b("b", "Values calm over speed", "value", 0.60, tags=("decisions",)),
          b("c", "Prefers short answers", "preference", 0.45, tags=("communication",)),
          b("d", "Dislikes emoji", "preference", 0.35, tags=("communication",)),
          b("e", "Senior engineer", "identity", 0.95, "stable", "fact"),
          b("f", "Is a night owl", "trait", 0.20, "unknown"),
          b("g", "Writes tests first", "workflow", 0.25, "situational", "self-report"))
    ts = (Tension("t-one", date(2026, 11, 10), "b-a", "unresolved", "Decided in a minute, once",
                  what_happened="Picked a design without any discussion.",
                  suggests="Deciding aloud may depend on the stakes."),)
    return Snapshot(bs, (), ts, Sessions(count=4), (), T)


def test_portrait_has_no_numbers():
    md = R.portrait_markdown(portrait_brief(_digit_free_snapshot(), DEFAULTS, T))
    assert not re.search(r"\d", md), md
    for section in ("# Portrait", "## Themes", "## What I don't see",
                    "## Contradictions worth holding", "## Where I'm hungriest"):
        assert section in md
    # 0.80 durable, a month old: 0.69 effective, "developing".
    assert "It seems you think out loud before deciding." in md
    assert "**Decided in a minute, once.** Deciding aloud may depend on the stakes." in md


def test_sample_vault_portrait_speaks_in_words(sample_vault):
    from epimem.api.memory import Memory

    mem = Memory(sample_vault, today="2026-11-30")
    brief = portrait_brief(mem.snapshot(), mem.params, mem.today)
    md = R.portrait_markdown(brief)
    assert not re.search(r"\b0?\.\d\d\b|%|\bconfidence\b", md)
    assert 4 <= len(brief.themes) <= 6
    assert len(md.splitlines()) <= R.SCREEN_LINES


def test_empty_modes_read_as_honest_sentences():
    empty = Snapshot(today=T)
    assert "Nothing known yet" in R.audit_markdown(audit(empty, DEFAULTS, T))
    assert "Nothing to check yet" in R.gut_check_markdown(gut_check(empty, DEFAULTS, T))
    p = R.portrait_markdown(portrait_brief(empty, DEFAULTS, T))
    assert "I don't know you yet" in p and "Everything, for now." in p
    assert "What would you most want an assistant to understand about you?" in p


def test_skipped_files_come_last_in_every_mode():
    snap = Snapshot(_digit_free_snapshot().beliefs, (), (), Sessions(), (
        Problem("beliefs/bad.md", 2, "invalid YAML in frontmatter"),), T)
    for md in (R.audit_markdown(audit(snap, DEFAULTS, T)),
               R.gut_check_markdown(gut_check(snap, DEFAULTS, T)),
               R.interview_markdown(interview(snap, DEFAULTS, T)),
               R.portrait_markdown(portrait_brief(snap, DEFAULTS, T))):
        assert md.rstrip().endswith("- beliefs/bad.md:2: invalid YAML in frontmatter")


def test_output_longer_than_a_screen_says_why():
    md = R._fit([f"line {i}" for i in range(R.SCREEN_LINES + 5)], ["some files were skipped"])
    assert " ".join(md.split()).endswith(
        f"_This runs past one screen ({R.SCREEN_LINES + 5} lines) because some files were "
        "skipped. `--json` has every list in full._")
    assert "runs past" not in R._fit(["short"], ["x"])
    problems = tuple(Problem(f"beliefs/bad-{i}.md", 1, "no frontmatter") for i in range(12))
    snap = Snapshot(_digit_free_snapshot().beliefs, (), (), Sessions(), problems, T)
    md = R.audit_markdown(audit(snap, DEFAULTS, T))
    assert "and 2 more (`epimem validate` lists them all)" in md


def test_wrap_keeps_tables_and_indents_items():
    long = "word " * 40
    lines = R.wrap(["| a | b |" + "x" * 120, "- " + long, "1. " + long, long])
    assert lines[0].startswith("| a | b |")
    assert all(len(x) <= R.WIDTH for x in lines[1:])
    item = [x for x in lines if x.startswith("1. ")][0]
    assert lines[lines.index(item) + 1].startswith("   word")


def test_gut_check_and_interview_markdown():
    snap = _digit_free_snapshot()
    g = R.gut_check_markdown(gut_check(snap, DEFAULTS, T))
    assert "## Still true?" in g and "## Still uncertain?" in g
    assert "`epimem mirror answer ID --verdict true|false|unsure" in g
    iv = interview(snap, DEFAULTS, T)
    md = R.interview_markdown(iv)
    assert md.count("\n1. **Warm-up.**") == 1
    assert f"{len(iv.questions)}. **Closing.**" in md
    assert "`epimem observe --basis self-report" in md


def test_examples_page_is_up_to_date():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import mirror_examples
    finally:
        sys.path.remove(str(ROOT / "bench"))
    page = (ROOT / "docs" / "mirror-examples.md").read_text(encoding="utf-8")
    assert mirror_examples.build() == page, \
        "docs/mirror-examples.md is out of date: run python bench/mirror_examples.py"
