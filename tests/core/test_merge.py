"""The merge rules of SPEC §11 as pure functions (the sync tests run them through git)."""

from __future__ import annotations

from datetime import date

from epimem.core import merge
from epimem.core.notes import parse_belief, parse_tension

BELIEF = """---
title: Prefers small PRs
kind: preference
basis: behavioral
confidence: {conf}
permanence: durable
first: 2026-11-01
confirmed: {confirmed}
challenged:
status: {status}
tags: [{tags}]
scope: global
pinned: false
supersedes: []
mood: calm
---
{statement}

## Evidence
- 2026-11-01 · added — added by the user (0.30)
{evidence}"""


def belief(conf="0.30", confirmed="", status="active", tags="", statement="Splits work.", evidence=""):
    return BELIEF.format(conf=conf, confirmed=confirmed, status=status, tags=tags, statement=statement,
                         evidence=evidence)


def parsed(text: str):
    return parse_belief(text, "small-prs")


def test_confidence_moves_by_both_changes_within_cap_and_floor():
    def two(base, o, t):
        m = merge.merge_belief(belief(base), belief(o, evidence="- 2026-11-05 · confirming — here\n"),
                               belief(t, evidence="- 2026-11-06 · confirming — there\n"))
        return parsed(m.text).confidence

    assert two("0.30", "0.35", "0.35") == 0.40  # two confirmations, not one
    assert two("0.85", "0.90", "0.90") == 0.90  # the cap
    assert two("0.20", "0.10", "0.10") == 0.05  # the floor
    assert two("0.20", "0.02", "0.10") == 0.02  # the user set it below the floor by hand


def test_one_sided_changes_take_that_side_and_keep_unknown_keys():
    text = merge.merge_belief(belief(), belief(tags="a"), belief(confirmed="2026-11-05", conf="0.35")).text
    b = parsed(text)
    assert (b.tags, b.confirmed, b.confidence) == (("a",), date(2026, 11, 5), 0.35)
    assert "mood: calm" in text


def test_dates_take_the_later_and_status_the_users_decision():
    m = merge.merge_belief(belief(), belief(confirmed="2026-11-09", status="retired"),
                           belief(confirmed="2026-11-04"))
    b = parsed(m.text)
    assert b.confirmed == date(2026, 11, 9) and b.status == "retired"
    m = merge.merge_belief(belief(), belief(), belief(status="superseded"))
    assert parsed(m.text).status == "superseded" and any("wins over active" in n for n in m.notes)


def test_tags_merge_additions_and_removals():
    m = merge.merge_belief(belief(tags="a, b"), belief(tags="a, c"), belief(tags="b, d"))
    assert set(parsed(m.text).tags) == {"c", "d"}


def test_evidence_is_the_union_in_date_order():
    e1 = "- 2026-11-05 · confirming · [[observations/2026-11#obs-20261105-aaaa]] — one"
    e2 = "- 2026-11-03 · confirming · [[observations/2026-11#obs-20261103-bbbb]] — two"
    m = merge.merge_belief(belief(), belief(evidence=e1 + "\n"), belief(evidence=e2 + "\n"))
    lines = [e.note for e in parsed(m.text).evidence]
    assert lines == ["added by the user (0.30)", "two", "one"] and not m.needs_user


def test_prose_changed_on_both_sides_keeps_both():
    m = merge.merge_belief(belief(), belief(statement="Small PRs."), belief(statement="One concern a PR."))
    assert m.needs_user and merge.MERGE_HEADING in m.text
    b = parsed(m.text)
    assert b.statement == "Small PRs." and "One concern a PR." in m.text
    assert len(b.evidence) == 1  # the merge section is not read as evidence


def test_a_merge_is_idempotent_and_never_writes_markers():
    x = belief("0.35", evidence="- 2026-11-05 · confirming — x\n")
    assert merge.merge_belief(belief(), x, x).text == x
    assert merge.merge_file("beliefs/x.md", belief(), x, belief()).text == x
    assert not merge.has_conflict_markers(merge.merge_belief("", belief(statement="A"), belief(statement="B")).text)


def test_observation_logs_union_by_id_in_date_order():
    def entry(oid, day, text):
        return f"## {oid}\n- date: {day}\n- evidence: {text}\n- connects: new\n- strength: single\n"

    head = "# Observations 2026-11\n"
    base = merge.join_log(head, [entry("obs-20261101-aaaa", "2026-11-01", "a")])
    ours = merge.join_log(head, [entry("obs-20261101-aaaa", "2026-11-01", "a"),
                                 entry("obs-20261107-cccc", "2026-11-07", "c")])
    theirs = merge.join_log(head, [entry("obs-20261101-aaaa", "2026-11-01", "a"),
                                   entry("obs-20261103-bbbb", "2026-11-03", "b")])
    m = merge.merge_observations(base, ours, theirs)
    ids = [i for i, _ in merge.split_log(m.text)[1]]
    assert ids == ["obs-20261101-aaaa", "obs-20261103-bbbb", "obs-20261107-cccc"] and not m.needs_user
    undone = merge.merge_observations(ours, merge.join_log(head, [entry("obs-20261101-aaaa", "2026-11-01", "a")]),
                                      ours)
    assert [i for i, _ in merge.split_log(undone.text)[1]] == ["obs-20261101-aaaa"]  # an undo stays undone
    two = merge.merge_observations("", entry("obs-20261101-aaaa", "2026-11-01", "x"),
                                   entry("obs-20261101-aaaa", "2026-11-01", "y"))
    assert two.needs_user and merge.duplicate_observation_ids(two.text) == ["obs-20261101-aaaa"]


def test_sessions_add_up_and_follow_the_later_review():
    def c(count, last, review, nra, days):
        return {"count": count, "last_session": last, "last_review": review, "next_review_at": nra,
                "created": date(2026, 11, 1), "days": days}

    base = c(5, date(2026, 11, 5), None, 10, {"2026-11-05": 5})
    ours = c(7, date(2026, 11, 7), date(2026, 11, 7), 17, {"2026-11-05": 5, "2026-11-07": 2})
    theirs = c(6, date(2026, 11, 8), None, 10, {"2026-11-05": 5, "2026-11-08": 1})
    m = merge.merge_sessions(base, ours, theirs)
    assert m["count"] == 8 and m["last_session"] == date(2026, 11, 8)
    assert (m["last_review"], m["next_review_at"]) == (date(2026, 11, 7), 17)
    assert m["days"] == {"2026-11-05": 5, "2026-11-07": 2, "2026-11-08": 1}


def test_tensions_keep_both_sides_lines_and_a_resolution_wins():
    base = ("---\ndate: 2026-11-07\nbelief: small-prs\nstatus: watching\n---\n# Pushed a huge PR\n"
            "- what happened: one PR of 3000 lines\n- evidence: [[observations/2026-11#obs-20261107-aaaa]]\n")
    ours = base + "- evidence: [[observations/2026-11#obs-20261109-bbbb]] (more)\n"
    theirs = base.replace("status: watching", "status: resolved") + "- resolution: 2026-11-10 — a one-off\n"
    t = parse_tension(merge.merge_tension(base, ours, theirs).text, "2026-11-07-small-prs")
    assert t.status == "resolved" and len(t.evidence) == 2 and "one-off" in t.resolution
