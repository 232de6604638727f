"""The markdown codec: strict parsing with line numbers, surgical rewrites."""

from datetime import date

import pytest

from epimem.core.model import Belief, Evidence, Tension
from epimem.core.notes import (
    NoteError,
    append_evidence,
    edit_frontmatter,
    parse_belief,
    parse_observations,
    parse_tension,
    render_belief,
    render_observation,
    render_tension,
    update_belief_text,
)

# SPEC §2's example, verbatim; a backslash at the end of a line joins it to the next.
SPEC_BELIEF = """---
title: Thinks out loud before deciding
kind: trait
basis: interpretive
confidence: 0.45
permanence: unknown
first: 2026-11-02
confirmed: 2026-11-20
challenged:
status: active
tags: [decision-making]
scope: global
pinned: false
supersedes: []
---
Talks through options at length before choosing, but wants the final artifact tight.

## Evidence
- 2026-11-02 · single · [[observations/2026-11#obs-20261102-a1b2]] — compared three designs aloud before picking one
- 2026-11-20 · confirming · [[observations/2026-11#obs-20261120-c3d4]] — drafted two plans, \
then asked for one short version
"""


def test_parses_the_spec_example():
    b = parse_belief(SPEC_BELIEF, "thinks-out-loud-before-deciding")
    assert b.title == "Thinks out loud before deciding" and b.basis == "interpretive"
    assert b.confidence == 0.45 and b.confirmed == date(2026, 11, 20) and b.challenged is None
    assert b.tags == ("decision-making",) and b.supersedes == () and not b.pinned
    assert b.statement.startswith("Talks through options")
    assert [e.kind for e in b.evidence] == ["single", "confirming"]
    assert b.evidence[1].link == "observations/2026-11#obs-20261120-c3d4"
    assert b.evidence[1].note == "drafted two plans, then asked for one short version"


@pytest.mark.parametrize("old,new,line,msg", [
    ("confidence: 0.45", "confidence: 1.7", 5, "between 0.00 and 1.00"),
    ("permanence: unknown", "permanence: forever", 6, "'permanence' must be one of"),
    ("first: 2026-11-02", "first: yesterday", 7, "'first' must be a date"),
    ("tags: [decision-making]", "tags: [decision-making", 12, "invalid YAML"),
    ("basis: interpretive", "basis: hunch", 4, "'basis' must be one of"),
    ("pinned: false", "pinned: maybe", 13, "'pinned' must be true or false"),
    ("first: 2026-11-02", "first: 2026-02-30", 7, "day is out of range"),
])
def test_malformed_values_are_reported_with_their_line(old, new, line, msg):
    with pytest.raises(NoteError) as e:
        parse_belief(SPEC_BELIEF.replace(old, new), "x")
    assert msg in e.value.message
    assert e.value.line == line


def test_an_unclosed_value_names_the_line_it_starts_on():
    with pytest.raises(NoteError) as e:
        parse_belief(SPEC_BELIEF.replace("kind: trait", "kind: [trait"), "x")
    assert e.value.line == 4 and "(while parsing a flow sequence from line 3)" in e.value.message


def test_missing_frontmatter_is_reported():
    with pytest.raises(NoteError, match="no frontmatter"):
        parse_belief("just text\n", "x")
    with pytest.raises(NoteError, match="not closed"):
        parse_belief("---\ntitle: x\n", "x")


def test_surgical_edit_keeps_unknown_keys_comments_order_and_body():
    text = SPEC_BELIEF.replace("scope: global\n", "scope: global\nmood: curious   # my own key\n"
                               "aliases:\n  - thinker\n").replace(
        "## Evidence", "My own note, by hand.\n\n## Evidence")
    b = parse_belief(text, "t")
    after = update_belief_text(text, b, _replace(b, confidence=0.50, confirmed=date(2026, 11, 30)),
                               (Evidence(date(2026, 11, 30), "confirming", "observations/2026-11#obs-x", "again"),))
    assert "confidence: 0.50\n" in after and "confirmed: 2026-11-30\n" in after
    assert "mood: curious   # my own key\naliases:\n  - thinker\n" in after
    assert "My own note, by hand." in after
    assert after.endswith("- 2026-11-30 · confirming · [[observations/2026-11#obs-x]] — again\n")
    # exactly two lines changed, one added
    diff = [(a, b_) for a, b_ in zip(text.splitlines(), after.splitlines()) if a != b_]
    assert len(diff) == 2 and len(after.splitlines()) == len(text.splitlines()) + 1


def test_edit_frontmatter_adds_missing_key_and_replaces_block_lists():
    text = "---\ntitle: x\ntags:\n  - a\n  - b\n---\nbody\n"
    out = edit_frontmatter(text, {"tags": ["c"], "pinned": True})
    assert out == "---\ntitle: x\ntags: [c]\npinned: true\n---\nbody\n"


