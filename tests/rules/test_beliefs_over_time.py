"""SPEC §14, issue 26 items 1 and 2: a contradiction that proposes a successor, the user's word
that settles it in one step, the session context that asks rather than assumes, and beliefs
that rest on beliefs (flagged, never lowered, when what they rest on changes)."""

from __future__ import annotations

import subprocess
from datetime import date

import pytest
from vaults import count_sessions

from epimem.api import context as hook  # the session context's one rendering (the hook's)
from epimem.core.errors import Conflict, InputError
from epimem.core.notes import parse_belief, render_belief
from epimem.mirror.gutcheck import answer
from epimem.store.context_cache import read_context_cache

TODAY = date(2026, 11, 30)


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _commits(root) -> int:
    return len(_git(root, "log", "--format=%H").split())


def _context(mem) -> str:
    return hook.render_context(read_context_cache(mem.root), None, cwd="/nowhere", today=TODAY)


@pytest.fixture
def berlin(vault):
    vault.add_belief(title="Lives in Berlin", statement="Lives in Berlin.", kind="fact", basis="self-report",
                     permanence="durable", confidence=0.80)
    vault.add_belief(title="Cycles to the office", statement="Cycles to the Berlin office.", kind="workflow",
                     basis="behavioral", permanence="durable", confidence=0.60, depends_on=["lives-in-berlin"])
    return vault


def _moved(mem, **extra):
    return mem.observe([{"connects": "lives-in-berlin", "strength": "contradicting", "basis": "self-report",
                         "evidence": "Said they moved to Munich in October.", "suggests": "Lives in Munich now.",
                         "successor": "Lives in Munich", "session": "s1", **extra}])


def test_a_contradiction_that_proposes_a_successor_opens_a_tension_naming_both(berlin):
    n = _commits(berlin.root)
    r = _moved(berlin)
    assert _commits(berlin.root) == n + 1  # one observation, one commit: the successor rides along
    res = r.results[0]
    assert res.successor == "lives-in-munich" and res.tension
    t = next(t for t in berlin.tensions() if t.id == res.tension)
    assert (t.belief, t.successor, t.status) == ("lives-in-berlin", "lives-in-munich", "watching")
    assert 'successor: "[[lives-in-munich]]"' in (berlin.root / t.path).read_text()  # a link Obsidian follows
    munich = berlin.belief("lives-in-munich")
    # Rule 1: born of one self-report; it is a proposal, and rule 4 lowers nothing yet.
    assert (munich.status, munich.confidence, munich.basis) == ("active", 0.40, "self-report")
    assert berlin.belief("lives-in-berlin").confidence == 0.80
    assert "lives-in-munich" in _git(berlin.root, "log", "-1", "--format=%B")
    assert berlin.validate() == []


def test_the_context_asks_both_sides_and_never_lists_either_as_current(berlin):
    _moved(berlin)
    text = _context(berlin)
    q = [ln for ln in text.splitlines() if "[lives-in-berlin]" in ln]
    assert len(q) == 1 and "[lives-in-munich]" in q[0] and q[0].startswith("- Has “Lives in Berlin”")
    assert text.index("Open questions") < text.index(q[0])
    assert not any(ln.startswith("- (") and ("[lives-in-munich]" in ln or "[lives-in-berlin]" in ln)
                   for ln in text.splitlines())


def test_a_repeated_proposal_supports_the_same_successor(berlin):
    _moved(berlin)
    r = berlin.observe([{"connects": "lives-in-berlin", "strength": "contradicting", "basis": "behavioral",
                         "evidence": "Booked a Munich dentist.", "successor": "Lives in Munich", "session": "s2"}])
    assert r.results[0].successor == "lives-in-munich"
    assert not (berlin.root / "beliefs" / "lives-in-munich-2.md").exists()
    assert [e.kind for e in berlin.belief("lives-in-munich").evidence][-1] == "confirming"
    assert len([t for t in berlin.tensions() if t.status != "resolved" and t.belief == "lives-in-berlin"]) == 1


