"""The review inbox (issue 29, item 2; SPEC §15): with `review: required`, what unattended paths
observe waits as a proposal; the user accepts (the rules applied as if just observed) or rejects.

Every path a user or an agent really takes is driven: the session-end hook's command, the MCP
server through the real SDK client, the CLI, the Python API the memory-tool backend calls."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from inbox_support import belief_bytes, head, require_review

from epimem.api.memory import Memory

TODAY = "2026-11-30"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "transcript.jsonl"
BELIEF = "prefers-small-pull-requests"


def seed(mem: Memory) -> None:
    mem.add_belief(title="Prefers small pull requests", statement="Splits work into small, reviewable PRs.",
                   kind="workflow", basis="behavioral", permanence="durable")
    mem.add_belief(title="Tests against real systems", statement="Prefers tests that hit real services.",
                   kind="preference", basis="behavioral", permanence="durable", confidence=0.6)


def confirming(text: str, **kw) -> dict:
    return {"connects": BELIEF, "strength": "confirming", "basis": "behavioral", "evidence": text, **kw}


@pytest.fixture
def rv(vault):
    """A vault with two beliefs and `review: required`."""
    seed(vault)
    require_review(vault)
    return vault


def _epimem(root: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "EPIMEM_TODAY": TODAY}
    return subprocess.run([sys.executable, "-m", "epimem", "--vault", str(root), *args], capture_output=True,
                          text=True, env=env, timeout=60, **kw)


# --- the setting --------------------------------------------------------------------------------

def test_review_is_off_by_default_and_a_wrong_value_is_named_with_its_line(vault, cli):
    assert vault.params.review == "off"
    p = vault.root / "epistemology.md"
    text = p.read_text(encoding="utf-8")
    p.write_text("---\nreview: sometimes\n" + text[4:], encoding="utf-8")
    r = cli("--vault", vault.root, "validate", "--json")
    assert r.code == 1, r.out
    found = [x for x in r.json()["problems"] if "review" in x["message"]]
    assert found and found[0]["path"] == "epistemology.md" and found[0]["line"] == 2, r.out
    assert "required" in found[0]["message"] and "sometimes" in found[0]["message"]
    assert Memory(vault.root).params.review == "off"  # defaulted, never a crash


# --- each unattended path lands in the inbox, and applies directly when review is off --------------

@pytest.mark.parametrize("required", [True, False])
def test_the_session_end_pass_proposes_when_review_is_required(vault, tmp_path, required):
    seed(vault)
    if required:
        require_review(vault)
    transcript = tmp_path / "session.jsonl"
    shutil.copy(FIXTURE, transcript)
    before, sha = belief_bytes(vault.root), head(vault.root)
    r = _epimem(vault.root, "hook", "observe-transcript", str(transcript))
    assert r.returncode == 0, r.stderr
    pending = sorted((vault.root / "inbox").glob("*.md"))
    if required:
        assert pending, "the transcript pass proposed nothing"
        assert belief_bytes(vault.root) == before  # nothing moved, not even the log
        log = subprocess.run(["git", "log", "--format=%s", f"{sha}..HEAD"], cwd=vault.root, capture_output=True,
                             text=True).stdout.splitlines()
        assert len(log) == 1 and log[0].startswith("inbox: "), log  # one commit
        out = _epimem(vault.root, "inbox", "--json")
        assert out.returncode == 0, out.stderr
        props = json.loads(out.stdout)["proposals"]
        assert {p["origin"] for p in props} == {"session-end"} and len(props) == len(pending)
        # The pass is once a session: what it proposed counts, it does not propose it again.
        again = _epimem(vault.root, "hook", "observe-transcript", str(transcript))
        assert again.returncode == 0 and sorted((vault.root / "inbox").glob("*.md")) == pending
    else:
        assert not pending
        assert belief_bytes(vault.root) != before
        assert list((vault.root / "observations").glob("*.md"))


@pytest.mark.seed_rules
@pytest.mark.parametrize("required", [True, False])
def test_an_agent_over_mcp_proposes_when_review_is_required(vault, required):
    from mcp import Client

    from epimem.mcp.server import build

    seed(vault)
    if required:
        require_review(vault)
    before = belief_bytes(vault.root)

    async def main():
        async with Client(build(vault.root, today=TODAY)) as c:
            r = await c.call_tool("observe", {"observations": [confirming("Split the migration into three PRs.")]})
            assert not r.is_error, r.content[0].text
            out = r.structured_content
            listed = (await c.call_tool("inbox", {})).structured_content
            return out, listed

    out, listed = anyio.run(main)
    if required:
        assert out["proposed"] and out["commit"]
        assert belief_bytes(vault.root) == before
        assert [p["id"] for p in listed["proposals"]] == out["proposed"]
        eff = listed["proposals"][0]["effects"][0]
        assert eff["confidence_before"] == 0.30 and eff["confidence_after"] == 0.35
    else:
        assert not out["proposed"]
        assert vault.belief(BELIEF).confidence == 0.35
        assert listed["proposals"] == []


@pytest.mark.seed_rules
def test_the_memory_tool_origin_proposes_and_the_cli_observe_applies(rv, cli):
    """What the Claude API memory-tool backend calls (`Memory.observe(origin="memory-tool")`) waits;
    the user's own `epimem observe` applies at once, review or not."""
    before = belief_bytes(rv.root)
    rep = rv.observe([confirming("Wrote 'I prefer tabs' to /memories/prefs.md.")], source="claude-api/memory",
                     origin="memory-tool")
    assert rep.proposed and not any(r.after for r in rep.results)
    assert belief_bytes(rv.root) == before
    r = cli("--vault", rv.root, "observe", "--connects", BELIEF, "--strength", "confirming",
            "--evidence", "Split the refactor before review.", "--json")
    assert r.code == 0, r.err
    assert r.json()["proposed"] == [] and rv.belief(BELIEF).confidence == 0.35


