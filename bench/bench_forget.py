"""Benchmark of `epimem forget --purge`, beside what any rewrite of the same history costs.

    python bench/bench_forget.py [--beliefs 2000] [--observations 8000] [--commits 200] [--runs 3]
                                 [--out bench/out/forget.json]

A synthetic vault (bench/synth.py: one commit of every file) gets `--commits` more commits, each
an observation through the API, as a vault in use has. Then, on a fresh copy each run:

- `epimem forget ID --purge --yes` as a fresh process (the plan, the forget commit, the rewrite,
  the refs' switch, reflogs and `gc --prune=now`, the caches), for a belief with observations;
- beside it, in the same loop, the floor any purge pays: `git fast-export --all | git fast-import`
  of the whole history with its blobs into a new repository, and `git gc --prune=now` there.

The figures go to docs/benchmarks.md with the command and the load (`/proc/loadavg`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from synth import lift_session_bound, make_vault  # noqa: E402

from epimem.api.memory import Memory  # noqa: E402

EPIMEM = [sys.executable, "-m", "epimem"]


def _git(root: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, check=True, **kw)


def prepare(base: Path, beliefs: int, observations: int, commits: int) -> tuple[Path, str]:
    root = base / "vault"
    make_vault(root, n_beliefs=beliefs, n_observations=observations, seed=0)
    lift_session_bound(root)  # a commit per observation, each a session nobody counted (rule 9)
    mem = Memory(root)
    active = [b for b in mem.beliefs() if b.evidence][:commits]
    for i, b in enumerate(active):
        mem.observe([{"connects": b.id, "strength": "complicating", "basis": "behavioral", "session": f"bench-{i}",
                      "evidence": f"Benchmark observation {i} of {b.id}."}])
    target = active[0].id
    return root, target


def run_once(src: Path, target: str, scratch: Path) -> dict[str, float]:
    v = scratch / "v"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    shutil.copytree(src, v, symlinks=True)
    env = {**os.environ, "EPIMEM_CHROMA_UPDATE": "wait"}
    t = time.perf_counter()
    subprocess.run([*EPIMEM, "--vault", str(v), "forget", target, "--purge", "--yes"], check=True,
                   capture_output=True, env=env)
    purge = time.perf_counter() - t
    b = scratch / "baseline"
    shutil.copytree(src, b / "src", symlinks=True)
    _git(b, "init", "-q", "--bare", "new.git")
    t = time.perf_counter()
    stream = _git(b / "src", "fast-export", "--all", "--show-original-ids").stdout
    _git(b / "new.git", "fast-import", "--quiet", input=stream)
    _git(b / "new.git", "gc", "--quiet", "--prune=now")
    floor = time.perf_counter() - t
    return {"purge": purge, "fast_export_import_gc": floor}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--beliefs", type=int, default=2000)
    ap.add_argument("--observations", type=int, default=8000)
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "out" / "forget.json"))
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="epimem-bench-forget-") as tmp:
        base = Path(tmp)
        src, target = prepare(base, a.beliefs, a.observations, a.commits)
        n = int(_git(src, "rev-list", "--count", "HEAD").stdout)
        rows = [run_once(src, target, base / f"run-{i}") for i in range(a.runs)]
    out = {"beliefs": a.beliefs, "observations": a.observations, "commits": n, "runs": a.runs,
           "load": Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else None,
           **{k: {"median": statistics.median(r[k] for r in rows), "min": min(r[k] for r in rows)}
              for k in rows[0]}}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
