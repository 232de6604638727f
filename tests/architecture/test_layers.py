"""The layers of docs/architecture.md, held by parsing every import (lazy ones included).

core → store → services (api, importers, mirror, recall) → front ends (cli, claude, mcp, agents,
integrations).
A module may import its own layer and the layers below it, never one above; a
front end is imported only by its entry point.
"""

from __future__ import annotations

from pathlib import Path

from test_architecture import PKG, imports

LAYERS = {
    "core": 0,
    "store": 1,
    "api": 2, "importers": 2, "mirror": 2, "recall": 2,
    "claude": 3, "cli": 3, "mcp": 3, "agents": 3, "integrations": 3,
}
# Who may import each front end: its entry point, and the CLI's wrappers for it.
FRONT_ENDS = {
    "cli": {"__main__.py"},
    # The MCP server's prompts carry the installed skills (claude/install.SKILLS_DIR); the session
    # context both give is api/context's (test_readers.py holds that MCP imports nothing of the hook).
    "claude": {"__main__.py", "cli", "mcp"},
    "mcp": {"__main__.py", "cli"},
    # the installers' shared editors and the transcript formats: the Claude Code installer and
    # session-end pass use them too
    "agents": {"__main__.py", "cli", "claude", "mcp"},
    # backends a developer wires into their own app (the Claude API's memory tool): its entry
    # point is the app, so nothing of epimem imports them
    "integrations": set(),
}


def _area(mod: str) -> str | None:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "epimem" and parts[1] in LAYERS else None


def _modules():
    for f in sorted(PKG.rglob("*.py")):
        rel = f.relative_to(PKG)
        yield f, rel, (rel.parts[0] if len(rel.parts) > 1 else rel.name)


def test_no_module_imports_a_layer_above_its_own():
    bad = []
    for f, rel, area in _modules():
        if area not in LAYERS:
            continue
        for m in imports(f):
            other = _area(m)
            if other is not None and LAYERS[other] > LAYERS[area]:
                bad.append(f"{rel} imports {m}")
    assert not bad, "\n".join(bad)


def test_front_ends_are_imported_only_by_their_entry_points():
    bad = []
    for f, rel, area in _modules():
        for m in imports(f):
            other = _area(m)
            if other in FRONT_ENDS and area != other and area not in FRONT_ENDS[other]:
                bad.append(f"{rel} imports {m}")
    assert not bad, "\n".join(bad)


def test_every_layer_package_exists():
    for area in LAYERS:
        assert (PKG / area / "__init__.py").is_file(), area
    assert Path(PKG / "core" / "errors.py").is_file()
