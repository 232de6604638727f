"""Imports in the review inbox (issue 29 item 2, round 3; SPEC §15): with `review: required`,
`epimem import …` proposes (one proposal a belief, one commit for the batch) and the user accepts
or rejects; accepting is the import's own write, the rules applied again that day, and only as
the commit that proposed it wrote it. Driven through what a user runs: the CLI, the served page,
MCP over the real SDK client."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from inbox_support import belief_bytes, head, require_review

from epimem.api.memory import Memory
from epimem.core import merge

TODAY = "2026-11-30"
FIX = Path(__file__).resolve().parents[1] / "fixtures"
SECRET = "ghp_" + "Zq8Lm2Xc4Vb6Nn0Pp9Rr7Tt5Yy3Uu1Ii8Oo6Aa"
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x.invalid"}


def _epimem(root: Path, *args: str, today: str = TODAY, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "EPIMEM_TODAY": today}
    return subprocess.run([sys.executable, "-m", "epimem", "--vault", str(root), *args], capture_output=True,
                          text=True, env=env, timeout=120, **kw)


def commits(root: Path) -> int:
    return int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout)


def pending(root: Path) -> list[Path]:
    return sorted((root / "inbox").glob("*.md"))


def notes_file(tmp_path: Path, *bullets: str) -> Path:
    p = tmp_path / "notes.md"
    p.write_text("# Working style\n" + "".join(f"- {b}\n" for b in bullets), encoding="utf-8")
    return p


def export_of(tmp_path: Path, cli) -> Path:
    """An export of a vault holding a verified fact (0.95), a behavioural belief confirmed to
    0.40 with its log, and a tension."""
    src = Memory(tmp_path / "src", today=TODAY)
    assert cli("init", src.root).code == 0
    src.add_belief(title="Lives in Lisbon", statement="Lives in Lisbon.", kind="identity", basis="fact",
                   permanence="durable", confidence=0.95)
    src.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference", basis="behavioral",
                   permanence="stable")
    src.observe([{"connects": "avoids-orms", "strength": "contradicting", "basis": "behavioral",
                  "evidence": "Reached for SQLAlchemy on the billing job."}], source="cli", session="s1")
    out = tmp_path / "export.jsonl"
    assert cli("--vault", src.root, "export", "--out", out).code == 0
    return out


def sources(tmp_path: Path, cli) -> dict[str, Path]:
    auto = tmp_path / "-home-me-proj" / "memory"
    shutil.copytree(FIX / "other-memories" / "auto-memory", auto)
    return {"claude-memory": notes_file(tmp_path, "Prefers tabs over spaces", "Reads the diff before the summary"),
            "mcp-memory": FIX / "other-memories" / "memory.jsonl",
            "claude-auto-memory": auto,
            "mem0": FIX / "other-memories" / "mem0.json",
            "epistemic-memory": FIX / "epistemic-memory",
            "jsonl": export_of(tmp_path, cli)}


def vault_files(root: Path) -> dict[str, object]:
    """What the vault believes: belief and tension files byte for byte, each log's entries."""
    out: dict[str, object] = {}
    for folder in ("beliefs", "tensions"):
        for f in sorted((root / folder).glob("*.md")):
            out[f"{folder}/{f.name}"] = f.read_bytes()
    for f in sorted((root / "observations").glob("*.md")):
        out[f"observations/{f.name}"] = sorted(e for _, e in merge.split_log(f.read_text())[1])
    return out


IMPORTERS = ("claude-memory", "mcp-memory", "claude-auto-memory", "mem0", "epistemic-memory", "jsonl")


