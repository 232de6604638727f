"""Benchmark of `epimem sync` at 10,000 beliefs, each beside a baseline run in the same loop.

    python bench/bench_sync.py [--beliefs 10000] [--days 60] [--runs 7] [--out bench/out/sync.json]

A synthetic vault (bench/synth.py) is pushed to a bare remote on this disk and cloned as a
second machine with `epimem clone`. Then:

- nothing to do: `epimem sync` as a fresh process when neither side has changed, beside
  `git fetch && git merge` (what sync must do anyway) in the same loop; the difference is
  what epimem adds (start-up, the check for hand edits, the driver registration check);
- two months of work: both machines record `--days` days (a session a day, two confirming
  observations a session, on a working set of 300 beliefs so the machines touch the same
  files); machine A syncs, then machine B's `epimem sync` is timed: fetch, the merge with
  epimem's drivers on every file both changed, the push.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from synth import make_vault  # noqa: E402

from epimem.api import sync as sync_api  # noqa: E402
from epimem.api.memory import Memory  # noqa: E402

EPIMEM = [sys.executable, "-m", "epimem"]
IDENT = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
         "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


CPU: list[float] = []  # CPU seconds (user + system, the command and every git it ran) of each `sh`


def sh(cmd: list[str], cwd: Path | None = None) -> float:
    """Wall seconds of `cmd`; its CPU seconds go to CPU (on a loaded machine wall time
    is mostly waiting for a core, so both are reported)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, env={**os.environ, **IDENT})
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


