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
# Who may import each front end: the console script the CLI, the CLI's commands the others; no
# more than that, so a new import across front ends is a decision made here.
FRONT_ENDS = {
    "cli": {"__main__.py"},
    # the session context MCP gives is api/context's, not the hook's (test_readers.py)
    "claude": {"cli"},
    "mcp": {"cli"},
    # the transcript formats (claude/transcript.read_transcript picks Codex's), the plugin check (the
    # hook), the skills' one copy (MCP's prompts: agents/claude_code.SKILLS_DIR)
    "agents": {"cli", "claude", "mcp"},
    # backends a developer wires into their own app (the Claude API's memory tool): its entry
    # point is the app, so nothing of epimem imports them
    "integrations": set(),
}
# Front ends that live beside the service they show, not in a front end's package: imported only by
# their entry point all the same. (`epimem mirror serve`: the live page's HTTP server.)
FRONT_END_MODULES = {"epimem.mirror.serve": {"cli/mirror.py"}}
# What makes a module a front end: it serves a protocol or reads a terminal or stdin.
SERVES = ("http.server", "socketserver", "uvicorn", "mcp", "starlette", "asyncio.start_server")


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


def test_front_end_modules_are_imported_only_by_their_entry_points():
    bad = []
    for f, rel, _area_of in _modules():
        for m in imports(f):
            for mod, allowed in FRONT_END_MODULES.items():
                if (m == mod or m.startswith(mod + ".")) and rel.as_posix() not in allowed \
                        and f != PKG.joinpath(*mod.split(".")[1:]).with_suffix(".py"):
                    bad.append(f"{rel} imports {m}")
    assert not bad, "\n".join(bad)


def test_every_front_end_is_listed():
    # A module that serves a protocol or reads stdin is a front end: in a front end's package, or named
    # in FRONT_END_MODULES, so the test above holds it too.
    listed = {PKG.joinpath(*m.split(".")[1:]).with_suffix(".py") for m in FRONT_END_MODULES}
    bad = []
    for f, rel, area in _modules():
        if area in FRONT_ENDS or f in listed or rel.name == "__main__.py":
            continue
        served = {m for m in imports(f) if m.startswith(SERVES)}
        if served or "sys.stdin" in f.read_text():
            bad.append(f"{rel}: {sorted(served) or 'reads sys.stdin'}")
    assert not bad, "front ends not listed in FRONT_ENDS or FRONT_END_MODULES:\n" + "\n".join(bad)


def test_no_module_imports_by_name_but_the_known_few():
    # `importlib.import_module(name)` is an import the tests above cannot see. Its homes: the CLI's
    # registry (its own modules, by the command's first word), recall's lazy attributes (its own),
    # and recall's warm-up of numpy, orjson and tokenizers in the starting thread.
    known = {"cli/registry.py", "recall/__init__.py", "recall/api.py"}
    users = {rel.as_posix() for f, rel, _ in _modules()
             if "import_module(" in f.read_text() or "__import__(" in f.read_text()}
    assert users <= known, users - known