@pytest.mark.parametrize("importer", IMPORTERS)
def test_every_import_proposes_under_review_and_accepting_writes_what_the_import_would_have(
        importer, tmp_path, cli):
    src = sources(tmp_path, cli)[importer]
    direct, reviewed = tmp_path / "direct", tmp_path / "reviewed"
    for root in (direct, reviewed):
        assert cli("init", root).code == 0
    require_review(Memory(reviewed, today=TODAY))
    # without review: behaviour unchanged, the import writes, the inbox stays empty
    r = cli("--vault", direct, "import", importer, src, "--json")
    assert r.code == 0, r.err
    assert not (direct / "inbox").exists() and r.json()["proposed"] == []
    # --dry-run still only previews
    before, n = belief_bytes(reviewed), commits(reviewed)
    r = cli("--vault", reviewed, "import", importer, src, "--dry-run")
    assert r.code == 0, r.err
    assert "Would import" in r.out and "review is required" in r.out.lower()
    assert commits(reviewed) == n and not (reviewed / "inbox").exists()
    # with review: proposals, one commit saying how many, nothing a number lives in touched
    r = cli("--vault", reviewed, "import", importer, src, "--json")
    assert r.code == 0, r.err
    ids = r.json()["proposed"]
    assert ids and len(pending(reviewed)) == len(ids)
    assert belief_bytes(reviewed) == before and commits(reviewed) == n + 1
    subject = subprocess.run(["git", "log", "-1", "--format=%s%n%b"], cwd=reviewed, capture_output=True,
                             text=True).stdout
    assert subject.startswith(f"import: {len(ids)} proposal") and "Epimem-Op: import-propose" in subject
    # the inbox lists them as the diffs they would make
    listed = cli("--vault", reviewed, "inbox", "--json").json()["proposals"]
    assert sorted(p["id"] for p in listed) == sorted(ids)
    assert all(p["kind"] == "import" and not p["refused"] and p["changes"] for p in listed), listed
    text = cli("--vault", reviewed, "inbox", "--diff").out
    assert f"epimem import {importer}" in text and "+title:" in text
    # accepted, all at once: one commit, the same files the import wrote directly
    r = cli("--vault", reviewed, "inbox", "accept", *ids, "--json")
    assert r.code == 0, r.err
    assert sorted(r.json()["accepted"]) == sorted(ids)
    assert commits(reviewed) == n + 2 and pending(reviewed) == []
    assert vault_files(reviewed) == vault_files(direct)
    status = subprocess.run(["git", "status", "--porcelain"], cwd=reviewed, capture_output=True, text=True).stdout
    assert status == ""
    assert Memory(reviewed, today=TODAY).validate() == []


@pytest.mark.seed_rules
def test_each_proposal_is_one_belief_with_its_log_and_tensions_accepted_on_its_own(tmp_path, cli):
    src = sources(tmp_path, cli)["jsonl"]
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    mem = Memory(root, today=TODAY)
    require_review(mem)
    r = cli("--vault", root, "import", "jsonl", src, "--json")
    assert r.code == 0, r.err
    listed = {tuple(p["files"]): p for p in cli("--vault", root, "inbox", "--json").json()["proposals"]}
    orms = next(p for files, p in listed.items() if "beliefs/avoids-orms.md" in files)
    assert any(f.startswith("observations/") for f in orms["files"])
    assert any(f.startswith("tensions/") for f in orms["files"])
    assert [b["id"] for b in orms["beliefs"]] == ["avoids-orms"]
    r = cli("--vault", root, "inbox", "accept", orms["id"])
    assert r.code == 0, r.err
    assert Memory(root, today=TODAY).belief("avoids-orms").confidence == 0.30
    assert not (root / "beliefs" / "lives-in-lisbon.md").exists()
    assert list((root / "tensions").glob("*.md"))


# --- which confidences an accepted import carries ---------------------------------------------------

def test_an_accepted_export_keeps_its_verified_fact_the_users_own_import(tmp_path, cli):
    """Rule 14: running an import is the user's; accepting its proposal is too. The fact the
    export holds comes in as a fact, at the number the import gave it."""
    src = sources(tmp_path, cli)["jsonl"]
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    require_review(Memory(root, today=TODAY))
    ids = cli("--vault", root, "import", "jsonl", src, "--json").json()["proposed"]
    listed = cli("--vault", root, "inbox", "--json").json()["proposals"]
    fact = next(p for p in listed if "beliefs/lives-in-lisbon.md" in p["files"])
    assert fact["beliefs"][0]["basis"] == "fact" and fact["beliefs"][0]["confidence"] == 0.95
    assert cli("--vault", root, "inbox", "accept", fact["id"]).code == 0
    b = Memory(root, today=TODAY).belief("lives-in-lisbon")
    assert (b.basis, b.confidence) == ("fact", 0.95)
    assert fact["id"] in ids


