"""Red-team round on rules 14–23 and SPEC §14–§15: a careless or sycophantic model (or a tool
writing beside it) going around a rule through the commands the skills allow, MCP's tools, the
memory tool, the inbox and the importers. Each test is one way around, through exactly that path.
(Round one, rules 1–13: test_redteam_rules.py.)"""

from __future__ import annotations

import json
import subprocess

import anyio
import pytest
from readers_support import edit_in_place, page
from test_rule23_readers_redact import leaks, stored_leaks

TODAY = "2026-11-30"
TOKEN = "ghp_Zq7Xw9Pk3Lm5Nb8Vc2Rt6Yu1Io4Ea0Sd3Fg7Hj"


def _git(root, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def _plain_commit(root, message: str) -> None:
    """A commit epimem did not make: Obsidian's git plugin, a `git commit -am` by hand, a push
    from another machine that `sync` merged. Its message is whatever that tool or person typed."""
    _git(root, "-c", "user.name=Obsidian", "-c", "user.email=o@example.com", "commit", "-qam", message)


def _every_reader(cli, root, tmp_path, commands, tools) -> dict[str, str]:
    """What each reader says (the CLI's commands, MCP's tools, the page), asserted to leak no
    secret there and none into what is stored under `.epimem/`."""
    from mcp import Client

    from epimem.mcp.server import build

    seen = {}
    for args in commands:
        r = cli("--vault", root, *args)
        assert r.code == 0, r.err
        seen[" ".join(args)] = r.out + r.err

    async def mcp():
        async with Client(build(root, today=TODAY)) as c:
            for name, arguments in tools:
                r = await c.call_tool(name, arguments)
                assert not r.is_error, r.content[0].text
                seen[f"mcp {name}"] = r.content[0].text
    anyio.run(mcp)
    seen["page"] = page(cli, root, tmp_path)
    assert {k: leaks(v) for k, v in seen.items()} == {k: [] for k in seen}
    assert stored_leaks(root) == []
    return seen


# --- rule 23: a commit message is read back too -------------------------------------------------

def test_a_secret_in_a_commit_message_epimem_did_not_write_is_redacted_on_every_history_reader(vault, cli, tmp_path):
    """epimem redacts the messages of the commits it makes; a belief's history also lists the
    commits other tools made to its file, and their subjects went out as git holds them: `epimem
    history` (text and `--json`), MCP's `history` and `get` (which carries the history), the
    page's timeline (each step's label) and the history cache under `.epimem/`."""

    root = vault.root
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference", basis="behavioral",
                     permanence="durable", confidence=0.30)
    edit_in_place(root / "beliefs" / "avoids-orms.md", "confidence: 0.30", "confidence: 0.40")
    _plain_commit(root, f"vault backup: rotated the CI token {TOKEN}")
    seen = _every_reader(cli, root, tmp_path, [("history", "avoids-orms"), ("history", "avoids-orms", "--json")],
                         [("history", {"id": "avoids-orms"}), ("get", {"id": "avoids-orms"})])
    assert "rotated the CI token [REDACTED:github-token]" in seen["history avoids-orms"]
    assert TOKEN in _git(root, "log", "-1", "--format=%s")  # the history itself is the user's (forget --purge-text)


# --- rule 20 (and 18): the session counter and the reviews are dated too -----------------------------

def _real_clock(monkeypatch):
    monkeypatch.delenv("EPIMEM_TEST_CLOCK", raising=False)
    monkeypatch.delenv("EPIMEM_TODAY", raising=False)