def test_a_successor_goes_with_a_contradiction_and_is_not_the_belief_itself(berlin):
    with pytest.raises(InputError) as e:
        berlin.observe([{"connects": "lives-in-berlin", "strength": "confirming", "evidence": "x",
                         "successor": "Lives in Munich"}])
    assert e.value.field == "successor"
    with pytest.raises(InputError):
        berlin.observe([{"connects": "lives-in-berlin", "strength": "contradicting", "evidence": "x",
                         "successor": "lives-in-berlin"}])
    berlin.retire("cycles-to-the-office", note="no")
    with pytest.raises(Conflict):
        berlin.observe([{"connects": "lives-in-berlin", "strength": "contradicting", "evidence": "y",
                         "successor": "cycles-to-the-office"}])


def test_the_users_false_supersedes_in_one_step(berlin):
    _moved(berlin)
    n = _commits(berlin.root)
    a = answer(berlin, "lives-in-berlin", "false", note="moved", source="answer")
    assert _commits(berlin.root) == n + 1
    assert a.successor == "lives-in-munich" and a.status == "superseded"
    old, new = berlin.belief("lives-in-berlin"), berlin.belief("lives-in-munich")
    assert old.status == "superseded" and new.supersedes == ("lives-in-berlin",)
    assert new.confirmed == TODAY  # rule 16: the user's word resets the clock
    assert "answer verdict false at 0.80" in old.evidence[-1].note
    assert all(t.status == "resolved" for t in berlin.tensions() if t.belief == "lives-in-berlin")
    lines = _context(berlin).splitlines()
    # The superseded belief is never listed as current; the successor is, and the belief
    # that rested on the old one is asked about.
    assert not any(ln.startswith("- (") and "[lives-in-berlin]" in ln for ln in lines)
    assert any(ln.startswith("- (") and "[lives-in-munich]" in ln for ln in lines)
    assert any("[cycles-to-the-office] still hold? It rests on [lives-in-berlin]" in ln for ln in lines)


def test_the_users_true_keeps_the_belief_and_retires_the_proposal(berlin):
    _moved(berlin)
    a = answer(berlin, "lives-in-berlin", "true", source="answer")
    assert a.status == "active"
    assert berlin.belief("lives-in-munich").status == "retired"
    assert berlin.belief("lives-in-berlin").confirmed == TODAY
    assert all(t.status == "resolved" for t in berlin.tensions() if t.belief == "lives-in-berlin")
    # Nothing was superseded or retired that the dependant rests on... except the proposal,
    # which nothing rests on: no flag.
    assert not [t for t in berlin.tensions() if t.rests_on]


def test_true_on_the_successor_supersedes_and_false_on_it_declines(berlin, vault):
    _moved(berlin)
    answer(berlin, "lives-in-munich", "true", source="answer")
    assert berlin.belief("lives-in-berlin").status == "superseded"
    assert berlin.belief("lives-in-munich").supersedes == ("lives-in-berlin",)


def test_false_on_the_successor_retires_it_and_keeps_the_belief(berlin):
    _moved(berlin)
    answer(berlin, "lives-in-munich", "false", source="answer")
    assert berlin.belief("lives-in-munich").status == "retired"
    assert berlin.belief("lives-in-berlin").status == "active"


def test_now_names_what_holds_instead_in_the_users_words(cli, berlin):
    n = _commits(berlin.root)
    r = cli("--vault", berlin.root, "mirror", "answer", "lives-in-berlin", "--verdict", "false",
            "--now", "Lives in Lisbon", "--json")
    assert r.code == 0, r.err
    assert r.json()["successor"] == "lives-in-lisbon" and _commits(berlin.root) == n + 1
    b = berlin.belief("lives-in-lisbon")
    assert (b.basis, b.confidence, b.statement, b.supersedes) == ("self-report", 0.40, "Lives in Lisbon",
                                                                  ("lives-in-berlin",))
    r = cli("--vault", berlin.root, "mirror", "answer", "lives-in-lisbon", "--verdict", "true", "--now", "x")
    assert r.code == 2 and "--now goes with --verdict false" in r.err  # a usage mistake (docs/cli.md)


