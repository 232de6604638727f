"""Benchmark of the mirror at scale.

    python bench/bench_mirror.py [--beliefs 10000] [--observations 50000] [--runs 7]
                                 [--vault PATH] [--out bench/out/mirror.json]

Generates a synthetic vault with bench/synth.py (unless --vault names one), then
measures, as fresh processes the way a user runs them (Python start-up, imports,
reading every file, analysis, rendering, printing):

- `epimem mirror audit --json`          budget at 10,000 beliefs: ≤ 2 s median
- `epimem mirror portrait` (offline)    budget at 10,000 beliefs: ≤ 3 s median
- `epimem mirror gut-check --json` and `epimem mirror interview --json`, for reference;

and, in one process, the pure analyses alone on an already-loaded snapshot, so
the cost of reading the vault and the cost of the mirror can be told apart.
The first run of each command is a warm-up (it fills the vault's parse cache)
and is not counted.
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

TODAY = "2026-11-30"  # synth.py's vaults end on 2026-11-28
BUDGETS = {"audit --json": 2.0, "portrait": 3.0}


def timed_process(cmd: list[str], env: dict) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def in_process(root: Path, runs: int) -> dict[str, float]:
    from epimem.api.memory import Memory
    from epimem.mirror import render
    from epimem.mirror.audit import audit
    from epimem.mirror.gutcheck import gut_check
    from epimem.mirror.interview import interview
    from epimem.mirror.portrait import portrait_brief

    mem = Memory(root, today=TODAY)
    t = time.perf_counter()
    snap = mem.snapshot()
    load = time.perf_counter() - t
    params = mem.params
    out = {"load snapshot": load}
    steps = {
        "audit": lambda: render.audit_markdown(audit(snap, params, mem.today)),
        "portrait": lambda: render.portrait_markdown(portrait_brief(snap, params, mem.today)),
        "gut-check": lambda: render.gut_check_markdown(gut_check(snap, params, mem.today)),
        "interview": lambda: render.interview_markdown(interview(snap, params, mem.today)),
    }
    for name, fn in steps.items():
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        out[name] = statistics.median(times)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--beliefs", type=int, default=10000)
    ap.add_argument("--observations", type=int, default=None, help="default: 5 per belief")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--vault", type=Path, default=None, help="use this vault instead of generating one")
    ap.add_argument("--out", type=Path, default=HERE / "out" / "mirror.json")
    args = ap.parse_args(argv)

    tmp = None
    root = args.vault
    if root is None:
        from synth import make_vault

        tmp = tempfile.TemporaryDirectory(prefix="epimem-bench-mirror-")
        root = Path(tmp.name) / "vault"
        n_obs = args.observations if args.observations is not None else 5 * args.beliefs
        t = time.perf_counter()
        make_vault(root, n_beliefs=args.beliefs, n_observations=n_obs, seed=0)
        print(f"generated {args.beliefs} beliefs / {n_obs} observations in "
              f"{time.perf_counter() - t:.1f} s", file=sys.stderr)

    env = {**os.environ, "EPIMEM_TODAY": TODAY, "ANONYMIZED_TELEMETRY": "False"}
    env.pop("ANTHROPIC_API_KEY", None)  # the offline portrait only
    epimem = [sys.executable, "-m", "epimem", "--vault", str(root), "mirror"]
    commands = {
        "audit --json": epimem + ["audit", "--json"],
        "portrait": epimem + ["portrait"],
        "gut-check --json": epimem + ["gut-check", "--json"],
        "interview --json": epimem + ["interview", "--json"],
    }
    # Baseline, run alternately with each command: a fresh process that only reads the
    # vault into a snapshot (what any whole-vault view must pay), so machine noise hits both.
    baseline_cmd = [sys.executable, "-c",
                    "import sys, datetime; from epimem.store.vault import Vault; "
                    f"Vault(sys.argv[1]).snapshot(datetime.date.fromisoformat('{TODAY}'))", str(root)]
    results: dict[str, dict] = {}
    baseline: list[float] = []
    for name, cmd in commands.items():
        timed_process(cmd, env)  # warm-up: fills the parse cache
        times = []
        for _ in range(args.runs):
            times.append(timed_process(cmd, env))
            baseline.append(timed_process(baseline_cmd, env))
        results[name] = {"median_s": round(statistics.median(times), 3),
                         "min_s": round(min(times), 3), "max_s": round(max(times), 3),
                         "budget_s": BUDGETS.get(name)}
    base_median = statistics.median(baseline)
    for r in results.values():
        r["vs_read_baseline"] = round(r["median_s"] / base_median, 2)
    analysis_s = {k: round(v, 3) for k, v in in_process(root, args.runs).items()}

    report = {"beliefs": args.beliefs, "runs": args.runs, "today": TODAY,
              "python": sys.version.split()[0], "cpus": os.cpu_count(),
              "read_baseline_median_s": round(base_median, 3),
              "commands": results, "in_process": analysis_s}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")

    print(f"\nmirror at {args.beliefs} beliefs, median of {args.runs} fresh processes:")
    print(f"baseline (a process that only reads the vault): {base_median:.2f} s median")
    print("| command | median | min–max | × baseline | budget |")
    print("|---|---|---|---|---|")
    for name, r in results.items():
        budget = f"≤ {r['budget_s']:g} s" if r["budget_s"] else "—"
        print(f"| `epimem mirror {name}` | {r['median_s']:.2f} s | {r['min_s']:.2f}–{r['max_s']:.2f} s "
              f"| {r['vs_read_baseline']:.2f} | {budget} |")
    print("\nin one process, snapshot already loaded (analysis + markdown):")
    for name, v in analysis_s.items():
        print(f"- {name}: {v:.3f} s")
    ok = all(r["median_s"] <= r["budget_s"] for r in results.values() if r["budget_s"])
    if tmp is not None:
        tmp.cleanup()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
