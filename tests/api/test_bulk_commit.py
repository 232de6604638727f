"""Thousands of files in one commit: paths reach git through a file, never one argument list.

2,000 beliefs copied into `beliefs/` by hand made `epimem commit` fail with "Argument list too
long" and left all of them uncommitted; `bench/bench_bulk_commit.py` runs the same at 20,000.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _synth():
    spec = importlib.util.spec_from_file_location("bench_synth", ROOT / "bench" / "synth.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def vault_with_uncommitted_beliefs(root: Path, n: int) -> None:
    """A vault whose `beliefs/` holds `n` files nobody committed: copied in by hand."""
    _synth().make_vault(root, n_beliefs=n, n_observations=n, commit=False)
    git(root, "init", "-q")
    git(root, "add", "--all", "--", ":!beliefs")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "vault without beliefs")


@pytest.mark.slow  # 2,000 beliefs: a large-vault test, run by .ci/run after the default set
def test_commit_of_2000_hand_copied_beliefs_lands_as_one_commit(tmp_path):
    root = tmp_path / "v"
    vault_with_uncommitted_beliefs(root, 2000)
    n_files = len(list((root / "beliefs").glob("*.md")))
    assert n_files == 2000
    before = int(git(root, "rev-list", "--count", "HEAD"))
    p = subprocess.run([sys.executable, "-m", "epimem", "--vault", str(root), "commit"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "Argument list too long" not in p.stderr
    assert int(git(root, "rev-list", "--count", "HEAD")) == before + 1
    assert len(git(root, "ls-files", "beliefs").split()) == n_files
    assert git(root, "status", "--porcelain", "--", "beliefs") == ""
    assert not list((root / ".git").glob("epimem-pathspec-*")), "the pathspec file is left behind"


def test_a_belief_file_named_like_a_glob_is_committed_alone(tmp_path):
    # Paths are literal: `[x].md` is that file, not a character class matching `x.md`.
    from epimem.store import git as gitmod

    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q")
    (root / "x.md").write_text("x\n", encoding="utf-8")
    (root / "[x].md").write_text("y\n", encoding="utf-8")
    gitmod.commit(root, ["[x].md"], "one file", op="test")
    assert git(root, "ls-files").split() == ["[x].md"]