@pytest.mark.parametrize("committed", [True, False])
def test_a_proposal_edited_to_a_095_fact_is_refused_whether_or_not_the_edit_was_committed(
        tmp_path, cli, committed):
    """The adversary: a model (or anyone) with write access to the vault edits a waiting import
    proposal from a speculative 0.20 to a 0.95 fact. The inbox says so; accepting it is refused."""
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    require_review(Memory(root, today=TODAY))
    src = notes_file(tmp_path, "Prefers tabs over spaces")
    (pid,) = cli("--vault", root, "import", "claude-memory", src, "--json").json()["proposed"]
    p = root / "inbox" / f"{pid}.md"
    text = p.read_text()
    assert "basis: self-report\\nconfidence: 0.20" in text
    forged = text.replace("basis: self-report\\nconfidence: 0.20", "basis: fact\\nconfidence: 0.95")
    p.write_text(forged)
    if committed:
        subprocess.run(["git", "commit", "-qam", "a better number"], cwd=root, check=True, env=GIT_ENV)
    before = belief_bytes(root)
    (prop,) = cli("--vault", root, "inbox", "--json").json()["proposals"]
    assert "changed after the import proposed it" in prop["refused"] and prop["changes"] == []
    assert prop["beliefs"] == []
    r = cli("--vault", root, "inbox", "accept", pid)
    assert r.code == 1 and "changed after the import proposed it" in r.err
    assert belief_bytes(root) == before and p.read_text() == forged
    # validate names it (rule 18), and the user can still decline it
    r = cli("--vault", root, "validate", "--json")
    assert r.code == 1 and any(x["path"] == f"inbox/{pid}.md" and "changed after" in x["message"]
                               for x in r.json()["problems"]), r.out
    assert cli("--vault", root, "inbox", "reject", pid).code == 0
    assert cli("--vault", root, "validate").code == 0


def test_a_proposal_made_by_hand_is_not_an_imports_and_is_refused(tmp_path, cli):
    """A file that looks like an import's proposal but no import's commit wrote (made by hand,
    committed by `epimem commit` or by git) is never accepted."""
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    require_review(Memory(root, today=TODAY))
    src = notes_file(tmp_path, "Prefers tabs over spaces")
    (pid,) = cli("--vault", root, "import", "claude-memory", src, "--json").json()["proposed"]
    real = (root / "inbox" / f"{pid}.md").read_text()
    fake_id = "prop-20261130-0badf00d"
    fake = (real.replace(pid, fake_id).replace("confidence: 0.20", "confidence: 0.95")
            .replace("basis: self-report", "basis: fact").replace("prefers-tabs-over-spaces", "is-a-genius")
            .replace("Prefers tabs over spaces", "Is a genius"))
    (root / "inbox" / f"{fake_id}.md").write_text(fake)
    cli("--vault", root, "commit")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "x", "--allow-empty"], cwd=root, check=True, env=GIT_ENV)
    r = cli("--vault", root, "inbox", "accept", fake_id)
    assert r.code == 1 and "not written by `epimem import`" in r.err
    assert not (root / "beliefs" / "is-a-genius.md").exists()


