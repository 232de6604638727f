"""No secret reaches a file, a commit or a model, on any path (issues 9.5 and 17).

Every write path is walked with every family of the default patterns; after
each, the whole vault (`.epimem/` caches included) and the whole git history
(messages and diffs) are searched for the secret's telling part.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# family: (text as typed, the part that must never be stored or sent)
PROBES = {
    "anthropic": ("sk-ant-api03-Zq9xW3e4R5t6Y7u8I9o0", "Zq9xW3e4R5t6Y7u8I9o0"),
    "openai": ("sk-proj-Pp1Qq2Rr3Ss4Tt5Uu6Vv7Ww8", "Pp1Qq2Rr3Ss4Tt5Uu6Vv7Ww8"),
    "aws": ("AKIAZZQQ7XY2WV3UTS4R", "AKIAZZQQ7XY2WV3UTS4R"),
    "github-classic": ("ghp_" + "Gh7" * 12, "Gh7" * 12),
    "github-fine": ("github_pat_11AAAAAAA0" + "Fg5" * 14, "Fg5" * 14),
    "slack": ("xoxb-20001-Sl4ckS3cr3tT0k", "Sl4ckS3cr3tT0k"),
    "google": ("AIza" + "Go0gLeK3y" * 3 + "Go0gLeK3", "Go0gLeK3y" * 3),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJqd3Rwcm9iZSJ9.JwTs1gnatureXyZ123456", "JwTs1gnatureXyZ123456"),
    "bearer": ("Bearer Be4rerT0kenAbCdEfGh", "Be4rerT0kenAbCdEfGh"),
    "private-key": ("-----BEGIN RSA PRIVATE KEY----- MIIEpr1vAt3kEyB0dy -----END RSA PRIVATE KEY-----",
                    "MIIEpr1vAt3kEyB0dy"),
    "password": ("password=Pa55w0rdProbe", "Pa55w0rdProbe"),
    "url-password": ("https://robin:Url5ecretPw@db.example.com/x", "Url5ecretPw"),
}


def _leaks(v: Path, needles: list[str]) -> list[str]:
    """Where any needle is found: a file of the vault (caches included) or git history."""
    found = []
    for p in v.rglob("*"):
        if not p.is_file() or ".git" in p.relative_to(v).parts:
            continue
        data = p.read_bytes()
        found += [f"{p.relative_to(v)}: {n}" for n in needles if n.encode() in data]
    hist = subprocess.run(["git", "-C", str(v), "log", "--all", "-p", "--format=%B"], capture_output=True,
                          text=True, check=True).stdout
    found += [f"git history: {n}" for n in needles if n in hist]
    return found


@pytest.fixture
def v(tmp_path, cli):
    root = tmp_path / "v"
    assert cli("--vault", root, "init").code == 0
    r = cli("--vault", root, "belief", "add", "--title", "Likes tabs", "--statement", "Indents with tabs.",
            "--kind", "preference", "--basis", "self-report", "--permanence", "stable")
    assert r.code == 0, r.err
    return root


def _ok(r):
    assert r.code == 0, r.err
    return r


def test_belief_add_tag_and_scope(v, cli):
    for i, (fam, (text, _)) in enumerate(PROBES.items()):
        _ok(cli("--vault", v, "belief", "add", "--title", f"Probe {fam}", "--statement", f"statement {fam}",
                "--kind", "trait",
                "--basis", "self-report", "--permanence", "stable", "--tag", text, "--tag", "plain",
                "--scope", text, "--id", f"probe-{i}"))
    assert _leaks(v, [n for _, n in PROBES.values()]) == []
    # the file stays a valid belief with the marker as its tag
    r = _ok(cli("--vault", v, "belief", "show", "probe-10", "--json")).json()
    assert "[REDACTED:password]" in " ".join(r["tags"]) and "plain" in r["tags"]
    assert _ok(cli("--vault", v, "validate", "--json")).json()["problems"] == []


def test_belief_edit_note_and_tag(v, cli):
    for text, _ in PROBES.values():
        _ok(cli("--vault", v, "belief", "edit", "likes-tabs", "--note", f"because {text}", "--tag", text))
    assert _leaks(v, [n for _, n in PROBES.values()]) == []


def test_belief_supersede_note(v, cli):
    for i, (fam, (text, _)) in enumerate(PROBES.items()):
        _ok(cli("--vault", v, "belief", "add", "--title", f"Old {fam}", "--statement", f"statement {fam}",
                "--kind", "trait",
                "--basis", "self-report", "--permanence", "stable", "--id", f"old-{i}"))
        _ok(cli("--vault", v, "belief", "supersede", f"old-{i}", "--by", "likes-tabs", "--note", text))
    assert _leaks(v, [n for _, n in PROBES.values()]) == []


def test_mirror_answer_note_in_the_open_gut_check(v, cli):
    for i in range(3):
        _ok(cli("--vault", v, "belief", "add", "--title", f"Other {i}", "--statement", f"other statement {i}",
                "--kind", "trait",
                "--basis", "self-report", "--permanence", "stable"))
    _ok(cli("--vault", v, "mirror", "gut-check", "--json"))
    pending = json.loads((v / ".epimem" / "gut-check.json").read_text(encoding="utf-8"))
    first = pending["beliefs"][0]
    texts = [t for t, _ in PROBES.values()]
    _ok(cli("--vault", v, "mirror", "answer", first, "--verdict", "unsure", "--note", " ".join(texts)))
    assert (v / ".epimem" / "gut-check.json").exists()
    assert _leaks(v, [n for _, n in PROBES.values()]) == []


def test_observe_tags_and_texts(v, cli, tmp_path):
    items = [{"connects": "new", "title": f"Observed {fam}", "kind": "trait", "strength": "single",
              "evidence": f"said {text}", "suggests": text, "tags": [text], "session": f"s-{i}",
              "new_despite_similar": True}
             for i, (fam, (text, _)) in enumerate(PROBES.items())]
    for it in items:
        # a session the vault counted each (those it never counted share one bound a day: rule 9)
        assert cli("--vault", v, "session", "start", "--session", it["session"]).code == 0
        f = tmp_path / "in.json"
        f.write_text(json.dumps([it]), encoding="utf-8")
        r = cli("--vault", v, "observe", "--input", f)
        if r.code != 0 and "new_despite_similar" in r.err:  # a main without issue 9's key
            it.pop("new_despite_similar")
            f.write_text(json.dumps([it]), encoding="utf-8")
            r = cli("--vault", v, "observe", "--input", f)
        _ok(r)
    assert _leaks(v, [n for _, n in PROBES.values()]) == []


def test_import_epistemic_memory_tensions(v, cli, tmp_path):
    src = tmp_path / "profile"
    shutil.copytree(ROOT / "tests" / "fixtures" / "epistemic-memory", src)
    t = src / "tensions.md"
    extra = "".join(f"\n### 2026-04-0{1 + i % 9} — Probe {fam}\n\n**Belief affected:** Decides by Prototyping\n"
                    f"**What happened:** typed {text} into the chat\n**Status:** unresolved\n"
                    for i, (fam, (text, _)) in enumerate(PROBES.items()))
    t.write_text(t.read_text(encoding="utf-8") + extra, encoding="utf-8")
    _ok(cli("--vault", v, "import", "epistemic-memory", src))
    assert list((v / "tensions").glob("*.md"))
    assert _leaks(v, [n for _, n in PROBES.values()]) == []


def _hand_typed(v: Path, cli) -> list[str]:
    """A belief the user wrote by hand, every secret in its title, statement and tags."""
    texts = [t for t, _ in PROBES.values()]
    (v / "beliefs" / "hand-typed.md").write_text(
        "---\ntitle: Deploys with " + json.dumps(texts[10]) + "\nkind: workflow\nbasis: self-report\n"
        "confidence: 0.90\npermanence: stable\nfirst: 2026-11-01\nstatus: active\nscope: global\n"
        "pinned: true\ntags: [" + ", ".join(json.dumps(t) for t in texts[:3]) + "]\n---\n"
        "Deploys by hand. " + " ".join(texts) + "\n", encoding="utf-8")
    from epimem.store.context_cache import refresh_context

    refresh_context(v)  # what the next write, `watch` or the hook's background refresh does
    return [n for _, n in PROBES.values()]


def test_session_start_context_is_redacted_whatever_the_source(v, cli):
    import os
    import sys

    needles = _hand_typed(v, cli)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "epimem", "hook", "session-start", "--vault", str(v)],
                       input=json.dumps({"source": "startup", "cwd": str(v)}), capture_output=True, text=True,
                       env=env, timeout=60)
    ctx = json.loads(p.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Deploys" in ctx
    assert [n for n in needles if n in ctx] == []
    cache = (v / ".epimem" / "context.json").read_text(encoding="utf-8")
    assert [n for n in needles if n in cache] == []


def test_recall_budget_output_is_redacted_whatever_the_source(v, cli, clean_recall_env):
    needles = _hand_typed(v, cli)
    r = _ok(cli("--vault", v, "recall", "deploys by hand", "--budget-tokens", "400"))
    assert "Deploys" in r.out
    assert [n for n in needles if n in r.out] == []
    r = _ok(cli("--vault", v, "recall", "deploys by hand", "--json"))
    assert [n for n in needles if n in r.out] == []


def test_a_hand_typed_secret_is_redacted_before_commit(v, cli, caplog):
    needles = _hand_typed(v, cli)
    _ok(cli("--vault", v, "commit"))
    assert "redacted in the file before the commit" in caplog.text  # stderr, outside pytest
    text = (v / "beliefs" / "hand-typed.md").read_text(encoding="utf-8")
    assert "[REDACTED:" in text and "Deploys by hand." in text
    assert _leaks(v, needles) == []
    assert _ok(cli("--vault", v, "validate", "--json")).json()["problems"] == []
