"""What a confirmation and a session start change in a diff (issue 9, point 10): no
bookkeeping line that need not change. `confirmed_session` is no longer written (rule 3
reads the session of the last confirming observation from the log), and the per-day
tally of `state/sessions.json` gains a line on a day's first session only."""

import json
import subprocess

import pytest
from vaults import count_sessions

from epimem.core import merge
from epimem.store import sessions as sessions_file


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _changed_lines(root, rev="HEAD", path="beliefs/likes-tabs.md"):
    diff = _git(root, "show", "--format=", rev, "--", path)
    return [ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


def _confirm(mem, session, evidence):
    return mem.observe([{"connects": "likes-tabs", "strength": "confirming", "evidence": evidence,
                         "session": session}]).results[0]


@pytest.mark.seed_rules
def test_api_a_confirmation_changes_the_number_the_date_and_one_evidence_line(tabs):
    count_sessions(tabs, "s1", "s2")
    r = _confirm(tabs, "s1", "Tabs in the Makefile.")
    assert (r.before, r.after) == (0.30, 0.35)
    lines = _changed_lines(tabs.root)
    keys = sorted(ln.split(":")[0] for ln in lines if not ln.startswith("+- "))
    assert keys == ["+confidence", "+confirmed", "-confidence", "-confirmed"]
    [added] = [ln for ln in lines if ln.startswith("+- ")]
    assert "· confirming ·" in added and "Tabs in the Makefile. (0.30 → 0.35)" in added
    assert "confirmed_session" not in (tabs.root / "beliefs/likes-tabs.md").read_text()
    # rule 3 still holds: the same session confirms once, whatever call it comes in
    again = _confirm(tabs, "s1", "Tabs in the Go code.")
    assert again.after == 0.35 and "same session" in again.reason
    assert _confirm(tabs, "s2", "Tabs in the shell scripts.").after == 0.40


@pytest.mark.seed_rules
def test_api_a_file_written_before_keeps_its_session_until_the_next_confirmation(tabs):
    count_sessions(tabs, "s0", "s1", "s2")
    p = tabs.root / "beliefs/likes-tabs.md"
    _confirm(tabs, "s1", "Tabs in the Makefile.")
    # as an earlier epimem wrote it; the log does not hold that session's observation
    p.write_text(p.read_text().replace("challenged:", "challenged:\nconfirmed_session: s0")
                 .replace("observations/2026-11#obs-", "observations/2025-01#obs-"))
    tabs.commit_hand_edits()
    assert "same session" in _confirm(tabs, "s0", "Tabs in the README.").reason  # the old line still counts
    assert "confirmed_session: s0" in p.read_text()
    assert _confirm(tabs, "s2", "Tabs in the Go code.").after == 0.40
    assert "confirmed_session" not in p.read_text()              # gone with the confirmation that made it stale
    assert "-confirmed_session: s0" in _changed_lines(tabs.root)


def test_api_a_later_session_of_the_day_changes_only_the_count(tabs):
    tabs.session_start(session="s1")
    _confirm(tabs, "s1", "Tabs in the Makefile.")
    tabs.session_start()
    tabs.session_start(session="s2")
    _confirm(tabs, "s2", "Tabs in the Go code.")
    machine = sessions_file.machine_id(tabs.root)
    # The count, this machine's entry of the map, and the session now known (rule 19): one line each.
    assert _changed_lines(tabs.root, path="state/sessions.json") == [
        '-  "count": 1,', '+  "count": 3,', f'-    "{machine}": 1', f'+    "{machine}": 3',
        '+    "s2": "2026-11-30",']
    s = json.loads((tabs.root / "state/sessions.json").read_text())
    assert s["count_at_day_start"] == {"2026-11-30": 0} and "days" not in s


def test_a_new_day_adds_one_line_and_nothing_else_moves(cli, tabs):
    for day in ("2026-11-28", "2026-11-29"):
        assert cli("--vault", tabs.root, "--today", day, "session", "start").code == 0
    diff = _changed_lines(tabs.root, path="state/sessions.json")
    machine = sessions_file.machine_id(tabs.root)
    assert diff == ['-  "count": 1,', '+  "count": 2,', f'-    "{machine}": 1', f'+    "{machine}": 2',
                    '-  "last_session": "2026-11-28",', '+  "last_session": "2026-11-29",', '+    "2026-11-29": 1,']


def test_the_per_day_tally_of_an_older_file_is_read_and_written_anew_once():
    old = {"count": 7, "last_session": "2026-11-05", "last_review": None, "next_review_at": 10,
           "created": "2026-11-01", "days": {"2026-11-02": 2, "2026-11-05": 3}}
    c = sessions_file.load(old)
    assert c["days"] == {"2026-11-02": 2, "2026-11-05": 3}  # 2 counted before the tally began
    text = sessions_file.dump(c)
    assert json.loads(text)["count_at_day_start"] == {"2026-11-05": 4, "2026-11-02": 2}
    assert sessions_file.loads(text) == c
    with pytest.raises(ValueError, match="count_at_day_start"):
        sessions_file.load(dict(old, days=None, count_at_day_start={"2026-11-02": 9}))


def test_two_machines_counts_still_add_up_through_the_file():
    base = sessions_file.dump(sessions_file.load({"count": 2, "count_at_day_start": {"2026-11-01": 0}}))
    ours = sessions_file.dump(sessions_file.load({"count": 4, "count_at_day_start": {"2026-11-01": 0,
                                                                                  "2026-11-03": 2}}))
    theirs = sessions_file.dump(sessions_file.load({"count": 5, "count_at_day_start": {"2026-11-01": 0,
                                                                                    "2026-11-03": 3}}))
    m = merge.merge_json_counter(base, ours, theirs, sessions_file.loads, sessions_file.dump)
    got = sessions_file.loads(m.text)
    assert got["count"] == 7 and got["days"] == {"2026-11-01": 3, "2026-11-03": 4}


def test_a_merge_drops_the_old_session_line_with_the_confirmation_that_won():
    head = ("---\ntitle: Likes tabs\nkind: preference\nbasis: behavioral\nconfidence: {c}\npermanence: durable\n"
            "first: 2026-11-01\nconfirmed: {d}\nchallenged:\nstatus: active\ntags: []\nscope: global\n"
            "pinned: false\nsupersedes: []\n{extra}---\nIndents with tabs.\n\n## Evidence\n")
    base = head.format(c="0.35", d="2026-11-02", extra="confirmed_session: s1\n")
    ours = base.replace("Indents with tabs.", "Indents with tabs, in Go too.")  # an older epimem here
    theirs = head.format(c="0.40", d="2026-11-05", extra="")                  # confirmed again there
    m = merge.merge_belief(base, ours, theirs)
    assert "confirmed: 2026-11-05" in m.text and "confidence: 0.4" in m.text
    assert "confirmed_session" not in m.text and "Go too" in m.text and not m.needs_user
