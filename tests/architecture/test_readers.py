"""One reader of each thing (issue 27 items 3 and 4; SPEC rules 21 and 23), held by parsing the code.

- A note's frontmatter is read by one parser, `core/notes.parse_note`, strict or lenient: no
  other module splits a file on `---`, loads YAML or wraps the parser in its own fallback.
- One `Filters` (`core/filters`) for listings and recall; one listing (`api/listing`); no front
  end reads, filters or ranks beliefs itself; one dispatcher of the mirror's modes
  (`api/mirror`); one home of the session context's text (`api/context`), and no front end
  borrows a private name of the hook, a service or the store.
- Every reader of a belief reads it through `store/vault.Vault.reader` (`core/reading` decides):
  redacted, and as last committed when a hand edit breaks a rule.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from test_architecture import PKG, imports
from test_layers import FRONT_END_MODULES
from test_layers import FRONT_ENDS as LAYERS_FRONT_ENDS

NOTES = "core/notes.py"


@cache
def _parsed() -> tuple[tuple[str, ast.Module], ...]:
    return tuple((f.relative_to(PKG).as_posix(), ast.parse(f.read_text())) for f in sorted(PKG.rglob("*.py")))


def _modules():
    return iter(_parsed())


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def test_yaml_is_loaded_by_the_note_parser_only():
    for f in PKG.rglob("*.py"):
        rel = f.relative_to(PKG).as_posix()
        if rel != NOTES:
            assert "yaml" not in {m.split(".")[0] for m in imports(f)}, rel


def test_no_module_but_the_parser_finds_a_frontmatter_by_hand():
    # `text.split("---", 2)`, `text.find("\n---")`, a regex for the closing line: each was a second
    # reader that disagreed with the parser about some file (an unclosed block, `---` in a value).
    readers = {"split", "rsplit", "find", "rfind", "index", "partition", "search", "match", "compile", "count"}
    bad = []
    for rel, tree in _modules():
        if rel == NOTES:
            continue
        for call in _calls(tree):
            if _name(call.func) not in readers:
                continue
            for arg in call.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and "---" in arg.value \
                        and "-----" not in arg.value:  # a PEM armour line is not a frontmatter
                    bad.append(f"{rel}:{call.lineno}")
    assert not bad, bad


def test_no_module_wraps_the_parser_in_a_fallback_of_its_own():
    # The lenient mode is `parse_note(text, lenient=True)`; a `try: parse_note(...) except NoteError:`
    # that drops the error elsewhere is another lenient reader. (One that reports the error, `as e`,
    # is a strict reader: `Vault.params` turns it into a problem of `epistemology.md`.)
    bad = []
    for rel, tree in _modules():
        if rel == NOTES:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Try):
                continue
            wrapped = any(_name(c.func) == "parse_note" for stmt in node.body for c in _calls(stmt))
            caught = any(h.name is None and (h.type is None or "NoteError" in ast.unparse(h.type)
                                             or "Exception" in ast.unparse(h.type)) for h in node.handlers)
            if wrapped and caught:
                bad.append(f"{rel}:{node.lineno}")
    assert not bad, bad


# --- issue 27 item 4: one listing, one Filters, one dispatcher of the mirror's modes -------------

FRONT_ENDS = tuple(LAYERS_FRONT_ENDS)  # one list of the front ends: test_layers.py's
FRONT_END_FILES = {m.removeprefix("epimem.").replace(".", "/") + ".py" for m in FRONT_END_MODULES}


def _front_end(rel: str) -> bool:
    return rel.split("/", 1)[0] in FRONT_ENDS or rel in FRONT_END_FILES


def _defined_classes(name: str) -> list[str]:
    return [rel for rel, tree in _modules() for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]


def test_one_filters_for_listings_and_recall():
    assert _defined_classes("Filters") == ["core/filters.py"]


def test_front_ends_neither_filter_nor_sort_beliefs():
    # A listing is `api/listing` (belief list, MCP list, Memory.beliefs): filtered by `Filters`, ordered
    # strongest first. A front end that read the beliefs and ranked them itself would be a fourth listing.
    reads = {"effective_confidence", "load_beliefs", "shown_beliefs", "read_belief", "parse_belief"}
    bad = []
    for rel, tree in _modules():
        if not _front_end(rel):
            continue
        bad += [f"{rel} imports {m}" for m in imports(PKG / rel) if m.startswith("epimem.core.rules")]
        for call in _calls(tree):
            name, src = _name(call.func), ast.unparse(call)
            filters = (name == "match" and isinstance(call.func, ast.Attribute) and len(call.args) == 2
                       and ast.unparse(call.func.value) != "re")  # `Filters.match(belief, effective)`
            ranks = name in ("sorted", "sort") and ("effective" in src or "confidence" in src)
            if name in reads or filters or ranks:
                bad.append(f"{rel}:{call.lineno} {src[:80]}")
    assert not bad, bad


def test_one_dispatcher_of_the_mirror_modes():
    # `epimem mirror MODE`, `/mirror` and MCP's `mirror` (and `epimem://audit`) all call api/mirror.run.
    analyses = {"audit", "gut_check", "interview", "portrait_brief", "open_gut_check", "close_gut_check"}
    bad = [f"{rel}:{c.lineno} {_name(c.func)}" for rel, tree in _modules()
           if rel != "api/mirror.py" and not rel.startswith("mirror/")
           for c in _calls(tree) if _name(c.func) in analyses]
    assert not bad, bad


def test_the_session_context_has_one_home_and_front_ends_share_no_private_name():
    # The hook, `skill observe` and MCP's `epimem://context` render through api/context; MCP once
    # imported the hook's private `_label` and `render_context` from the front end beside it.
    assert [rel for rel, tree in _modules() for n in tree.body
            if isinstance(n, ast.FunctionDef) and n.name == "render_context"] == ["api/context.py"]
    bad = []
    for rel, tree in _modules():
        area = rel.split("/", 1)[0]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.level:
                continue
            target = ".".join(Path(rel).with_suffix("").parts[:-node.level] + tuple((node.module or "").split(".")))
            other = target.split(".", 1)[0]
            if _front_end(rel) and other != area and (other not in FRONT_ENDS or target == "claude.hook") \
                    and any(a.name.startswith("_") and not a.name.startswith("__") for a in node.names):
                bad.append(f"{rel}:{node.lineno} from {target} import {', '.join(a.name for a in node.names)}")
            if rel.startswith("mcp/") and target == "claude.hook":
                bad.append(f"{rel}:{node.lineno} imports the hook")
    assert not bad, bad


# --- SPEC rules 21 and 23: one place decides what a reader sees ----------------------------------

READERS = ("recall/", "mirror/", "mcp/", "cli/", "claude/", "agents/", "integrations/", "store/context_cache.py",
           "api/listing.py",
           "api/describe.py", "api/mirror.py", "api/context.py", "api/portability.py")


def test_readers_read_beliefs_through_the_reader():
    # `store/vault.Vault.reader` (deciding with `core/reading`) gives every reader the same belief:
    # redacted, and as last committed when a hand edit breaks a rule. A reader that parsed a belief
    # file itself, or took the vault's raw read, would show a secret or a number `validate` refuses.
    raw = {"parse_belief", "read_belief", "load_beliefs", "parse_belief_blob"}
    bad = [f"{rel}:{c.lineno} {_name(c.func)}" for rel, tree in _modules()
           if rel.startswith(READERS) and not rel.startswith("api/portability.py")
           for c in _calls(tree) if _name(c.func) in raw]
    # The import's writer half (api/portability) parses what it imports; its export reads through the reader.
    export = next(tree for rel, tree in _modules() if rel == "api/portability.py")
    records = next(n for n in export.body if isinstance(n, ast.FunctionDef) and n.name == "records")
    bad += [f"api/portability.py:{c.lineno} {_name(c.func)}" for c in _calls(records) if _name(c.func) in raw]
    assert not bad, bad
