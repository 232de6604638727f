"""The review inbox against an adversary (red team): an unattended writer, or a careless model
using only the commands and tools it is allowed, must not get a proposal applied without the
user, nor make the inbox show something other than what accepting does. Each test drives the
real command, MCP tool or page."""

from __future__ import annotations

import json
import subprocess

import anyio
from inbox_support import belief_bytes, require_review

from epimem.api.memory import Memory

TODAY = "2026-11-30"
BELIEF = "prefers-small-pull-requests"
SECRET = "ghp_" + "Zq8Lm2Xc4Vb6Nn0Pp9Rr7Tt5Yy3Uu1Ii8Oo6Aa"


def _vault(tmp_path, cli) -> Memory:
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    mem = Memory(root, today=TODAY)
    mem.add_belief(title="Prefers small pull requests", statement="Splits work into small, reviewable PRs.",
                   kind="workflow", basis="behavioral", permanence="durable")
    require_review(mem)
    return mem


def _history(root) -> str:
    return subprocess.run(["git", "log", "-p", "--all", "--format=%B"], cwd=root, capture_output=True,
                          text=True, check=True).stdout


# --- a secret in a proposal -------------------------------------------------------------------------

def test_a_secret_in_a_proposed_title_tag_or_successor_leaves_a_proposal_the_inbox_can_read(tmp_path, cli):
    """The write path's redaction rewrote the proposal's `observation:` mapping as a Python repr
    (yaml_scalar had no case for a mapping): the proposal became a file `epimem inbox` cannot
    read, and the inbox said it was empty."""
    mem = _vault(tmp_path, cli)
    items = [{"connects": "new", "strength": "single", "evidence": "Pasted a deploy key into the chat.",
              "title": f"Deploys with {SECRET}", "tags": [f"key-{SECRET}"], "session": "s1"},
             {"connects": BELIEF, "strength": "contradicting", "evidence": "Sent one huge PR.",
              "successor": f"Ships big PRs with {SECRET}", "session": "s2"}]
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps(items))
    r = cli("--vault", mem.root, "observe", "--origin", "mcp", "--input", batch, "--json")
    assert r.code == 0, r.err
    ids = r.json()["proposed"]
    assert len(ids) == 2
    listed = cli("--vault", mem.root, "inbox", "--json")
    assert listed.code == 0, listed.err
    shown = listed.json()
    assert shown["problems"] == [] and [p["id"] for p in shown["proposals"]] == sorted(ids)
    by_id = {p["id"]: p for p in shown["proposals"]}
    new = by_id[ids[0]]["observation"]
    assert new["title"] == "Deploys with [REDACTED:github-token]" and new["tags"] == ["key-[REDACTED:github-token]"]
    assert by_id[ids[1]]["observation"]["successor"] == "Ships big PRs with [REDACTED:github-token]"
    assert cli("--vault", mem.root, "inbox", "accept", ids[0]).code == 0
    assert SECRET not in _history(mem.root)


def test_a_secret_typed_into_a_proposal_file_is_redacted_in_the_listing_the_mcp_tool_and_the_page(tmp_path, cli):
    """Rule 23 on the inbox's read path: the diff was redacted, but the proposal's own evidence,
    source and session were shown as the file holds them (a hand edit not yet committed, a file
    a remote pushed, a pattern added after it was written)."""
    from test_inbox_page import _call

    from epimem.mirror.serve import Server

    mem = _vault(tmp_path, cli)
    r = cli("--vault", mem.root, "observe", "--origin", "mcp", "--connects", BELIEF, "--strength", "confirming",
            "--evidence", "Split the PR in three.", "--session", "s1", "--json")
    (pid,) = r.json()["proposed"]
    f = mem.root / "inbox" / f"{pid}.md"
    f.write_text(f.read_text().replace("evidence: Split the PR in three.", f"evidence: Pushed with {SECRET}")
                 .replace("source: cli", f"source: bot {SECRET}"))
    assert SECRET in f.read_text()
    shown = cli("--vault", mem.root, "inbox", "--diff").out + cli("--vault", mem.root, "inbox", "--json").out

    async def mcp_inbox():
        from mcp import Client

        from epimem.mcp.server import build

        async with Client(build(mem.root, today=TODAY)) as c:
            return json.dumps((await c.call_tool("inbox", {})).structured_content)

    shown += anyio.run(mcp_inbox)
    srv = Server(mem, port=0).start()
    try:
        shown += _call(srv.url)[1]
    finally:
        srv.close()
    assert pid in shown and "Pushed with [REDACTED:github-token]" in shown
    assert SECRET not in shown


# --- a flood ----------------------------------------------------------------------------------------

