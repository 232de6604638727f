"""Gut-check answers through the Python API (the CLI is a thin layer over these)."""

import json

import pytest

from epimem.mirror.gutcheck import AnswerError, answer, misplaced, open_gut_check, read_pending


def add(mem, title, conf):
    return mem.add_belief(title=title, statement=f"{title}.", kind="trait", basis="interpretive",
                          permanence="durable", confidence=conf).id


def test_answers_complete_the_open_gut_check_and_record_a_review(vault):
    a, b = add(vault, "Likes puzzles", 0.60), add(vault, "Avoids meetings", 0.20)
    open_gut_check(vault, (a, b))
    first = answer(vault, a, "TRUE", note="yes, still")
    assert first.confidence_after == 0.60 and first.progress == {
        "open": True, "answered": 1, "of": 2, "complete": False, "recorded": None}
    assert read_pending(vault)["answers"][a]["verdict"] == "true"
    second = answer(vault, b, "false")
    assert (second.confidence_before, second.confidence_after) == (0.20, 0.05)
    assert second.progress["complete"] and second.progress["recorded"]["review"] == "reviews/2026-11-30.md"
    assert read_pending(vault) is None
    s = json.loads((vault.root / "state/sessions.json").read_text())
    assert s["last_review"] == "2026-11-30"
    assert [e.kind for e in vault.belief(a).evidence][-1] == "reinforcing"


def test_unsure_changes_nothing_and_bad_verdicts_are_refused(vault):
    a = add(vault, "Likes puzzles", 0.60)
    r = answer(vault, a, "unsure", note="depends")
    assert r.confidence_after == 0.60 and vault.belief(a).evidence[-1].kind == "unsure"
    assert r.progress["open"] is False  # no gut-check was open
    with pytest.raises(AnswerError, match="true, false or unsure"):
        answer(vault, a, "maybe")
    with pytest.raises(AnswerError, match="--retire goes with --verdict false"):
        answer(vault, a, "true", retire=True)


def test_retire_and_now_go_with_false_only_and_not_together():
    # The one rule the CLI, MCP and answer() each name in their own words.
    assert misplaced("false", True, "") is None and misplaced(" FALSE ", False, "Uses an ORM") is None
    assert misplaced("true", True, "") == misplaced("unsure", True, "") == "retire"
    assert misplaced("true", False, "x") == misplaced("false", True, "x") == "now"
    assert misplaced("true", False, "  ") is None  # only white space is no successor
