"""What a forgotten belief or a purged text leaves of each file (core/forget, pure)."""

from __future__ import annotations

from datetime import date

import pytest

from epimem.core import merge
from epimem.core.forget import (
    MARK,
    CommitFacts,
    Forgetting,
    clean_words,
    commit_changes,
    forget_bytes,
    forget_file,
    forget_message,
    forget_outside,
    forgotten_on,
    is_tombstone,
    needles,
    replace_texts,
    stub_observations,
    tombstone,
)
from epimem.core.notes import parse_belief, parse_note, parse_observations

DAY = date(2026, 11, 30)

BELIEF = """---
title: Prefers tabs
kind: preference
basis: self-report
confidence: 0.45
permanence: durable
first: 2026-11-02
confirmed: 2026-11-20
challenged:
status: active
tags: [editor]
scope: global
pinned: false
supersedes: []
---
Indents with tabs in every project.

## Evidence
- 2026-11-02 · added — added by the user (0.40)
- 2026-11-20 · confirming · [[observations/2026-11#obs-20261120-aaaa]] — reformatted with tabs
"""

LOG = """# Observations 2026-11

## obs-20261120-aaaa
- date: 2026-11-20
- evidence: Reformatted a whole file with tabs, hunter2-in-here
- suggests: Tabs are a firm habit.
- therefore: Use tabs.
- connects: [[prefers-tabs]]
- strength: confirming
- source: claude-code · session 8f3a2c
- basis: behavioral

## obs-20261121-bbbb
- date: 2026-11-21
- evidence: Split a pull request in three
- connects: [[small-prs]]
- strength: single
- source: cli
- basis: behavioral
"""

OTHER = """---
title: Small pull requests
kind: workflow
basis: behavioral
confidence: 0.30
permanence: durable
first: 2026-11-21
confirmed:
challenged:
status: active
tags: []
scope: global
pinned: false
supersedes: ["[[prefers-tabs]]"]
---
Keeps pull requests small.

## Evidence
- 2026-11-21 · single · [[observations/2026-11#obs-20261121-bbbb]] — split a pull request in three
- 2026-11-22 · superseded · [[beliefs/prefers-tabs]] — replaced by Prefers tabs
- 2026-11-23 · reinforcing — the user said so
"""

TENSION = """---
date: 2026-11-20
belief: "[[prefers-tabs]]"
status: watching
---
# Said spaces, used tabs
- what happened: Said spaces; reformatted with tabs.
- evidence: [[observations/2026-11#obs-20261120-aaaa]]
- what this suggests: Held lightly.
"""

REVIEW = """---
date: 2026-11-30
kind: audit
---
# Audit · 2026-11-30

| belief | stored → eff. | why |
|---|---|---|
| Prefers tabs | 0.45 → 0.44 | confirmed once: reformatted with tabs |
| Small pull requests | 0.30 → 0.30 | not yet confirmed |

- **Never confirmed** (1): `small-prs`
- **Drift**: `prefers-tabs`
"""


def _f(**kw) -> Forgetting:
    base = dict(day=DAY, beliefs=("prefers-tabs",), observations=frozenset({"obs-20261120-aaaa"}),
                words=clean_words(["Prefers tabs", "Indents with tabs in every project.",
                                   "Reformatted a whole file with tabs, hunter2-in-here"]))
    base.update(kw)
    return Forgetting(**base)


def test_a_tombstone_is_a_valid_retired_belief_that_says_nothing_of_what_it_was():
    text = tombstone("prefers-tabs", DAY)
    b = parse_belief(text, "prefers-tabs")
    assert b.status == "retired" and b.kind == "forgotten" and b.confidence == 0.0
    assert is_tombstone(text) and forgotten_on(text) == DAY
    assert "tabs" not in text.lower()
    assert not is_tombstone(BELIEF)


def test_the_forgotten_beliefs_file_keeps_only_its_tombstone():
    f = _f()
    assert forget_file("beliefs/prefers-tabs.md", BELIEF, f) is None  # in an old commit: the file never existed
    stone = tombstone("prefers-tabs", DAY)
    assert forget_file("beliefs/prefers-tabs.md", stone, f) == stone


def test_an_observation_that_connects_it_keeps_its_place_and_loses_its_text():
    out = stub_observations(LOG, _f())
    obs, bad = parse_observations(out)
    assert not bad
    stub, kept = obs
    assert (stub.id, stub.date, stub.strength, stub.basis, stub.connects, stub.session) == \
        ("obs-20261120-aaaa", date(2026, 11, 20), "confirming", "behavioral", "prefers-tabs", "8f3a2c")
    assert stub.evidence == "forgotten" and not stub.suggests and not stub.therefore
    assert "hunter2" not in out and "Tabs are a firm" not in out
    assert kept.evidence == "Split a pull request in three"  # another belief's observation is untouched
    assert out.count("## obs-") == 2


def test_a_tension_that_names_it_goes_and_a_review_loses_the_lines_that_name_it():
    f = _f()
    assert forget_file("tensions/2026-11-20-said-spaces.md", TENSION, f) is None
    out = forget_file("reviews/2026-11-30.md", REVIEW, f)
    assert out is not None
    assert "Prefers tabs" not in out and "prefers-tabs" not in out
    assert "| Small pull requests |" in out and "`small-prs`" in out
    assert parse_note(out).meta["kind"] == "audit"


