"""Red-team round on rules 1–13: a careless or sycophantic model going around a rule through the
commands the skills allow (`epimem observe --origin skill …`), MCP's tools that do not ask, the
memory tool and the hooks. Each test is one way around, through exactly that path."""

from __future__ import annotations

import json

import pytest
from vaults import count_sessions


def _add(cli, root, title: str, statement: str, kind: str = "preference") -> None:
    r = cli("--vault", root, "belief", "add", "--title", title, "--statement", statement, "--kind", kind,
            "--basis", "behavioral", "--permanence", "durable")
    assert r.code == 0, r.err


def _entries(root) -> int:
    return sum(p.read_text().count("## obs-") for p in (root / "observations").glob("*.md"))


def test_back_dating_does_not_take_a_session_past_three(vault, cli):
    """Rule 9 counted a session's observations in this month's and last month's logs only; an
    entry dated earlier goes to its own month's log, where nobody counted it. `epimem observe
    --origin skill --session S --date 2026-03-01 …`, then 04-01, 05-01, …: the session the hook
    counted recorded six observations (and as many more as the model liked), all accepted."""
    root = vault.root
    count_sessions(vault, "real-1")
    _add(cli, root, "Likes tabs", "Indents with tabs.")
    out = []
    for n in range(6):
        r = cli("--vault", root, "observe", "--origin", "skill", "--session", "real-1", "--json",
                "--connects", "likes-tabs", "--strength", "complicating", "--date", f"2026-0{n + 3}-01",
                "--evidence", f"Mixed tabs and spaces in file {n}.")
        out.append((r.code, r.err))
    assert all(c != 0 and "rule 9" in e and "before 2026-10-01" in e for c, e in out), out
    assert _entries(root) == 0
    # last month's log is counted with this month's: three, wherever they are dated in it
    for n, day in enumerate(("2026-11-30", "2026-10-02", "2026-11-28", "2026-10-29")):
        r = cli("--vault", root, "observe", "--origin", "skill", "--session", "real-1", "--json",
                "--connects", "likes-tabs", "--strength", "complicating", "--date", day,
                "--evidence", f"Spaces in the template {n}.")
        assert r.code == (1 if n == 3 else 0), r.err
    assert _entries(root) == 3


def test_a_day_without_a_session_is_counted_in_its_own_months_log(vault, cli):
    """An observation without a session counts for its day (`day-2026-03-01`): its entries are in
    that day's month, which rule 9 did not read, so the day took any number of them."""
    root = vault.root
    _add(cli, root, "Likes tabs", "Indents with tabs.")
    codes = [cli("--vault", root, "observe", "--origin", "skill", "--json", "--connects", "likes-tabs",
                 "--strength", "complicating", "--date", "2026-03-01", "--evidence", f"Tabs in file {n}.").code
             for n in range(5)]
    assert codes == [0, 0, 0, 1, 1]
    assert _entries(root) == 3


def test_a_second_session_name_is_no_second_three(vault, cli, tmp_path):
    """Rule 9 bounded a session *name*, and a name is free: `epimem observe --origin skill --session
    a …` three times, then `--session b` three times, and a batch file whose items each name their
    own session, recorded twelve observations in one real session. Sessions the vault never counted
    share one session's bound a day per source (rule 19 has them share one step a day), as the inbox
    already had them share one bound of proposals; a session the hook counted keeps its own three."""
    root = vault.root
    _add(cli, root, "Likes tabs", "Indents with tabs.")

    def observe(session: str, n: int):
        return cli("--vault", root, "observe", "--origin", "skill", "--session", session, "--json",
                   "--connects", "likes-tabs", "--strength", "complicating",
                   "--evidence", f"Mixed tabs and spaces ({session}, {n}).")

    assert [observe("made-up-a", n).code for n in range(3)] == [0, 0, 0]
    r = observe("made-up-b", 0)
    assert r.code != 0 and "rule 9" in r.err and "never counted" in r.err, r.err
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps([{"connects": "likes-tabs", "strength": "complicating", "session": f"x-{n}",
                                  "evidence": f"Spaces in file {n}."} for n in range(6)]))
    r = cli("--vault", root, "observe", "--origin", "skill", "--input", batch, "--json")
    assert r.code != 0 and "rule 9" in r.err
    assert _entries(root) == 3
    # a session the hook counted is its own, beside the names nobody counted
    count_sessions(vault, "real-1")
    assert [observe("real-1", n).code for n in range(4)] == [0, 0, 0, 1]
    # and the next day the names nobody counted have a bound again
    r = cli("--vault", root, "--today", "2026-12-01", "observe", "--session", "made-up-c", "--json",
            "--connects", "likes-tabs", "--strength", "complicating", "--evidence", "Tabs in the new file.")
    assert r.code == 0, r.err


def test_fifty_session_names_in_one_mcp_call_are_one_sessions_three(vault):
    """MCP's `observe` takes up to 50 items, each with its own `session`: fifty made-up names were
    fifty observations of one call."""
    from epimem.core.errors import Conflict

    vault.add_belief(title="Likes tabs", statement="Indents with tabs.", kind="preference", basis="behavioral",
                     permanence="durable")
    items = [{"connects": "likes-tabs", "strength": "complicating", "session": f"mcp-{n}",
              "evidence": f"Spaces in file {n}."} for n in range(50)]
    with pytest.raises(Conflict) as e:
        vault.observe(items, source="mcp", session="mcp-conn", origin="mcp")
    assert "rule 9" in str(e.value)
    assert vault.observe(items[:3], source="mcp", session="mcp-conn", origin="mcp").commit
    with pytest.raises(Conflict):
        vault.observe(items[3:4], source="mcp", session="mcp-other", origin="mcp")


