"""Benchmark of the visual mirror's page at scale (SPEC §13).

    python bench/bench_page.py [--beliefs 10000] [--observations 50000] [--commits 30] [--runs 5]
                               [--old 631e392] [--vault PATH] [--work DIR] [--out bench/out/page.json]

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

Each figure is measured for this tree and for an older one (`--old REV`, exported with
`git archive` from this repository; `--old ''` skips it), each on its own copy of the vault
(their page caches would otherwise evict each other), and beside a baseline: a fresh
`epimem mirror audit --json` of this tree, which reads the whole vault. All three run
alternately within every round, so the machine's noise hits them alike; compare ratios on a
loaded machine. Wall time and CPU time (the process and every git it ran) are both given.
The vaults' parse caches are warm throughout (a first, uncounted run of each fills them).

The last lines printed are one summary line per figure, e.g.

    page cold: 3.10 s median (old 4.02 s, 0.77×; audit --json 2.10 s, 1.48×) · CPU 2.9 s · budget ≤ 5 s: met
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

TODAY = "2026-11-30"  # synth.py's vaults end on 2026-11-28
BUDGETS = {"cold": 5.0, "cached": 1.0}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children)."""
    c, t = _cpu(), time.perf_counter()
    # Run outside any checkout: `python -m` puts the working directory first on sys.path.
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, cwd=cwd)
    return time.perf_counter() - t, _cpu() - c


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


def export_tree(rev: str, dst: Path) -> Path:
    """The `epimem` package as it was at `rev`, for PYTHONPATH."""
    dst.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev, "epimem"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dst)], input=archive, check=True)
    return dst


def copy_vault(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)  # copy2: mtimes kept, so the parse caches stay valid
    # A copied index has stale stat data: let git refresh it once, as any git status in the vault would.
    subprocess.run(["git", "status", "--porcelain"], cwd=dst, check=True, capture_output=True)
    return dst