def test_titles_with_yaml_specials_are_quoted_and_round_trip():
    b = Belief(id="x", title='Says "no": often', kind="trait", basis="behavioral", confidence=0.3,
               permanence="unknown", first=date(2026, 11, 1), tags=("a: b",), statement="S.")
    assert parse_belief(render_belief(b), "x").title == 'Says "no": often'
    assert parse_belief(render_belief(b), "x").tags == ("a: b",)


def test_append_evidence_creates_section_and_keeps_following_sections():
    text = "---\ntitle: x\n---\nStatement.\n"
    out = append_evidence(text, (Evidence(date(2026, 1, 1), "added", "", "n"),))
    assert out.endswith("Statement.\n\n## Evidence\n- 2026-01-01 · added — n\n")
    text2 = "---\ntitle: x\n---\nS.\n\n## Evidence\n- 2026-01-01 · added — n\n\n## My notes\nkeep me\n"
    out2 = append_evidence(text2, (Evidence(date(2026, 1, 2), "edited", "", "m"),))
    assert "- 2026-01-01 · added — n\n- 2026-01-02 · edited — m\n\n## My notes\nkeep me\n" in out2


def test_observation_round_trip_and_spec_example():
    spec = """## obs-20261120-c3d4
- date: 2026-11-20
- evidence: Drafted two plans in full, then asked for a one-paragraph version to act on.
- suggests: Explores broadly, decides on a compressed form.
- therefore: Offer a short decision summary after any long exploration.
- connects: [[thinks-out-loud-before-deciding]]
- strength: confirming
- source: claude-code · session 8f3a2c
- basis: behavioral
"""
    [o], bad = parse_observations("# Observations\n\n" + spec)
    assert not bad
    assert o.connects == "thinks-out-loud-before-deciding" and o.session == "8f3a2c"
    assert o.source == "claude-code" and o.strength == "confirming"
    assert render_observation(o) == spec


def test_bad_observation_entry_is_reported_with_line_and_others_kept():
    text = ("## obs-1\n- date: 2026-11-20\n- evidence: e\n- strength: confirming\n- connects: new\n\n"
            "## obs-2\n- date: someday\n- evidence: e\n- strength: confirming\n")
    obs, bad = parse_observations(text)
    assert [o.id for o in obs] == ["obs-1"]
    assert bad[0][0] == 7 and "date" in bad[0][1]


def test_tension_round_trip():
    t = Tension(id="2026-11-20-x", date=date(2026, 11, 20), belief="x", status="watching",
                title='Said "I decide fast", then explored for an hour', what_happened="w",
                evidence=("observations/2026-11#obs-20261120-c3d4",), suggests="s",
                path="tensions/2026-11-20-x.md")
    assert parse_tension(render_tension(t), "2026-11-20-x", "tensions/2026-11-20-x.md") == t


def _replace(b, **kw):
    from dataclasses import replace
    return replace(b, **kw)


TRICKY = [
    "", "~", "null", "Null", "NULL", "yes", "Yes", "YES", "no", "No", "on", "On", "off", "OFF", "y", "n",
    "true", "True", "TRUE", "false", "False", "0", "1", "01", "007", "1_000", "1.5", "1.50", "1.5e3", "12e4",
    ".5", "-1", "+1", "0x1f", "0b101", "0o17", "1:20", "190:20:30", "3.", "1.2.3", "8f3a2c", "9beb68", "1e5",
    "0b1z", "0xfz", "2026-11-02", "2026-1-02", "2026-02-30", "2026-11-02T10:00:00", "2026-11-02 10:00",
    "plain words", "Don't mock the DB", "a: b", "a:b", "ends with:", "x #comment", "x#y", "#x", "a - b",
    "- item", "? q", ": v", "&anchor", "*alias", "!tag x", "|", ">", "%x", "@x", "`x`", "'single'",
    '"double"', '"with \\" escape"', '"a\\nb"', "'it''s'", "[a, b]", "[a,b]", "[ ]", "[]", "[a, [b]]",
    "[yes, no]", "[1, 2]", "['a']", '["a"]', "[a: b]", "[a, b", "{a: b}", "{}", "Café au lait", "x\ty",
    "trailing ", "a, b", "why? because", "a|b", "C++ & Rust", "50% faster", "[decision-making, review]",
    "[a b, c.d/e]", "[2026]", "[on]", "[x #y]", "=",
]


@pytest.mark.parametrize("value", TRICKY)
def test_fast_frontmatter_path_agrees_with_yaml(value):
    import yaml

    from epimem.core.notes import fast_meta

    fm = f"key: {value}\nother: 0.45\n"
    fast = fast_meta(fm)
    if fast is None:
        return  # YAML decides
    assert fast == yaml.safe_load(fm)
    assert [type(v) for v in fast.values()] == [type(v) for v in yaml.safe_load(fm).values()]


def test_fast_path_takes_what_epimem_writes_and_refuses_block_values():
    from epimem.core.notes import fast_meta, split

    assert fast_meta(split(SPEC_BELIEF)[0]) is not None
    assert fast_meta("tags:\n  - a\n") is None
    assert fast_meta("a: 1\na: 2\n") is None  # duplicate keys: YAML's rules apply


