"""Every dependency pyproject.toml declares is used by epimem, and every library epimem imports is declared."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Distribution name -> the module it is imported as.
MODULE = {"gitpython": "git", "pyyaml": "yaml", "google-re2": "re2"}
# Imported only inside `try: ... except ImportError`, with a standard-library fallback.
OPTIONAL = {"orjson"}


def _declared() -> set[str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    deps = list(meta["dependencies"])
    # An extra's packages are declared too (e.g. `minilm`: onnxruntime for the optional embedder).
    deps += [d for extra, ds in meta.get("optional-dependencies", {}).items() if extra != "test" for d in ds]
    names = {re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower() for d in deps}
    return {MODULE.get(n, n.replace("-", "_")) for n in names}


def _imported() -> set[str]:
    out: set[str] = set()
    for path in (ROOT / "epimem").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                out.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                out.add(node.module.split(".")[0])
        # The default embedder reads the wordllama package's files without importing it.
        out.update(re.findall(r'find_spec\("(\w+)"\)', text))
        # Data-only packages read the same way, named beside their pin: ("pkg_module", "pkg==1.0").
        out.update(re.findall(r'\("(\w+)", "[\w.-]+==', text))
    return out - set(sys.stdlib_module_names) - {"epimem", "__future__"}


def test_every_declared_dependency_is_used():
    assert _declared() - _imported() == set()


def test_every_imported_library_is_declared():
    assert _imported() - _declared() - OPTIONAL == set()