@pytest.mark.parametrize("strength,field", [("confirming", "confirmed"), ("contradicting", "challenged")])
def test_a_back_dated_observation_never_moves_a_date_back(vault, cli, strength, field):
    """`confirmed` is the *last* session whose behaviour fit the belief, `challenged` the last time
    something contradicted it. A confirmation of a counted session dated last month set `confirmed`
    to that day, over a later one: decay (rule 7) then counted from weeks earlier, and a belief the
    model wanted gone faded faster for being confirmed. A back-dated contradiction likewise hid
    the day a belief was last challenged."""
    root = vault.root
    _add(cli, root, "Likes tabs", "Indents with tabs.")
    count_sessions(vault, "real-1", "real-2")

    def observe(session: str, day: str, text: str):
        r = cli("--vault", root, "observe", "--origin", "skill", "--session", session, "--json",
                "--connects", "likes-tabs", "--strength", strength, "--date", day, "--evidence", text)
        assert r.code == 0, r.err

    observe("real-1", "2026-11-28", "Indented the new module with tabs.")
    shown = cli("--vault", root, "belief", "show", "likes-tabs", "--json").json()
    observe("real-2", "2026-10-03", "Had indented the old script with tabs.")
    after = cli("--vault", root, "belief", "show", "likes-tabs", "--json").json()
    assert after[field] == "2026-11-28"
    if strength == "confirming":  # one step up, and decay still counted from the later day
        assert after["effective_confidence"] > shown["effective_confidence"]


@pytest.mark.parametrize("extra", [
    ["--source", "mirror-interview", "--evidence", "I always indent with tabs, it is what I prefer."],
    ["--source", "interview", "--evidence", "Prefers tabs, in their words."],
    ["--evidence", "Said: I always indent with tabs."],
])
def test_what_the_user_said_is_not_behaviour(vault, cli, extra):
    """Rule 3: the user restating a belief is reinforcement, not confirmation; rule 6 keeps words and
    deeds apart. The mirror skill records an interview answer with `--source mirror-interview
    --basis self-report --evidence 'Said: …'`; a careless model that dropped `--basis self-report`
    (the default is behavioral) recorded the answer as behaviour: +0.05, and decay's clock reset."""
    root = vault.root
    _add(cli, root, "Likes tabs", "Indents with tabs.")
    count_sessions(vault, "real-1")
    before = cli("--vault", root, "belief", "show", "likes-tabs", "--json").json()["confidence"]
    r = cli("--vault", root, "observe", "--origin", "skill", "--session", "real-1", "--json",
            "--connects", "likes-tabs", "--strength", "confirming", *extra)
    assert r.code != 0 and "self-report" in r.err, (r.code, r.out, r.err)
    assert cli("--vault", root, "belief", "show", "likes-tabs", "--json").json()["confidence"] == before
    # said as what it is, it is recorded: reinforcement, no number moves
    r = cli("--vault", root, "observe", "--origin", "skill", "--session", "real-1", "--json",
            "--connects", "likes-tabs", "--strength", "confirming", "--basis", "self-report", *extra)
    assert r.code == 0, r.err
    assert r.json()["observations"][0]["confidence_after"] == before


def test_the_user_accepts_what_waited_however_many_days_it_came_from(vault):
    """Rule 9 bounded each proposal when it was proposed (three a day for the sessions the vault
    never counted). Accepting dates them today, with their sessions: the user who accepted a week's
    proposals at once must not find the fourth refused as if one session had made them today."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "inbox"))
    from inbox_support import require_review

    from epimem.api.memory import Memory

    vault.add_belief(title="Likes tabs", statement="Indents with tabs.", kind="preference", basis="behavioral",
                     permanence="durable")
    require_review(vault)
    ids = []
    for day in ("2026-11-27", "2026-11-28"):
        r = Memory(vault.root, today=day).observe(
            [{"connects": "likes-tabs", "strength": "complicating", "session": f"mcp-{day}-{n}",
              "evidence": f"Spaces in file {n} on {day}."} for n in range(3)], source="mcp", origin="mcp")
        ids += list(r.proposed)
    assert len(ids) == 6
    report = vault.inbox_accept(ids)
    assert report.commit and len(report.accepted) == 6


def test_an_old_transcript_is_still_read_by_the_user(tmp_path, cli):
    """The transcript pass dates what it finds when it was said; a session months old is the user
    running `epimem transcript` on an old file, not a session dating its entries away from rule 9."""
    import shutil
    from pathlib import Path

    from epimem.api.memory import Memory

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "transcript.jsonl"
    t = tmp_path / "s.jsonl"
    shutil.copy(fixture, t)
    root = tmp_path / "v"
    Memory.init(root, today="2027-03-01")
    r = cli("--vault", root, "--today", "2027-03-01", "transcript", t, "--json")
    assert r.code == 0, r.err
    obs = r.json()["observations"]
    assert obs and all(o["id"].startswith("obs-20261130-") for o in obs), obs  # dated when it was said
    assert "without the session" in r.err
    assert (root / "observations/2026-11.md").exists()
