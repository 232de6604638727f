"""Rule 19 (issue 24, item 1): sessions are counted, not named. Only a session the vault counted
(the session-start hook's session id) moves a belief once; names nobody counted are recorded but
together move a belief at most one step a day per source."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from vaults import count_sessions

from epimem.api.memory import Memory

EPIMEM = str(Path(sys.executable).parent / "epimem")


def orm(cli, root) -> None:
    r = cli("--vault", root, "belief", "add", "--title", "Avoids ORMs", "--statement",
            "Writes SQL by hand rather than through an ORM.", "--kind", "preference", "--basis", "behavioral",
            "--permanence", "stable")
    assert r.code == 0, r.err


def confirm(cli, root, session: str, n: int, *extra: str):
    return cli("--vault", root, *extra, "observe", "--connects", "avoids-orms", "--strength", "confirming",
               "--evidence", f"Wrote the query by hand again ({session}, {n}).", "--session", session, "--json")


def confidence(cli, root) -> float:
    return cli("--vault", root, "belief", "show", "avoids-orms", "--json").json()["confidence"]


@pytest.mark.seed_rules
def test_twelve_made_up_sessions_move_a_belief_one_step(vault, cli):
    """The reproduction of the issue: twelve invented session ids took 0.30 to 0.90 in a minute."""
    root = vault.root
    orm(cli, root)
    reasons, codes = [], []
    for n in range(12):
        r = confirm(cli, root, f"made-up-{n}", n)
        codes.append(r.code)
        if r.code == 0:
            reasons.append(r.json()["observations"][0]["reason"])
        else:
            assert "rule 9" in r.err and "never counted" in r.err, r.err
    assert confidence(cli, root) == 0.35
    assert all("rule 19" in why for why in reasons[1:]), reasons
    # the names nobody counted share one session's three a day (rule 9): on record as evidence,
    # moving the number once; the other nine are refused
    assert codes == [0] * 3 + [1] * 9
    log = (root / "observations/2026-11.md").read_text()
    assert log.count("## obs-") == 3
    # the next day, one more step: a day's step per source, not a session's
    assert confirm(cli, root, "made-up-12", 12, "--today", "2026-12-01").code == 0
    assert confirm(cli, root, "made-up-13", 13, "--today", "2026-12-01").code == 0
    assert confidence(cli, root) == 0.40


@pytest.mark.seed_rules
def test_a_session_the_hook_counted_moves_it_once(vault, cli, tmp_path):
    root = vault.root
    orm(cli, root)
    for sid in ("3f1c-real-a", "3f1c-real-b"):
        payload = {"session_id": sid, "cwd": str(tmp_path), "hook_event_name": "SessionStart", "source": "startup"}
        r = subprocess.run([EPIMEM, "hook", "session-start", "--vault", str(root)], input=json.dumps(payload),
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
    counted = json.loads((root / "state/sessions.json").read_text())["counted"]
    assert set(counted) == {"3f1c-real-a", "3f1c-real-b"}
    assert confirm(cli, root, "3f1c-real-a", 1).json()["observations"][0]["confidence_after"] == 0.35
    # the same counted session again, and in alternation with the other: once each
    for n, sid in enumerate(("3f1c-real-a", "3f1c-real-b", "3f1c-real-a", "3f1c-real-b")):
        confirm(cli, root, sid, 10 + n)
    assert confidence(cli, root) == 0.40
    # a made-up name beside them still has its one step of the day
    confirm(cli, root, "made-up", 20)
    assert confidence(cli, root) == 0.45


@pytest.mark.seed_rules
def test_a_back_dated_entry_of_an_uncounted_session_moves_nothing(vault, cli):
    """Twelve entries dated twelve past days are not twelve days' steps."""
    root = vault.root
    orm(cli, root)
    for n in range(1, 6):
        r = cli("--vault", root, "observe", "--connects", "avoids-orms", "--strength", "confirming",
                "--evidence", f"Hand-written SQL on day {n}.", "--session", f"past-{n}",
                "--date", f"2026-11-{20 + n:02d}", "--json")
        assert r.code == 0, r.err
        assert "rule 19" in r.json()["observations"][0]["reason"]
    assert confidence(cli, root) == 0.30


@pytest.mark.seed_rules
def test_made_up_sessions_lower_a_belief_one_step_a_day_too(vault, cli):
    root = vault.root
    orm(cli, root)
    from epimem.core.errors import Conflict

    vault_mem = Memory(root)
    for n in range(3):
        vault_mem.observe([{"connects": "avoids-orms", "strength": "contradicting", "session": f"fake-{n}",
                            "evidence": f"Reached for the ORM ({n})."}])
    with pytest.raises(Conflict, match="rule 9"):  # the names nobody counted share one session's three a day
        vault_mem.observe([{"connects": "avoids-orms", "strength": "contradicting", "session": "fake-3",
                            "evidence": "Reached for the ORM (3)."}])
    # the first challenge is free (rule 4), and the names nobody counted take one step a day
    assert vault_mem.belief("avoids-orms").confidence == 0.30
    Memory(root, today="2026-12-01").observe([{"connects": "avoids-orms", "strength": "contradicting",
                                               "session": "fake-x", "evidence": "The ORM again."}])
    assert vault_mem.belief("avoids-orms").confidence == 0.20


@pytest.mark.seed_rules
def test_a_counted_session_is_known_for_a_week(vault):
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference", basis="behavioral",
                     permanence="stable")
    count_sessions(vault, "old-one", today="2026-11-20")
    count_sessions(vault, "new-one", today="2026-11-29")

    def confirm(session, text):
        return vault.observe([{"connects": "avoids-orms", "strength": "confirming", "session": session,
                               "evidence": text}]).results[0]

    assert confirm("other", "SQL by hand in the report.").after == 0.35   # the day's uncounted step
    # counted ten days ago: no longer known, so a name like any other, and the day's step is spent
    r = confirm("old-one", "SQL by hand in the export.")
    assert r.after == 0.35 and "rule 19" in r.reason
    assert confirm("new-one", "SQL by hand in the import.").after == 0.40  # counted yesterday
    counted = json.loads((vault.root / "state/sessions.json").read_text())["counted"]
    assert counted == {"new-one": "2026-11-29"}  # the week-old id has left the counter
