"""Start-up time of the console script, beside `python -c pass`, on the 10,000-belief vault.

    python bench/bench_startup.py [--beliefs 10000] [--runs 30] [--out bench/out/startup.json]

Generates a synthetic vault (bench/synth.py) and its context cache, then runs
as fresh processes, in one alternating loop (so machine noise hits all alike):

- `python -c pass`: the interpreter alone, the floor of any Python command;
- `epimem --version`;
- `epimem --help` (the declarations of every command, rendered; no command is run);
- `epimem --vault V hook session-start` and `epimem hook session-start --vault V`,
  both with `source: resume` (no counting, no background commit), to show that
  the global option before `hook` no longer goes through Typer.

Every command runs on the interpreter running this script (a `python3` on a
PATH may be a shim that costs more than what is measured) with bytecode
caching on, as an installed package has it: the first runs, not counted,
write the `.pyc` files. Prints the medians and each as a multiple of
`python -c pass`.

With `--baseline-src DIR` (another checkout, e.g. of main: `git worktree add /tmp/main main`)
the same commands also run as `python -m epimem` from that tree and from this one, in the same
loop, so the two versions are measured under the same load.

Budgets: `--help` and `--version` ≤ 150 ms median at 10k beliefs (issue 8); `--help` ≤ 3 ×
`python -c pass` (issue 27); `--vault V hook session-start` as fast as `hook session-start --vault V`.
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

from synth import make_vault  # noqa: E402

EPIMEM = str(Path(sys.executable).parent / "epimem")
WARMUP = 3


def timed(cmd: list[str], env: dict, stdin: str = "", src: str | None = None) -> float:
    if src is not None:
        env = {**env, "PYTHONPATH": src}
    t = time.perf_counter()
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr}")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--beliefs", type=int, default=10000)
    ap.add_argument("--observations", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--out", default=str(HERE / "out" / "startup.json"))
    ap.add_argument("--baseline-src", help="another checkout of epimem to time beside this one")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(dir=HERE / "out" if (HERE / "out").is_dir() else None) as tmp:
        tmp = Path(tmp)
        root = tmp / "vault"
        make_vault(root, n_beliefs=args.beliefs, n_observations=args.observations, seed=1)
        env = {**os.environ, "EPIMEM_TODAY": "2026-11-30"}
        env.pop("EPIMEM_VAULT", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode cached
        subprocess.run([sys.executable, "-m", "epimem.store.context_cache", str(root)], check=True, env=env)
        project = tmp / "billing-service"
        (project / ".git").mkdir(parents=True)
        payload = json.dumps({"session_id": "bench", "cwd": str(project), "hook_event_name": "SessionStart",
                              "source": "resume"})
        commands = {
            "python -c pass": ([sys.executable, "-c", "pass"], "", None),
            "epimem --version": ([EPIMEM, "--version"], "", None),
            "epimem --help": ([EPIMEM, "--help"], "", None),
            "epimem --vault V hook session-start": ([EPIMEM, "--vault", str(root), "hook", "session-start"],
                                                    payload, None),
            "epimem hook session-start --vault V": ([EPIMEM, "hook", "session-start", "--vault", str(root)],
                                                    payload, None),
        }
        if args.baseline_src:
            for tree, src in (("baseline", str(Path(args.baseline_src).resolve())), ("this tree", str(HERE.parent))):
                for what, argv, stdin in (("--help", ["--help"], ""), ("recall --help", ["recall", "--help"], ""),
                                          ("hook session-start", ["hook", "session-start", "--vault", str(root)],
                                           payload)):
                    commands[f"python -m epimem {what} [{tree}]"] = ([sys.executable, "-m", "epimem", *argv],
                                                                     stdin, src)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for i in range(args.runs + WARMUP):
            for name, (cmd, stdin, src) in commands.items():
                dt = timed(cmd, env, stdin, src)
                if i >= WARMUP:
                    times[name].append(dt)

    base = statistics.median(times["python -c pass"])
    result = {"beliefs": args.beliefs, "runs": args.runs, "python": sys.version.split()[0], "commands": {
        name: {"median_ms": round(statistics.median(ts) * 1000, 1),
               "p90_ms": round(sorted(ts)[int(0.9 * (len(ts) - 1))] * 1000, 1),
               "over_python": round(statistics.median(ts) / base, 2)} for name, ts in times.items()}}
    print(json.dumps(result, indent=2))
    print()
    for name, r in result["commands"].items():
        print(f"{name:<40} median {r['median_ms']:>7} ms  (p90 {r['p90_ms']:>7} ms)  {r['over_python']:>5}x python")
    print("budget: --help and --version <= 150 ms, --help <= 3x python -c pass; the two hook spellings alike.")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
