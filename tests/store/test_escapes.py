"""Nothing outside the vault is read, listed, sent or committed; files are no wider
than 0644 and `.epimem/` is 0700 whatever the umask (issues 17 and 19.6)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

OUTSIDE_BELIEF = """---
title: Outside secret belief
kind: trait
basis: self-report
confidence: 0.40
permanence: stable
first: 2026-11-01
status: active
scope: global
---
Lives outside the vault and must never be read.
"""


@pytest.fixture
def v(tmp_path, cli):
    root = tmp_path / "v"
    assert cli("--vault", root, "init").code == 0
    assert cli("--vault", root, "belief", "add", "--title", "Likes tabs", "--statement", "Indents with tabs.",
               "--kind", "preference", "--basis", "self-report", "--permanence", "stable").code == 0
    return root


def test_symlinks_that_leave_the_vault_are_never_followed(v, cli, tmp_path, clean_recall_env):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text(OUTSIDE_BELIEF, encoding="utf-8")
    (outside / "2026-11.md").write_text("# Observations\n\n## obs-20261101-out1\n- date: 2026-11-01\n"
                                        "- evidence: Outside secret evidence\n- connects: [[likes-tabs]]\n"
                                        "- strength: confirming\n", encoding="utf-8")
    os.symlink(outside / "x.md", v / "beliefs" / "outside-belief.md")
    os.symlink(outside / "2026-11.md", v / "observations" / "2026-11.md")
    os.symlink(outside, v / "tensions" / "linked-dir")
    (v / "beliefs" / "inside.md").write_text(OUTSIDE_BELIEF.replace("Outside secret belief", "Inside"),
                                              encoding="utf-8")
    os.symlink(v / "beliefs" / "inside.md", v / "beliefs" / "alias-inside.md")  # stays in: allowed

    outs = [cli("--vault", v, *a) for a in (("belief", "list", "--json"), ("belief", "show", "outside-belief"),
                                            ("recall", "outside secret", "--json"),
                                            ("recall", "outside secret", "--budget-tokens", "300"),
                                            ("mirror", "portrait"), ("mirror", "gut-check", "--json"),
                                            ("commit",), ("diff", "--since", "2000-01-01"))]
    for r in outs:
        assert "Outside secret" not in r.out + r.err
    assert "alias-inside" in outs[0].out
    assert outs[1].code != 0 and "outside the vault" in outs[1].err
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    hook = subprocess.run([sys.executable, "-m", "epimem", "hook", "session-start", "--vault", str(v)],
                          input=json.dumps({"source": "startup", "cwd": str(v)}), capture_output=True, text=True,
                          env=env, timeout=60)
    assert "Outside secret" not in hook.stdout
    for p in (v / ".epimem").rglob("*"):
        if p.is_file():
            assert b"Outside secret" not in p.read_bytes(), p
    tracked = subprocess.run(["git", "-C", str(v), "ls-files"], capture_output=True, text=True).stdout
    assert "outside-belief" not in tracked and "observations/2026-11.md" not in tracked
    problems = cli("--vault", v, "validate", "--json").json()["problems"]
    flagged = {p["path"] for p in problems if "outside the vault" in p["message"]}
    assert flagged == {"beliefs/outside-belief.md", "observations/2026-11.md", "tensions/linked-dir"}


def test_a_write_never_follows_a_symlink_out(v, cli, tmp_path):
    outside = tmp_path / "target.md"
    outside.write_text("untouched\n", encoding="utf-8")
    (v / "beliefs" / "likes-tabs.md").unlink()
    os.symlink(outside, v / "beliefs" / "likes-tabs.md")
    r = cli("--vault", v, "belief", "edit", "likes-tabs", "--note", "x", "--confidence", "0.5")
    assert r.code != 0
    assert outside.read_text(encoding="utf-8") == "untouched\n"


def _modes(v: Path) -> dict[str, int]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(v):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            if not os.path.islink(p):
                out[os.path.relpath(p, v)] = stat.S_IMODE(os.stat(p).st_mode)
    return out


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_modes_whatever_the_umask(tmp_path, umask):
    """A real `epimem` process under the umask: init, add, observe, index, gut-check."""
    v = tmp_path / "v"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(*args):
        p = subprocess.run(["sh", "-c", f'umask {umask:03o}; exec "$@"', "sh", sys.executable, "-m", "epimem",
                            "--vault", str(v), *args], env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr

    run("init")
    run("belief", "add", "--title", "Likes tabs", "--statement", "Tabs.", "--kind", "preference",
        "--basis", "self-report", "--permanence", "stable")
    run("observe", "--connects", "likes-tabs", "--strength", "confirming", "--evidence", "Tabs.", "--session", "s")
    run("mirror", "gut-check", "--json")
    modes = _modes(v)
    assert modes[".epimem"] == 0o700
    for rel, mode in modes.items():
        if rel.startswith(".git"):
            continue  # git's own files: see the next test
        is_dir = (v / rel).is_dir()
        limit = (0o755 if is_dir else 0o644) & ~umask
        assert mode & ~limit == 0, f"{rel} is {mode:o} under umask {umask:03o}"
        if umask == 0o000:
            assert not mode & 0o022, f"{rel} is writable by others: {mode:o}"
    git_modes = {r: m for r, m in modes.items() if r.startswith(".git")}
    assert all(not m & 0o002 for m in git_modes.values()), {r: f"{m:o}" for r, m in git_modes.items() if m & 0o002}


def test_an_older_wide_epimem_folder_is_narrowed(v, cli):
    os.chmod(v / ".epimem", 0o755)
    assert cli("--vault", v, "belief", "edit", "likes-tabs", "--note", "again", "--tag", "x").code == 0
    assert stat.S_IMODE(os.stat(v / ".epimem").st_mode) == 0o700