# --- nothing in the inbox moves a number --------------------------------------------------------------

@pytest.mark.seed_rules
def test_nothing_in_the_inbox_moves_a_number(rv, cli):
    from epimem.api.context import session_context

    session_context(str(rv.root), str(rv.root), rv.today)  # the context cache exists
    before = belief_bytes(rv.root)
    assert ".epimem/context.json" in before
    items = [confirming("Split the PR in three."),
             {"connects": "tests-against-real-systems", "strength": "contradicting", "evidence": "Mocked the DB."},
             {"connects": "new", "strength": "single", "title": "Writes commit messages in the imperative",
              "evidence": "Every commit said 'Add', 'Fix'.", "kind": "convention"}]
    rep = rv.observe(items, source="agent", session="s1", origin="mcp")
    assert len(rep.proposed) == 3
    for args in (("inbox",), ("inbox", "--json"), ("inbox", "--diff"), ("belief", "list"), ("validate",)):
        r = cli("--vault", rv.root, *args)
        assert r.code == 0, (args, r.out, r.err)
    session_context(str(rv.root), str(rv.root), rv.today)
    assert belief_bytes(rv.root) == before
    assert not list((rv.root / "tensions").glob("*.md"))
    # the listing says what accepting each would do, computed by the rules
    listed = cli("--vault", rv.root, "inbox", "--json").json()["proposals"]
    by = {p["observation"]["connects"]: p for p in listed}
    assert by[BELIEF]["effects"][0]["confidence_after"] == 0.35
    assert any(c["path"] == f"beliefs/{BELIEF}.md" and "+confidence: 0.35" in c["diff"] for c in by[BELIEF]["changes"])
    assert by["tests-against-real-systems"]["effects"][0]["tension_opened"]
    assert any(c["action"] == "create" and c["path"].startswith("beliefs/writes-commit") for c in by["new"]["changes"])


# --- accept is the observation made now; reject keeps it on record ----------------------------------

def _tree(root: Path) -> dict[str, bytes]:
    return {k: v for k, v in belief_bytes(root).items() if not k.startswith(".epimem")}


def test_accept_gives_what_a_direct_observe_gives_on_the_same_day(tmp_path):
    from vaults import new_vault

    a = new_vault(tmp_path / "a", today=TODAY)
    b = new_vault(tmp_path / "b", today=TODAY)
    for m in (a, b):
        seed(m)
        m.session_start("startup", session="sess-1")  # a counted session: rule 19's step is its own
    require_review(b)
    items = [confirming("Split the change into small PRs.", session="sess-1"),
             {"connects": "tests-against-real-systems", "strength": "contradicting", "evidence": "Mocked the DB.",
              "session": "sess-1"}]
    direct = a.observe(items, source="claude-code/transcript")
    rep = b.observe(items, source="claude-code/transcript", origin="session-end")
    assert len(rep.proposed) == 2
    done = b.inbox_accept(rep.proposed)
    assert done.accepted == rep.proposed and done.commit
    assert [(r.belief, r.before, r.after, r.reason) for r in done.results] == \
        [(r.belief, r.before, r.after, r.reason) for r in direct.results]
    assert _tree(a.root) == _tree(b.root)
    assert not list((b.root / "inbox").glob("*.md"))
    subject = subprocess.run(["git", "log", "-1", "--format=%s%n%b"], cwd=b.root, capture_output=True,
                             text=True).stdout
    assert subject.startswith("inbox accept ") and "Epimem-Op: inbox-accept" in subject