def test_recall_names_the_open_question(berlin):
    from epimem.recall import recall

    _moved(berlin)
    res = recall(berlin, "where does the user live", budget=400)
    qs = res.as_json()["questions"]
    assert any(q["belief"] == "lives-in-berlin" and q["successor"] == "lives-in-munich" for q in qs)
    assert "may have given way to [lives-in-munich]" in res.markdown


# --- depends_on ---------------------------------------------------------------------------------

def test_depends_on_is_a_wikilink_list_that_reads_back(berlin):
    text = (berlin.root / "beliefs" / "cycles-to-the-office.md").read_text()
    assert 'depends_on: ["[[lives-in-berlin]]"]' in text
    b = parse_belief(text, "cycles-to-the-office")
    assert b.depends_on == ("lives-in-berlin",) and parse_belief(render_belief(b), b.id) == b
    # A belief that rests on nothing is written as before: no `depends_on` line.
    assert "depends_on" not in (berlin.root / "beliefs" / "lives-in-berlin.md").read_text()
    # As a person types it in Obsidian: unquoted links.
    typed = text.replace('depends_on: ["[[lives-in-berlin]]"]', "depends_on: [[lives-in-berlin]]")
    assert parse_belief(typed, "cycles-to-the-office").depends_on == ("lives-in-berlin",)


def test_depends_on_refuses_unknown_self_and_reports_loops(berlin, cli):
    with pytest.raises(InputError):
        berlin.add_belief(title="X", statement="x", kind="trait", basis="behavioral", permanence="unknown",
                          depends_on=["no-such-belief"])
    with pytest.raises(InputError):
        berlin.edit_belief("lives-in-berlin", depends_on=["lives-in-berlin"])
    berlin.edit_belief("lives-in-berlin", depends_on=["cycles-to-the-office"])
    problems = [p.message for p in berlin.validate()]
    assert any("loop" in m and "lives-in-berlin" in m for m in problems)
    r = cli("--vault", berlin.root, "belief", "edit", "lives-in-berlin", "--depends-on", "", "--json")
    assert r.code == 0 and r.json()["depends_on"] == []
    assert berlin.validate() == []


@pytest.mark.parametrize("how", ["supersede", "retire", "fall"])
def test_a_dependant_is_flagged_in_the_same_commit_and_never_lowered(berlin, how):
    before = berlin.belief("cycles-to-the-office")
    n = _commits(berlin.root)
    if how == "supersede":
        berlin.add_belief(title="Lives in Munich", statement="Lives in Munich.", kind="fact", basis="self-report",
                          permanence="durable", supersedes=["lives-in-berlin"])
    elif how == "retire":
        berlin.retire("lives-in-berlin", note="not so")
    else:
        # Rule 4: the second challenge with no confirmation between lowers 0.80 to 0.70... and
        # the third to 0.60: established → developing, a fall of a tier. Three sessions the
        # vault counted (rule 19: names nobody counted lower a belief one step a day).
        count_sessions(berlin, "f0", "f1", "f2")
        n = _commits(berlin.root)
        for i in range(3):
            berlin.observe([{"connects": "lives-in-berlin", "strength": "contradicting",
                             "evidence": f"seen elsewhere {i}", "session": f"f{i}"}])
    assert _commits(berlin.root) == n + (1 if how != "fall" else 3)
    flags = [t for t in berlin.tensions() if t.rests_on == "lives-in-berlin"]
    assert len(flags) == 1 and flags[0].belief == "cycles-to-the-office" and flags[0].status == "unresolved"
    assert "flagged: cycles-to-the-office rests on lives-in-berlin" in _git(berlin.root, "log", "--format=%B")
    after = berlin.belief("cycles-to-the-office")
    assert (after.confidence, after.status) == (before.confidence, "active")  # never lowered by itself
    text = _context(berlin)
    assert any("[cycles-to-the-office] still hold? It rests on [lives-in-berlin]" in ln for ln in text.splitlines())
    assert berlin.validate() == []


