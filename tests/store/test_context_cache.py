"""The context cache stays exact as the vault changes: the incremental refresh
(index of (mtime, size) per file) and the fold of one write's beliefs."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from datetime import date

from epimem.core.notes import parse_belief
from epimem.store import context_cache as context

TODAY = date(2026, 11, 30)


def belief_text(i: int, conf: float, scope: str = "global", status: str = "active") -> str:
    return (f"---\ntitle: Belief {i}\nkind: trait\nbasis: behavioral\nconfidence: {conf:.2f}\npermanence: stable\n"
            f"first: 2026-11-01\nconfirmed:\nchallenged:\nstatus: {status}\ntags: []\nscope: {scope}\n"
            f"pinned: false\nsupersedes: []\n---\nStatement number {i}. More words.\n\n## Evidence\n")


def write(root, i, text):
    p = root / "beliefs" / f"b{i:03d}.md"
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, p)


def full(root):
    """What a rebuild from every file gives (the reference)."""
    from epimem.store.vault import Vault

    v = Vault(root)
    beliefs, _ = v.load_beliefs()
    return context.build_context_cache(beliefs, v.params()[0], TODAY)


def same(a, b):
    keys = ("global", "scopes", "params")
    return {k: a[k] for k in keys} == {k: b[k] for k in keys} and a["counts"]["active"] == b["counts"]["active"]


def test_incremental_refresh_is_exact(vault):
    root = vault.root
    for i in range(70):
        write(root, i, belief_text(i, 0.30 + i / 200, "proj" if i % 7 == 0 else "global"))
    c = context.refresh_context(root, TODAY)
    assert same(c, full(root)) and len(c["global"]) == context.PER_SCOPE
    index = __import__("marshal").loads((root / ".epimem" / "cache" / "context.marshal").read_bytes())
    assert len(index["files"]) == 70
    # hand edits: one raised, one retired, one removed, one broken, one new
    write(root, 3, belief_text(3, 0.88))
    write(root, 69, belief_text(69, 0.64, status="retired"))
    (root / "beliefs" / "b068.md").unlink()
    write(root, 10, "---\ntitle: [broken\n---\n")
    write(root, 70, belief_text(70, 0.5))
    c = context.refresh_context(root, TODAY)
    assert same(c, full(root))
    assert c["global"][0]["id"] == "b003" and c["counts"]["problems"] == 1
    assert c["signature"] == context.signature(root)
    # the changed list alone gives the same answer
    write(root, 5, belief_text(5, 0.86))
    c2 = context.refresh_context(root, TODAY, changed=["beliefs/b005.md", "observations/2026-11.md"])
    assert same(c2, full(root)) and c2["global"][1]["id"] == "b005"


def test_unchanged_files_are_not_parsed_again(vault, monkeypatch):
    root = vault.root
    for i in range(20):
        write(root, i, belief_text(i, 0.5))
    old = time.time_ns() - 10_000_000_000
    for p in (root / "beliefs").glob("*.md"):
        os.utime(p, ns=(old, old))  # settled files
    context.refresh_context(root, TODAY)
    calls = []
    monkeypatch.setattr(context, "_row", lambda reader, path, bid: calls.append(bid) or (None,))
    context.refresh_context(root, TODAY)
    assert calls == []
    write(root, 4, belief_text(4, 0.7))
    context.refresh_context(root, TODAY)
    assert calls == ["b004"]


def test_fold_of_one_write_and_the_next_one_moving_up(vault):
    root = vault.root
    for i in range(60):
        write(root, i, belief_text(i, 0.30 + i / 100))
    context.refresh_context(root, TODAY)
    top = parse_belief((root / "beliefs" / "b059.md").read_text(), "b059")
    sig = context.signature(root)
    # a write raises one belief: folded in, no scan
    b = parse_belief((root / "beliefs" / "b020.md").read_text(), "b020")
    write(root, 20, belief_text(20, 0.90))
    c = context.update_context(root, [replace(b, confidence=0.90)], vault.params, TODAY, sig)
    assert c["global"][0]["id"] == "b020" and len(c["global"]) == context.PER_SCOPE
    # retiring the strongest: the 51st belief takes the free place
    sig = context.signature(root)
    write(root, 59, belief_text(59, 0.89, status="retired"))
    c = context.update_context(root, [replace(top, status="retired")], vault.params, TODAY, sig)
    assert "b059" not in [r["id"] for r in c["global"]]
    assert len(c["global"]) == context.PER_SCOPE and same(c, full(root))
    # something else changed meanwhile (the signature differs): a refresh, still exact
    write(root, 1, belief_text(1, 0.9))
    c = context.update_context(root, [], vault.params, TODAY, sig)
    assert same(c, full(root))


def test_a_tension_naming_no_belief_id_asks_nothing_and_raises_nothing(vault):
    # A tension is a hand-editable file, so the belief it names may be anything: a NUL byte
    # (os.stat raises ValueError for it, not OSError) or a path out of the vault, which must
    # not be read. Only the tension naming a real belief becomes a question.
    root = vault.root
    write(root, 1, belief_text(1, 0.5))
    (root.parent / "outside.md").write_text(belief_text(9, 0.9))
    for n, named in enumerate(('"like\\0s-tabs"', "../outside", "b001")):
        (root / "tensions" / f"2026-11-1{n}-t{n}.md").write_text(
            f"---\ndate: 2026-11-1{n}\nbelief: {named}\nstatus: unresolved\n---\n# Question {n}?\n")
    c = context.refresh_context(root, TODAY)
    assert [q["belief"] for q in c["questions"]] == ["b001"]


def test_the_hooks_status_read_gives_up_on_anything_the_parser_would_read_otherwise():
    assert context.frontmatter_status(belief_text(1, 0.5)) == "active"
    assert context.frontmatter_status(belief_text(1, 0.5, status="retired")) == "retired"
    assert context.frontmatter_status("---\ntitle: My status: done\n---\nText.\n") == "active"
    assert context.frontmatter_status("---\nstatus: 'superseded'  # by hand\n---\n") == "superseded"
    # YAML takes the last of two keys, a quoted key and a spaced one: the parser's to read.
    assert context.frontmatter_status("---\nstatus: active\nstatus: retired\n---\n") is None
    assert context.frontmatter_status('---\n"status": retired\n---\n') is None
    assert context.frontmatter_status("---\nstatus : retired\n---\n") is None
    assert context.frontmatter_status("no frontmatter\n") is None