@pytest.mark.seed_rules
def test_accept_applies_todays_state_not_the_state_it_was_proposed_in(rv):
    rep = rv.observe([confirming("Split the PR in three.", session="s1")], source="agent", origin="mcp")
    rv.observe([confirming("Kept the PR under 200 lines.", session="s2")], source="cli")  # the user's, direct
    assert rv.belief(BELIEF).confidence == 0.35
    done = rv.inbox_accept(rep.proposed)
    # rule 19: neither session was counted, so the source's one step of the day was taken already
    assert done.results[0].before == 0.35 and done.results[0].after == 0.35


def test_reject_keeps_it_on_record_and_the_same_proposal_is_not_asked_twice(rv, cli):
    item = confirming("Split the PR in three.", session="s1")
    rep = rv.observe([item], source="agent", origin="mcp")
    pid = rep.proposed[0]
    before = belief_bytes(rv.root)
    r = cli("--vault", rv.root, "inbox", "reject", pid, "--note", "that was my colleague", "--json")
    assert r.code == 0, r.err
    assert r.json()["rejected"] == [pid] and r.json()["commit"]
    kept = rv.root / "inbox" / "rejected" / f"{pid}.md"
    assert kept.is_file() and "status: rejected" in kept.read_text() and "my colleague" in kept.read_text()
    assert not (rv.root / "inbox" / f"{pid}.md").exists()
    assert belief_bytes(rv.root) == before
    again = rv.observe([item], source="agent", origin="mcp")
    assert again.proposed == () and again.results[0].duplicate
    r = cli("--vault", rv.root, "inbox", "accept", pid)
    assert r.code == 1 and "rejected" in r.err
    r = cli("--vault", rv.root, "inbox", "reject", "prop-20261130-ffffffff")
    assert r.code == 1 and "no proposal" in r.err
    r = cli("--vault", rv.root, "inbox", "accept", "../beliefs/x")
    assert r.code != 0 and "not a proposal id" in r.err


def test_rule_9_holds_for_proposals(rv):
    items = [confirming(f"Split PR number {n}.", session="s9") for n in range(4)]
    from epimem.core.errors import Conflict

    with pytest.raises(Conflict, match="rule 9"):
        rv.observe(items, source="agent", origin="mcp")
    assert not list((rv.root / "inbox").glob("*.md"))
    rv.observe(items[:3], source="agent", origin="mcp")
    with pytest.raises(Conflict, match="rule 9"):
        rv.observe(items[3:], source="agent", origin="mcp")


# --- the model asks; the user decides --------------------------------------------------------------

def test_a_sycophantic_agent_over_mcp_can_neither_accept_nor_get_around_the_inbox(rv):
    from mcp import Client

    from epimem.mcp.server import build

    rv.session_start("startup", session="hook-counted-1")
    before = belief_bytes(rv.root)

    async def main():
        async with Client(build(rv.root, today=TODAY)) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert not any("accept" in n or "reject" in n for n in tools)
            assert tools["inbox"].annotations.read_only_hint is True
            # a counted session's id, the CLI's source name, a date: still a proposal
            tries = [{"observations": [confirming("I approve this myself.")], "session": "hook-counted-1"},
                     {"observations": [confirming("Accepted by the user (really).", session="cli")]},
                     {"observations": [confirming("Backdated.", date="2026-11-01", session="s-x")]}]
            for args in tries:
                r = await c.call_tool("observe", args)
                assert not r.is_error, r.content[0].text
                assert r.structured_content["proposed"], args
            # naming itself the CLI is not even accepted as input
            r = await c.call_tool("observe", {"observations": [confirming("From the CLI, honest.", source="cli")]})
            assert r.is_error and "source" in r.content[0].text
            # a made-up tool to accept its own proposal does not exist
            r = await c.call_tool("inbox_accept", {"ids": ["prop-20261130-00000000"]})
            assert r.is_error
    anyio.run(main)
    assert belief_bytes(rv.root) == before
    assert len(list((rv.root / "inbox").glob("*.md"))) == 3