@pytest.mark.parametrize("edit", ["status: retired", "confidence: 0.45"])
def test_a_hand_edit_committed_by_epimem_commit_flags_the_dependants_in_its_commit(berlin, edit):
    # The user retires (or lowers a tier of) the base in their editor, then `epimem commit`:
    # the dependant hears of it as it would had a command made the change (SPEC §14).
    p = berlin.root / "beliefs" / "lives-in-berlin.md"
    text = p.read_text()
    key = edit.split(":")[0]
    p.write_text("\n".join(edit if ln.startswith(f"{key}:") else ln for ln in text.splitlines()) + "\n")
    n = _commits(berlin.root)
    sha, _, problems = berlin.commit_hand_edits()
    assert sha and not problems
    assert _commits(berlin.root) == n + 1  # the edit and its flag: one step in the history
    flags = [t for t in berlin.tensions() if t.rests_on == "lives-in-berlin"]
    assert len(flags) == 1 and flags[0].belief == "cycles-to-the-office"
    assert f"tensions/{flags[0].id}.md" in _git(berlin.root, "show", "--name-only", "--format=", "HEAD")
    assert "flagged: cycles-to-the-office rests on lives-in-berlin" in _git(berlin.root, "log", "-1", "--format=%B")
    assert berlin.belief("cycles-to-the-office").confidence == 0.60  # never lowered by itself
    assert _git(berlin.root, "status", "--porcelain") == ""


def test_a_flag_is_answered_by_the_users_word(berlin):
    berlin.retire("lives-in-berlin", note="not so")
    answer(berlin, "cycles-to-the-office", "true", note="still cycles, to the new office", source="answer")
    assert all(t.status == "resolved" for t in berlin.tensions() if t.rests_on)
    assert "[cycles-to-the-office]" in _context(berlin)  # listed again, as current


def test_an_observation_proposes_what_a_belief_rests_on(berlin):
    r = berlin.observe([{"connects": "new", "title": "Buys a Berlin transit pass", "kind": "workflow",
                         "strength": "single", "evidence": "Renewed the BVG pass.", "depends_on": ["lives-in-berlin"],
                         "new_despite_similar": True}])
    bid = r.results[0].belief
    assert berlin.belief(bid).depends_on == ("lives-in-berlin",)
    berlin.observe([{"connects": "lives-in-berlin", "strength": "confirming", "evidence": "Met at Alexanderplatz.",
                     "depends_on": [bid], "session": "d1"}])
    b = berlin.belief("lives-in-berlin")
    assert b.depends_on == (bid,) and b.evidence[-1].kind == "linked"
    with pytest.raises(InputError) as e:
        berlin.observe([{"connects": "new", "strength": "single", "evidence": "z", "depends_on": ["x"]}])
    assert e.value.field == "depends_on"


def test_the_audit_and_the_page_show_what_rests_on_what(berlin, cli):
    berlin.retire("lives-in-berlin", note="not so")
    out = cli("--vault", berlin.root, "mirror", "audit").out
    assert "**Rests on a belief that changed**: `cycles-to-the-office` (on `lives-in-berlin`)" in out
    from epimem.mirror.page import build

    html = build(berlin).html
    assert 'class="dep-node flagged" data-id="cycles-to-the-office"' in html
    assert 'data-from="cycles-to-the-office" data-to="lives-in-berlin"' in html


# --- the ways around, tried as a careless or sycophantic model would ------------------------------

