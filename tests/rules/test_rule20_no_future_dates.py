"""Rule 20 (issue 24, item 2): evidence is never dated in the future. The machine's clock bounds
every write whatever `--today` says; `validate` reports a future date, `commit` leaves it out;
decay counts from the earlier of the date and today. Only the test suite's switch lets a replayed
day date writes (these tests run without it, against the real clock)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import anyio
import pytest
from vaults import new_vault

from epimem.core import kernel

EPIMEM = str(Path(sys.executable).parent / "epimem")
REAL = date.today()
PAST = (REAL - timedelta(days=10)).isoformat()
FUTURE = (REAL + timedelta(days=400)).isoformat()


@pytest.fixture
def real_clock(monkeypatch, tmp_path):
    """A vault made ten days ago, and the machine's clock in charge of writes."""
    mem = new_vault(tmp_path / "vault", today=PAST)
    monkeypatch.delenv("EPIMEM_TEST_CLOCK", raising=False)
    monkeypatch.delenv("EPIMEM_TODAY", raising=False)
    mem.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference", basis="behavioral",
                   permanence="situational")
    return mem


def commits(root) -> int:
    return int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=root, capture_output=True,
                              text=True).stdout)


def observe(cli, root, *extra):
    return cli("--vault", root, *extra, "observe", "--connects", "avoids-orms", "--strength", "confirming",
               "--evidence", "Wrote the migration in SQL.", "--json")


def test_an_observation_dated_in_the_future_is_refused(real_clock, cli):
    """The reproduction: `observe … --date 2030-01-01` set `confirmed` in the future and froze decay."""
    root = real_clock.root
    n = commits(root)
    r = cli(
        "--vault", root, "observe", "--connects", "avoids-orms", "--strength", "confirming",
        "--evidence", "Wrote the migration in SQL.", "--date", FUTURE, "--json")
    assert r.code != 0 and "rule 20" in r.err and "date" in r.err
    assert commits(root) == n
    assert real_clock.belief("avoids-orms").confirmed is None


def test_a_future_today_dates_no_write_but_still_shows(real_clock, cli):
    root = real_clock.root
    n = commits(root)
    r = observe(cli, root, "--today", FUTURE)
    assert r.code != 0 and "rule 20" in r.err and "machine's date" in r.err
    r = cli("--vault", root, "--today", FUTURE, "belief", "add", "--title", "Tabs", "--statement", "Tabs.",
            "--kind", "preference", "--basis", "behavioral", "--permanence", "durable")
    assert r.code != 0 and "rule 20" in r.err
    assert commits(root) == n
    # reading with a future day is a view: decay to that day, nothing written
    show = cli("--vault", root, "--today", FUTURE, "belief", "show", "avoids-orms", "--json").json()
    assert show["effective_confidence"] < show["confidence"]
    # a day in the past is the user's word (rule 22 sends it through their permission prompt)
    assert observe(cli, root, "--today", PAST).code == 0
    assert real_clock.belief("avoids-orms").confirmed.isoformat() == PAST


def test_mcp_date_in_the_future_is_a_tool_error(real_clock):
    from mcp import Client

    from epimem.mcp.server import build

    async def main():
        async with Client(build(real_clock.root)) as c:
            r = await c.call_tool("observe", {"observations": [
                {"connects": "avoids-orms", "strength": "confirming", "evidence": "SQL again.", "date": FUTURE}]})
            assert r.is_error and "rule 20" in r.content[0].text
    anyio.run(main)
    # a server started with a future --today dates nothing either
    async def future():
        async with Client(build(real_clock.root, today=FUTURE)) as c:
            r = await c.call_tool("observe", {"observations": [
                {"connects": "avoids-orms", "strength": "confirming", "evidence": "SQL once more."}]})
            assert r.is_error and "rule 20" in r.content[0].text
    anyio.run(future)
    assert real_clock.belief("avoids-orms").confirmed is None