def test_the_rules_apply_again_on_the_day_it_is_accepted(tmp_path, cli):
    """Caps and redaction are the import's when proposed and again when accepted: a cap the user
    lowered and a secret pattern they added meanwhile hold for what they accept afterwards."""
    src = sources(tmp_path, cli)["jsonl"]
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    mem = Memory(root, today=TODAY)
    require_review(mem)
    ids = cli("--vault", root, "import", "jsonl", src, "--json").json()["proposed"]
    ep = root / "epistemology.md"
    ep.write_text(ep.read_text().replace("caps: {fact: 1.0,", "caps: {fact: 0.90,", 1)
                  .replace("redact: []", "redact: [{name: city, pattern: 'Lisbon'}]", 1))
    assert cli("--vault", root, "commit").code == 0
    listed = cli("--vault", root, "inbox", "--json").json()["proposals"]
    fact = next(p for p in listed if "beliefs/lives-in-lisbon.md" in p["files"])
    assert fact["beliefs"][0]["confidence"] == 0.90 and "Lisbon" not in json.dumps(fact)
    assert cli("--vault", root, "inbox", "accept", fact["id"]).code == 0
    b = Memory(root, today=TODAY).belief("lives-in-lisbon")
    assert b.confidence == 0.90 and b.evidence[-1].kind == "lowered"
    assert "Lisbon" not in (root / "beliefs" / "lives-in-lisbon.md").read_text()
    assert fact["id"] in ids


# --- reject, and the same import again --------------------------------------------------------------

def test_the_same_import_after_a_reject_does_not_ask_twice_even_days_later(tmp_path, cli):
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    require_review(Memory(root, today=TODAY))
    src = notes_file(tmp_path, "Prefers tabs over spaces", "Reads the diff before the summary")
    ids = json.loads(_epimem(root, "import", "claude-memory", str(src), "--json").stdout)["proposed"]
    r = _epimem(root, "inbox", "reject", *ids, "--note", "old notes")
    assert r.returncode == 0, r.stderr
    assert sorted(p.stem for p in (root / "inbox" / "rejected").glob("*.md")) == sorted(ids)
    n = commits(root)
    for day in (TODAY, "2026-12-09"):
        r = _epimem(root, "import", "claude-memory", str(src), today=day)
        assert r.returncode == 0, r.stderr
        assert "Nothing new to propose" in r.stdout and "not asked twice" in r.stdout, r.stdout
        assert pending(root) == [] and commits(root) == n
    # a pending one is not proposed twice either; a new bullet is
    src.write_text(src.read_text() + "- Writes commit messages in the imperative\n")
    r = _epimem(root, "import", "claude-memory", str(src), "--json")
    assert len(json.loads(r.stdout)["proposed"]) == 1
    r = _epimem(root, "import", "claude-memory", str(src), "--json")
    assert json.loads(r.stdout)["proposed"] == [] and len(pending(root)) == 1
    r = _epimem(root, "inbox", "accept", ids[0])
    assert r.returncode == 1 and "rejected" in r.stderr


# --- two accepts at once ----------------------------------------------------------------------------

def test_two_accepts_at_once_write_it_once(tmp_path, cli):
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    require_review(Memory(root, today=TODAY))
    src = notes_file(tmp_path, "Prefers tabs over spaces")
    (pid,) = cli("--vault", root, "import", "claude-memory", src, "--json").json()["proposed"]
    env = {**os.environ, "EPIMEM_TODAY": TODAY}
    cmd = [sys.executable, "-m", "epimem", "--vault", str(root), "inbox", "accept", pid, "--json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert sorted(p.returncode for p in procs) == [0, 1], outs
    loser = next(err for (_, err), p in zip(outs, procs, strict=True) if p.returncode == 1)
    assert pid in loser and ("no proposal" in loser or "already" in loser), loser
    assert [p.name for p in (root / "beliefs").glob("*.md")] == ["prefers-tabs-over-spaces.md"]
    log = subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True).stdout
    assert log.count("inbox accept") == 1
    assert subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout == ""


# --- a secret in the imported text ------------------------------------------------------------------

