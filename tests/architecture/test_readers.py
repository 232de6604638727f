"""One reader of each thing (issue 27 items 3 and 4; SPEC rules 21 and 23), held by parsing the code.

- A note's frontmatter is read by one parser, `core/notes.parse_note`, strict or lenient: no
  other module splits a file on `---`, loads YAML or wraps the parser in its own fallback.
"""

from __future__ import annotations

import ast

from test_architecture import PKG, imports

NOTES = "core/notes.py"


def _modules():
    for f in sorted(PKG.rglob("*.py")):
        yield f.relative_to(PKG).as_posix(), ast.parse(f.read_text())


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
