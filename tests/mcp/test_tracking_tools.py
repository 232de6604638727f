"""SPEC §14 over MCP, through the SDK's own client: a contradiction that proposes a successor,
the user's `answer` that supersedes in one step (or names what holds instead with `now`),
`depends_on` on an observation, and the mirror's calibration mode."""

from __future__ import annotations

import anyio
from mcp_support import commits, connect
from test_tools import err, ok


def test_successor_answer_and_calibration_over_mcp(mvault):
    async def main():
        async with connect("memory", mvault) as c:
            o = ok(await c.call_tool("observe", {"observations": [
                {"connects": "writes-sql-by-hand", "strength": "contradicting", "basis": "self-report",
                 "evidence": "Said they use SQLAlchemy everywhere now.", "successor": "Uses an ORM",
                 "depends_on": ["prefers-small-pull-requests"]}]}))
            r = o["observations"][0]
            assert r["successor"] == "uses-an-orm" and r["tension"]
            ts = ok(await c.call_tool("tensions", {}))["tensions"]
            t = next(x for x in ts if x["id"] == r["tension"])
            assert (t["belief"], t["successor"]) == ("writes-sql-by-hand", "uses-an-orm")
            ctx = (await c.read_resource(f"epimem://context?cwd={mvault / 'billing'}")).contents[0].text
            assert "given way to “Uses an ORM” [uses-an-orm]" in ctx
            n = commits(mvault)
            a = ok(await c.call_tool("answer", {"id": "writes-sql-by-hand", "verdict": "false",
                                                "note": "switched this year"}))
            assert (a["status"], a["successor"]) == ("superseded", "uses-an-orm") and commits(mvault) == n + 1
            a = ok(await c.call_tool("answer", {"id": "prefers-small-pull-requests", "verdict": "false",
                                                "now": "Prefers one PR per feature"}))
            assert a["successor"] == "prefers-one-pr-per-feature"
            g = ok(await c.call_tool("get", {"id": "writes-sql-by-hand"}))
            assert g["depends_on"] == ["prefers-small-pull-requests"] and g["status"] == "superseded"
            assert "'now' goes with verdict 'false'" in err(await c.call_tool(
                "answer", {"id": "uses-an-orm", "verdict": "true", "now": "x"}))
            m = ok(await c.call_tool("mirror", {"mode": "calibration"}))
            assert m["mode"] == "calibration" and m["figures"]["verdicts"] == 2
            assert m["markdown"].startswith("# Calibration")
    anyio.run(main)


def test_a_belief_retired_by_hand_in_place_is_not_recalled_as_current_by_a_running_server(mvault):
    """SPEC §14: a long-lived server keeps its index loaded and an editor's in-place save does not
    change the folder it watches; a belief retired so is still never served as current."""
    async def main():
        async with connect("memory", mvault) as c:
            query = {"query": "small pull requests", "budget_tokens": 200}
            r = ok(await c.call_tool("recall", query))
            assert r["results"][0]["id"] == "prefers-small-pull-requests"
            p = mvault / "beliefs" / "prefers-small-pull-requests.md"
            p.write_text(p.read_text().replace("status: active", "status: retired"))  # in place
            r = ok(await c.call_tool("recall", query))
            assert "prefers-small-pull-requests" not in [h["id"] for h in r["results"]]
            assert "[prefers-small-pull-requests]" not in r["markdown"]
            r = ok(await c.call_tool("recall", dict(query, inactive=True)))
            assert "superseded, no longer held" in r["markdown"] or "retired" in r["markdown"], r["markdown"]
    anyio.run(main)


def test_a_citation_over_mcp_moves_nothing_and_markers_in_the_text_cite_nothing(mvault):
    """`cited` names what the assistant relied on: a retired belief may be one (recorded, its file
    untouched, not "used, never confirmed"); an [id] written into the evidence cites nothing."""
    from epimem.api.memory import Memory

    async def main():
        async with connect("memory", mvault) as c:
            ok(await c.call_tool("retire", {"id": "writes-sql-by-hand", "note": "no longer"}))
            before = {p.name: p.read_text() for p in (mvault / "beliefs").glob("*.md")}
            ok(await c.call_tool("observe", {"observations": [
                {"connects": "new", "strength": "single", "cited": ["writes-sql-by-hand", "writes-sql-by-hand"],
                 "evidence": "Wrote the query by hand, as [thinks-out-loud-before-deciding] and "
                             "[[prefers-small-pull-requests]] would not say."}]}))
            assert {p.name: p.read_text() for p in (mvault / "beliefs").glob("*.md")} == before
            m = ok(await c.call_tool("mirror", {"mode": "audit"}))
            assert m["used_unconfirmed"] == [], m["used_unconfirmed"]
    anyio.run(main)
    obs = [o for o in Memory(mvault).vault.load_observations()[0] if "Wrote the query by hand" in o.evidence]
    assert [o.cited for o in obs] == [("writes-sql-by-hand",)]
