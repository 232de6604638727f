"""Benchmark of the vault core's hot paths, each beside a baseline run in the same loop.

    python bench/bench_core.py [--sizes 1000,10000] [--runs 15] [--out bench/out/core.json]

For each size it generates a synthetic vault (bench/synth.py: N beliefs, 5·N observations),
then measures, alternating each measurement with its baseline so machine noise hits both:

- observe: `Memory.observe` of 3 observations (one session, three beliefs) including the
  commit, through the Python API — beside a baseline that writes the same three belief files
  and commits them with plain `git add` + `git commit` (the floor git sets);
- `epimem belief list --json` as a fresh process — beside a baseline process that starts
  Python and reads every belief file (the floor of any tool that reads the vault);
- `epimem validate` as a fresh process — beside the same baseline.

Medians are reported (and the ratio to the baseline). Budgets from the issue, at 10,000
beliefs and 50,000 observations: observe ≤ 300 ms, list ≤ 1.5 s, validate ≤ 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
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

import epimem  # noqa: E402

EPIMEM = [sys.executable, "-m", "epimem"]
READ_ALL = ("import os,sys\nd=os.path.join(sys.argv[1],'beliefs')\n"
            "n=0\nfor f in os.listdir(d):\n    n+=len(open(os.path.join(d,f),'rb').read())\nprint(n)")


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def run(cmd: list[str], env=None) -> None:
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)


def bench_size(n: int, runs: int, workdir: Path) -> dict:
    root = workdir / f"vault-{n}"
    t_gen = timed(lambda: make_vault(root, n_beliefs=n, n_observations=5 * n, seed=1))
    lift_session_bound(root)  # every run is a session name of its own, none counted (rule 9)
    env = {**os.environ, "EPIMEM_TODAY": "2026-11-30"}
    mem = epimem.open(root, today="2026-11-30")
    ids = [b.id for b in mem.beliefs()][: 3 * (runs + 2)]
    mem.beliefs()  # warm the parse cache as a user's second command would find it

    observe, observe_base = [], []
    for i in range(runs):
        batch = [{"connects": ids[3 * i + k], "strength": "confirming", "evidence": f"bench run {i} item {k}",
                  "basis": "behavioral", "session": f"bench-{i}"} for k in range(3)]
        observe.append(timed(lambda batch=batch: mem.observe(batch)))
        # baseline: the same kind of write, done with nothing but git
        files = [root / "beliefs" / f"{ids[3 * (runs + 1) + k % 3]}.md" for k in range(3)]

        def git_only(files=files, i=i):
            for f in files:
                with open(f, "a") as fh:
                    fh.write(f"- 2026-11-30 · confirming — baseline {i}\n")
            subprocess.run(["git", "add", "--", *map(str, files)], cwd=root, check=True)
            subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m",
                            f"baseline {i}", "--", *map(str, files)], cwd=root, check=True)
        observe_base.append(timed(git_only))

    listing, validate, read_base = [], [], []
    for _ in range(runs):
        listing.append(timed(lambda: run(EPIMEM + ["--vault", str(root), "belief", "list", "--json"], env)))
        read_base.append(timed(lambda: run([sys.executable, "-c", READ_ALL, str(root)])))
        validate.append(timed(lambda: run(EPIMEM + ["--vault", str(root), "validate"], env)))
    # a cold cache: what the first command after a clone pays
    cold = []
    for _ in range(max(3, runs // 5)):
        for name in ("beliefs.marshal", "beliefs.json"):  # this tree's cache, and an older tree's
            (root / ".epimem" / "cache" / name).unlink(missing_ok=True)
        cold.append(timed(lambda: run(EPIMEM + ["--vault", str(root), "belief", "list", "--json"], env)))

    med = lambda xs: round(statistics.median(xs) * 1000, 1)  # noqa: E731
    return {
        "beliefs": n, "observations": 5 * n, "generate_s": round(t_gen, 1), "runs": runs,
        "observe_3_ms": med(observe), "observe_baseline_git_ms": med(observe_base),
        "list_json_ms": med(listing), "list_json_cold_cache_ms": med(cold),
        "validate_ms": med(validate), "read_all_baseline_ms": med(read_base),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--out", default=str(HERE / "out" / "core.json"))
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            r = bench_size(n, args.runs, Path(tmp))
            results.append(r)
            print(json.dumps(r), flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