def test_no_skill_allows_the_inbox_decisions():
    root = Path(__file__).resolve().parents[2]
    for skill in [*root.glob("skills/*/SKILL.md"), *root.glob("epimem/templates/**/SKILL.md")]:
        allowed = next((line for line in skill.read_text().splitlines() if line.startswith("allowed-tools:")), "")
        assert "inbox" not in allowed, skill


@pytest.mark.seed_rules
def test_the_today_switch_cannot_date_an_accepted_observation_after_the_machines_day(rv, monkeypatch, cli):
    """Rule 20 on accept: `--today` past the machine's date (without the test-only switch) is
    refused, nothing written; the proposal still waits and is applied with its own day."""
    rep = rv.observe([confirming("Split the PR in three.")], source="agent", origin="mcp")
    monkeypatch.delenv("EPIMEM_TEST_CLOCK")
    before = belief_bytes(rv.root)
    r = cli("--vault", rv.root, "--today", "2099-01-01", "inbox", "accept", rep.proposed[0], "--json")
    assert r.code == 1 and "rule 20" in r.err, r.err
    assert belief_bytes(rv.root) == before and (rv.root / "inbox" / f"{rep.proposed[0]}.md").is_file()
    r = cli("--vault", rv.root, "inbox", "accept", rep.proposed[0], "--json")
    assert r.code == 0, r.err
    b = Memory(rv.root).vault.read_belief(BELIEF)[1]
    assert b.confidence == 0.35 and all(e.date.isoformat() <= TODAY for e in b.evidence)


# --- a malformed file loses nothing -------------------------------------------------------------------

def test_a_malformed_inbox_file_is_named_with_its_line_and_nothing_is_lost(rv, cli):
    rep = rv.observe([confirming("Split the PR in three.", session="s1"),
                      confirming("Split the docs off.", session="s2")], source="agent", origin="mcp")
    bad_id, good_id = rep.proposed
    bad = rv.root / "inbox" / f"{bad_id}.md"
    bad.write_text(bad.read_text().replace("origin: mcp", "origin: [unclosed"), encoding="utf-8")
    text = bad.read_bytes()
    before = belief_bytes(rv.root)
    r = cli("--vault", rv.root, "inbox", "--json")
    assert r.code == 1
    assert [p["id"] for p in r.json()["proposals"]] == [good_id]
    (problem,) = r.json()["problems"]
    # YAML finds the unclosed list where the next key starts: the line it names is that one
    assert problem["path"] == f"inbox/{bad_id}.md" and problem["line"] in (4, 5), problem
    assert f"inbox/{bad_id}.md:{problem['line']}" in r.err and "YAML" in r.err
    r = cli("--vault", rv.root, "inbox", "accept", bad_id)
    assert r.code == 1 and f"inbox/{bad_id}.md:{problem['line']}" in r.err, r.err
    r = cli("--vault", rv.root, "validate", "--json")
    assert r.code == 1 and any(x["path"] == f"inbox/{bad_id}.md" and x["line"] == problem["line"]
                               for x in r.json()["problems"]), r.out
    assert bad.read_bytes() == text and belief_bytes(rv.root) == before
    r = cli("--vault", rv.root, "inbox", "accept", good_id)
    assert r.code == 0, r.err
    assert bad.read_bytes() == text


# --- two processes accept at once ----------------------------------------------------------------------