def work(mem_root: Path, start: date, days: int, pool: list[str], rng: random.Random, tag: str) -> int:
    n = 0
    for d in range(days):
        today = start + timedelta(days=d)
        mem = Memory(mem_root, today=today)
        mem.session_start(session=f"{tag}{d}")  # the day's session, counted by its id as the hook does (rule 9)
        picks = rng.sample(pool, 2)
        mem.observe([{"connects": b, "strength": "confirming", "basis": "behavioral", "session": f"{tag}{d}",
                      "evidence": f"{tag} day {d}: evidence for {b}"} for b in picks])
        n += 2
    return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--beliefs", type=int, default=10000)
    ap.add_argument("--days", type=int, default=60)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--merge-runs", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "out" / "sync.json"))
    ap.add_argument("--keep", help="build the scenario in this (empty) directory and leave it there")
    ap.add_argument("--profile", help="also profile one merge in process (fresh copies) into this pstats file, "
                                      "with every git call and its time on stderr")
    args = ap.parse_args(argv)
    os.environ.update(IDENT)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(args.keep) if args.keep else Path(tmp)
        tmp.mkdir(parents=True, exist_ok=True)
        a = tmp / "a"
        t0 = time.perf_counter()
        make_vault(a, n_beliefs=args.beliefs, n_observations=args.beliefs * 2, seed=1)
        Memory.init(a)  # an older vault: init adds .gitattributes and the driver
        sh(["git", "init", "-q", "--bare", str(tmp / "remote.git")])
        sh(["git", "remote", "add", "origin", str(tmp / "remote.git")], cwd=a)
        sync_api.sync(Memory(a), index=False)
        sh(EPIMEM + ["clone", "--no-index", str(tmp / "remote.git"), str(tmp / "b")])
        b = tmp / "b"
        setup = time.perf_counter() - t0

        noop, base, noop_cpu = [], [], []
        for _ in range(args.runs):
            base.append(sh(["sh", "-c", "git fetch -q origin && git merge -q --ff-only origin/main"], cwd=b))
            noop.append(sh(EPIMEM + ["--vault", str(b), "sync", "--no-index"]))
            noop_cpu.append(CPU[-1])

        pool = sorted(p.stem for p in (a / "beliefs").glob("*.md"))
        rng = random.Random(7)
        hot = rng.sample(pool, min(300, len(pool)))
        t = time.perf_counter()
        start = date(2026, 12, 1)
        obs = work(a, start, args.days, hot, random.Random(1), "a") + work(b, start, args.days, hot,
                                                                           random.Random(2), "b")
        recording = time.perf_counter() - t
        sh(EPIMEM + ["--vault", str(a), "sync", "--no-index"])
        sh(["git", "fetch", "-q", "origin"], cwd=b)
        theirs = set(subprocess.run(["git", "diff", "--name-only", "HEAD...origin/main"], cwd=b,
                                    capture_output=True, text=True).stdout.split())
        ours = set(subprocess.run(["git", "diff", "--name-only", "origin/main...HEAD"], cwd=b,
                                  capture_output=True, text=True).stdout.split())
        # Each run merges in fresh copies of machine B and of the remote (the merge pushes),
        # alternating with the baseline: git alone merging the same commits in another copy
        # (the driver `true` keeps one side of each file both changed, so git never stops).
        import shutil

        merges, git_merges, git_pushes, merge_cpu = [], [], [], []
        for r in range(args.merge_runs):
            run_dir = tmp / f"run{r}"
            for name in ("b", "base"):
                shutil.copytree(tmp / "remote.git", run_dir / f"remote-{name}.git", symlinks=True)
                shutil.copytree(b, run_dir / name, symlinks=True)
                sh(["git", "remote", "set-url", "origin", str(run_dir / f"remote-{name}.git")], cwd=run_dir / name)
            git_merges.append(sh(["git", "-c", "merge.epimem.driver=true", "merge", "-q", "--no-edit",
                                  "origin/main"], cwd=run_dir / "base"))
            git_pushes.append(sh(["git", "push", "-q", "origin", "HEAD:refs/heads/main"], cwd=run_dir / "base"))
            merges.append(sh(EPIMEM + ["--vault", str(run_dir / "b"), "sync", "--no-index"]))
            merge_cpu.append(CPU[-1])
        if args.profile:
            import cProfile

            run_dir = tmp / "profile"
            shutil.copytree(tmp / "remote.git", run_dir / "remote.git", symlinks=True)
            shutil.copytree(b, run_dir / "b", symlinks=True)
            sh(["git", "remote", "set-url", "origin", str(run_dir / "remote.git")], cwd=run_dir / "b")
            real_run = sync_api._Git.run

            def timed(self, *a, **k):
                t = time.perf_counter()
                try:
                    return real_run(self, *a, **k)
                finally:
                    print(f"git {' '.join(a)[:100]}: {time.perf_counter() - t:.3f} s", file=sys.stderr)

            sync_api._Git.run = timed
            cProfile.runctx("sync_api.sync(Memory(p), index=False)", globals(), {"p": run_dir / "b", **globals()},
                            args.profile)
        b = tmp / "run0" / "b"
        merge_s, git_merge_s = statistics.median(merges), statistics.median(git_merges)
        # the synthetic vault has no problems of its own: any problem here is the merge's
        problems = [str(p) for p in Memory(b).validate()]
        markers = int(subprocess.run(["git", "grep", "-c", "-E", "^(<<<<<<<|>>>>>>>) "], cwd=b,
                                     capture_output=True, text=True).stdout.count("\n"))
        result = {
            "beliefs": args.beliefs, "runs": args.runs, "setup_s": round(setup, 1),
            "noop_sync_median_s": round(statistics.median(noop), 3),
            "baseline_fetch_merge_median_s": round(statistics.median(base), 3),
            "noop_overhead_s": round(statistics.median(noop) - statistics.median(base), 3),
            "noop_sync_cpu_median_s": round(statistics.median(noop_cpu), 3),
            "days": args.days, "observations_recorded": obs, "recording_s": round(recording, 1),
            "files_changed_on_both_sides": len(ours & theirs), "merge_sync_median_s": round(merge_s, 2),
            "merge_sync_runs_s": [round(x, 2) for x in merges],
            "merge_sync_cpu_median_s": round(statistics.median(merge_cpu), 2),
            "load_average_1min": round(os.getloadavg()[0], 1),
            "baseline_git_merge_median_s": round(git_merge_s, 2),
            "baseline_git_push_median_s": round(statistics.median(git_pushes), 2),
            "baseline_git_merge_and_push_median_s": round(statistics.median(
                [m + p for m, p in zip(git_merges, git_pushes)]), 2),
            "validate_problems_after_merge": problems[:5], "files_with_conflict_markers": markers,
        }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
