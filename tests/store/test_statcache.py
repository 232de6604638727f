"""One per-file stat cache with one settle rule, for the beliefs, the logs and the context (issue 27)."""

from __future__ import annotations

import os
import time

import pytest

from epimem.store import context_cache
from epimem.store.statcache import SETTLE_NS, StatCache
from epimem.store.vault import Vault

BELIEF = """---
title: Likes {what}
kind: preference
basis: self-report
confidence: 0.40
permanence: stable
first: 2026-11-01
---
Indents with {what}.
"""
LOG = "# Observations 2026-11\n\n## obs-20261110-aaaa\n- date: 2026-11-10\n- evidence: {what}\n" \
      "- connects: new\n- strength: single\n- basis: behavioral\n"


def _rewrite_keeping_the_stat(p, text: str) -> None:
    """A second save within the filesystem's mtime granularity: same size, same mtime."""
    st = os.stat(p)
    p.write_text(text, encoding="utf-8")
    assert os.stat(p).st_size == st.st_size
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))


def _age(p, seconds: float = 5.0) -> None:
    t = time.time_ns() - int(seconds * 1e9)
    os.utime(p, ns=(t, t))


def _readers(root):
    """What each of the cache's three users says about the belief file and the log."""
    v = Vault(root)
    beliefs, _ = v.load_beliefs()
    log, _ = v.observation_log()
    ctx = context_cache.refresh_context(root)
    return ([b.title for b in beliefs], [o.evidence for o in log.observations()],
            sorted(r["title"] for r in ctx["global"]))


def test_a_file_saved_twice_within_the_mtime_granularity_is_read_again_by_every_user(vault):
    root = vault.root
    b, log = root / "beliefs" / "likes.md", root / "observations" / "2026-11.md"
    b.write_text(BELIEF.format(what="tabs"), encoding="utf-8")
    log.write_text(LOG.format(what="tabs"), encoding="utf-8")
    assert _readers(root) == (["Likes tabs"], ["tabs"], ["Likes tabs"])
    _rewrite_keeping_the_stat(b, BELIEF.format(what="taps"))
    _rewrite_keeping_the_stat(log, LOG.format(what="taps"))
    assert _readers(root) == (["Likes taps"], ["taps"], ["Likes taps"])


def test_a_settled_file_is_trusted_by_its_stat_and_not_parsed_again(vault, monkeypatch):
    root = vault.root
    b = root / "beliefs" / "likes.md"
    b.write_text(BELIEF.format(what="tabs"), encoding="utf-8")
    _age(b)
    _readers(root)
    _readers(root)  # the young entries written by the first pass are settled now
    import epimem.store.vault as vault_mod

    calls = []
    monkeypatch.setattr(vault_mod.Vault, "_parse_record", staticmethod(lambda *a: calls.append(a) or {}))
    monkeypatch.setattr(context_cache, "_row", lambda *a: calls.append(a))
    assert [b.title for b in Vault(root).load_beliefs()[0]] == ["Likes tabs"]
    context_cache.refresh_context(root)
    assert calls == []


def test_one_settle_window_in_one_module():
    # Three caches had a window each (two literal 2 s, one `_SETTLE_NS`): one rule, one number.
    from pathlib import Path

    pkg = Path(__file__).resolve().parents[2] / "epimem"
    hits = [f.relative_to(pkg).as_posix() for f in pkg.rglob("*.py")
            if "2_000_000_000" in f.read_text() or "SETTLE_NS" in f.read_text()]
    assert hits == ["store/statcache.py"]
    assert SETTLE_NS == 2_000_000_000


def test_a_corrupt_or_older_cache_is_a_cold_start(tmp_path):
    (tmp_path / ".epimem" / "cache").mkdir(parents=True)
    f = tmp_path / "x.md"
    f.write_text("x", encoding="utf-8")
    _age(f)
    for junk in (b"", b"\x00garbage", __import__("marshal").dumps({"version": 0, "files": {"x": 1}})):
        (tmp_path / ".epimem" / "cache" / "t.marshal").write_bytes(junk)
        c = StatCache(tmp_path, "t", 1)
        assert c.get("x", f.stat()) is None
        c.put("x", f.stat(), "parsed")
        c.save()
        assert StatCache(tmp_path, "t", 1).get("x", f.stat()) == "parsed"


@pytest.mark.parametrize("keep", [False, True])
def test_entries_not_seen_are_dropped_unless_kept(tmp_path, keep):
    for n in ("a", "b"):
        (tmp_path / n).write_text(n, encoding="utf-8")
        _age(tmp_path / n)
    c = StatCache(tmp_path, "t", 1)
    for n in ("a", "b"):
        c.put(n, (tmp_path / n).stat(), n.upper())
    c.save()
    c = StatCache(tmp_path, "t", 1)
    assert c.get("a", (tmp_path / "a").stat()) == "A"
    if keep:
        c.keep()
    c.save()
    assert sorted(StatCache(tmp_path, "t", 1)._old) == (["a", "b"] if keep else ["a"])


def test_a_cache_an_older_epimem_wrote_under_the_same_name_is_a_cold_start_both_ways(vault):
    # 0.1's observation cache held (mtime, size, settled, rows, bad) under version 4: read as this
    # layout, its rows would have been taken for (rows, bad) — and this one's for its own by it.
    import marshal

    from epimem.store.vault import CACHE_VERSION

    root = vault.root
    log = root / "observations" / "2026-11.md"
    log.write_text(LOG.format(what="tabs"), encoding="utf-8")
    _age(log)
    st = log.stat()
    old = {"version": CACHE_VERSION, "files": {"observations/2026-11.md": (st.st_mtime_ns, st.st_size, True, (), ())}}
    (root / ".epimem" / "cache").mkdir(parents=True, exist_ok=True)
    (root / ".epimem" / "cache" / "observations.marshal").write_bytes(marshal.dumps(old))
    assert [o.evidence for o in Vault(root).observation_log()[0].observations()] == ["tabs"]
    assert marshal.loads((root / ".epimem" / "cache" / "observations.marshal").read_bytes())["version"] != CACHE_VERSION