def test_made_up_session_names_cannot_flood_the_inbox(tmp_path, cli):
    """Rule 9 held per session name, and a name is free: one MCP call of 50 observations, each
    naming its own session, queued 50 proposals (a CLI batch, a thousand). Sessions the vault
    never counted share one session's bound a day per source, as they share one step a day (rule
    19); a session the hook counted keeps its own."""
    from mcp import Client

    from epimem.mcp.server import build

    mem = _vault(tmp_path, cli)
    mem.session_start("startup", session="hook-counted-1")
    before = belief_bytes(mem.root)
    flood = [{"connects": BELIEF, "strength": "confirming", "evidence": f"Split PR number {i}.", "session": f"fake-{i}"}
             for i in range(50)]

    async def main():
        async with Client(build(mem.root, today=TODAY)) as c:
            r = await c.call_tool("observe", {"observations": flood})
            assert r.is_error and "never counted" in r.content[0].text, r.content[0].text
            for i in range(3):  # one at a time, each a new made-up session
                r = await c.call_tool("observe", {"observations": [flood[i]]})
                assert not r.is_error and r.structured_content["proposed"], r.content[0].text
            r = await c.call_tool("observe", {"observations": [flood[3]]})
            assert r.is_error and "never counted" in r.content[0].text, r.content[0].text
            # the session the hook counted is its own session, and keeps its three
            r = await c.call_tool("observe", {"observations": [dict(flood[4], session="hook-counted-1")]})
            assert not r.is_error and r.structured_content["proposed"], r.content[0].text
    anyio.run(main)
    batch = tmp_path / "flood.json"
    batch.write_text(json.dumps([dict(o, evidence=o["evidence"] + " (cli)") for o in flood]))
    r = cli("--vault", mem.root, "observe", "--origin", "mcp", "--input", batch)
    assert r.code != 0 and "never counted" in r.err
    assert len(list((mem.root / "inbox").glob("*.md"))) == 4
    assert belief_bytes(mem.root) == before


# --- attempts already blocked (an adversary is a test case) ----------------------------------------------

def _propose_cli(cli, mem, text: str, session: str) -> str:
    r = cli("--vault", mem.root, "observe", "--origin", "mcp", "--connects", BELIEF, "--strength", "confirming",
            "--evidence", text, "--session", session, "--json")
    assert r.code == 0, r.err
    return r.json()["proposed"][0]


def test_an_origin_that_is_no_unattended_path_is_refused_not_written(tmp_path, cli):
    """A Python caller (the memory tool's kind) naming itself "user" or "cli", or "": refused,
    neither applied as the user's nor written as a proposal the inbox cannot read."""
    import pytest

    from epimem.core.errors import InputError

    mem = _vault(tmp_path, cli)
    before = belief_bytes(mem.root)
    for origin in ("user", "cli", ""):
        with pytest.raises(InputError, match="unknown origin"):
            mem.observe([{"connects": BELIEF, "strength": "confirming", "evidence": "Me, really."}],
                        source="cli", session="s1", origin=origin)
    assert belief_bytes(mem.root) == before and not list((mem.root / "inbox").glob("*.md"))


def test_a_proposal_on_a_belief_retired_since_is_shown_refused_and_accepting_writes_nothing(tmp_path, cli):
    mem = _vault(tmp_path, cli)
    pid = _propose_cli(cli, mem, "Split the PR in three.", "s1")
    assert cli("--vault", mem.root, "belief", "retire", BELIEF, "--note", "no longer").code == 0
    before = belief_bytes(mem.root)
    (prop,) = cli("--vault", mem.root, "inbox", "--json").json()["proposals"]
    assert "retired" in prop["refused"] and prop["changes"] == []
    r = cli("--vault", mem.root, "inbox", "accept", pid)
    assert r.code == 1 and "retired" in r.err
    assert belief_bytes(mem.root) == before and (mem.root / "inbox" / f"{pid}.md").is_file()


def test_a_proposal_edited_to_carry_a_confidence_or_a_future_date_gets_neither(tmp_path, cli):
    """Nothing in a proposal is a number: a `confidence:` added by hand is refused as observe
    refuses it, a date after today is replaced by the day of the decision (rule 20)."""
    mem = _vault(tmp_path, cli)
    pid = _propose_cli(cli, mem, "Split the PR in three.", "s1")
    f = mem.root / "inbox" / f"{pid}.md"
    text = f.read_text()
    f.write_text(text.replace("  strength: confirming\n", "  strength: confirming\n  confidence: 0.95\n"))
    (prop,) = cli("--vault", mem.root, "inbox", "--json").json()["proposals"]
    assert "confidence" in prop["refused"] and prop["changes"] == []
    r = cli("--vault", mem.root, "inbox", "accept", pid)
    assert r.code == 1 and "confidence" in r.err
    assert "date: " in text
    f.write_text("\n".join("  date: 2099-01-01" if ln.startswith("  date: ") else ln for ln in text.split("\n")))
    r = cli("--vault", mem.root, "inbox", "accept", pid, "--json")
    assert r.code == 0, r.err
    assert "2099" not in (mem.root / "beliefs" / f"{BELIEF}.md").read_text()
    assert f"- {TODAY} · confirming" in (mem.root / "beliefs" / f"{BELIEF}.md").read_text()


def test_the_pages_buttons_refuse_another_vaults_token_and_page(tmp_path, cli):
    """Two vaults served at once: the other page's token, posted from that page or this one, decides nothing."""
    from test_inbox_page import _call

    from epimem.mirror.serve import Server

    mem = _vault(tmp_path, cli)
    pid = _propose_cli(cli, mem, "Split the PR in three.", "s1")
    other = Memory(tmp_path / "w", today=TODAY)
    assert cli("init", other.root).code == 0
    before = belief_bytes(mem.root)
    a, b = Server(mem, port=0).start(), Server(other, port=0).start()
    try:
        base_a, base_b = f"http://127.0.0.1:{a.port}", f"http://127.0.0.1:{b.port}"
        for origin in (base_b, base_a):
            status, _, _ = _call(base_a + "/inbox/accept", {"id": pid, "token": b.token, "do": "accept"},
                                 {"Origin": origin})
            assert status == 403
        status, _, _ = _call(base_a + "/inbox/accept", {"id": pid, "token": a.token, "do": "accept"},
                             {"Origin": base_b})
        assert status == 403
    finally:
        a.close()
        b.close()
    assert belief_bytes(mem.root) == before and (mem.root / "inbox" / f"{pid}.md").is_file()