def test_a_secret_in_the_imported_text_is_in_no_proposal_commit_listing_or_belief(tmp_path, cli):
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    require_review(Memory(root, today=TODAY))
    src = notes_file(tmp_path, f"Deploys with the token {SECRET} from the vault")
    recs = [json.loads(ln) for ln in sources(tmp_path, cli)["jsonl"].read_text().splitlines()]
    for rec in recs:
        if rec.get("id") == "avoids-orms":
            rec["text"] = rec["text"].replace("Writes SQL by hand.", f"Writes SQL by hand ({SECRET}).")
    export = tmp_path / "secret.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in recs))
    ids = cli("--vault", root, "import", "claude-memory", src, "--json").json()["proposed"]
    ids2 = cli("--vault", root, "import", "jsonl", export, "--json").json()["proposed"]
    shown = cli("--vault", root, "inbox", "--diff").out + json.dumps(cli("--vault", root, "inbox", "--json").json())

    async def mcp_inbox():
        from mcp import Client

        from epimem.mcp.server import build

        async with Client(build(root, today=TODAY)) as c:
            return json.dumps((await c.call_tool("inbox", {})).structured_content)

    shown += anyio.run(mcp_inbox)
    assert SECRET not in shown and "[REDACTED" in shown or "redacted" in shown.lower()
    assert cli("--vault", root, "inbox", "accept", *ids).code == 0
    assert cli("--vault", root, "inbox", "accept", *ids2).code == 0
    history = subprocess.run(["git", "log", "-p", "--all", "--format=%B"], cwd=root, capture_output=True,
                             text=True).stdout
    files = "".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)
    assert SECRET not in history and SECRET not in files and SECRET not in shown


# --- what the user sees: the page, MCP, the session context ---------------------------------------------

def test_the_served_page_shows_an_import_proposal_and_its_buttons_accept_and_reject(tmp_path, cli):
    from test_inbox_page import _call

    from epimem.mirror.serve import Server

    root = tmp_path / "v"
    assert cli("init", root).code == 0
    mem = Memory(root, today=TODAY)
    require_review(mem)
    src = notes_file(tmp_path, "Prefers tabs over spaces", "Reads the diff before the summary")
    first, second = cli("--vault", root, "import", "claude-memory", src, "--json").json()["proposed"]
    srv = Server(Memory(root, today=TODAY), port=0).start()
    try:
        status, page, _ = _call(srv.url)
        assert status == 200 and first in page and second in page
        assert "epimem import claude-memory" in page and "self-report, 0.20 (speculative)" in page
        base = f"http://127.0.0.1:{srv.port}"
        assert _call(base + "/inbox/accept", {"id": first})[0] == 403  # no token: nothing
        assert not list((root / "beliefs").glob("*.md"))
        status, _, _ = _call(base + "/inbox/accept", {"id": first, "token": srv.token, "do": "accept"},
                             {"Origin": base})
        assert status == 303
        status, _, _ = _call(base + "/inbox/reject", {"id": second, "token": srv.token, "do": "reject"},
                             {"Origin": base})
        assert status == 303
    finally:
        srv.close()
    assert [p.name for p in (root / "beliefs").glob("*.md")] == ["prefers-tabs-over-spaces.md"]
    assert (root / "inbox" / "rejected" / f"{second}.md").is_file()


def test_mcp_lists_import_proposals_read_only_and_the_session_context_counts_them(tmp_path, cli):
    from mcp import Client

    from epimem.mcp.server import build

    root = tmp_path / "v"
    assert cli("init", root).code == 0
    require_review(Memory(root, today=TODAY))
    src = notes_file(tmp_path, "Prefers tabs over spaces", "Reads the diff before the summary")
    ids = cli("--vault", root, "import", "claude-memory", src, "--json").json()["proposed"]

    async def main():
        async with Client(build(root, today=TODAY)) as c:
            tools = {t.name for t in (await c.list_tools()).tools}
            return tools, (await c.call_tool("inbox", {})).structured_content

    tools, listed = anyio.run(main)
    assert not {"inbox_accept", "accept", "inbox_reject"} & tools
    assert sorted(p["id"] for p in listed["proposals"]) == sorted(ids)
    assert all(p["kind"] == "import" and p["importer"] == "claude-memory" for p in listed["proposals"])
    assert {b["confidence"] for p in listed["proposals"] for b in p["beliefs"]} == {0.20}
    r = cli("--vault", root, "skill", "observe", "--session", "s1")
    assert "2 proposals of what to remember wait for the user's review" in r.out, r.out