def test_an_export_cannot_date_the_counter_or_a_review_ahead_to_silence_reviews_and_dormancy(tmp_path, cli,
                                                                                           monkeypatch):
    """Rule 20 was held for beliefs, observations and tensions, on every importer. An export's
    session counter and its reviews were written as they came: `last_review: 2099-01-01` made the
    time fallback of rule 10 (a review 30 days after the last) never due, `last_session` ahead
    made rule 8's dormancy never come, and a review dated ahead stood in `reviews/`; `validate`
    then said the vault was valid. They are refused, said, and reported by `validate` as a hand
    edit of them would be."""
    from datetime import date, timedelta

    _real_clock(monkeypatch)
    ahead = (date.today() + timedelta(days=400)).isoformat()
    src, new = tmp_path / "src", tmp_path / "new"
    for v in (src, new):
        assert cli("init", v).code == 0
    recs = [json.loads(line) for line in cli("--vault", src, "export").out.splitlines()]
    for r in recs:
        if r["type"] == "sessions":
            counter = json.loads(r["text"])
            counter.update(last_session=ahead, last_review=ahead)
            r["text"] = json.dumps(counter)
    recs.append({"type": "review", "date": ahead, "text": f"---\ndate: {ahead}\nkind: audit\n---\nAll fine.\n"})
    out = tmp_path / "crafted.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in recs))
    before = (new / "state/sessions.json").read_text()
    r = cli("--vault", new, "import", "jsonl", out, "--json")
    assert r.code == 0, r.err
    refused = r.json()["refused"]
    assert any(x.startswith("state/sessions.json") and "rule 20" in x for x in refused), refused
    assert any(x.startswith(f"reviews/{ahead}.md") and "rule 20" in x for x in refused), refused
    assert (new / "state/sessions.json").read_text() == before
    assert not (new / "reviews" / f"{ahead}.md").exists()
    assert cli("--vault", new, "validate").code == 0
    # the same by hand: validate names both
    counter = json.loads(before)
    counter["last_review"] = ahead
    (new / "state/sessions.json").write_text(json.dumps(counter))
    (new / "reviews" / f"{ahead}.md").write_text(f"---\ndate: {ahead}\nkind: audit\n---\nAll fine.\n")
    v = cli("--vault", new, "validate", "--json")
    assert v.code == 1
    problems = {p["path"]: p["message"] for p in v.json()["problems"]}
    assert "rule 20" in problems.get("state/sessions.json", "") and ahead in problems["state/sessions.json"], problems
    assert "rule 20" in problems.get(f"reviews/{ahead}.md", ""), problems


def test_a_secret_committed_by_another_tool_is_redacted_in_what_changed(vault, cli, tmp_path):
    """`diff` describes committed states, and epimem's own commits hold redacted text; but
    Obsidian's git plugin commits what the user typed minutes ago, before any epimem command
    read it. Its title, tags and scope went out as committed: `epimem diff` (text and `--json`),
    MCP's `diff` (a read-only tool a model calls freely) and the page's "what changed"."""

    root = vault.root
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference", basis="behavioral",
                     permanence="durable", confidence=0.30)
    p = root / "beliefs" / "avoids-orms.md"
    edit_in_place(p, "title: Avoids ORMs", f"title: Avoids ORMs {TOKEN}")
    edit_in_place(p, "tags: []", f"tags: [{TOKEN}]")
    _plain_commit(root, "vault backup: 2026-11-30 10:00")
    seen = _every_reader(cli, root, tmp_path, [("diff", "--since", "2026-11-01"),
                                               ("diff", "--since", "2026-11-01", "--json")],
                         [("diff", {"since": "2026-11-01"})])
    assert "Avoids ORMs [REDACTED:github-token]" in seen["diff --since 2026-11-01"]


# --- rules 14, 16 and 22: a hand-edit-shaped write is not the user's word because a model's command carried it ----

