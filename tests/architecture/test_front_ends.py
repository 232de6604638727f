"""The front ends' one home for each thing (docs/architecture.md, "The front ends have one home"):
one declaration and one parser for the command line, one installer framework for every agent."""

from __future__ import annotations

import ast

from test_architecture import PKG, _closure, imports
from test_layers import FRONT_ENDS as LAYERS_FRONT_ENDS

FRONT_ENDS = tuple(LAYERS_FRONT_ENDS)  # one list of the front ends: test_layers.py's


def _defs(kind) -> dict[str, list[str]]:
    """Every module-level definition of `kind` (function or class) in the front ends, by name → the
    files defining it."""
    out: dict[str, list[str]] = {}
    for f in (f for area in FRONT_ENDS for f in (PKG / area).rglob("*.py")):
        for node in ast.parse(f.read_text()).body:
            if isinstance(node, kind):
                out.setdefault(node.name, []).append(f.relative_to(PKG).as_posix())
    return out


def test_nothing_but_the_cli_parses_a_command_line():
    # The background workers `python -m` starts take a vault path (recall/follow, store/context_cache);
    # agents/base reads argv[0] for the program's own path. Nothing else looks at argv.
    workers = {"__main__.py", "recall/follow.py", "store/context_cache.py", "agents/base.py"}
    readers = {f.relative_to(PKG).as_posix() for f in PKG.rglob("*.py") if "sys.argv" in f.read_text()}
    assert readers <= workers, readers - workers
    for f in PKG.rglob("*.py"):
        assert not {m.split(".")[0] for m in imports(f)} & {"argparse", "click", "typer", "optparse"}, f


def test_commands_are_declared_only_in_the_cli():
    for f in PKG.rglob("*.py"):
        rel = f.relative_to(PKG)
        if rel.parts[0] != "cli":
            assert "epimem.cli.spec" not in imports(f) and "@command(" not in f.read_text(), rel


def test_the_parser_is_the_standard_library_only():
    for start in ("epimem.cli.spec", "epimem.cli.dispatch", "epimem.cli.hook"):
        reach = _closure(start)
        ours = {m for m in reach if m.startswith("epimem")}
        assert ours <= {"epimem", "epimem.cli", "epimem.cli.spec", "epimem.cli.dispatch", "epimem.cli.hook",
                        "epimem.cli.registry",
                        *(f"epimem.cli.spec.{n}" for n in ("Arg", "Opt", "command", "group", "COMMANDS", "Command",
                                                             "Context", "HelpRequested", "UsageError",
                                                             "resolve")),
                        *(f"epimem.cli.registry.{n}" for n in ("AREAS", "GLOBAL", "TOP", "load", "load_all",
                                                                 "today_value"))}, (start, ours)
        assert not {"dataclasses", "typing"} & reach, (start, reach)


def test_one_installer_framework():
    functions, classes = _defs(ast.FunctionDef), _defs(ast.ClassDef)
    for name in ("apply", "backup", "skill_is_ours", "merge_hooks", "hook_role", "plan"):
        assert functions.get(name) in ([f"agents/{m}.py"] for m in ("base", "hooks", "wiring", "install")), \
            (name, functions.get(name))
    assert classes["HookSpec"] == ["agents/hooks.py"] and classes["Action"] == ["agents/base.py"]
    assert not (PKG / "claude" / "install.py").exists() and not (PKG / "mcp" / "register.py").exists()


def test_claude_code_is_an_agent_of_the_table_like_the_others():
    from epimem.agents.table import AGENTS

    assert list(AGENTS)[0] == "claude-code"
    for agent in AGENTS.values():
        for fn in ("mcp_entry", "hook_specs"):
            assert callable(getattr(agent.module, fn)), (agent.name, fn)
        assert agent.module.LABEL


def test_the_mcp_server_runs_through_the_sdks_public_api():
    # MCPServer.run_stdio_async, not its private low-level server (which a minor release may rename).
    for f in (PKG / "mcp").rglob("*.py"):
        assert "_lowlevel_server" not in f.read_text(), f
    assert "run_stdio_async" in (PKG / "mcp" / "stdio.py").read_text()
