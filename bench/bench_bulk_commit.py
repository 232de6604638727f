"""`epimem commit` of N belief files copied into `beliefs/` by hand, beside plain git.

    python bench/bench_bulk_commit.py [--beliefs 20000] [--runs 1] [--workdir bench/out/bulk]

For each run: a synthetic vault whose `beliefs/` is not committed (bench/synth.py), copied
twice; one copy is committed by `epimem commit`, the other by `git add --all && git commit`
(the baseline, in the same loop). Prints JSON with both wall times and whether every file landed.
Before paths went to git through a file, N = 2,000 failed with "Argument list too long".
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _synth():
    spec = importlib.util.spec_from_file_location("bench_synth", HERE / "synth.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True, env=ENV).stdout


def timed(cmd: list[str], cwd: Path) -> float:
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=ENV)
    took = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} failed: {p.stderr.strip()[-500:]}")
    return took


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--beliefs", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--workdir", type=Path, default=HERE / "out" / "bulk")
    a = ap.parse_args(argv)
    shutil.rmtree(a.workdir, ignore_errors=True)
    a.workdir.mkdir(parents=True)
    template = a.workdir / "template"
    _synth().make_vault(template, n_beliefs=a.beliefs, n_observations=a.beliefs, commit=False)
    git(template, "init", "-q")
    git(template, "add", "--all", "--", ":!beliefs")
    git(template, "commit", "-qm", "vault without its beliefs")
    n = len(list((template / "beliefs").glob("*.md")))
    rows = []
    for i in range(a.runs):
        ours, base = a.workdir / f"epimem-{i}", a.workdir / f"git-{i}"
        shutil.copytree(template, ours, symlinks=True)
        shutil.copytree(template, base, symlinks=True)
        t_epimem = timed([sys.executable, "-m", "epimem", "--vault", str(ours), "commit"], ours)
        t_git = timed(["sh", "-c", "git add --all && git commit -qm bulk"], base)
        landed = len(git(ours, "ls-files", "beliefs").split())
        rows.append({"epimem_commit_s": round(t_epimem, 2), "git_add_commit_s": round(t_git, 2),
                     "files": n, "committed": landed, "clean": git(ours, "status", "--porcelain") == ""})
        shutil.rmtree(ours)
        shutil.rmtree(base)
    print(json.dumps({"beliefs": n, "runs": rows}, indent=2))
    return 0 if all(r["committed"] == n for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