@pytest.mark.parametrize("edit", [
    ("basis: behavioral", "basis: fact", "confidence: 0.30", "confidence: 0.95"),  # minted a fact
    ("confidence: 0.30", "confidence: 0.60", None, None),                          # set a number
    ("Writes SQL by hand.", "Writes SQL by hand, always.", None, None),            # reworded: the clock reset
    ("pinned: false", "pinned: true", None, None),                                 # pinned: no decay
])
def test_a_model_cannot_pass_its_own_hand_edit_off_as_the_users_through_observe(vault, cli, edit):
    """Rule 18 commits a hand edit within the rules as the user's (an `edited` line; rule 16 resets
    decay), and the write path commits one first when an observation rewrites the file. A model
    whose editor may write in the vault (Claude Code in acceptEdits mode, opened on the vault
    folder) edited `basis: fact, confidence: 0.95` into a belief, then ran the skill's own `epimem
    observe --origin skill … --strength complicating`: the edit was committed as the user's, a
    fact minted and `epimem commit` (the user's decision, rule 22) never asked. A command a model
    runs by itself commits no hand edit that changes what only the user decides: it is refused,
    the edit stays for the user to commit or undo."""
    root = vault.root
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference", basis="behavioral",
                     permanence="durable", confidence=0.30)
    p = root / "beliefs" / "avoids-orms.md"
    edit_in_place(p, edit[0], edit[1])
    if edit[2]:
        edit_in_place(p, edit[2], edit[3])
    head = _git(root, "rev-parse", "HEAD")
    r = cli("--vault", root, "observe", "--origin", "skill", "--session", "s1", "--json", "--connects", "avoids-orms",
            "--strength", "complicating", "--evidence", "Used the ORM for a quick script.")
    assert r.code != 0 and "epimem commit" in r.err and "nothing was recorded" in r.err, (r.code, r.err)
    assert _git(root, "rev-parse", "HEAD") == head
    assert edit[1] in p.read_text()  # the edit is left as it is, for the user
    shown = cli("--vault", root, "belief", "show", "avoids-orms", "--json").json()
    assert shown["confirmed"] is None and shown["evidence"][-1]["kind"] == "added"
    # the user's own command commits it, as rule 18 says
    assert cli("--vault", root, "commit").code == 0
    assert cli("--vault", root, "observe", "--origin", "skill", "--session", "s1", "--connects", "avoids-orms",
               "--strength", "complicating", "--evidence", "Used the ORM for a quick script.").code == 0


def test_a_belief_file_a_model_wrote_by_hand_is_not_added_through_observe(vault, cli):
    """The same with a new file: `beliefs/is-a-genius.md` written at `basis: fact, confidence: 0.95`,
    then an observation connected to it, committed it as "added by hand"."""
    root = vault.root
    (root / "beliefs" / "is-a-genius.md").write_text(
        "---\ntitle: Is a genius\nkind: trait\nbasis: fact\nconfidence: 0.95\npermanence: stable\nfirst: 2026-11-30\n"
        "---\nWrites brilliant code.\n", encoding="utf-8")
    head = _git(root, "rev-parse", "HEAD")
    r = cli("--vault", root, "observe", "--origin", "skill", "--session", "s1", "--connects", "is-a-genius",
            "--strength", "confirming", "--evidence", "Wrote a clever loop.")
    assert r.code != 0 and "epimem commit" in r.err, r.err
    assert _git(root, "rev-parse", "HEAD") == head
    assert "?? beliefs/is-a-genius.md" in _git(root, "status", "--porcelain")


def test_the_users_own_observe_still_commits_their_edit_first(vault, cli):
    # Without --origin (the user at the keyboard) the edit within the rules is committed, as before.
    root = vault.root
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference", basis="behavioral",
                     permanence="durable", confidence=0.30)
    edit_in_place(root / "beliefs" / "avoids-orms.md", "confidence: 0.30", "confidence: 0.60")
    r = cli("--vault", root, "observe", "--session", "s1", "--connects", "avoids-orms", "--strength", "complicating",
            "--evidence", "Used the ORM for a quick script.")
    assert r.code == 0, r.err
    assert _git(root, "log", "-2", "--format=%s").splitlines()[1] == "edit: avoids-orms confidence 0.30 → 0.60"


