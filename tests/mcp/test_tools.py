"""Every tool, resource and prompt through the SDK's own client: in process, and against
`epimem mcp` as a real subprocess over stdio and over streamable HTTP."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp_support import TODAY, commits, connect, git, tree_state

TOOLS = {"describe", "recall", "get", "list", "observe", "answer", "supersede", "retire", "resolve_tension",
         "tensions", "history", "diff", "mirror", "inbox", "record_review"}
DESTRUCTIVE = {"answer", "supersede", "retire", "resolve_tension", "record_review"}
READ_ONLY = {"describe", "recall", "get", "list", "tensions", "history", "diff", "inbox"}


def ok(r) -> dict:
    assert not r.is_error, r.content[0].text
    # Structured output beside the text: the text is the same object, serialised.
    assert r.structured_content is not None
    assert json.loads(r.content[0].text) == r.structured_content
    return r.structured_content


def err(r) -> str:
    assert r.is_error, r.structured_content
    return r.content[0].text


async def every_tool(c, root) -> None:
    listed = {t.name: t for t in (await c.list_tools()).tools}
    assert set(listed) == TOOLS
    for name, t in listed.items():
        a = t.annotations
        assert a is not None and a.open_world_hint is False, name
        assert a.read_only_hint is (name in READ_ONLY), name
        if name in DESTRUCTIVE:
            assert a.destructive_hint is True, name
        assert t.output_schema is not None and t.description, name
    # A model can act on the fields: every argument of observe's items says what it is for.
    item = listed["observe"].input_schema["$defs"]["ObservationIn"]
    assert all(p.get("description") for p in item["properties"].values())
    assert item["additionalProperties"] is False

    d = ok(await c.call_tool("describe", {}))
    assert d["beliefs"]["active"] == 3
    assert {"name": "code-review", "count": 1} in d["vocabulary"]["tags"]
    assert {k["name"] for k in d["vocabulary"]["scopes"]} == {"global", "billing"}
    assert d["rules"]["observations_per_session"] == 3 and "review_due" in d and "sessions" in d

    r = ok(await c.call_tool("recall", {"query": "small pull requests", "limit": 2, "budget_tokens": 200}))
    assert r["results"][0]["id"] == "prefers-small-pull-requests" and r["results"][0]["why"]
    assert "Prefers small pull requests" in r["markdown"]
    r = ok(await c.call_tool("recall", {"query": "sql", "scope": "billing"}))
    assert "writes-sql-by-hand" in [h["id"] for h in r["results"]]

    g = ok(await c.call_tool("get", {"id": "thinks-out-loud-before-deciding"}))
    assert g["challenged"] == TODAY and g["evidence"] and len(g["history"]) == 2

    lst = ok(await c.call_tool("list", {"tag": "code-review"}))
    assert lst["total"] == 1 and lst["beliefs"][0]["id"] == "prefers-small-pull-requests"
    assert ok(await c.call_tool("list", {"limit": 1}))["total"] == 3

    ts = ok(await c.call_tool("tensions", {}))["tensions"]
    assert len(ts) == 1 and ts[0]["status"] == "watching"
    assert ok(await c.call_tool("tensions", {"status": "resolved"}))["tensions"] == []

    before = commits(root)
    o = ok(await c.call_tool("observe", {"observations": [
        {"connects": "prefers-small-pull-requests", "strength": "confirming",
         "evidence": "Asked to split the migration into two PRs before review."}]}))
    assert o["commit"] and o["observations"][0]["confidence_after"] == 0.35 and o["session"].startswith("mcp-")
    assert "similar" in o and o["alerts"] == []
    assert commits(root) == before + 1
    assert "Epimem-Op: observe" in git(root, "log", "-1", "--format=%B")

    h = ok(await c.call_tool("history", {"id": "prefers-small-pull-requests"}))
    assert [p["confidence"] for p in h["history"]][-1] == 0.35
    df = ok(await c.call_tool("diff", {"since": "2020-01-01"}))
    assert any(ch["id"] == "prefers-small-pull-requests" for ch in df["changes"])

    for mode in ("audit", "gut-check", "interview", "portrait"):
        m = ok(await c.call_tool("mirror", {"mode": mode}))
        assert m["mode"] == mode and m["markdown"].strip() and m["recorded"] is None

    a = ok(await c.call_tool("answer", {"id": "thinks-out-loud-before-deciding", "verdict": "false",
                                        "note": "Not really; I decide fast."}))
    assert a["confidence_before"] == 0.2 and a["confidence_after"] < 0.2

    sup = ok(await c.call_tool("supersede", {"old": ["writes-sql-by-hand"], "by": "prefers-small-pull-requests",
                                             "note": "the user said the SQL one was about one project"}))
    assert "writes-sql-by-hand" in sup["supersedes"]
    # Resolved before the retirement: retiring a belief closes its open tensions itself (issue 9).
    res = ok(await c.call_tool("resolve_tension", {"id": ts[0]["id"], "note": "The user explained it."}))
    assert res["status"] == "resolved"
    ret = ok(await c.call_tool("retire", {"id": "thinks-out-loud-before-deciding", "note": "user: drop it"}))
    assert ret["status"] == "retired"
    assert git(root, "status", "--porcelain") == ""

    # Resources and prompts.
    text = (await c.read_resource("epimem://belief/prefers-small-pull-requests")).contents[0].text
    assert text == (root / "beliefs" / "prefers-small-pull-requests.md").read_text()
    ctx = (await c.read_resource(f"epimem://context?cwd={root / 'billing'}")).contents[0].text
    assert ctx.startswith("epimem: the user's epimem vault") and "Prefers small pull requests" in ctx
    audit = (await c.read_resource("epimem://audit")).contents[0].text
    assert audit.startswith("# Audit")
    prompts = {p.name for p in (await c.list_prompts()).prompts}
    assert prompts == {"observe", "mirror"}
    for name in prompts:
        msg = (await c.get_prompt(name)).messages[0].content.text
        assert "`observe`" in msg and "!`" not in msg


@pytest.mark.seed_rules
@pytest.mark.parametrize("kind", ["memory", "stdio", "http"])
def test_every_tool_resource_and_prompt(mvault, kind):
    async def main():
        async with connect(kind, mvault) as c:
            await every_tool(c, mvault)
    anyio.run(main)


def test_bad_arguments_are_tool_errors_naming_the_field_and_change_nothing(mvault):
    cases = [
        ("recall", {"query": "x", "limit": "many"}, "limit"),
        ("recall", {}, "query"),
        ("get", {"id": "../../etc/passwd"}, "'id'"),
        ("get", {"id": "no-such-belief"}, "no belief 'no-such-belief'"),
        ("list", {"status": "deleted"}, "status"),
        ("observe", {"observations": [{"connects": "x", "strength": "single", "evidence": "e", "suggest": "s"}]},
         "suggest"),
        ("observe", {"observations": [{"connects": "x", "strength": "huge", "evidence": "e"}]}, "strength"),
        ("observe", {"observations": [{"connects": "x", "strength": "single"}]}, "evidence"),
        ("observe", {"observations": [{"connects": "../x", "strength": "single", "evidence": "e"}]}, "connects"),
        ("observe", {"observations": [{"connects": "new", "strength": "single", "evidence": "e",
                                       "basis": "fact", "title": "Is a genius"}]}, "basis"),
        ("answer", {"id": "writes-sql-by-hand", "verdict": "maybe"}, "verdict"),
        ("answer", {"id": "writes-sql-by-hand", "verdict": "true", "retire": True}, "retire"),
        ("supersede", {"old": [], "by": "writes-sql-by-hand"}, "old"),
        ("supersede", {"old": ["a/b"], "by": "writes-sql-by-hand"}, "old[0]"),
        ("resolve_tension", {"id": "nope", "note": ""}, "note"),
        ("mirror", {"mode": "horoscope"}, "mode"),
        ("diff", {"since": "not a date or a revision"}, "since"),
        ("diff", {"since": "--output=pwned"}, "since"),
    ]
    before = tree_state(mvault)

    async def main():
        async with connect("memory", mvault) as c:
            for tool, args, field in cases:
                msg = err(await c.call_tool(tool, args))
                assert field in msg, (tool, args, msg)
                assert "Traceback" not in msg
    anyio.run(main)
    assert tree_state(mvault) == before


def test_rule_9_per_connection_and_an_exact_resubmission_records_once(mvault):
    from epimem.api.memory import Memory

    def obs(i):
        return {"connects": "prefers-small-pull-requests", "strength": "complicating", "evidence": f"Sign {i}."}

    async def main():
        async with connect("memory", mvault) as a, connect("memory", mvault) as b:
            first = ok(await a.call_tool("observe", {"observations": [obs(1), obs(2)]}))
            again = ok(await a.call_tool("observe", {"observations": [obs(1)]}))
            assert again["commit"] is None and again["observations"][0]["duplicate"] is True
            ok(await a.call_tool("observe", {"observations": [obs(3)]}))
            refused = err(await a.call_tool("observe", {"observations": [obs(4)]}))
            assert "rule 9" in refused and first["session"] in refused
            # Another connection is another session (SPEC §9: the server names it, not the model).
            other = ok(await b.call_tool("observe", {"observations": [obs(4)]}))
            assert other["session"] != first["session"]
            # The `session` argument overrides both; a name that is no MCP connection's is the other
            # source of rule 19, with its own bound of the day, and a session the hook counted its own.
            named = ok(await a.call_tool("observe", {"observations": [obs(5)], "session": "review-42"}))
            assert named["session"] == "review-42"
            Memory(mvault).session_start("startup", session="hook-7")
            ok(await b.call_tool("observe", {"observations": [obs(6)], "session": "hook-7"}))
    n = commits(mvault)
    anyio.run(main)
    assert commits(mvault) == n + 6


def test_a_hand_edit_while_the_server_runs_is_read_fresh_and_kept(mvault):
    path = mvault / "beliefs" / "prefers-small-pull-requests.md"

    async def main():
        async with connect("stdio", mvault) as c:
            ok(await c.call_tool("get", {"id": "prefers-small-pull-requests"}))
            path.write_text(path.read_text().replace("Splits work into small, reviewable PRs.",
                                                     "Splits work into PRs under 300 lines."))
            g = ok(await c.call_tool("get", {"id": "prefers-small-pull-requests"}))
            assert g["statement"] == "Splits work into PRs under 300 lines."
            obs = {"observations": [{"connects": "prefers-small-pull-requests", "strength": "confirming",
                                     "evidence": "Kept the PR at 120 lines."}]}
            # A rewording is the user's word (rule 16): a model's call does not commit it for them.
            assert "epimem commit" in err(await c.call_tool("observe", obs))
            from epimem.api.memory import Memory

            assert Memory(mvault, today=TODAY).commit_hand_edits()[0]  # `epimem commit`: the user's
            ok(await c.call_tool("observe", obs))
            r = (await c.read_resource("epimem://belief/prefers-small-pull-requests")).contents[0].text
            assert "PRs under 300 lines" in r and "Kept the PR at 120 lines." in r
    anyio.run(main)


def test_a_write_refused_by_compare_and_swap_leaves_the_hand_edit(mvault, monkeypatch):
    """The user saves the file between the API's read and its write, again at every try: the call
    fails, every edit stays, and what was committed meanwhile is only the user's edits themselves
    (rule 18 checks each before a pass of the write is prepared again), never the observation."""
    from epimem.mcp.server import build
    from epimem.store import transaction

    path = mvault / "beliefs" / "prefers-small-pull-requests.md"
    real_apply = transaction.apply

    def apply_after_a_hand_edit(root, writes, *a, **kw):
        path.write_text(path.read_text() + "\nA line the user added in Obsidian.\n")
        return real_apply(root, writes, *a, **kw)

    monkeypatch.setattr(transaction, "apply", apply_after_a_hand_edit)
    head = git(mvault, "rev-parse", "HEAD")

    async def main():
        async with connect("memory", mvault, build(mvault, today=TODAY)) as c:
            msg = err(await c.call_tool("observe", {"observations": [
                {"connects": "prefers-small-pull-requests", "strength": "confirming", "evidence": "Split it."}]}))
            assert "changed" in msg
    anyio.run(main)
    assert path.read_text().endswith("A line the user added in Obsidian.\n")
    assert "Split it." not in (mvault / "observations" / "2026-11.md").read_text()
    since = git(mvault, "log", "--format=%s", f"{head.strip()}..HEAD").splitlines()
    assert all(s.startswith("edit:") for s in since), since
    assert "Split it." not in git(mvault, "log", "-p", f"{head.strip()}..HEAD")


def test_mirror_records_a_review_only_when_asked(mvault):
    async def main():
        async with connect("memory", mvault) as c:
            n = commits(mvault)
            ok(await c.call_tool("mirror", {"mode": "audit"}))
            assert commits(mvault) == n and not (mvault / "reviews" / f"{TODAY}.md").exists()
            m = ok(await c.call_tool("record_review", {"mode": "audit"}))
            assert m["recorded"]["review"] and commits(mvault) == n + 1
            assert "# Audit" in (mvault / "reviews" / f"{TODAY}.md").read_text()
            d = ok(await c.call_tool("describe", {}))
            assert d["sessions"]["last_review"] == TODAY and d["review_due"] is False
    anyio.run(main)