def test_fast_frontmatter_path_agrees_with_yaml_on_random_values():
    import random

    import yaml

    from epimem.core.notes import fast_meta

    rng = random.Random(7)
    alphabet = list("abcxyzAB019 -_.:#,'\"[]{}&*!|>%@`?~=/\\") + ["yes", "no", "on", "0x", "e5", ": ", " #"]
    checked = 0
    for _ in range(3000):
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))
        fm = f"key: {value}\n"
        fast = fast_meta(fm)
        if fast is None:
            continue
        checked += 1
        try:
            slow = yaml.safe_load(fm)
        except yaml.YAMLError:
            raise AssertionError(f"fast path accepted {value!r}, which YAML rejects") from None
        assert fast == slow and type(fast["key"]) is type(slow["key"]), value
    assert checked > 300  # the fast path was really exercised


def test_key_lines_count_as_parse_errors_do():
    from epimem.core.notes import key_lines, parse_note

    assert key_lines(SPEC_BELIEF)["confidence"] == 5 == parse_note(SPEC_BELIEF).key_lines["confidence"]
    assert key_lines(SPEC_BELIEF + "confidence: 0.9\n")["confidence"] == 5  # a key in the body is not one
    assert key_lines("no frontmatter\nconfidence: 1\n") == {}


def test_within_one_parse_a_text_parses_once_and_a_broken_one_fails_every_time(monkeypatch):
    import epimem.core.notes as notes

    b = Belief(id="likes-tabs", title="Likes tabs", kind="preference", basis="self-report", confidence=0.5,
               permanence="stable", first=date(2026, 11, 1))
    text = notes.render_belief(b)
    calls = []
    real = notes._parse_belief
    monkeypatch.setattr(notes, "_parse_belief", lambda *a: calls.append(a) or real(*a))
    with notes.one_parse():
        first = notes.parse_belief(text, "likes-tabs")
        again = notes.parse_belief(text, "likes-tabs", "beliefs/likes-tabs.md")  # the same belief, same path
        assert again is first and len(calls) == 1
        assert notes.parse_belief(text.replace("0.5", "0.6"), "likes-tabs").confidence == 0.6  # another text
        for _ in range(2):
            with pytest.raises(notes.NoteError):
                notes.parse_belief("---\ntitle: [\n---\n", "broken")
    assert len(calls) == 4
    assert notes.parse_belief(text, "likes-tabs") is not first  # outside the block nothing is kept


def test_a_title_yaml_would_read_as_an_impossible_date_round_trips():
    # PyYAML builds `0000-00-00` or `2026-02-30` into a date and raises ValueError, which the
    # plain-scalar probe must take as "quote it" (found by tests/store/test_fuzz.py).
    for title in ("0000-00-00", "2026-02-30", "2026-02-03"):
        b = Belief(id="x", title=title, kind="trait", basis="behavioral", confidence=0.3,
                   permanence="unknown", first=date(2026, 11, 1), tags=(title,), statement="S.")
        back = parse_belief(render_belief(b), "x")
        assert (back.title, back.tags) == (title, (title,))


@pytest.mark.parametrize("named", ['"../outside"', '"like\\0s-tabs"', '"[[Likes Tabs]]"', "beliefs/likes-tabs"])
def test_a_tension_must_name_a_belief_by_its_id(named):
    # A hand-edited tension may name a path, a title or a NUL byte; no belief file has such a
    # name, so the file is refused at the field's line instead of pointing nowhere (or outside).
    text = f"---\ndate: 2026-11-20\nbelief: {named}\nsuccessor:\nstatus: unresolved\n---\n# Q?\n"
    with pytest.raises(NoteError, match=r"'belief' must name a belief by its id") as e:
        parse_tension(text, "2026-11-20-x")
    assert e.value.line == 3
    bad_successor = "---\ndate: 2026-11-20\nbelief: likes-tabs\nsuccessor: \"[[Tabs Again]]\"\n---\n# Q?\n"
    with pytest.raises(NoteError, match=r"'successor' must name a belief by its id") as e:
        parse_tension(bad_successor, "2026-11-20-x")
    assert e.value.line == 4


def test_a_tension_may_name_a_belief_as_obsidian_links_it():
    for named in ("likes-tabs", "[[likes-tabs]]", '"[[beliefs/likes-tabs|Likes tabs]]"', '"[[likes-tabs.md]]"'):
        text = f"---\ndate: 2026-11-20\nbelief: {named}\n---\n# Q?\n"
        assert parse_tension(text, "2026-11-20-x").belief == "likes-tabs"


def test_only_a_bare_id_is_upgraded_to_a_wikilink():
    from epimem.core.notes import with_wikilinks

    text = "---\ndate: 2026-11-20\nbelief: {}\n---\n# Q?\n"
    assert with_wikilinks("tensions/2026-11-20-x.md", text.format("likes-tabs")) == text.format('"[[likes-tabs]]"')
    # A path names no belief file, linked or not: the parser refuses it; the upgrade leaves it be.
    assert with_wikilinks("tensions/2026-11-20-x.md", text.format('"../outside"')) is None
