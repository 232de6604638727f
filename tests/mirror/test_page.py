"""The visual mirror without a browser: history from one git walk, timelines, the page's HTML,
its cache, the CLI and the read-only server (tests/mirror/test_page_browser.py drives a real one)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import date
from html.parser import HTMLParser
from pathlib import Path

import pytest
from page_support import KNOWN, KNOWN_MARKERS, KNOWN_STEPS, XSS, XSS_TITLE, history_vault, sample_copy

from epimem.api import timeline
from epimem.api.memory import Memory
from epimem.mirror import history as hist
from epimem.mirror.page import build
from epimem.store import git

WT = Path(__file__).resolve().parents[2]


@pytest.fixture
def hv(tmp_path):
    return history_vault(tmp_path / "vault")


def _mem(root) -> Memory:
    return Memory(root, today="2026-11-30")


# --- one git walk for all beliefs ------------------------------------------------------

def test_one_walk_gives_every_belief_the_history_of_its_own_walk(hv):
    head, all_h = git.all_belief_histories(hv)
    assert head == git.run(hv, "rev-parse", "HEAD").strip()
    ids = sorted(p.stem for p in (hv / "beliefs").glob("*.md"))
    assert sorted(all_h) == ids
    for bid in ids:
        assert all_h[bid] == git.belief_history(hv, bid), bid
    assert [(p.when.date().isoformat(), f"{p.confidence:.2f}") for p in all_h[KNOWN]] == KNOWN_STEPS


def test_deleted_and_malformed_files_are_points_too(hv):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x.invalid"}
    (hv / "beliefs" / "sql-over-orm.md").write_text("---\ntitle: [broken\n---\n", encoding="utf-8")
    (hv / "beliefs" / "terse-answers.md").unlink()
    subprocess.run(["git", "commit", "-qam", "by hand"], cwd=hv, check=True, env=env)
    _, all_h = git.all_belief_histories(hv)
    assert all_h["sql-over-orm"][-1].status == "malformed"
    assert all_h["terse-answers"][-1].status == "deleted"
    assert all_h["terse-answers"] == git.belief_history(hv, "terse-answers")


def test_histories_are_cached_by_commit_and_brought_up_to_date(hv):
    mem = _mem(hv)
    first = timeline.histories(mem)
    cache = hv / ".epimem" / timeline.HISTORY_CACHE
    assert json.loads(cache.read_text())["head"] == git.run(hv, "rev-parse", "HEAD").strip()
    assert timeline.histories(mem) == first  # read back as it was
    Memory(hv, today="2026-11-29").observe([{"connects": KNOWN, "strength": "confirming", "session": "s9",
                                             "evidence": "Read a long diff twice.", "basis": "behavioral"}])
    newer = timeline.histories(mem)  # only the new commit walked
    assert newer == git.all_belief_histories(hv)[1]
    assert [f"{p.confidence:.2f}" for p in newer[KNOWN]][-1] == "0.25"
    cache.write_text("{not json", encoding="utf-8")
    assert timeline.histories(mem) == newer  # a damaged cache is rebuilt, not an error


def test_a_history_rewritten_under_the_cache_is_walked_again(hv):
    mem = _mem(hv)
    timeline.histories(mem)
    subprocess.run(["git", "reset", "-q", "--hard", "HEAD~2"], cwd=hv, check=True)
    assert timeline.histories(mem) == git.all_belief_histories(hv)[1]
    assert KNOWN in timeline.histories(mem) and XSS not in timeline.histories(mem)


# --- a belief's timeline ---------------------------------------------------------------

def test_timeline_of_the_known_belief(hv):
    mem = _mem(hv)
    b = mem.belief(KNOWN)
    t = hist.timeline(b, mem.history(KNOWN), mem.today, mem.params)
    assert [(s.day.isoformat(), f"{s.confidence:.2f}") for s in t.steps] == KNOWN_STEPS
    assert {s.source for s in t.steps} == {"git"}
    assert [(m.day.isoformat(), m.kind) for m in t.markers] == KNOWN_MARKERS
    # Decay from the last step (after the last confirmation) to today, never above stored.
    assert t.decay[0][0] == date(2026, 11, 20) and t.decay[-1][0] == date(2026, 11, 30)
    assert all(v <= 0.20 for _, v in t.decay)
    assert t.effective == round(mem.effective(b), 3)


def test_before_git_the_evidence_log_fills_in(tmp_path):
    root = sample_copy(tmp_path / "vault")
    mem = _mem(root)
    b = mem.belief("terse-answers")
    t = hist.timeline(b, mem.history("terse-answers"), mem.today, mem.params)
    # The file's evidence recorded 0.30 → 0.20 on 09-15 and 0.20 → 0.25 on 10-06; git saw 0.25 on 11-28.
    assert [(s.day.isoformat(), f"{s.confidence:.2f}", s.source) for s in t.steps] == [
        ("2026-06-08", "0.30", "evidence"), ("2026-09-15", "0.20", "evidence"),
        ("2026-10-06", "0.25", "evidence"), ("2026-11-28", "0.25", "git")]
    assert [(m.day.isoformat(), m.kind) for m in t.markers][:3] == [
        ("2026-06-08", "confirmation"), ("2026-09-04", "challenge"), ("2026-09-15", "challenge")]


# --- the page ------------------------------------------------------------------------------

class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag in ("script", "style")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if not self._in_script:
            self.text.append(data)


def _parse(html: str) -> _Collect:
    p = _Collect()
    p.feed(html)
    return p


def test_page_is_self_contained_and_escapes_everything(hv):
    html = build(_mem(hv), use_cache=False).html
    doc = _parse(html)
    # Nothing is fetched: no src or remote href anywhere, no stylesheet link, no import.
    assert not [a for t, a in doc.tags if "src" in a]
    assert not [a for t, a in doc.tags if t == "link"]
    hrefs = [a["href"] for t, a in doc.tags if "href" in a]
    assert hrefs and all(h.startswith("#") for h in hrefs), [h for h in hrefs if not h.startswith("#")]
    assert "@import" not in html and "url(" not in html
    # The markup in a title, a statement and a tag is text, never markup.
    text = "".join(doc.text)
    assert XSS_TITLE in text and 'Says <img src=x onerror="alert(2)"> & means it.' in text
    assert "<script>alert(1)" not in html and "<img src=x" not in html and "<b>tag</b>" not in html
    assert [t for t, _ in doc.tags].count("script") == 1  # ours, the filter
    assert [t for t, _ in doc.tags].count("img") == 0


def test_page_shows_the_known_points_and_links_each_marker_to_its_evidence(hv):
    html = build(_mem(hv), use_cache=False).html
    doc = _parse(html)
    svg_of = [a for t, a in doc.tags if t == "svg" and a.get("data-belief") == KNOWN]
    assert len(svg_of) == 1
    start = html.index(f'data-belief="{KNOWN}"')
    chart = html[start:html.index("</svg>", start)]
    pts = re.findall(r'class="step git" cx="[^"]+" cy="[^"]+" r="3" data-date="([^"]+)" data-value="([^"]+)"', chart)
    assert pts == KNOWN_STEPS
    markers = re.findall(r'href="#(ev-[^"]+)" class="marker (\w+)" data-date="([^"]+)"', chart)
    assert [(d, k) for _, k, d in markers] == KNOWN_MARKERS
    ids = {a.get("id") for _, a in doc.tags}
    assert all(anchor in ids for anchor, _, _ in markers)
    # The evidence a marker links to carries the observation's own words.
    i = html.index(f'id="{markers[1][0]}"')
    assert "Read all 400 lines of the migration diff" in html[i:i + 600]


def test_page_sections_tensions_and_changes(hv):
    html = build(_mem(hv), use_cache=False).html
    for section in ("portrait", "overview", "beliefs", "tensions", "changes", "legend"):
        assert f'id="{section}"' in html
    text = "".join(_parse(html).text)
    assert "Boring technology, except for ledger-sync's audit trail" in text
    assert "What changed since the last review, 2026-10-30" in text
    assert f"{KNOWN}: confidence 0.40 → 0.20" in text and f"belief {XSS} added ({XSS_TITLE};" in text


def test_big_tiers_show_the_top_and_page_the_rest(hv):
    html = build(_mem(hv), top=2, page_size=5, use_cache=False).html
    doc = _parse(html)
    cards = [a for t, a in doc.tags if t == "article" and "card" in a.get("class", "")]
    rows = [a for t, a in doc.tags if t == "tr" and "row" in a.get("class", "")]
    n = len(_mem(hv).beliefs(status="active"))
    assert len(cards) <= 2 * 5 and len(cards) + len(rows) == n
    assert re.search(r"Speculative beliefs 3–7 of \d+", html)


def test_the_page_is_cached_until_anything_it_shows_changes(hv):
    mem = _mem(hv)
    a = build(mem)
    assert not a.cached and build(mem).cached and build(mem).html == a.html
    p = hv / "beliefs" / "sql-over-orm.md"
    p.write_text(p.read_text().replace("title: ", "title: Really, "), encoding="utf-8")
    c = build(mem)
    assert not c.cached and "Really, " in c.html
    assert build(Memory(hv, today="2026-12-01")).cached is False  # another day, other decay


def _edit(path: Path, old: str, new: str) -> None:
    """A hand edit saved in place, a second after whatever came before (mtimes must differ)."""
    before = path.stat().st_mtime_ns if path.exists() else time.time_ns()
    path.write_text(path.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


def test_every_hand_edit_invalidates_the_cache(hv):
    from epimem.mirror import page_cache

    mem = _mem(hv)
    assert not build(mem).cached and build(mem).cached
    belief = hv / "beliefs" / "sql-over-orm.md"
    _edit(belief, "title: ", "title: Aaaa ")  # a tracked file, uncommitted
    assert "Aaaa " in (a := build(mem)).html and not a.cached and build(mem).cached
    _edit(belief, "title: Aaaa ", "title: Bbbb ")  # the same dirty file again, same size
    assert "Bbbb " in (b := build(mem)).html and not b.cached and build(mem).cached
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qam", "by hand"],
                   cwd=hv, check=True)  # the user commits it
    assert not build(mem).cached and build(mem).cached
    new = hv / "beliefs" / "written-by-hand.md"  # a new file, never added to git
    new.write_text(belief.read_text(encoding="utf-8").replace("title: Bbbb ", "title: Cccc "), encoding="utf-8")
    assert "Cccc " in (c := build(mem)).html and not c.cached and build(mem).cached
    new.unlink()
    assert "Cccc " not in (d := build(mem)).html and not d.cached
    log = sorted((hv / "observations").iterdir())[-1]
    _edit(log, "\n", "\n\n")
    assert not build(mem).cached
    _edit(hv / "epistemology.md", "\n", "\n\n")
    assert not build(mem).cached and build(mem).cached
    # What the key is made of: git's word on what differs from HEAD, with each such file's stat.
    assert page_cache.key(hv, mem.today) == page_cache.key(hv, mem.today)
    os.utime(belief, ns=(1, 1))  # a committed, unchanged file touched: git knows it is the same
    subprocess.run(["git", "update-index", "--refresh", "-q"], cwd=hv, check=False)
    assert build(mem).cached


def test_outside_git_every_hand_edit_invalidates_the_cache_too(tmp_path):
    import shutil

    root = tmp_path / "plain"
    shutil.copytree(WT / "vault", root, ignore=shutil.ignore_patterns(".epimem"))
    mem = _mem(root)
    assert not build(mem).cached and build(mem).cached
    p = next((root / "beliefs").iterdir())
    _edit(p, "title: ", "title: Dddd ")
    assert "Dddd " in (a := build(mem)).html and not a.cached and build(mem).cached


def test_a_vault_that_is_not_a_repository_still_has_a_page(tmp_path):
    import shutil

    root = tmp_path / "plain"
    shutil.copytree(WT / "vault", root)
    html = build(_mem(root)).html
    assert "Wants terse answers for routine code" in html and 'id="changes"' in html


# --- the CLI ------------------------------------------------------------------------------

def _epimem(*args, cwd=None, **kw):
    env = {**os.environ, "PYTHONPATH": str(WT), "EPIMEM_TODAY": "2026-11-30"}
    return subprocess.run([sys.executable, "-m", "epimem", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, **kw)


def test_cli_page_writes_the_file(hv, tmp_path):
    out = tmp_path / "mirror.html"
    r = _epimem("--vault", str(hv), "mirror", "page", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert f"Wrote {out}" in r.stdout
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")
    r = _epimem("--vault", str(hv), "mirror", "page", cwd=tmp_path)
    assert r.returncode == 0 and (tmp_path / "mirror-2026-11-30.html").exists()
    assert "from the cache" in r.stdout
    assert subprocess.run(["git", "status", "--porcelain"], cwd=hv, capture_output=True,
                          text=True).stdout == ""  # the vault is untouched


def test_an_unchanged_vaults_page_is_written_before_the_cli_is_imported(hv, tmp_path):
    """`epimem mirror page` on an unchanged vault: the cached bytes, without Jinja2, the note
    parser or the API; after a hand edit, the page is built again."""
    built = build(_mem(hv))
    out = tmp_path / "fast.html"
    probe = ("import sys; from epimem.__main__ import main; rc = main(sys.argv[1:]); "
             "print(sorted(m for m in ('jinja2', 'yaml', 'git', 'epimem.api.memory', 'epimem.core.notes') "
             "if m in sys.modules)); sys.exit(rc)")
    env = {**os.environ, "PYTHONPATH": str(WT), "EPIMEM_TODAY": "2026-11-30"}

    def run(*args):
        return subprocess.run([sys.executable, "-c", probe, "--vault", str(hv), "mirror", "page", *args],
                              capture_output=True, text=True, env=env)

    r = run("--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "from the cache" in r.stdout and r.stdout.strip().endswith("[]"), r.stdout
    assert out.read_text(encoding="utf-8") == built.html
    r = run(f"--out={out}", "--top", "30")  # the default, spelled out: the same page
    assert "from the cache" in r.stdout and r.stdout.strip().endswith("[]"), r.stdout
    r = run("--out", str(out), "--top", "2")  # another page: built by the CLI
    assert r.returncode == 0 and "from the cache" not in r.stdout and "jinja2" in r.stdout
    _edit(hv / "beliefs" / "sql-over-orm.md", "title: ", "title: Eeee ")
    r = run("--out", str(out))
    assert r.returncode == 0 and "from the cache" not in r.stdout and "jinja2" in r.stdout
    assert "Eeee " in out.read_text(encoding="utf-8")
    r = run("--out", str(out), "--top", "0")  # a bad option: the CLI says what is wrong
    assert r.returncode != 0 and "--top" in r.stderr


def test_cli_page_on_a_missing_vault_says_so(tmp_path):
    r = _epimem("--vault", str(tmp_path / "nope"), "mirror", "page", "--out", str(tmp_path / "x.html"))
    assert r.returncode != 0 and "epimem:" in r.stderr and not (tmp_path / "x.html").exists()


def test_cli_serve_refuses_other_addresses_without_the_flag(hv):
    r = _epimem("--vault", str(hv), "mirror", "serve", "--host", "0.0.0.0", "--port", "0")
    assert r.returncode != 0 and "--allow-remote" in r.stderr


# --- the server ----------------------------------------------------------------------------

def _get(url, method="GET", headers=None):
    req = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_server_is_read_only_behind_a_token_and_rebuilds_on_a_hand_edit(hv):
    from epimem.mirror.serve import Server

    srv = Server(_mem(hv), port=0).start()
    try:
        base = f"http://127.0.0.1:{srv.port}"
        assert srv.httpd.server_address[0] == "127.0.0.1"
        assert _get(base + "/")[0] == 403
        assert _get(base + "/?token=wrong")[0] == 403
        assert _get(srv.url, headers={"Host": f"evil.example:{srv.port}"})[0] == 403  # DNS rebinding
        status, body = _get(srv.url)
        assert status == 200 and "Reviews diffs line by line" in body and "/version?token=" in body
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            assert _get(srv.url, method=method)[0] == 405
        v0 = json.loads(_get(f"{base}/version?token={srv.token}")[1])["version"]
        before = subprocess.run(["git", "status", "--porcelain"], cwd=hv, capture_output=True, text=True).stdout
        assert before == ""
        p = hv / "beliefs" / "sql-over-orm.md"
        p.write_text(p.read_text().replace("title: ", "title: Edited by hand, "), encoding="utf-8")
        t0 = time.monotonic()
        seen = False
        while not seen and time.monotonic() - t0 < 2.0:
            seen = "Edited by hand, " in _get(srv.url)[1]
            time.sleep(0.05)
        assert seen, "the page was not rebuilt within 2 s of the edit"
        assert json.loads(_get(f"{base}/version?token={srv.token}")[1])["version"] != v0
    finally:
        srv.close()


def test_states_taken_from_the_snapshot_are_the_states_git_holds(hv):
    mem = _mem(hv)
    p = hv / "beliefs" / "terse-answers.md"
    p.write_text(p.read_text().replace("confidence: 0.25", "confidence: 0.55"), encoding="utf-8")  # not committed
    fast = timeline.histories(mem, snapshot=mem.snapshot())
    assert fast == git.all_belief_histories(hv)[1]
    assert fast["terse-answers"][-1].confidence == 0.25  # git's, not the hand edit's


def test_a_vault_whose_history_is_younger_than_its_beliefs_still_draws_their_decay(sample_vault):
    # The sample vault committed in one go today (copied, imported): git first saw every file today,
    # but decay counts from `confirmed` (rule 7), and the page draws it from there (issue 28).
    mem = Memory(sample_vault, today="2026-11-30")
    b = mem.belief("small-pull-requests")
    assert b.confirmed == date(2026, 10, 30) and b.permanence == "durable"
    t = hist.timeline(b, mem.history(b.id), mem.today, mem.params)
    assert t.decay, "no decayed value drawn"
    assert t.decay[0] == (date(2026, 10, 30), round(b.confidence, 3))
    assert t.decay[-1][0] == t.end and t.effective < b.confidence
    from epimem.mirror.svg import timeline_svg

    svg = timeline_svg(t, b.title, (("established", 0.7),))
    assert 'class="effective"' in svg and 'class="effective-now"' in svg
