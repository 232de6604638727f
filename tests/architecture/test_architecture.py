"""The lines the code never crosses, held by parsing imports."""

import ast
from functools import cache
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "epimem"
# What the pure layers may import: the standard library's modules that touch neither files, processes,
# the network, the environment nor the clock, and two parsers of text (yaml for frontmatter, re2 for
# redaction's patterns). An allowlist, because a list of I/O libraries is never complete: os, pathlib,
# io, shutil, tempfile, sqlite3, socket, time, logging, importlib and every networked dependency are
# refused until someone adds them here knowing what they do. `os.path` (not `os`): the kernel's one
# default, a scope written with `~` read against the user's home.
PURE = {"__future__", "bisect", "collections", "contextlib", "contextvars", "dataclasses", "datetime", "fnmatch",
        "functools", "hashlib", "itertools", "json", "math", "operator", "re", "typing", "unicodedata",
        "html", "textwrap", "yaml", "re2", "os.path"}
# Builtins and calls that are I/O whatever is imported: a file, the terminal, the clock (today has one
# home, store/clock.py; a pure function is given the day).
IMPURE_CALLS = {"open", "print", "input", "today", "now", "utcnow"}
# The mirror's analyses (SPEC §13): pure functions over the views, like the core. Its other modules
# read (gutcheck, apply, page, page_cache), call Claude (llm) or serve (serve).
MIRROR_ANALYSES = ("audit", "calibration", "data", "history", "interview", "phrase", "portrait", "render", "svg",
                   "text", "views")
# Their one read of the clock each, when neither the caller nor the snapshot gives the day: every
# caller in epimem passes it (api/mirror, mirror/page), so these only serve a library caller.
CLOCK_FALLBACKS = {"mirror/audit.py", "mirror/calibration.py", "mirror/interview.py", "mirror/portrait.py"}


def imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (lazy imports included)."""
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level:
                base = ".".join(path.relative_to(PKG.parent).with_suffix("").parts[:-node.level])
                mod = f"{base}.{mod}" if mod else base
                out |= {f"{mod}.{a.name}" for a in node.names}
            out.add(mod)
    return out


def top(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


def _impure(files) -> list[str]:
    bad = []
    for f in files:
        rel = f.relative_to(PKG).as_posix()
        bad += [f"{rel} imports {m}" for m in sorted(imports(f))
                if not m.startswith("epimem") and m not in PURE and m.split(".")[0] not in PURE]
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in IMPURE_CALLS and not (name == "today" and rel in CLOCK_FALLBACKS
                                                 and ast.unparse(node) == "date.today()"):
                    bad.append(f"{rel}:{node.lineno} calls {name}()")
    return bad


def test_core_imports_no_io_library():
    bad = _impure(sorted((PKG / "core").rglob("*.py")))
    assert not bad, "\n".join(bad)


def test_the_mirror_analyses_are_pure_like_the_core():
    files = [PKG / "mirror" / f"{m}.py" for m in MIRROR_ANALYSES]
    bad = _impure(files)
    bad += [f"{f.name} imports {m}" for f in files for m in imports(f)
            if m.startswith(("epimem.store", "epimem.api", "epimem.recall"))]
    assert not bad, "\n".join(bad)


def test_only_the_entry_point_imports_the_cli():
    for f in PKG.rglob("*.py"):
        rel = f.relative_to(PKG)
        if rel.parts[0] == "cli" or rel.name == "__main__.py":
            continue
        assert not any(m == "epimem.cli" or m.startswith("epimem.cli.") for m in imports(f)), rel


# Processes, the network, Chroma, git and Claude: each library's few homes (the brief's "file, Git,
# Chroma and network I/O live in a few modules"). A new importer is a new home: name it here, or
# call one of these.
IO_HOMES = {
    "subprocess": {"store/gitrun.py", "store/spawn.py",  # git, and the detached workers
                   "api/doctor.py",                      # the hook run as a session runs it, timed
                   "agents/claude_code.py"},             # `claude plugin …` for the plugin install
    "git": {"store/gitrun.py"},
    "chromadb": {"recall/chroma.py", "recall/embed.py"},
    "socket": {"recall/chroma.py"},                      # is a Chroma server there
    "httpx": {"recall/embed.py", "api/doctor.py"},       # Ollama's embedder, and doctor asking it
    "anthropic": {"api/transcripts.py", "mirror/llm.py", "integrations/anthropic_memory.py"},
    "http.server": {"mirror/serve.py"},
    "uvicorn": {"mcp/http.py"},
    "mcp": {"mcp/server.py", "mcp/http.py"},
    "watchfiles": {"recall/watch.py", "mirror/serve.py"},
    "webbrowser": {"cli/mirror.py"},
    "urllib.request": set(), "http.client": set(), "sqlite3": set(),
}


def test_each_io_library_has_its_few_homes():
    bad = []
    for f in sorted(PKG.rglob("*.py")):
        rel = f.relative_to(PKG).as_posix()
        for m in imports(f):
            for lib, homes in IO_HOMES.items():
                if (m == lib or m.startswith(lib + ".")) and rel not in homes:
                    bad.append(f"{rel} imports {m}")
    assert not bad, "\n".join(sorted(set(bad)))


def _closure(start: str) -> set[str]:
    """epimem modules reachable from `start` through what runs when it is imported (imports inside
    functions are not: keeping them there is the point), and the packages above each."""
    seen, todo = set(), [start]
    while todo:
        mod = todo.pop()
        if mod in seen:
            continue
        seen.add(mod)
        todo += [".".join(mod.split(".")[:i]) for i in range(2, mod.count(".") + 1)]  # a.b.c runs a.b
        parts = mod.split(".")[1:]
        f = PKG.joinpath(*parts).with_suffix(".py") if parts else PKG / "__init__.py"
        if not f.exists():
            f = PKG.joinpath(*parts, "__init__.py")
        if not f.exists():
            continue
        tree = ast.parse(f.read_text())
        # a module-level `try:` or `if` runs its imports as surely as a bare one
        for node in (n for stmt in _at_import(tree.body) for n in ast.walk(stmt)):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                m = node.module or ""
                if node.level:
                    pkg_parts = mod.split(".") if f.name == "__init__.py" else mod.split(".")[:-1]
                    base = ".".join(pkg_parts[:len(pkg_parts) - node.level + 1])
                    m = f"{base}.{m}" if m else base
                names = [m] + [f"{m}.{a.name}" for a in node.names]
            for n in names:
                if n.startswith("epimem"):
                    todo.append(n)
                else:
                    seen.add(n)
    return seen


# --- what a path runs, lazy imports included ----------------------------------------------------
# `_closure` is what importing a module costs. A path (the session-start hook) also runs the imports
# inside the functions it calls, which is where this code keeps them: `reach` follows a function to the
# functions and classes it names (called or passed: `guarded("...", hook.session_start)`), and each of
# those to the imports in its body. It over-counts (a branch not taken, every method of a class named),
# never under-counts what is written as an import or a name; what it cannot see is dispatch by data
# (`cli.registry.load`, the command table), which the caller names as a start.


@cache
def _file(mod: str) -> Path | None:
    parts = mod.split(".")[1:]
    for f in (PKG.joinpath(*parts).with_suffix(".py") if parts else PKG / "__init__.py",
              PKG.joinpath(*parts, "__init__.py")):
        if f.is_file():
            return f
    return None


@cache
def _tree(mod: str) -> ast.Module:
    return ast.parse(_file(mod).read_text())


def _from(mod: str, node: ast.ImportFrom) -> str:
    m = node.module or ""
    if not node.level:
        return m
    pkg = mod.split(".") if _file(mod).name == "__init__.py" else mod.split(".")[:-1]
    up = ".".join(pkg[:len(pkg) - node.level + 1])
    return f"{up}.{m}" if m else up


def _defs(mod: str) -> dict[str, ast.AST]:
    return {n.name: n for n in _tree(mod).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _bound(mod: str, nodes) -> dict[str, str]:
    """Each name the imports among `nodes` bind → what it names."""
    out = {}
    for node in (n for top_node in nodes for n in ast.walk(top_node)):
        if isinstance(node, ast.Import):
            out |= {a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            out |= {a.asname or a.name: f"{_from(mod, node)}.{a.name}" for a in node.names}
    return out


@cache
def _names(mod: str) -> dict[str, str]:
    """The module's global names: its top-level defs, and what its imports bind at import time."""
    return _bound(mod, _at_import(_tree(mod).body)) | {name: f"{mod}.{name}" for name in _defs(mod)}