def test_commit_leaves_out_a_counter_or_a_review_dated_ahead(tmp_path, cli, monkeypatch):
    """Rule 18: what `validate` reports is left out of `epimem commit`, as a malformed file is."""
    from datetime import date, timedelta

    _real_clock(monkeypatch)
    ahead = (date.today() + timedelta(days=400)).isoformat()
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    counter = json.loads((root / "state/sessions.json").read_text())
    counter["last_session"] = ahead
    (root / "state/sessions.json").write_text(json.dumps(counter))
    (root / "reviews" / f"{ahead}.md").write_text(f"---\ndate: {ahead}\nkind: audit\n---\nAll fine.\n")
    head = _git(root, "rev-parse", "HEAD")
    r = cli("--vault", root, "commit", "--json")
    assert r.code == 0, r.err
    assert {p["path"] for p in r.json()["problems"]} == {"state/sessions.json", f"reviews/{ahead}.md"}, r.json()
    assert _git(root, "rev-parse", "HEAD") == head


# --- rule 21: history and what changed read a committed state too ---------------------------------

def test_a_rule_breaking_state_another_tool_committed_is_not_shown_in_history_or_what_changed(vault, cli, tmp_path):
    """Every reader of the belief shows the last valid state when Obsidian's git plugin commits an
    edit to 0.99 (test_rule21…: show, list, recall, the hook, the export); its history did not:
    `epimem history` and MCP's `history`/`get` listed "0.30 → 0.99" at that commit, and `diff`
    (CLI, MCP, the page's "what changed") said "confidence 0.30 → 0.99" — the number `validate`
    refuses, as the belief's."""
    from mcp import Client

    from epimem.mcp.server import build

    root = vault.root
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference", basis="behavioral",
                     permanence="durable", confidence=0.30)
    edit_in_place(root / "beliefs" / "avoids-orms.md", "confidence: 0.30", "confidence: 0.99")
    _plain_commit(root, "vault backup: 2026-11-30 10:00")

    def shows_099(text: str) -> bool:  # anywhere but in the line saying the edit was refused
        return "0.99" in text.replace("confidence 0.99 is above", "")

    h = cli("--vault", root, "history", "avoids-orms")
    assert h.code == 0 and not shows_099(h.out) and "refused" in h.out, h.out
    points = cli("--vault", root, "history", "avoids-orms", "--json").json()["history"]
    assert [p["confidence"] for p in points] == [0.30, 0.30] and "above the cap" in points[-1]["refused"]
    d = cli("--vault", root, "diff", "--since", "2026-11-01")
    assert d.code == 0 and not shows_099(d.out) and "refuse" in d.out, d.out
    seen = {"page": page(cli, root, tmp_path)}

    async def mcp():
        async with Client(build(root, today=TODAY)) as c:
            for name, args in (("history", {"id": "avoids-orms"}), ("get", {"id": "avoids-orms"}),
                               ("diff", {"since": "2026-11-01"})):
                r = await c.call_tool(name, args)
                assert not r.is_error, r.content[0].text
                seen[f"mcp {name}"] = r.content[0].text
    anyio.run(mcp)
    assert {k: shows_099(v) for k, v in seen.items()} == {k: False for k in seen}


# --- rule 18 (and 22): the open tension a contradiction extends --------------------------------------

def _contradicted(vault):
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference", basis="behavioral",
                     permanence="durable", confidence=0.80)
    vault.observe([{"connects": "avoids-orms", "strength": "contradicting", "session": "s1",
                    "evidence": "Reached for the ORM."}])
    [t] = (vault.root / "tensions").glob("*.md")
    return t


def _contradict(cli, root, *extra):
    return cli("--vault", root, "observe", *extra, "--session", "s2", "--connects", "avoids-orms",
               "--strength", "contradicting", "--evidence", "Used the ORM again.")


def test_a_hand_edit_of_the_open_tension_is_not_swept_into_the_observations_commit(vault, cli):
    """The write path settles the hand edits of the belief and the log it rewrites (rule 18), but
    a contradiction also extends the belief's open tension, read as it is on disk: a model's edit
    of it ("the user agreed it was a one-off") went into the observation's commit, unchecked and
    named nowhere. It is committed first, on its own, as `epimem commit` would."""
    root = vault.root
    t = _contradicted(vault)
    edit_in_place(t, "- what happened: ", "- what happened: (the user agreed it was a one-off) ")
    assert _contradict(cli, root, "--origin", "skill").code == 0
    rel = f"tensions/{t.name}"
    observed = _git(root, "show", "HEAD", "--format=", "--", rel)
    assert "\n+- what happened" not in observed and "Used the ORM again." in observed, observed
    assert _git(root, "log", "-1", "--format=%s", "HEAD^").startswith("edit: tension")
    assert _git(root, "status", "--porcelain").strip() == ""