def test_another_beliefs_evidence_that_points_at_it_keeps_date_kind_and_link():
    out = forget_file("beliefs/small-prs.md", OTHER, _f())
    assert out is not None
    b = parse_belief(out, "small-prs")
    lines = {e.kind: e for e in b.evidence}
    assert lines["superseded"].link == "beliefs/prefers-tabs" and lines["superseded"].note == "forgotten"
    assert lines["single"].note == "split a pull request in three"
    assert lines["reinforcing"].note == "the user said so"
    assert "Prefers tabs" not in out


def test_forgetting_twice_changes_nothing_and_a_file_without_a_needle_is_untouched():
    f = _f()
    for path, text in (("observations/2026-11.md", LOG), ("beliefs/small-prs.md", OTHER),
                       ("reviews/2026-11-30.md", REVIEW)):
        once = forget_file(path, text, f)
        assert once is not None
        assert forget_file(path, once, f) == once
    unrelated = OTHER.replace("prefers-tabs", "tabs-x").replace("Prefers tabs", "Tabs X")
    unrelated = unrelated.replace("obs-20261121-bbbb", "obs-1")
    assert not any(n in unrelated.encode() for n in needles(f))
    assert forget_file("beliefs/small-prs.md", unrelated, f) == unrelated


@pytest.mark.parametrize("title", ["sk-purge-me-4242", "[sk-purge-me-4242]", "a: sk-purge-me-4242 # not a comment"])
def test_a_typed_text_goes_and_the_yaml_still_reads(title):
    text = BELIEF.replace("title: Prefers tabs", f"title: {title!r}".replace("'", '"')) \
        .replace("Indents with tabs", "Indents with tabs (sk-purge-me-4242)") + "# sk-purge-me-4242 in a comment\n"
    out = replace_texts("beliefs/prefers-tabs.md", text, ["sk-purge-me-4242"])
    assert "sk-purge-me-4242" not in out
    b = parse_belief(out, "prefers-tabs")
    assert MARK in b.title and MARK in b.statement


def test_a_typed_text_in_json_and_in_bytes_that_are_not_utf8():
    out = replace_texts("state/x.json", '{"a": "key sk-purge-me-4242"}\n', ["sk-purge-me-4242"])
    assert "sk-purge-me-4242" not in out and out.endswith("\n")
    raw = b"\xff\xfe binary sk-purge-me-4242 \x00"
    got = forget_bytes("other/blob.bin", raw, Forgetting(DAY, texts=("sk-purge-me-4242",)))
    assert got is not None and b"sk-purge-me-4242" not in got and got.startswith(b"\xff\xfe")


def test_a_commit_message_loses_the_texts_and_keeps_the_ids():
    msg = "edit: prefers-tabs title Prefers tabs → Prefers tabs now\n\nEpimem-Op: edit\nEpimem-Beliefs: prefers-tabs\n"
    out = forget_message(msg, _f())
    assert "Prefers tabs" not in out and "Epimem-Beliefs: prefers-tabs" in out


def test_short_words_are_not_looked_for():
    assert clean_words(["Vim", "tabs", "", "Prefers tabs", MARK]) == ("Prefers tabs", "tabs")


def test_which_commits_change():
    facts = [CommitFacts("a", (), "init"), CommitFacts("b", ("a",), "add", dropped=True),
             CommitFacts("c", ("b",), "observe", files=True), CommitFacts("d", ("c",), "session"),
             CommitFacts("e", ("a",), "side"), CommitFacts("f", ("e",), "msg", message=True)]
    got = [(c.sha, c.how) for c in commit_changes(facts)]
    assert got == [("b", "dropped"), ("c", "files"), ("d", "parents"), ("f", "message")]


def test_a_merge_keeps_the_tombstone_whole():
    stone = tombstone("prefers-tabs", DAY)
    confirmed = BELIEF.replace("confidence: 0.45", "confidence: 0.50") + "- 2026-11-25 · confirming — again\n"
    for ours, theirs in ((stone, confirmed), (confirmed, stone)):
        m = merge.merge_belief(BELIEF, ours, theirs)
        assert m.text == stone and m.notes
    assert merge.merge_belief(BELIEF, stone, BELIEF).text == stone


def test_a_merge_keeps_a_stub_over_the_full_entry():
    stubbed = stub_observations(LOG, _f())
    for ours, theirs in ((stubbed, LOG), (LOG, stubbed)):
        out = merge.merge_observations(LOG, ours, theirs).text
        assert "hunter2" not in out and out.count("## obs-20261120-aaaa") == 1


def test_a_file_git_does_not_hold_loses_the_strings_and_nothing_else():
    f = Forgetting(DAY, ("prefers-tabs",), frozenset(), ('pw"7Xk2',), ("Indents with tabs",))
    layout = '{"search": "pw\\"7Xk2", "open": ["beliefs/prefers-tabs.md"], "note": "Indents with tabs"}'
    out = forget_outside(".obsidian/workspace.json", layout, f)
    import json

    assert json.loads(out) == {"search": MARK, "open": ["beliefs/prefers-tabs.md"], "note": "Indents with tabs"}
    note = "# x\nIndents with tabs; pw\"7Xk2.\n"
    assert forget_outside(".trash/x.md", note, f) == f"# x\n{MARK}; {MARK}.\n"
    assert forget_outside(".trash/x.md", "nothing here\n", f) == "nothing here\n"
    assert forget_outside(".trash/x.md", forget_outside(".trash/x.md", note, f), f) == \
        forget_outside(".trash/x.md", note, f)