def _at_import(body: list[ast.stmt]):
    """What runs when a module is imported: all but function bodies (their decorators and defaults
    run), `if TYPE_CHECKING:` blocks and a `python -m` worker's `if __name__ == "__main__":`."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d]
        elif isinstance(node, ast.ClassDef):
            yield from node.decorator_list + node.bases
            yield from _at_import(node.body)
        elif isinstance(node, ast.If) and ("TYPE_CHECKING" in ast.unparse(node.test)
                                           or ast.unparse(node.test) == "__name__ == '__main__'"):
            yield from node.orelse
        else:
            yield node


def reach(*starts: str) -> dict[str, str]:
    """Every module, function and library (by top-level name) a path from `starts` (modules or
    `module.function`) may import or run → what reached it first."""
    via: dict[str, str] = {}
    todo = [(s, "") for s in starts]

    def name(q: str, by: str) -> None:
        if not q.startswith("epimem"):
            via.setdefault(q.split(".")[0], by)
            return
        parts = q.split(".")
        i = next((i for i in range(len(parts), 0, -1) if _file(".".join(parts[:i]))), 0)
        todo.extend((".".join(parts[:j]), by) for j in range(1, i + 1))  # a.b.c runs a and a.b first
        if 0 < i < len(parts):
            mod, attr = ".".join(parts[:i]), parts[i]
            if attr in _defs(mod):
                todo.append((f"{mod}.{attr}", by))
            elif _names(mod).get(attr, q) != q:  # re-exported: `from .x import f` in a package
                name(_names(mod)[attr], by)

    while todo:
        unit, by = todo.pop()
        if unit in via:
            continue
        via[unit] = by
        mod, nodes = (unit, list(_at_import(_tree(unit).body))) if _file(unit) else \
            (unit.rsplit(".", 1)[0], [_defs(unit.rsplit(".", 1)[0])[unit.rsplit(".", 1)[1]]])
        names = _names(mod) | _bound(mod, nodes)  # a function's own imports bind in it only
        for node in (n for top_node in nodes for n in ast.walk(top_node)):
            if isinstance(node, ast.Import):
                for a in node.names:
                    name(a.name, unit)
            elif isinstance(node, ast.ImportFrom):
                base = _from(mod, node)
                name(base, unit)
                for a in node.names:
                    if base.startswith("epimem") and _file(f"{base}.{a.name}"):
                        name(f"{base}.{a.name}", unit)
            elif isinstance(node, ast.Attribute):
                chain, n = [], node
                while isinstance(n, ast.Attribute):
                    chain.append(n.attr)
                    n = n.value
                if isinstance(n, ast.Name) and n.id in names:
                    name(".".join([names[n.id], *reversed(chain)]), unit)
            elif isinstance(node, ast.Name) and node.id in names:
                name(names[node.id], unit)
    return via


def _chain(via: dict[str, str], unit: str) -> str:
    out = [unit]
    while via.get(out[-1]):
        out.append(via[out[-1]])
    return " <- ".join(out)


# The console script's `main`, and the command the parser's table runs for `epimem hook session-start`
# (`cli.registry.load` imports its module by name).
SESSION_START = ("epimem.__main__.main", "epimem.cli.hook.hook_session_start")
# The only libraries outside the standard library it may import: the vault's default location
# (platformdirs), and what the recovery of a change a killed process left half made reads with (a
# note's frontmatter, redaction's patterns). tests/claude/test_hook.py runs the hook and reads sys.modules.
SESSION_START_LIBRARIES = {"platformdirs", "yaml", "re2"}


def test_session_start_path_imports_neither_chromadb_nor_typer():
    import sys

    via = reach(*SESSION_START)
    libs = {u for u in via if not u.startswith("epimem") and u not in sys.stdlib_module_names}
    assert "epimem.claude.hook.session_start" in via and "epimem.store.transaction.apply" in via
    assert not libs - SESSION_START_LIBRARIES, "\n".join(_chain(via, u) for u in sorted(libs - SESSION_START_LIBRARIES))


def test_reach_follows_lazy_imports_and_not_the_functions_a_path_never_names():
    via = reach("epimem.claude.hook.session_end")
    assert "epimem.store.spawn" in via  # lazily, in `_spawn`, which session_end calls
    assert "epimem.api.transcripts" not in via and "anthropic" not in via  # observe_transcript's
    assert "anthropic" in reach("epimem.claude.hook.observe_transcript")


def test_the_kernel_and_the_record_are_standard_library_only():
    for start in ("epimem.core.kernel", "epimem.core.record"):
        reach = _closure(start)
        assert {m.split(".")[0] for m in reach} <= {"epimem", "__future__", "math", "datetime", "operator"}, reach
        assert not {"epimem.core.model", "epimem.core.rules"} & reach, (start, reach)


def test_the_hook_and_the_cli_start_without_the_rules():
    # The hook counts and decays with the kernel; the CLI lists its commands without the rules.
    for start in ("epimem.claude.hook", "epimem.cli.main"):
        reach = _closure(start)
        assert not {"epimem.core.rules", "epimem.core.model", "epimem.core.params"} & reach, (start, reach)
    assert "dataclasses" not in _closure("epimem.claude.hook")


def _defined(name: str) -> list[str]:
    out = []
    for f in PKG.rglob("*.py"):
        tree = ast.parse(f.read_text())
        if any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body):
            out.append(str(f.relative_to(PKG)))
    return out


def test_one_home_per_rule():
    # Decay's exponential is written once (the kernel), as are the vault's location and today's date.
    for f in PKG.rglob("*.py"):
        if f.relative_to(PKG).as_posix() != "core/kernel.py":
            assert "exp(" not in f.read_text(), f
    assert _defined("resolve_root") == ["store/paths.py"] and _defined("default_root") == ["store/paths.py"]
    assert _defined("today") == ["store/clock.py"]


def test_epistemology_md_is_read_by_the_vault_only():
    """Rules and settings come from `store.vault.Vault.params`/`settings`; a second
    reader would parse the file its own way and disagree about a broken one."""
    import re

    reader = re.compile(r"""read_text\(\s*["']epistemology\.md"""
                        r"""|epistemology\.md["']\s*\)\s*\.read_|open\([^)]*epistemology""")
    offenders = [f"{f.relative_to(PKG).as_posix()}:{n}" for f in PKG.rglob("*.py")
                 if f.relative_to(PKG).as_posix() != "store/vault.py"
                 for n, line in enumerate(f.read_text().splitlines(), 1)
                 if reader.search(line) and "TEMPLATES" not in line]  # `init` copies the template: not a reader
    assert offenders == []


def test_the_page_cache_is_checked_without_the_cli_the_templates_or_the_parser():
    # `epimem mirror page` on an unchanged vault is answered by __main__ from the cache:
    # what it imports for that is all it costs.
    for start in ("epimem.mirror.page_cache", "epimem.store.gitrun"):
        reach = _closure(start)
        assert not top(reach) & {"typer", "jinja2", "yaml", "git", "chromadb", "mistune"}, (start, reach)
        assert not {"epimem.core.notes", "epimem.store.git", "epimem.store.vault", "epimem.cli"} & reach, reach


# --- git: one runner (issue 27) -----------------------------------------------------------------

RUNNER = "store/gitrun.py"


def _git_argv_lists(tree: ast.AST) -> list[int]:
    """Lines of a list or tuple literal that starts with "git" (an argv for a process)."""
    return [n.lineno for n in ast.walk(tree)
            if isinstance(n, (ast.List, ast.Tuple)) and n.elts and isinstance(n.elts[0], ast.Constant)
            and n.elts[0].value == "git"]


def test_only_the_runner_starts_git_or_imports_gitpython():
    offenders = []
    for f in PKG.rglob("*.py"):
        rel = f.relative_to(PKG).as_posix()
        if rel == RUNNER:
            continue
        tree = ast.parse(f.read_text())
        if "git" in top(imports(f)):
            offenders.append(f"{rel}: imports GitPython")
        offenders += [f"{rel}:{line}: a git argv" for line in _git_argv_lists(tree)]
    assert offenders == []


def test_only_the_runner_reads_refs_or_asks_git_status():
    # HEAD read from `.git` by a second reader would miss what the runner knows (reftable, a
    # worktree); a second `git status` would choose its own flags, lock and parsing again.
    offenders = []
    for f in PKG.rglob("*.py"):
        rel = f.relative_to(PKG).as_posix()
        if rel == RUNNER:
            continue
        text = f.read_text()
        if "packed-refs" in text or '"HEAD").read' in text:
            offenders.append(f"{rel}: reads refs")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and any(isinstance(a, ast.Constant) and a.value == "status"
                                                  for a in node.args[1:2] + node.args[:1]):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in ("run", "call", "out", "ok", "execute"):
                    offenders.append(f"{rel}:{node.lineno}: git status outside the runner")
    assert offenders == []


def test_one_tokenizer_and_one_stemmer():
    # "The same words" have one home, core/text.py (docs/architecture.md): nothing else
    # tokenizes for matching or strips suffixes itself; a `stem` elsewhere only delegates.
    for f in PKG.rglob("*.py"):
        if f == PKG / "core" / "text.py":
            continue
        for node in ast.walk(ast.parse(f.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            assert node.name not in ("tokenize", "tokens_with_words"), f"{f.relative_to(PKG)} defines {node.name}"
            if node.name == "stem":
                calls = {n.func.attr for n in ast.walk(node) if isinstance(n, ast.Call)
                         and isinstance(n.func, ast.Attribute)}
                assert "stem" in calls, f"{f.relative_to(PKG)}: stem() must delegate to core.text.stem"
