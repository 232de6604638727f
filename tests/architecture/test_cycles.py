"""No import cycles among epimem's modules (docs/architecture.md, "What may import what").

Every import counts: at module level, inside a function, and under `TYPE_CHECKING`. An import
inside a function is lazy for speed (the session-start hook, a command loading one service), not
for layering: the module still needs the other to work. One under `TYPE_CHECKING` is a dependency
of the types: the reader (and mypy) must know the other module to know what this one takes. A
cycle either way means two modules that cannot be understood, tested or moved one without the
other, which is what the services' `Memory` annotations made of `api/` (docs/decisions.md, 27).

An edge goes to the module named: `from .a import b` is an edge to `a.b` when that is a module,
else to `a`; importing `a.b` is not counted as importing the package `a` (its `__init__`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest
from test_architecture import PKG


def _name(f: Path, root: Path) -> str:
    parts = f.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def graph(root: Path = PKG) -> dict[str, set[str]]:
    """Module → the package's modules it imports, at any depth."""
    files = {_name(f, root): f for f in root.rglob("*.py")}
    out: dict[str, set[str]] = {}
    for mod, f in files.items():
        pkg = mod.split(".") if f.name == "__init__.py" else mod.split(".")[:-1]
        deps = set()
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name in files}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = ".".join(pkg[:len(pkg) - node.level + 1])
                    base = f"{up}.{base}" if base else up
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    if sub in files:
                        deps.add(sub)
                    elif base in files:
                        deps.add(base)
        deps.discard(mod)
        out[mod] = deps
    return out


def cycles(g: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[set[str]] = []
    for start in sorted(g):
        if start in index:
            continue
        work = [(start, iter(sorted(g[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.add(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    found.append(comp)
    return found


def _short(mods: Iterable[str]) -> set[str]:
    return {m.removeprefix("epimem.") for m in mods}


def _report(c: set[str], g: dict[str, set[str]]) -> str:
    edges = sorted(f"{a.removeprefix('epimem.')} -> {b.removeprefix('epimem.')}" for a in c for b in g[a] if b in c)
    return f"{len(c)} modules: " + ", ".join(sorted(_short(c))) + "\n    " + "\n    ".join(edges)


def test_no_import_cycle_anywhere():
    # The last cycle (the command line's parser, help and completion reading each other's tables)
    # went when the table of what exists moved to `cli/registry.py`.
    g = graph()
    found = cycles(g)
    assert not found, "import cycles:\n" + "\n".join(_report(c, g) for c in found)


def test_no_service_imports_the_facade():
    # A service takes an `api/service.Service`; `Memory` is the front ends' (and imports them all).
    g = graph()
    services = [m for m in g if m.split(".")[1:2] and m.split(".")[1] in ("api", "mirror", "recall", "importers")
                and m != "epimem.api.memory"]
    bad = sorted(m for m in services if "epimem.api.memory" in g[m])
    assert not bad, f"import api/memory (take a Service instead): {bad}"


@pytest.mark.parametrize("how", ["module", "function", "type_checking"])
def test_a_cycle_is_found_however_it_is_imported(tmp_path, how):
    # the finder itself: a cycle through each kind of import, in a package of its own
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("from . import b\n")
    back = {"module": "from .a import thing\n",
            "function": "def f():\n    from . import a\n",
            "type_checking": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..sub.a import X\n"}
    (pkg / "sub" / "b.py").write_text(back[how])
    (pkg / "c.py").write_text("import pkg.sub.a\n")  # into the cycle, not part of it
    assert cycles(graph(pkg)) == [{"pkg.sub.a", "pkg.sub.b"}]
    (pkg / "sub" / "b.py").write_text("import json\n")
    assert cycles(graph(pkg)) == []


def test_a_service_uses_only_what_the_context_carries():
    # `mem` is what every service calls its `Service`; anything else on it is the facade's.
    import dataclasses

    from epimem.api.service import Service

    carried = {f.name for f in dataclasses.fields(Service)} | {n for n in vars(Service) if not n.startswith("__")}
    bad = []
    for area in ("api", "mirror", "recall", "importers"):
        for f in sorted((PKG / area).glob("*.py")):
            if f.name == "memory.py":
                continue
            for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                        and node.value.id == "mem" and node.attr not in carried):
                    bad.append(f"{area}/{f.name}:{node.lineno} mem.{node.attr}")
    assert not bad, "call the service's function, not the facade's method:\n" + "\n".join(bad)