def test_a_model_cannot_resolve_a_tension_by_hand_and_have_observe_commit_it(vault, cli):
    """Only the user resolves a tension (rule 22): a model's `status: resolved` typed into the file
    is not committed as the user's by the skill's own `observe`, which is refused; the user's own
    command commits it."""
    root = vault.root
    t = _contradicted(vault)
    edit_in_place(t, "status: watching", "status: resolved")
    head = _git(root, "rev-parse", "HEAD")
    r = _contradict(cli, root, "--origin", "skill")
    assert r.code != 0 and "epimem commit" in r.err and "status" in r.err, r.err
    assert _git(root, "rev-parse", "HEAD") == head and "status: resolved" in t.read_text()
    assert _contradict(cli, root).code == 0  # the user at the keyboard: their edit is committed first
    assert _git(root, "log", "-1", "--format=%s", "HEAD^").startswith("edit: tension")


# --- SPEC §14: a belief no longer held is never shown as current --------------------------------------

def _moved_and_retired(vault) -> None:
    """Three beliefs, of which one is superseded (Berlin → Munich) and one retired (Postgres)."""
    for title, conf in (("Lives in Berlin", 0.80), ("Lives in Munich", 0.50), ("Uses Postgres everywhere", 0.80)):
        vault.add_belief(title=title, statement=f"{title}.", kind="fact", basis="self-report", permanence="durable",
                         confidence=conf)
    vault.supersede(["lives-in-berlin"], "lives-in-munich", note="moved")
    vault.retire("uses-postgres-everywhere", note="not any more")


def test_recall_with_inactive_beliefs_never_lists_one_as_held(vault, cli):
    """`skill recall --inactive` is within the skills' grant (and `recall --inactive` the user's):
    the compact markdown and the JSON said "superseded, no longer held", but the list a terminal
    shows printed a retired or superseded belief as "(0.80 established)", as current as any."""
    root = vault.root
    _moved_and_retired(vault)
    for cmd in (("skill", "recall"), ("recall",)):
        r = cli("--vault", root, *cmd, "lives berlin postgres", "--inactive")
        assert r.code == 0, r.err
        lines = {ln.split(" — ")[0].split(". ", 1)[1]: ln for ln in r.out.splitlines() if " — " in ln}
        assert "superseded, no longer held" in lines["lives-in-berlin"], r.out
        assert "retired, no longer held" in lines["uses-postgres-everywhere"], r.out
        assert "no longer held" not in lines["lives-in-munich"], r.out


# --- rules 13 and 22, §15: the rules a model's observation is judged by are the committed ones ------------