@pytest.mark.seed_rules
def test_concurrent_accepts_from_two_processes_apply_it_once(rv):
    rep = rv.observe([confirming("Split the PR in three.", session="s1")], source="agent", origin="mcp")
    pid = rep.proposed[0]
    env = {**os.environ, "EPIMEM_TODAY": TODAY}
    cmd = [sys.executable, "-m", "epimem", "--vault", str(rv.root), "inbox", "accept", pid, "--json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 1], outs
    loser = next(err for (out, err), p in zip(outs, procs, strict=True) if p.returncode == 1)
    assert pid in loser and ("no proposal" in loser or "already" in loser), loser
    b = Memory(rv.root).belief(BELIEF)
    assert b.confidence == 0.35
    log = (rv.root / "observations" / "2026-11.md").read_text()
    assert log.count("Split the PR in three.") == 1
    status = subprocess.run(["git", "status", "--porcelain"], cwd=rv.root, capture_output=True, text=True).stdout
    assert status == ""


# --- the session context -----------------------------------------------------------------------------

def test_the_session_context_says_how_many_wait(rv, cli):
    r = cli("--vault", rv.root, "skill", "observe", "--session", "s1")
    assert "wait" not in r.out.split("\n")[1]
    rv.observe([confirming("Split the PR in three.", session="s1")], source="agent", origin="mcp")
    rv.observe([confirming("Split the docs off.", session="s2")], source="agent", origin="mcp")
    r = cli("--vault", rv.root, "skill", "observe", "--session", "s1")
    assert "2 proposals of what to remember wait for the user's review" in r.out, r.out
    payload = json.dumps({"session_id": "hook-1", "cwd": str(rv.root), "source": "startup"})
    h = _epimem(rv.root, "hook", "session-start", input=payload)
    assert h.returncode == 0 and "2 proposals of what to remember" in h.stdout, (h.stdout, h.stderr)


def test_accepted_later_it_is_dated_the_day_of_the_decision_and_a_backdate_is_dropped(rv):
    rep = rv.observe([confirming("Split the PR in three.", date="2026-11-02", session="s1")], source="agent",
                     origin="mcp")
    later = Memory(rv.root, today="2026-12-03")
    done = later.inbox_accept(rep.proposed)
    assert done.results[0].observation.date.isoformat() == "2026-12-03"
    b = later.vault.read_belief(BELIEF)[1]
    assert str(b.confirmed) == "2026-12-03" and b.evidence[-1].date.isoformat() == "2026-12-03"
    assert "obs-20261203-" in (rv.root / "observations" / "2026-12.md").read_text()


def test_a_hand_edit_not_yet_committed_is_not_shown_in_a_preview(rv, cli):
    """Rule 23 and rule 18: a secret typed into a belief by hand is not shown by `inbox --diff`, and
    the preview says the edit must be committed first (as accepting would pass it through rule 18)."""
    secret = "ghp_" + "Zq8Lm2Xc4Vb6Nn0Pp9Rr7Tt5Yy3Uu1Ii8Oo6Aa"
    rv.observe([confirming("Split the PR in three.", session="s1")], source="agent", origin="mcp")
    p = rv.root / "beliefs" / f"{BELIEF}.md"
    p.write_text(p.read_text().replace("Splits work into small", f"Splits work ({secret}) into small"))
    r = cli("--vault", rv.root, "inbox", "--diff", "--json")
    assert secret not in r.out and secret not in r.err
    (prop,) = r.json()["proposals"]
    assert "hand edit not yet committed" in prop["refused"] and prop["changes"] == []


def test_observe_origin_on_the_command_line_proposes_and_its_choices_are_the_inbox_origins(rv, cli):
    from epimem.cli.main import ORIGINS as CLI_ORIGINS
    from epimem.core.inbox import ORIGINS

    assert CLI_ORIGINS == ORIGINS
    before = belief_bytes(rv.root)
    r = cli("--vault", rv.root, "observe", "--origin", "skill", "--connects", BELIEF, "--strength", "confirming",
            "--evidence", "Split the PR in three.", "--session", "s1", "--json")
    assert r.code == 0, r.err
    assert r.json()["proposed"] and belief_bytes(rv.root) == before
    r = cli("--vault", rv.root, "observe", "--origin", "nobody", "--connects", BELIEF, "--strength", "confirming",
            "--evidence", "x")
    assert r.code == 2 and "--origin" in r.err


def test_a_proposal_edited_to_claim_a_fact_is_refused_on_accept_as_observe_refuses_it(rv, cli):
    """Whoever writes a proposal file, accepting it is observe: rule 14 still refuses `basis: fact`."""
    rep = rv.observe([confirming("Split the PR in three.", session="s1")], source="agent", origin="mcp")
    p = rv.root / "inbox" / f"{rep.proposed[0]}.md"
    p.write_text(p.read_text().replace("  basis: behavioral\n", "  basis: fact\n"))
    subprocess.run(["git", "commit", "-qam", "edit"], cwd=rv.root, check=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x.invalid"})
    before = belief_bytes(rv.root)
    (prop,) = cli("--vault", rv.root, "inbox", "--json").json()["proposals"]
    assert "fact" in prop["refused"] and prop["changes"] == []
    r = cli("--vault", rv.root, "inbox", "accept", rep.proposed[0])
    assert r.code == 1 and "fact" in r.err
    assert belief_bytes(rv.root) == before and p.is_file()


@pytest.mark.parametrize("skill", ["observe", "mirror"])
def test_what_a_skill_records_is_proposed_when_review_is_required(rv, skill):
    """The skills' grant is `epimem observe --origin skill *`: a bare `epimem observe` from the
    model reaches the permission prompt, and the command the skill teaches, run as it is taught,
    waits in the inbox instead of changing a number (a model used to leave `--origin` out)."""
    import re
    import shlex

    text = (Path(__file__).resolve().parents[2] / "skills" / skill / "SKILL.md").read_text(encoding="utf-8")
    assert "Bash(epimem observe --origin skill *)" in text and "Bash(epimem observe *)" not in text
    taught = [ln.strip() for ln in text.splitlines() if re.match(r"\s*epimem observe ", ln)]
    assert taught and all(ln.startswith("epimem observe --origin skill ") for ln in taught)
    cmd = shlex.split(taught[0].replace("${CLAUDE_SESSION_ID}", "s-1").replace("BELIEF-ID", BELIEF)
                      .replace("prefers-small-pull-requests", BELIEF))
    before = belief_bytes(rv.root)
    p = _epimem(rv.root, *cmd[1:])
    assert p.returncode == 0, p.stderr
    assert belief_bytes(rv.root) == before
    assert len(json.loads(_epimem(rv.root, "inbox", "--json").stdout)["proposals"]) == 1


def test_a_proposal_edited_while_it_is_being_accepted_is_neither_applied_nor_removed(rv, monkeypatch):
    """The accept reads the proposal, then writes under the vault lock. A file tool rewriting it in
    between must not leave the old text applied and the new one deleted unseen: the accept is
    refused whole, and the edited proposal waits on."""
    from epimem.api import inbox

    pid = rv.observe([confirming("Split the PR in three.", session="s1")], source="agent", origin="mcp").proposed[0]
    path = rv.root / "inbox" / f"{pid}.md"
    real = inbox.as_now

    def edited_meanwhile(mem, p):
        path.write_text(path.read_text(encoding="utf-8").replace("Split the PR in three.", "One enormous PR."),
                        encoding="utf-8")
        return real(mem, p)

    monkeypatch.setattr(inbox, "as_now", edited_meanwhile)
    before, commit = belief_bytes(rv.root), head(rv.root)
    with pytest.raises(inbox.Conflict, match="changed after it was shown to you"):
        rv.inbox_accept([pid])
    assert belief_bytes(rv.root) == before and head(rv.root) == commit
    assert "One enormous PR." in path.read_text(encoding="utf-8")
    monkeypatch.setattr(inbox, "as_now", real)
    assert rv.inbox_accept([pid]).accepted == (pid,)
    assert not path.exists() and rv.belief(BELIEF).confidence > 0.55


def test_accept_and_reject_refuse_what_changed_since_it_was_shown(rv):
    from epimem.api import inbox
    from epimem.core import inbox as core_inbox

    pid = rv.observe([confirming("Split the PR in three.", session="s1")], source="agent", origin="mcp").proposed[0]
    shown = core_inbox.fingerprint(inbox.pending(rv)[0][0])
    path = rv.root / "inbox" / f"{pid}.md"
    path.touch()  # a re-save that changes nothing it says is not a change
    assert core_inbox.fingerprint(inbox.pending(rv)[0][0]) == shown
    path.write_text(path.read_text(encoding="utf-8").replace("Split the PR in three.", "One enormous PR."),
                    encoding="utf-8")
    for decide in (lambda: rv.inbox_accept([pid], seen={pid: shown}),
                   lambda: rv.inbox_reject([pid], seen={pid: shown})):
        with pytest.raises(inbox.Conflict, match=rf"inbox/{pid}.md changed after it was shown"):
            decide()
    assert path.is_file() and rv.belief(BELIEF).confidence == 0.55
    now = core_inbox.fingerprint(inbox.pending(rv)[0][0])
    assert rv.inbox_reject([pid], seen={pid: now})[1] == (pid,)
