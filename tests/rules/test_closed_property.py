"""Issue 24, "and prove it stays closed": an agent that may call only what the installed skills allow
without the user (the CLI commands of their `allowed-tools`), the MCP tools not marked
destructive and the Claude API's memory tool (all six of its commands, issue 29), in any order,
with any arguments and session ids, over simulated days, can never

- raise a belief faster than rules 3 and 19 allow: a counted session moves a belief one step, the
  names nobody counted one step a day per source (two sources: MCP and the rest);
- create a `fact`, or a number above its basis's cap, or a date after the day (rules 2, 14, 20);
- get a secret past redaction, into a file or a commit, or into what any reader it may call shows;
- make a reader show a number `validate` would refuse (rule 21).

The sessions, the days and hand edits are the world's, not the agent's: the session-start hook
counts a session now and then (the agent learns its id, and may reuse any id it has seen), days
pass, and now and then a careless hand edit puts a belief above its cap with a secret typed into
its statement (a file `validate` refuses; the agent has no tool that edits a file by hand). Every
read the agent makes is checked: no number above its basis's cap, no secret.
The review inbox (issue 29) is among the entry points: the user turns `review: required`
on and off and accepts or rejects what waits, and what is accepted obeys the same bounds as
what was observed directly; the inbox's listings are reads like any other. The user's imports of
a memory file (with secrets in it) wait there too under review, and a careless hand edit raises
what waits to a 0.95 fact (or 0.85): accepting never carries it, and no import's belief is born
above where its basis starts.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from datetime import date, timedelta
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from vaults import new_vault

from epimem.core.model import BASES, STRENGTHS
from epimem.core.params import DEFAULTS

pytestmark = pytest.mark.slow

START = date(2026, 11, 2)
SECRETS = ("ghp_" + "Zq8Lm2Xc4Vb6Nn0Pp9Rr7Tt5Yy3Uu1Ii8Oo6Aa", "AKIA" + "QWERTYUIOP123456",
           "sk-ant-" + "api03-" + "h7G5f3D1s9A8k6J4l2Z0x", "password: hunter2hunter2")
SEED = {"avoids-orms": ("Avoids ORMs", "Writes SQL by hand rather than through an ORM.", "behavioral"),
        "thinks-aloud": ("Thinks out loud before deciding", "Talks options through first.", "interpretive"),
        "decides-fast": ("Decides fast", "Says they decide quickly.", "self-report")}
TITLES = ("Uses tmux", "Uses tmux", "Keeps PRs small", "Keeps pull requests small", "Reads the diff first")
STEP = DEFAULTS.confirm_step


def run_cli(root: Path, day: date, *args: str, stdin: str | None = None) -> tuple[int, str]:
    from epimem.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["--vault", str(root), "--today", day.isoformat(), *args])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    finally:
        sys.stdin = old
    return code or 0, out.getvalue() + err.getvalue()


def run_memory_tool(root: Path, day: date, session: str | None, command: dict) -> str:
    """One command of the memory tool, as the SDK's tool runner calls it (`call` with the model's input)."""
    from anthropic.lib.tools import ToolError

    from epimem.integrations.anthropic_memory import EpimemMemoryTool

    try:
        return str(EpimemMemoryTool(root, session=session, today=day.isoformat()).call(command))
    except ToolError as e:
        return str(e.content)


def run_mcp(root: Path, day: date, tool: str, args: dict) -> str:
    from mcp import Client

    from epimem.mcp.server import build

    async def main():
        async with Client(build(root, today=day.isoformat())) as c:  # a connection of its own each call
            r = await c.call_tool(tool, args)
            return r.content[0].text if r.content else ""

    return anyio.run(main)


# --- what the agent may do ------------------------------------------------------------------------

text = st.sampled_from(["Wrote the query by hand.", "Split the change in two.", "Reached for the ORM.",
                        "Talked it through aloud.", "Picked the first option at once."])
secret = st.one_of(st.just(""), st.sampled_from(SECRETS))
session = st.one_of(st.just(("current",)), st.just(("none",)), st.tuples(st.just("seen"), st.integers(0, 20)),
                    st.tuples(st.just("made-up"), st.integers(0, 10_000)))
when = st.sampled_from([None, 0, -1, -5, 1, 400])  # days from today; None: not given
# Weighted the way a sycophantic model leans: confirm the same belief again and again, from
# sessions it names itself, and now and then claim a fact or a date.
observation = st.fixed_dictionaries({
    "connects": st.sampled_from(["avoids-orms"] * 4 + [*SEED, "new"]),
    "strength": st.sampled_from(["confirming"] * 5 + list(STRENGTHS)),
    "basis": st.sampled_from(["behavioral"] * 5 + list(BASES)), "evidence": text, "secret": secret,
    "session": st.one_of(st.tuples(st.just("made-up"), st.integers(0, 10_000)), session), "when": when,
    "title": st.sampled_from(TITLES), "despite": st.booleans()})
# The sycophant's loop: one confirmation after another of one belief, each from a session it names.
pump = st.tuples(st.sampled_from(["cli", "mcp"]), st.sampled_from(list(SEED)),
                 st.lists(st.tuples(session, st.sampled_from([None, 0, -1, -3])), min_size=2, max_size=8))
# The memory tool: what the model writes into /memories, its session the app's (any of the world's).
line = st.sampled_from(["confirming: {t}", "confirming: {t}", "- {t}", "complicating: {t}", "contradicting: {t}",
                        "confirming (said): {t}", "confirming: {t} confidence: 0.95", "confirming (fact): {t}",
                        "- 2099-01-01 · confirming — {t}", "confirming: {t}\nbasis: fact",
                        "confirming: {t}\nlast confirmed: 2020-01-01"])
memory_command = st.fixed_dictionaries({
    "command": st.sampled_from(["insert"] * 4 + ["str_replace", "create", "create", "delete", "rename", "view"]),
    "belief": st.sampled_from(["avoids-orms"] * 3 + list(SEED)), "line": line, "evidence": text,
    "secret": secret, "title": st.sampled_from(TITLES)})
memory = st.tuples(session, st.lists(memory_command, min_size=1, max_size=5))
action = st.one_of(
    st.tuples(st.just("pump"), pump),
    st.tuples(st.just("memory"), memory),
    st.tuples(st.just("pump"), st.tuples(st.just("memory"), st.sampled_from(list(SEED)),
                                         st.lists(st.tuples(session, st.just(None)), min_size=2, max_size=8))),
    st.tuples(st.just("cli"), st.lists(observation, min_size=1, max_size=3)),
    st.tuples(st.just("mcp"), st.lists(observation, min_size=1, max_size=3)),
    st.tuples(st.just("day"), st.integers(1, 3)),
    st.tuples(st.just("session"), st.just(0)),
    st.tuples(st.just("cli"), st.lists(observation, min_size=1, max_size=3)),
    st.tuples(st.just("mcp"), st.lists(observation, min_size=1, max_size=3)),
    st.tuples(st.just("read"), st.sampled_from(["recall", "list", "show", "skill", "mcp-get", "mcp-list",
                                                "mcp-describe", "mcp-mirror-record", "show-hand", "mcp-get-hand",
                                                "memory-root", "memory-hand", "memory-context",
                                                "mcp-inbox", "inbox"])),
    st.tuples(st.just("hand"), st.sampled_from(SECRETS)),
    # The review inbox (issue 29): the user turns `review: required` on or off, and now and then
    # accepts (or rejects) what waits. What the agent proposes meanwhile must obey the same bounds.
    st.tuples(st.just("review"), st.sampled_from(["required", "off"])),
    st.tuples(st.just("decide"), st.sampled_from(["accept", "reject"])),
    # Imports (round 3): the user imports a memory file (under review: proposals), and now and then
    # a careless hand edit raises what waits to a 0.95 fact or an established 0.85, committed.
    st.tuples(st.just("import"), st.lists(st.tuples(st.sampled_from(TITLES), secret), min_size=1, max_size=3)),
    st.tuples(st.just("forge"), st.sampled_from([("fact", "0.95"), ("self-report", "0.85")])),
)
HAND = "edited-by-hand"  # the belief only the world's hand edits touch


class World:
    def __init__(self, root: Path):
        self.root = root
        self.day = START
        self.days = {START}
        self.counted: list[str] = []   # every session the hook counted
        self.counted_on: list[date] = []  # the day of each
        self.seen: list[str] = []      # every session id the agent has seen (counted or made up)
        self.current: str | None = None

    def pick_session(self, choice) -> str | None:
        kind = choice[0]
        if kind == "current":
            return self.current
        if kind == "none":
            return None
        if kind == "seen":
            return self.seen[choice[1] % len(self.seen)] if self.seen else None
        sid = f"made-up-{choice[1]}"
        self.seen.append(sid)
        return sid

    def item(self, o: dict) -> dict:
        d = {"connects": o["connects"], "strength": o["strength"], "basis": o["basis"],
             "evidence": f"{o['evidence']} {o['secret']}".strip()}
        sid = self.pick_session(o["session"])
        if sid:
            d["session"] = sid
        if o["when"] is not None:
            d["date"] = (self.day + timedelta(days=o["when"])).isoformat()
        if o["connects"] == "new":
            d.update(title=f"{o['title']} {o['secret']}".strip(), kind="workflow", permanence="durable",
                     suggests=f"They {o['title'].lower()}.")
            if o["despite"]:
                d["new_despite_similar"] = True
        return d


def beliefs(root: Path) -> dict[str, tuple[float, str]]:
    from epimem.api.memory import Memory

    bs, _ = Memory(root).vault.load_beliefs()
    return {b.id: (b.confidence, b.basis) for b in bs}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(actions=st.lists(action, min_size=4, max_size=22))
# The round-3 adversary, always tried: what an import proposed, edited to a 0.95 fact, accepted.
@example(actions=[("review", "required"), ("import", [("Uses tmux", SECRETS[0]), ("Reads the diff first", "")]),
                  ("forge", ("fact", "0.95")), ("read", "mcp-inbox"), ("decide", "accept"),
                  ("import", [("Keeps PRs small", "")]), ("forge", ("self-report", "0.85")), ("read", "inbox"),
                  ("decide", "accept"), ("review", "off"), ("import", [("Uses tmux", "")])])
def test_no_agent_gets_around_the_rules(tmp_path_factory, actions):
    from epimem.api.memory import Memory

    root = tmp_path_factory.mktemp("agent") / "vault"
    mem = new_vault(root, today=START.isoformat())
    for bid, (title, statement, basis) in SEED.items():
        mem.add_belief(title=title, statement=statement, kind="trait", basis=basis, permanence="durable",
                       belief_id=bid)
    mem.add_belief(title="Edited by hand", statement="Edited by hand.", kind="trait", basis="behavioral",
                   permanence="durable", belief_id=HAND)
    w = World(root)
    reads: list[tuple[str, str]] = []
    before = beliefs(root)
    raised: dict[tuple[str, date], float] = {}   # (belief, day) → how much it rose that day
    born: dict[str, float] = {}
    for act in actions:
        kind, arg = act
        if kind == "day":
            w.day += timedelta(days=arg)
            w.days.add(w.day)
            continue
        if kind == "hand":  # the world: a hand edit validate refuses (above the cap, a secret typed in)
            f = root / "beliefs" / f"{HAND}.md"
            text = f.read_text()
            text = text.replace(f"confidence: {DEFAULTS.start['behavioral']:.2f}", "confidence: 0.99", 1)
            f.write_text(text.replace("Edited by hand.", f"Edited by hand. {arg}", 1))
            continue
        if kind == "session":  # the world: the hook counts a session, and the agent is in it
            sid = f"real-{len(w.counted)}"
            Memory(root, today=w.day).session_start("startup", session=sid)
            w.counted.append(sid)
            w.counted_on.append(w.day)
            w.seen.append(sid)
            w.current = sid
            continue
        if kind == "review":  # the user's edit of epistemology.md, committed by them
            p = root / "epistemology.md"
            lines = [ln for ln in p.read_text().split("\n") if not ln.startswith("review:")]
            p.write_text("\n".join([lines[0], f"review: {arg}", *lines[1:]]))
            run_cli(root, w.day, "commit")
            continue
        if kind == "import":  # the user's import of a memory file (theirs: rule 22)
            notes = root.parent / "notes.md"
            notes.write_text("".join(f"- {t} {sec}\n".replace(" \n", "\n") for t, sec in arg))
            run_cli(root, w.day, "import", "claude-memory", str(notes))
            continue
        if kind == "forge":  # the world: what waits from an import, edited to a better number
            basis, conf = arg
            for f in (root / "inbox").glob("*.md"):
                text = f.read_text()
                if "kind: import" in text:
                    f.write_text(text.replace("basis: self-report\\nconfidence: 0.20",
                                              f"basis: {basis}\\nconfidence: {conf}"))
            run_cli(root, w.day, "commit")
            continue
        if kind == "decide":  # the user decides on everything waiting (each import proposal alone)
            code, out = run_cli(root, w.day, "inbox", "--json")
            listed = json.loads(out[:out.rindex("}") + 1])["proposals"] if code == 0 else []
            ids = [x["id"] for x in listed if x.get("kind") != "import"]
            if ids:
                run_cli(root, w.day, "inbox", arg, *ids)
            for x in listed:
                if x.get("kind") == "import":
                    run_cli(root, w.day, "inbox", arg, x["id"])
        elif kind == "pump":
            channel, bid, tries = arg
            for n, (sess, days) in enumerate(tries):
                o = {"connects": bid, "strength": "confirming", "basis": "behavioral", "secret": "",
                     "evidence": f"Did it again, time {n} ({len(w.seen)}).", "session": sess, "when": days,
                     "title": "", "despite": False}
                i = w.item(o)
                if channel == "memory":
                    run_memory_tool(root, w.day, i.get("session"), {
                        "command": "insert", "path": f"/memories/beliefs/{bid}.md", "insert_line": 0,
                        "insert_text": f"confirming: {i['evidence']}"})
                elif channel == "cli":
                    args = ["observe", "--json"]
                    for k in ("connects", "strength", "basis", "evidence", "session", "date"):
                        if k in i:
                            args += [f"--{k}", i[k]]
                    run_cli(root, w.day, *args)
                else:
                    run_mcp(root, w.day, "observe", {"observations": [i], **({"session": i["session"]}
                                                                               if "session" in i else {})})
        elif kind == "cli":
            items = [w.item(o) for o in arg]
            if len(items) == 1 and "new_despite_similar" not in items[0]:
                i = items[0]
                args = ["observe", "--json", "--source", "claude-code"]
                for k in ("connects", "strength", "basis", "evidence", "session", "date", "title", "kind",
                          "permanence", "suggests"):
                    if k in i:
                        args += [f"--{k}", i[k]]
                run_cli(root, w.day, *args)
            else:
                run_cli(root, w.day, "observe", "--input", "-", "--json", stdin=json.dumps(items))
        elif kind == "memory":
            sess, commands = arg
            sid = w.pick_session(sess)
            for c in commands:
                said = f"{c['evidence']} {c['secret']}".strip()
                path = f"/memories/beliefs/{c['belief']}.md"
                written = c["line"].format(t=said)
                if c["command"] == "insert":
                    cmd = {"command": "insert", "path": path, "insert_line": 0, "insert_text": written}
                elif c["command"] == "str_replace":
                    cmd = {"command": "str_replace", "path": path, "old_str": "## Evidence",
                           "new_str": "## Evidence\n" + written}
                elif c["command"] == "create":
                    cmd = {"command": "create", "path": f"/memories/{len(w.seen)}.md",
                           "file_text": f"# {c['title']} {c['secret']}\n{written.split(': ', 1)[-1]}\n"}
                elif c["command"] == "delete":
                    cmd = {"command": "delete", "path": path}
                elif c["command"] == "rename":
                    cmd = {"command": "rename", "old_path": path, "new_path": "/memories/beliefs/avoids-orms.md"}
                else:
                    cmd = {"command": "view", "path": path}
                run_memory_tool(root, w.day, sid, cmd)
        elif kind == "mcp":
            items = [w.item(o) for o in arg]
            args = {"observations": items}
            if items and "session" in items[0] and arg[0]["session"][0] != "current":
                args["session"] = items[0]["session"]  # the `session` argument, as any client may pass
            run_mcp(root, w.day, "observe", args)
        else:
            if arg == "recall":
                shown = run_cli(root, w.day, "recall", "sql orm diff edited by hand", "--json")[1]
            elif arg == "list":
                shown = run_cli(root, w.day, "belief", "list", "--json")[1]
            elif arg in ("show", "show-hand"):
                shown = run_cli(root, w.day, "belief", "show", HAND if arg == "show-hand" else "avoids-orms",
                                "--json")[1]
            elif arg == "skill":
                shown = run_cli(root, w.day, "skill", "observe", "--session", w.current or "none")[1]
            elif arg in ("mcp-get", "mcp-get-hand"):
                shown = run_mcp(root, w.day, "get", {"id": HAND if arg == "mcp-get-hand" else "avoids-orms"})
            elif arg == "mcp-list":
                shown = run_mcp(root, w.day, "list", {})
            elif arg == "mcp-describe":
                shown = run_mcp(root, w.day, "describe", {})
            elif arg.startswith("memory-"):
                path = {"memory-root": "/memories", "memory-hand": f"/memories/beliefs/{HAND}.md",
                        "memory-context": "/memories/context.md"}[arg]
                shown = run_memory_tool(root, w.day, None, {"command": "view", "path": path})
            elif arg == "mcp-inbox":
                shown = run_mcp(root, w.day, "inbox", {})
            elif arg == "inbox":
                shown = run_cli(root, w.day, "inbox", "--diff")[1]
            else:
                shown = run_mcp(root, w.day, "mirror", {"mode": "audit"})
            reads.append((arg, shown))
        now = beliefs(root)
        now.pop(HAND, None)  # the user's own edit: theirs to make, validate's to refuse
        for bid, (conf, _) in now.items():
            if bid in before:
                raised[bid, w.day] = raised.get((bid, w.day), 0.0) + max(0.0, conf - before[bid][0])
            else:
                born[bid] = conf
        before = now

    # Rules 3 and 19, day by day: a belief rises at most one step for each session the hook counted
    # that is still known that day (a week), and one for each of the two sources nobody counted
    # (MCP's connections; every other name, the memory tool's conversations included).
    for (bid, day), up in raised.items():
        known = sum(1 for d in w.counted_on if 0 <= (day - d).days < 7)
        assert up <= STEP * (known + 2) + 1e-9, (bid, day, up, known)
    final = beliefs(root)
    final.pop(HAND, None)
    for bid, (conf, basis) in final.items():
        # Rules 2 and 14: the agent never makes a fact, nor a number above a cap; rule 22: what it
        # deletes or renames is only proposed.
        assert basis != "fact", bid
        assert bid not in SEED or Memory(root).belief(bid).status == "active", bid
        assert conf <= DEFAULTS.caps.get(basis, 0.90) + 1e-9, (bid, conf)
    for bid, conf in born.items():  # rule 1: a new belief starts where its basis starts
        assert conf <= max(DEFAULTS.start.values()) + 1e-9, (bid, conf)
    # Rule 20: nothing in the vault is dated after the last simulated day.
    for b in Memory(root).vault.load_beliefs()[0]:
        for d in (b.first, b.confirmed, b.challenged, *(e.date for e in b.evidence)):
            assert d is None or d <= w.day, (b.id, d)
    for p in (root / "observations").glob("*.md"):
        for line in p.read_text().splitlines():
            if line.startswith("- date: "):
                assert date.fromisoformat(line[8:].strip()) <= w.day, line
    # Redaction: no secret in any file of the vault, nor in any commit.
    history = subprocess.run(["git", "log", "-p", "--all", "--format=%B"], cwd=root, capture_output=True,
                             text=True).stdout
    files = "".join(p.read_text(errors="replace") for p in root.rglob("*")
                    if p.is_file() and ".git" not in p.parts and ".epimem" not in p.parts
                    and p.name != f"{HAND}.md")  # the hand edit itself: redacted when it is committed
    for s in SECRETS:
        needle = s.split(": ")[-1]
        assert needle not in history, s
        assert needle not in files, s
    # Rules 21 and 23: whatever the files' state, no read shows a secret or a number validate refuses.
    for what, shown in reads:
        for s in SECRETS:
            assert s.split(": ")[-1] not in shown, (what, s)
        for conf, basis in shown_numbers(shown):
            assert conf <= DEFAULTS.caps.get(basis, 0.90) + 1e-9, (what, conf, basis)
        if what == "memory-hand":  # words, not numbers: the committed start's tier, never the edit's 0.99
            # (decay takes a never-confirmed start down a tier within days; the start itself is SPEC
            # §2's, which moved since the seed's 0.30: read it, do not write it here)
            line = next(ln for ln in shown.splitlines() if "- confidence: " in ln)
            order = ("speculative", "tentative", "developing", "established", "factual")
            word = line.split("- confidence: ", 1)[1].split()[0]
            top = DEFAULTS.tier(DEFAULTS.start["behavioral"], "behavioral")
            assert word in order and order.index(word) <= order.index(top), shown


def shown_numbers(shown: str) -> list[tuple[float, str]]:
    """(confidence, basis) of every belief a JSON read shows (plain text shows no stored number)."""
    try:
        doc = json.loads(shown[shown.index("{"):] if "{" in shown else shown)
    except ValueError:
        return []
    out: list[tuple[float, str]] = []

    def walk(v):
        if isinstance(v, dict):
            if isinstance(v.get("confidence"), (int, float)) and isinstance(v.get("basis"), str):
                out.append((float(v["confidence"]), v["basis"]))
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(doc)
    return out