@pytest.mark.parametrize("key,value", [("confirm_step", "0.60"), ("review", "off")])
def test_an_uncommitted_rulebook_edit_does_not_judge_a_models_observation(vault, cli, key, value):
    """The engine reads `epistemology.md` on every run (rule 13), as it stands on disk. A model whose
    editor may write in the vault set `confirm_step: 0.60` and ran the skill's `observe`: one
    confirmation took a belief from 0.30 to 0.90, committed as the rules' doing; or it set `review:
    off` and what the user asked to review first (SPEC §15) was applied at once. A path a model
    runs by itself is judged only by rules the user committed: with an edit pending it records
    nothing and says so."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "inbox"))
    from inbox_support import require_review
    from vaults import count_sessions

    root = vault.root
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference", basis="behavioral",
                     permanence="durable", confidence=0.30)
    rules_file = root / "epistemology.md"
    if key == "review":  # the user asked to review what assistants record; the model turns it off
        require_review(vault)
    [line] = [ln for ln in rules_file.read_text().splitlines() if ln.startswith(f"{key}: ")]
    edit_in_place(rules_file, line, f"{key}: {value}")
    count_sessions(vault, "real-1")
    head = _git(root, "rev-parse", "HEAD")
    r = cli("--vault", root, "observe", "--origin", "skill", "--session", "real-1", "--json", "--connects",
            "avoids-orms", "--strength", "confirming", "--evidence", "Wrote the migration in SQL.")
    assert r.code != 0 and "epistemology.md" in r.err and "epimem commit" in r.err, (r.code, r.out, r.err)
    assert _git(root, "rev-parse", "HEAD") == head
    assert cli("--vault", root, "belief", "show", "avoids-orms", "--json").json()["confidence"] == 0.30


def test_no_reader_a_model_has_serves_a_belief_no_longer_held_as_current(vault, cli, tmp_path):
    """An attempt the rules withstood (kept, as it could fail): every reader the skills, MCP and the
    memory tool give a model, asked about a superseded and a retired belief by their own words."""
    from anthropic.types.beta import BetaMemoryTool20250818ViewCommand as View
    from mcp import Client
    from readers_support import hook_context

    from epimem.integrations.anthropic_memory import EpimemMemoryTool
    from epimem.mcp.server import build

    root = vault.root
    _moved_and_retired(vault)
    gone = ("lives-in-berlin", "uses-postgres-everywhere", "Lives in Berlin", "Uses Postgres")
    seen = {}
    for args in (("skill", "observe"), ("skill", "recall", "lives berlin postgres"), ("belief", "list"),
                 ("skill", "mirror"), ("skill", "mirror", "gut-check"), ("skill", "mirror", "interview")):
        r = cli("--vault", root, *args)
        assert r.code == 0, (args, r.err)
        seen[" ".join(args)] = r.out
    seen["hook"] = hook_context(root, tmp_path)

    async def mcp():
        async with Client(build(root, today=TODAY)) as c:
            for name, a in (("recall", {"query": "lives berlin postgres"}), ("describe", {}),
                            ("mirror", {"mode": "portrait"}), ("mirror", {"mode": "gut-check"})):
                r = await c.call_tool(name, a)
                assert not r.is_error, r.content[0].text
                seen[f"mcp {name} {a.get('mode', '')}"] = r.content[0].text
            listed = (await c.call_tool("list", {})).structured_content
            seen["mcp list"] = " ".join(b["id"] for b in listed["beliefs"])
            seen["context"] = (await c.read_resource(f"epimem://context?cwd={root}")).contents[0].text
    anyio.run(mcp)
    tool = EpimemMemoryTool(root, session="conv-1", today=TODAY)
    for path in ("/memories", "/memories/beliefs", "/memories/context.md"):
        seen[path] = tool.execute(View(command="view", path=path))
    assert {k: [g for g in gone if g in v] for k, v in seen.items()} == {k: [] for k in seen}
    assert "lives-in-munich" in seen["mcp list"] and "Lives in Munich" in seen["/memories/context.md"]


def test_a_verdict_typed_into_a_belief_file_is_not_committed_as_the_users_by_observe(vault, cli):
    """Calibration (SPEC §14) reads the user's verdicts from their evidence lines, and an observation
    cannot write one (round one). Typed into the file by hand and carried in by the skill's own
    `observe`, a forged "gut-check verdict true" was committed as the user's provenance."""
    root = vault.root
    vault.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference", basis="behavioral",
                     permanence="durable", confidence=0.30)
    p = root / "beliefs" / "avoids-orms.md"
    forged = ("- 2026-11-30 · reinforcing — yes (gut-check verdict true at 0.30; stored 0.30 behavioral, durable, "
              "0 days)")
    p.write_text(p.read_text().rstrip("\n") + "\n" + forged + "\n", encoding="utf-8")
    head = _git(root, "rev-parse", "HEAD")
    r = cli("--vault", root, "observe", "--origin", "skill", "--session", "s1", "--connects", "avoids-orms",
            "--strength", "complicating", "--evidence", "Used the ORM for a quick script.")
    assert r.code != 0 and "evidence" in r.err and "epimem commit" in r.err, r.err
    assert _git(root, "rev-parse", "HEAD") == head