def test_a_hand_edited_future_date_is_reported_and_not_committed(real_clock, cli):
    root = real_clock.root
    p = root / "beliefs/avoids-orms.md"
    p.write_text(p.read_text().replace("confirmed:", f"confirmed: {FUTURE}", 1))
    r = cli("--vault", root, "validate", "--json")
    assert r.code != 0
    problems = r.json()["problems"]
    assert any(pr["path"] == "beliefs/avoids-orms.md" and "rule 20" in pr["message"] and FUTURE in pr["message"]
               for pr in problems), problems
    n = commits(root)
    r = cli("--vault", root, "commit")
    assert commits(root) == n and "rule 20" in r.err + r.out
    assert FUTURE in p.read_text()  # the user's edit is left as it is, for them to fix
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    assert "beliefs/avoids-orms.md" in status


def test_a_hand_edited_future_date_is_read_as_last_committed_and_outranks_nothing(real_clock, cli, tmp_path):
    """A model (or a careless edit) setting `confirmed` in the future on an old belief: refused by
    `validate`, so every reader shows the belief as committed (rule 21) — decayed as it was, and
    ranked as the older of two beliefs on one subject (recall's newer-first), not as the newer."""
    root = real_clock.root
    old = (REAL - timedelta(days=300)).isoformat()
    assert cli("--vault", root, "--today", old, "belief", "add", "--title", "Indents code with tabs",
               "--statement", "Indents source code with tabs rather than spaces.", "--kind", "preference",
               "--basis", "behavioral", "--permanence", "durable", "--confidence", "0.6").code == 0
    assert cli("--vault", root, "belief", "add", "--title", "Indents code with spaces",
               "--statement", "Indents source code with spaces rather than tabs.", "--kind", "preference",
               "--basis", "behavioral", "--permanence", "durable", "--confidence", "0.6").code == 0
    p = root / "beliefs/indents-code-with-tabs.md"
    p.write_text(p.read_text().replace("confirmed:", f"confirmed: {FUTURE}", 1))
    d = cli("--vault", root, "recall", "indents with tabs", "--json").json()
    ids = [h["id"] for h in d["results"]]
    assert ids.index("indents-code-with-spaces") < ids.index("indents-code-with-tabs"), d["results"]
    tabs = next(h for h in d["results"] if h["id"] == "indents-code-with-tabs")
    assert tabs["effective_confidence"] < 0.5  # 300 days of decay, not frozen by the edit
    assert any(r["path"] == "beliefs/indents-code-with-tabs.md" and "rule 20" in r["message"]
               for r in d["refused"]), d
    show = cli("--vault", root, "belief", "show", "indents-code-with-tabs", "--json").json()
    assert show["confirmed"] is None and show["effective_confidence"] == tabs["effective_confidence"]
    assert "confirmed: " + FUTURE in p.read_text()  # the edit is left for the user to fix


