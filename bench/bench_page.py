"""Benchmark of the visual mirror's page at scale (SPEC §13).

    python bench/bench_page.py [--beliefs 10000] [--observations 50000] [--commits 30] [--runs 5]
                               [--vault PATH] [--out bench/out/page.json]

Generates a synthetic vault with bench/synth.py (unless --vault names one), adds
`--commits` real observe commits through the API (so the history walk has
history to walk, not one commit), then measures `epimem mirror page --out FILE`
as fresh processes, the way a user runs it:

- **cold**: no page cache and no history cache (`.epimem/page.*`, `.epimem/history.json`
  deleted before each run): every belief's history walked from git, the page rendered.
  Budget at 10,000 beliefs: ≤ 5 s.
- **history cached**: the page cache deleted, the history cache kept (what a changed
  vault costs: one edit, then the page again).
- **cached**: nothing changed since the last build. Budget: ≤ 1 s.

The baseline, run alternately with each measurement so machine noise hits both, is
`epimem mirror audit --json` (a fresh process that reads the whole vault). The vault's
parse cache is warm throughout (the first run fills it and is not counted).
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
BUDGETS = {"cold": 5.0, "cached": 1.0}


def timed(cmd: list[str], env: dict) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def add_commits(root: Path, n: int) -> None:
    """`n` observe commits on the strongest beliefs, each its own session, on days after the vault's end."""
    from datetime import date, timedelta

    from epimem.api.memory import Memory

    mem = Memory(root, today=TODAY)
    ids = [b.id for b in sorted(mem.beliefs(status="active"), key=lambda b: -b.confidence)[:n]]
    for i, bid in enumerate(ids):
        day = (date(2026, 11, 29) + timedelta(days=i % 2)).isoformat()
        Memory(root, today=day).observe([{"connects": bid, "strength": "confirming" if i % 3 else "contradicting",
                                          "evidence": f"bench observation {i}", "basis": "behavioral",
                                          "session": f"bench-{i}"}])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--beliefs", type=int, default=10000)
    ap.add_argument("--observations", type=int, default=None, help="default: 5 per belief")
    ap.add_argument("--commits", type=int, default=30)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--vault", type=Path, default=None, help="use this vault instead of generating one")
    ap.add_argument("--out", type=Path, default=HERE / "out" / "page.json")
    args = ap.parse_args(argv)

    tmp = tempfile.TemporaryDirectory(prefix="epimem-bench-page-")
    root = args.vault
    if root is None:
        from synth import make_vault

        root = Path(tmp.name) / "vault"
        n_obs = args.observations if args.observations is not None else 5 * args.beliefs
        t = time.perf_counter()
        make_vault(root, n_beliefs=args.beliefs, n_observations=n_obs, seed=0)
        add_commits(root, args.commits)
        print(f"generated {args.beliefs} beliefs / {n_obs} observations / {args.commits} commits in "
              f"{time.perf_counter() - t:.1f} s", file=sys.stderr)

    env = {**os.environ, "EPIMEM_TODAY": TODAY, "ANONYMIZED_TELEMETRY": "False"}
    out_file = Path(tmp.name) / "page.html"
    page = [sys.executable, "-m", "epimem", "--vault", str(root), "mirror", "page", "--out", str(out_file)]
    baseline_cmd = [sys.executable, "-m", "epimem", "--vault", str(root), "mirror", "audit", "--json"]
    internal = root / ".epimem"

    def drop(*names: str) -> None:
        for n in names:
            (internal / n).unlink(missing_ok=True)

    prepare = {
        "cold": lambda: drop("page.html", "page.key", "history.json"),
        "history cached": lambda: drop("page.html", "page.key"),
        "cached": lambda: None,
    }
    timed(page, env)  # warm-up: fills the parse cache and the history cache
    timed(baseline_cmd, env)
    results: dict[str, dict] = {}
    baseline: list[float] = []
    for name, prep in prepare.items():
        times = []
        for _ in range(args.runs):
            prep()
            times.append(timed(page, env))
            baseline.append(timed(baseline_cmd, env))
        results[name] = {"median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3),
                         "max_s": round(max(times), 3), "budget_s": BUDGETS.get(name)}
    base = statistics.median(baseline)
    size_kb = out_file.stat().st_size // 1024
    report = {"beliefs": args.beliefs, "commits_added": args.commits, "runs": args.runs, "today": TODAY,
              "python": sys.version.split()[0], "cpus": os.cpu_count(), "load": os.getloadavg()[0],
              "baseline_audit_json_median_s": round(base, 3), "page_kb": size_kb, "page": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")

    print(f"\nmirror page at {args.beliefs} beliefs, median of {args.runs} fresh processes "
          f"(load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs); page {size_kb} KB")
    print(f"baseline `mirror audit --json`: {base:.2f} s median")
    print("| page build | median | min–max | budget |")
    print("|---|---|---|---|")
    ok = True
    for name, r in results.items():
        budget = f"≤ {r['budget_s']:g} s" if r["budget_s"] else "—"
        print(f"| {name} | {r['median_s']:.2f} s | {r['min_s']:.2f}–{r['max_s']:.2f} s | {budget} |")
        if r["budget_s"] and r["median_s"] > r["budget_s"]:
            ok = False
    tmp.cleanup()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