def summary_line(name: str, r: dict, base: float, old: dict | None) -> str:
    parts = []
    if old is not None:
        parts.append(f"old {old['median_s']:.2f} s, {r['median_s'] / old['median_s']:.2f}×")
    parts.append(f"audit --json {base:.2f} s, {r['median_s'] / base:.2f}×")
    line = f"page {name}: {r['median_s']:.2f} s median ({'; '.join(parts)}) · CPU {r['cpu_median_s']:.2f} s"
    if old is not None:
        line += f" (old {old['cpu_median_s']:.2f} s)"
    if r["budget_s"]:
        line += f" · budget ≤ {r['budget_s']:g} s: {'met' if r['median_s'] <= r['budget_s'] else 'NOT met'}"
    return line


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--beliefs", type=int, default=10000)
    ap.add_argument("--observations", type=int, default=None, help="default: 5 per belief")
    ap.add_argument("--commits", type=int, default=30)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--old", default="631e392", help="the older tree to compare with ('' for none)")
    ap.add_argument("--vault", type=Path, default=None, help="use (a copy of) this vault instead of generating one")
    ap.add_argument("--work", type=Path, default=None, help="where the vaults go (default: a temporary directory)")
    ap.add_argument("--out", type=Path, default=HERE / "out" / "page.json")
    args = ap.parse_args(argv)

    tmp = tempfile.TemporaryDirectory(prefix="epimem-bench-page-", dir=args.work)
    work = Path(tmp.name)
    if args.vault is None:
        from synth import lift_session_bound, make_vault

        root = work / "vault"
        n_obs = args.observations if args.observations is not None else 5 * args.beliefs
        t = time.perf_counter()
        make_vault(root, n_beliefs=args.beliefs, n_observations=n_obs, seed=0)
        lift_session_bound(root)  # add_commits names a session per observation, none counted (rule 9)
        add_commits(root, args.commits)
        print(f"generated {args.beliefs} beliefs / {n_obs} observations / {args.commits} commits in "
              f"{time.perf_counter() - t:.1f} s", file=sys.stderr)
    else:
        root = copy_vault(args.vault, work / "vault")

    base_env = {**os.environ, "EPIMEM_TODAY": TODAY, "ANONYMIZED_TELEMETRY": "False"}
    out_file = work / "page.html"
    variants: dict[str, tuple[list[str], dict, Path]] = {}

    def page_cmd(vault: Path) -> list[str]:
        return [sys.executable, "-m", "epimem", "--vault", str(vault), "mirror", "page", "--out", str(out_file)]

    variants["new"] = (page_cmd(root), {**base_env, "PYTHONPATH": str(REPO)}, root)
    if args.old:
        old_root = copy_vault(root, work / "vault-old")
        old_tree = export_tree(args.old, work / "old-tree")
        variants["old"] = (page_cmd(old_root), {**base_env, "PYTHONPATH": str(old_tree)}, old_root)
    baseline_cmd = [sys.executable, "-m", "epimem", "--vault", str(root), "mirror", "audit", "--json"]
    baseline_env = variants["new"][1]
    for v, (_, env, _) in variants.items():  # each variant runs the tree it names, not another
        where = subprocess.run([sys.executable, "-c", "import epimem; print(epimem.__file__)"], env=env, cwd=work,
                               check=True, capture_output=True, text=True).stdout.strip()
        print(f"{v} tree: {where}", file=sys.stderr)

    def drop(vault: Path, *names: str) -> None:
        for n in names:
            (vault / ".epimem" / n).unlink(missing_ok=True)

    prepare = {
        "cold": ("page.html", "page.key", "history.json"),
        "history cached": ("page.html", "page.key"),
        "cached": (),
    }
    for cmd, env, _ in variants.values():  # warm-up: fills the parse caches and the history cache
        timed(cmd, env, work)
    timed(baseline_cmd, baseline_env, work)
    load_start = os.getloadavg()[0]
    loads: list[float] = []
    results: dict[str, dict[str, dict]] = {v: {} for v in variants}
    baseline: list[float] = []
    for name, names in prepare.items():
        times: dict[str, list[tuple[float, float]]] = {v: [] for v in variants}
        for _ in range(args.runs):
            for v, (cmd, env, vault) in variants.items():
                drop(vault, *names)
                times[v].append(timed(cmd, env, work))
            baseline.append(timed(baseline_cmd, baseline_env, work)[0])
            loads.append(os.getloadavg()[0])
        for v, ts in times.items():
            wall = [w for w, _ in ts]
            results[v][name] = {"median_s": round(statistics.median(wall), 3), "min_s": round(min(wall), 3),
                                "max_s": round(max(wall), 3),
                                "cpu_median_s": round(statistics.median(c for _, c in ts), 3),
                                "budget_s": BUDGETS.get(name)}
    base = statistics.median(baseline)
    size_kb = out_file.stat().st_size // 1024
    report = {"beliefs": args.beliefs, "commits_added": args.commits, "runs": args.runs, "today": TODAY,
              "old": args.old, "python": sys.version.split()[0], "cpus": os.cpu_count(),
              "load_start": load_start, "load_median": statistics.median(loads), "load_max": max(loads),
              "baseline_audit_json_median_s": round(base, 3), "page_kb": size_kb, "page": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")

    print(f"\nmirror page at {args.beliefs} beliefs, median of {args.runs} fresh processes; 1-minute load "
          f"average {load_start:.1f} at the start, {statistics.median(loads):.1f} median, {max(loads):.1f} max "
          f"({os.cpu_count()} CPUs); page {size_kb} KB; old tree: {args.old or '—'}")
    print("| page build | this tree (min–max) | CPU | " + ("old tree | CPU | " if args.old else "") + "budget |")
    print("|---|---|---|" + ("---|---|" if args.old else "") + "---|")
    ok = True
    for name in prepare:
        r = results["new"][name]
        budget = f"≤ {r['budget_s']:g} s" if r["budget_s"] else "—"
        row = f"| {name} | {r['median_s']:.2f} s ({r['min_s']:.2f}–{r['max_s']:.2f}) | {r['cpu_median_s']:.2f} s | "
        if args.old:
            o = results["old"][name]
            row += f"{o['median_s']:.2f} s ({o['min_s']:.2f}–{o['max_s']:.2f}) | {o['cpu_median_s']:.2f} s | "
        print(row + budget + " |")
        if r["budget_s"] and r["median_s"] > r["budget_s"]:
            ok = False
    print(f"baseline `mirror audit --json`: {base:.2f} s median\n")
    for name in prepare:
        print(summary_line(name, results["new"][name], base, results["old"][name] if args.old else None))
    tmp.cleanup()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
