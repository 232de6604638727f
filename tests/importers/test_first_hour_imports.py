"""Issue 28: what an import makes of a memory's own type, and of a line that is only a secret."""

from __future__ import annotations

import json

from epimem.importers import claude_memory as cm
from epimem.importers import other_memories as om

SECRET = "sk-ant-api03-" + "a1B2c3D4e5F6g7H8i9J0" * 4


def _auto(tmp_path, files: dict[str, str]):
    folder = tmp_path / ".claude" / "projects" / "-home-alex-code-shop" / "memory"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_auto_memory_types_name_kinds_feedback_is_a_preference(vault, tmp_path):
    folder = _auto(tmp_path, {
        "MEMORY.md": "# Memory\n\n- [Reviews](reviews.md) — how to review\n",
        "reviews.md": "---\nname: Reviews\ntype: feedback\n---\n- Keep review comments to the point.\n",
        "role.md": "---\nname: Role\ntype: user\n---\n- Works on the payments team as a backend engineer.\n",
        "ci.md": "---\nname: CI\ntype: project\n---\n- The CI runs on self-hosted runners.\n",
    })
    om.import_claude_auto_memory(vault, folder)
    kinds = {b.statement: b.kind for b in vault.beliefs()}
    assert kinds["Keep review comments to the point."] == "preference"
    assert kinds["Works on the payments team as a backend engineer."] == "identity"
    assert kinds["The CI runs on self-hosted runners."] == "fact"


def test_a_memory_line_that_is_only_a_secret_becomes_no_belief(vault, tmp_path):
    # The plain memory file, the auto memory folder, the MCP memory server and mem0: each says so.
    (tmp_path / "CLAUDE.md").write_text(f"# Notes\n\n- {SECRET}\n- Prefers tabs over spaces.\n")
    rep = cm.import_claude_memory(vault, tmp_path / "CLAUDE.md")
    assert [vault.belief(b).statement for b in rep.beliefs] == ["Prefers tabs over spaces."]
    assert any("only a secret" in u for u in rep.unmapped) and SECRET not in " ".join(rep.unmapped)

    folder = _auto(tmp_path, {"MEMORY.md": f"- {SECRET}\n", "key.md": f"{SECRET}\n"})
    rep = om.import_claude_auto_memory(vault, folder)
    assert rep.beliefs == () and sum("only a secret" in u for u in rep.unmapped) == 2, rep.unmapped

    (tmp_path / "memory.jsonl").write_text(json.dumps({"type": "entity", "name": "alex", "entityType": "person",
                                                       "observations": [SECRET]}) + "\n")
    rep = om.import_mcp_memory(vault, tmp_path / "memory.jsonl")
    assert rep.beliefs == () and any("only a secret" in u for u in rep.unmapped), rep.unmapped

    (tmp_path / "mem0.json").write_text(json.dumps([{"id": "m1", "memory": SECRET}]))
    rep = om.import_mem0(vault, tmp_path / "mem0.json")
    assert rep.beliefs == () and any("only a secret" in u for u in rep.unmapped), rep.unmapped
    for p in (vault.root / "beliefs").glob("*.md"):
        assert "REDACTED" not in p.read_text() and SECRET not in p.read_text()


def test_a_line_that_names_its_secret_is_still_imported_redacted(vault, tmp_path):
    (tmp_path / "CLAUDE.md").write_text(f"- Uses the staging key {SECRET} for load tests.\n")
    rep = cm.import_claude_memory(vault, tmp_path / "CLAUDE.md")
    (b,) = [vault.belief(i) for i in rep.beliefs]
    assert "[REDACTED:" in b.statement and SECRET not in b.statement