def test_the_hook_counts_on_the_machines_day_whatever_today_says(real_clock, tmp_path):
    payload = {"session_id": "s-1", "cwd": str(tmp_path), "hook_event_name": "SessionStart", "source": "startup"}
    r = subprocess.run([EPIMEM, "hook", "session-start", "--vault", str(real_clock.root), "--today", FUTURE],
                       input=json.dumps(payload), capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    s = json.loads((real_clock.root / "state/sessions.json").read_text())
    day = date.today().isoformat()  # not REAL: a suite that crosses midnight ran the hook on the next day
    assert s["last_session"] == day and s["counted"] == {"s-1": day}


def test_decay_counts_from_the_earlier_of_the_date_and_today():
    today = date(2026, 6, 1)
    later = date(2031, 5, 5)
    # a date after today never raises a belief above what it stores, nor holds it above a dated one
    assert kernel.effective_at(0.75, "situational", later, False, today, kernel.DECAY, kernel.DECAY_FLOOR) == 0.75
    assert kernel.effective_at(0.75, "situational", later, False, today, kernel.DECAY, kernel.DECAY_FLOOR) == \
        kernel.effective_at(0.75, "situational", today, False, today, kernel.DECAY, kernel.DECAY_FLOOR)


def test_only_the_test_suite_sets_the_clock_switch():
    """No installer, skill, hook template or agent instruction carries the test-only switch, and
    only the clock reads it."""
    import epimem

    pkg = Path(epimem.__file__).parent
    readers = [p.relative_to(pkg).as_posix() for p in pkg.rglob("*") if p.is_file() and p.suffix != ".pyc"
               and "EPIMEM_TEST_CLOCK" in p.read_text(errors="replace")]
    assert readers == ["store/clock.py"]
    root = pkg.parent
    for folder in ("skills", "hooks"):
        for p in (root / folder).rglob("*"):
            if p.is_file():
                assert "EPIMEM_TEST_CLOCK" not in p.read_text(errors="replace"), p


def test_a_committed_state_dated_ahead_holding_a_secret_is_shown_redacted_and_not_as_a_refused_edit():
    # Another machine's clock ran ahead and the statement holds a key: what epimem committed is the
    # file as it is, so no "hand edit refused" line; and what is shown is redacted (rule 23).
    from epimem.core import reading
    from epimem.core.notes import parse_belief
    from epimem.core.params import DEFAULTS

    key = "sk-ant-Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk"
    text = ("---\ntitle: Keeps keys in env\nkind: habit\nbasis: behavioral\nconfidence: 0.40\npermanence: durable\n"
            f"first: {PAST}\nconfirmed: {FUTURE}\nchallenged:\nstatus: active\ntags: []\nscope: global\n"
            f"pinned: false\nsupersedes: []\n---\nPasted {key} once.\n\n## Evidence\n")
    now = parse_belief(text, "keeps-keys-in-env", "beliefs/keeps-keys-in-env.md")
    why = reading.why_not(now, DEFAULTS, REAL, real=REAL)
    assert "rule 20" in why
    seen = reading.last_valid("beliefs/keeps-keys-in-env.md", "keeps-keys-in-env", why, text, DEFAULTS, REAL,
                              now=now)
    assert seen.refused is None and seen.belief is not None
    assert key not in seen.belief.statement


EDITED = "Writes SQL by hand, even for migrations."


def _hand_edit_ahead(root, day: str) -> Path:
    # The statement is reworded too: the edit is seen, or not, in what recall returns.
    p = root / "beliefs/avoids-orms.md"
    p.write_text(p.read_text().replace("confirmed:", f"confirmed: {day}", 1).replace("Writes SQL by hand.", EDITED))
    return p


def _recalled(cli, root) -> dict:
    d = cli("--vault", root, "recall", "writes SQL by hand", "--json").json()
    hit = next(h for h in d["results"] if h["id"] == "avoids-orms")
    refused = [r for r in d["refused"] if r["path"] == "beliefs/avoids-orms.md"]
    return {"text": hit["text"], "refused": refused}


def test_an_index_written_before_dates_were_judged_reads_a_hand_edit_ahead_again(real_clock, cli, monkeypatch):
    # The index of an epimem that showed a hand edit dated ahead as it is (here: built under the
    # test clock, which judges no date, and without the `judged` day the manifest now carries)
    # kept serving it until the file changed. The next sync reads every belief file once more.
    root = real_clock.root
    _hand_edit_ahead(root, FUTURE)
    monkeypatch.setenv("EPIMEM_TEST_CLOCK", "1")
    assert _recalled(cli, root) == {"text": EDITED, "refused": []}
    manifest = root / ".epimem/recall/manifest.json"
    m = json.loads(manifest.read_text())
    del m["judged"]
    manifest.write_text(json.dumps(m))
    monkeypatch.delenv("EPIMEM_TEST_CLOCK")
    got = _recalled(cli, root)
    assert got["text"] == "Writes SQL by hand." and "rule 20" in got["refused"][0]["message"], got
    assert json.loads(manifest.read_text())["judged"] == date.today().isoformat()  # the run's day, not REAL


def test_a_refused_edit_dated_ahead_is_read_again_when_its_day_comes(real_clock, cli, monkeypatch):
    # Refused while its date is ahead of the machine's; on that day the file, unchanged, breaks
    # no rule: the index, a long-lived reader included, shows it as every other reader then does.
    from epimem.recall.api import Recaller
    from epimem.store import clock

    root = real_clock.root
    soon = REAL + timedelta(days=2)
    _hand_edit_ahead(root, soon.isoformat())
    assert _recalled(cli, root)["refused"]
    server = Recaller(root)
    assert server.search("writes SQL by hand")[0].snippet == "Writes SQL by hand."
    monkeypatch.setattr(clock, "machine_day", lambda: soon)
    assert server.search("writes SQL by hand")[0].snippet == EDITED
    assert _recalled(cli, root) == {"text": EDITED, "refused": []}
