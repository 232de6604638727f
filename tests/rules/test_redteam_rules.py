"""Red-team round on rules 1–13: a careless or sycophantic model going around a rule through the
commands the skills allow (`epimem observe --origin skill …`), MCP's tools that do not ask, the
memory tool and the hooks. Each test is one way around, through exactly that path."""

from __future__ import annotations

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
