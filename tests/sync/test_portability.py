"""Export → import → export is exact (SPEC §12), and the converters map what they can and say what they cannot."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from epimem.api import portability
from epimem.api.memory import Memory
from epimem.core.errors import InputError
from epimem.importers import other_memories as om

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "other-memories"


def export_text(root: Path) -> str:
    buf = io.StringIO()
    portability.export(Memory(root), buf)
    return buf.getvalue()


def files(root: Path) -> dict[str, bytes]:
    out = {}
    for d in ("beliefs", "observations", "tensions", "reviews", "state"):
        for p in sorted((root / d).glob("*")):
            if p.is_file() and not p.name.startswith("."):
                out[f"{d}/{p.name}"] = p.read_bytes()
    out["epistemology.md"] = (root / "epistemology.md").read_bytes()
    return out


def test_round_trip_of_the_sample_vault_through_the_cli(sample_vault, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run = lambda *args: subprocess.run([sys.executable, "-m", "epimem", *args], env=env, check=True,  # noqa: E731
                                       capture_output=True, text=True)
    run("--vault", str(sample_vault), "export", "--out", str(a))
    run("init", str(tmp_path / "new"))  # an importer brings files into a vault; it makes none (as every importer)
    out = run("--vault", str(tmp_path / "new"), "import", "jsonl", str(a)).stdout
    assert "One commit" in out
    run("--vault", str(tmp_path / "new"), "export", "--out", str(b))
    assert a.read_bytes() == b.read_bytes()
    assert files(sample_vault) == files(tmp_path / "new")
    first = json.loads(a.read_text().splitlines()[0])
    assert first == {"type": "header", "schema": portability.SCHEMA, "generator": first["generator"]}
    types = {json.loads(ln)["type"] for ln in a.read_text().splitlines()}
    assert {"belief", "observation", "tension", "review", "sessions", "epistemology"} <= types
    belief = next(json.loads(ln) for ln in a.read_text().splitlines() if '"type": "belief"' in ln)
    assert {"id", "title", "confidence", "statement", "evidence", "text"} <= set(belief)
    assert Memory(tmp_path / "new").validate() == Memory(sample_vault).validate()


@pytest.mark.slow
def test_round_trip_of_the_synthetic_10k_vault(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_synth", ROOT / "bench" / "synth.py")
    synth = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(synth)
    synth.make_vault(tmp_path / "big", n_beliefs=10000, n_observations=20000, seed=5)
    a = export_text(tmp_path / "big")
    (tmp_path / "a.jsonl").write_text(a)
    portability.import_jsonl(Memory.init(tmp_path / "copy")[0], tmp_path / "a.jsonl")
    assert export_text(tmp_path / "copy") == a
    assert files(tmp_path / "big") == files(tmp_path / "copy")


def test_import_into_a_vault_with_files_merges_them(vault, tmp_path):
    vault.add_belief(title="Likes tea", statement="Drinks tea every morning.", kind="preference",
                     basis="self-report", permanence="durable", belief_id="tea")
    other, _ = Memory.init(tmp_path / "other")
    other.add_belief(title="Likes tea", statement="Drinks tea every morning.", kind="preference",
                     basis="self-report", permanence="durable", belief_id="tea", tags=["drinks"])
    other.add_belief(title="Runs", statement="Runs on Sundays.", kind="workflow", basis="behavioral",
                     permanence="durable", belief_id="runs")
    (tmp_path / "x.jsonl").write_text(export_text(other.root))
    rep = portability.import_jsonl(vault, tmp_path / "x.jsonl")
    assert rep.files["beliefs/runs.md"] == "created" and rep.files["beliefs/tea.md"] == "merged"
    assert "drinks" in vault.belief("tea").tags
    assert vault.validate() == []


def test_a_bad_line_is_named_and_nothing_is_written(vault, tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"type": "header", "schema": 1}\n{"type": "belief", "id": "../escape", "text": "x"}\n')
    with pytest.raises(InputError) as e:
        portability.import_jsonl(vault, p)
    assert e.value.line == 2 and "invalid belief id" in str(e.value)
    p.write_text('{"type": "header", "schema": 1}\nnot json\n')
    with pytest.raises(InputError, match="not JSON") as e:
        portability.import_jsonl(vault, p)
    assert e.value.line == 2
    p.write_text('{"type": "header", "schema": 99}\n')
    with pytest.raises(InputError, match="newer than this epimem"):
        portability.import_jsonl(vault, p)
    assert not list((vault.root / "beliefs").glob("*.md"))


def test_mcp_memory_fixture(vault):
    rep = om.import_mcp_memory(vault, FIX / "memory.jsonl")
    assert len(rep.beliefs) == 4 and rep.commit
    bs = {b.statement: b for b in vault.beliefs()}
    pnpm = bs["default_user: Prefers pnpm over npm"]
    assert (pnpm.confidence, pnpm.basis, pnpm.scope) == (0.20, "interpretive", "global")
    assert "default-user" in pnpm.tags and "default_user works at Acme." in bs
    assert any("Acme" in u and "no observations" in u for u in rep.unmapped)
    assert any("'note'" in u for u in rep.unmapped)
    again = om.import_mcp_memory(vault, FIX / "memory.jsonl")
    assert again.beliefs == () and again.commit is None  # nothing twice


def test_claude_auto_memory_folder(vault, tmp_path):
    folder = tmp_path / ".claude" / "projects" / "-home-alex-code-shop" / "memory"
    folder.parent.mkdir(parents=True)
    import shutil

    shutil.copytree(FIX / "auto-memory", folder)
    rep = om.import_claude_auto_memory(vault, folder)
    bs = {b.statement.split("\n")[0]: b for b in vault.beliefs(status=None)}
    assert len(rep.beliefs) == 5
    pnpm = bs["Always use pnpm, not npm, in this repository."]
    assert (pnpm.confidence, pnpm.scope, pnpm.basis) == (0.20, "/home/alex/code/shop", "self-report")
    stale = next(b for s, b in bs.items() if s.startswith("The build fails"))
    assert stale.basis == "interpretive" and "debugging" in stale.tags
    assert any(s.startswith("The user dislikes long preambles") for s in bs)
    assert not any("Debugging notes" in s for s in bs)  # the index's link is a pointer, not a belief


def test_mem0_export(vault):
    rep = om.import_mem0(vault, FIX / "mem0.json")
    assert len(rep.beliefs) == 2
    bs = {b.statement: b for b in vault.beliefs()}
    dark = bs["Prefers dark mode in every editor"]
    assert (dark.scope, dark.first.isoformat(), dark.kind, dark.confidence) == ("epimem", "2026-10-02",
                                                                                "preference", 0.20)
    assert any("9b3e" in u and "no text" in u for u in rep.unmapped)
    assert any("8a2d" in u and "metadata.confidence" in u for u in rep.unmapped)
    with pytest.raises(InputError, match="expected a JSON list"):
        om.plan_mem0({"nope": 1}, name="x.json", today=vault.today)


@pytest.mark.e2e
def test_a_real_memory_jsonl_written_by_the_npm_server(vault, tmp_path):
    """The MCP reference memory server, driven over stdio by the real MCP SDK client, writes the file."""
    import anyio
    from npm_tools import npm_tool

    exe = npm_tool("@modelcontextprotocol/server-memory", "2026.8.31", "mcp-server-memory")
    mcp = pytest.importorskip("mcp")
    from mcp.client.stdio import stdio_client

    path = tmp_path / "memory.jsonl"

    async def drive():
        params = mcp.StdioServerParameters(command=str(exe), env={**os.environ, "MEMORY_FILE_PATH": str(path)})
        async with stdio_client(params) as (r, w), mcp.ClientSession(r, w) as s:
            await s.initialize()
            await s.call_tool("create_entities", {"entities": [
                {"name": "alex", "entityType": "person", "observations": ["Reviews code in the morning"]},
                {"name": "shop", "entityType": "project", "observations": []}]})
            await s.call_tool("add_observations", {"observations": [
                {"entityName": "alex", "contents": ["Writes tests before the fix"]}]})
            await s.call_tool("create_relations", {"relations": [
                {"from": "alex", "to": "shop", "relationType": "maintains"}]})

    anyio.run(drive)
    assert path.exists(), "the server wrote no memory.jsonl"
    rep = om.import_mcp_memory(vault, path)
    statements = {b.statement for b in vault.beliefs()}
    assert {"alex: Reviews code in the morning", "alex: Writes tests before the fix", "alex maintains shop."} \
        <= statements
    assert len(rep.beliefs) == 3 and any("shop" in u for u in rep.unmapped)


def test_the_converters_through_the_cli(vault, cli, tmp_path):
    r = cli("--vault", str(vault.root), "import", "mcp-memory", str(FIX / "memory.jsonl"), "--dry-run")
    assert r.code == 0 and "Would import 4 beliefs" in r.out and "Could not map" in r.out
    assert not list((vault.root / "beliefs").glob("*.md"))
    r = cli("--vault", str(vault.root), "import", "mem0", str(FIX / "mem0.json"), "--json")
    assert r.code == 0 and r.json()["totals"]["beliefs"] == 2 and r.json()["commit"]
    r = cli("--vault", str(vault.root), "import", "claude-auto-memory", str(FIX / "auto-memory"),
            "--project", "shop")
    assert r.code == 0 and "Imported 5 beliefs" in r.out
    assert {b.scope for b in vault.beliefs() if "claude-auto-memory" in b.tags} == {"shop"}
    r = cli("--vault", str(vault.root), "import", "mem0", str(tmp_path / "missing.json"))
    assert r.code != 0 and "no such file" in r.err
    r = cli("--vault", str(vault.root), "export")
    lines = r.out.splitlines()
    assert r.code == 0 and json.loads(lines[0])["type"] == "header" and len(lines) > 8