@pytest.mark.seed_rules
def test_observation_and_import_proposals_are_accepted_each_in_their_own_call(tmp_path, cli):
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    mem = Memory(root, today=TODAY)
    mem.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference", basis="behavioral",
                   permanence="stable")
    require_review(mem)
    obs = mem.observe([{"connects": "avoids-orms", "strength": "confirming", "basis": "behavioral",
                        "evidence": "Wrote the report query by hand.", "session": "s1"}],
                      source="agent", origin="mcp").proposed
    (imp,) = cli("--vault", root, "import", "claude-memory", notes_file(tmp_path, "Prefers tabs over spaces"),
                 "--json").json()["proposed"]
    before = belief_bytes(root)
    r = cli("--vault", root, "inbox", "accept", obs[0], imp)
    assert r.code == 1 and "different kinds" in r.err and belief_bytes(root) == before
    assert cli("--vault", root, "inbox", "accept", imp).code == 0
    assert cli("--vault", root, "inbox", "accept", obs[0]).code == 0
    assert Memory(root, today=TODAY).belief("avoids-orms").confidence == 0.35


def test_a_malformed_import_proposal_is_named_with_its_line_and_nothing_escapes_the_vault(tmp_path, cli):
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    require_review(Memory(root, today=TODAY))
    (pid,) = cli("--vault", root, "import", "claude-memory", notes_file(tmp_path, "Prefers tabs"),
                 "--json").json()["proposed"]
    p = root / "inbox" / f"{pid}.md"
    bad = p.read_text().replace("path: beliefs/prefers-tabs.md", "path: ../../outside.md")
    p.write_text(bad)
    r = cli("--vault", root, "inbox", "--json")
    assert r.code == 1
    (problem,) = r.json()["problems"]
    assert problem["path"] == f"inbox/{pid}.md" and problem["line"] > 1 and "records" in problem["message"]
    r = cli("--vault", root, "inbox", "accept", pid)
    assert r.code != 0 and pid in r.err
    assert p.read_text() == bad and not (tmp_path / "outside.md").exists() and not (root.parent / "outside.md").exists()
    assert head(root)


def test_an_export_that_updates_a_belief_the_vault_has_proposes_the_merge_it_would_make(tmp_path, cli):
    """Where an import updates an existing belief, the proposal is the change the import's merge
    would make; a file the vault already holds byte for byte is not asked about."""
    src = sources(tmp_path, cli)["jsonl"]
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    assert cli("--vault", root, "import", "jsonl", src).code == 0  # the same export, taken in before
    mem = Memory(root, today=TODAY)
    mem.observe([{"connects": "avoids-orms", "strength": "confirming", "basis": "behavioral",
                  "evidence": "Wrote the report query by hand."}], source="cli", session="s2")
    require_review(mem)
    # the other machine's export: the same belief, with a confirmation this vault has not seen
    other = Memory(tmp_path / "src", today=TODAY)
    other.observe([{"connects": "avoids-orms", "strength": "confirming", "basis": "behavioral",
                    "evidence": "Rewrote the ORM call as SQL."}], source="cli", session="s9")
    again = tmp_path / "again.jsonl"
    assert cli("--vault", other.root, "export", "--out", again).code == 0
    ids = cli("--vault", root, "import", "jsonl", again, "--json").json()["proposed"]
    listed = cli("--vault", root, "inbox", "--json").json()["proposals"]
    assert "beliefs/lives-in-lisbon.md" not in {f for p in listed for f in p["files"]}  # unchanged: not asked
    (orms,) = [p for p in listed if "beliefs/avoids-orms.md" in p["files"]]
    change = next(c for c in orms["changes"] if c["path"] == "beliefs/avoids-orms.md")
    assert change["action"] == "change" and "+" in change["diff"] and "Rewrote the ORM call" in json.dumps(orms)
    before = (root / "beliefs" / "avoids-orms.md").read_text()
    assert cli("--vault", root, "inbox", "accept", orms["id"]).code == 0
    after = (root / "beliefs" / "avoids-orms.md").read_text()
    assert after != before and "Wrote the report query by hand." in after and "Rewrote the ORM call" in after
    assert orms["id"] in ids