def test_an_observation_never_supersedes_whatever_it_claims(berlin):
    """Only the user's word supersedes: an observation (the model's own tool, no permission
    prompt) that says it is the user's interview answer still only proposes."""
    for i in range(3):
        berlin.observe([{"connects": "lives-in-berlin", "strength": "contradicting", "basis": "self-report",
                         "evidence": f"Said: I moved ({i}).", "successor": "Lives in Munich",
                         "session": f"m{i}"}], source="mirror-interview")
    assert berlin.belief("lives-in-berlin").status == "active"
    assert berlin.belief("lives-in-munich").supersedes == ()
    assert not [b for b in berlin.snapshot().beliefs if b.status != "active"]


def test_a_flag_cannot_be_used_to_lower_a_belief(berlin):
    """Naming a belief as resting on one that is then retired flags it; its number stays."""
    berlin.add_belief(title="Target", statement="A belief someone wants lowered.", kind="trait",
                      basis="behavioral", permanence="durable", confidence=0.85)
    berlin.observe([{"connects": "target", "strength": "confirming", "evidence": "Fits.",
                     "depends_on": ["cycles-to-the-office"], "session": "a1"}])
    before = berlin.belief("target").confidence
    berlin.retire("cycles-to-the-office", note="no")
    assert berlin.belief("target").confidence == before
    assert [t.belief for t in berlin.tensions() if t.rests_on == "cycles-to-the-office"] == ["target"]


def test_depends_on_merges_like_tags_and_travels_in_an_export(berlin, tmp_path):
    from epimem.core.merge import merge_belief

    base = (berlin.root / "beliefs" / "cycles-to-the-office.md").read_text()
    ours = base.replace('depends_on: ["[[lives-in-berlin]]"]', 'depends_on: ["[[lives-in-berlin]]", "[[a]]"]')
    theirs = base.replace('depends_on: ["[[lives-in-berlin]]"]', 'depends_on: ["[[lives-in-berlin]]", "[[b]]"]')
    merged = parse_belief(merge_belief(base, ours, theirs).text, "cycles-to-the-office")
    assert set(merged.depends_on) == {"lives-in-berlin", "a", "b"}
    _moved(berlin)
    from epimem.api import portability

    out = tmp_path / "v.jsonl"
    with out.open("w") as fh:
        portability.export(berlin, fh)
    text = out.read_text()
    assert '"depends_on": ["[[lives-in-berlin]]"]' in text and '"successor": "lives-in-munich"' in text


def test_a_belief_written_by_hand_to_supersede_one_still_active_is_reported_with_the_command(berlin, cli):
    """The old one gets `status: superseded` only by the user's word through epimem; a new note
    that names it in `supersedes` while it stays current is said by `validate`, not left silent."""
    root = berlin.root
    munich = render_belief(parse_belief(
        "---\ntitle: Lives in Munich\nkind: fact\nbasis: self-report\nconfidence: 0.40\npermanence: durable\n"
        f"first: {TODAY}\nstatus: active\nsupersedes: [\"[[lives-in-berlin]]\"]\n---\nLives in Munich.\n",
        "lives-in-munich"))
    (root / "beliefs" / "lives-in-munich.md").write_text(munich)
    r = cli("--vault", root, "validate", "--json")
    line = 1 + next(i for i, ln in enumerate(munich.splitlines()) if ln.startswith("supersedes:"))
    assert any(p["path"] == "beliefs/lives-in-munich.md" and p["line"] == line and "lives-in-berlin" in p["message"]
               and "epimem belief supersede lives-in-berlin --by lives-in-munich" in p["message"]
               for p in r.json()["problems"]), r.out
    assert cli("--vault", root, "belief", "supersede", "lives-in-berlin", "--by", "lives-in-munich").code == 0
    assert not any("supersede" in p["message"] for p in cli("--vault", root, "validate", "--json").json()["problems"])
