"""The soak's writers against two versions of epimem, alternating in the same loop.

    python bench/bench_lock.py --baseline REV [--writers 8] [--ops 12] [--rounds 1]

REV is checked out into a temporary git worktree (for example the commit before a change to the
vault lock); each round runs bench/soak.py's `run` once with that tree first on the path, then
with this one. Prints per run: write latency p50/p99, lock wait and hold (from
EPIMEM_LOCK_STATS, where the version records them), errors, commits landed against expected.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def one(tree: Path, writers: int, ops: int, work: Path) -> dict:
    code = (f"import json, sys; sys.path.insert(0, {str(HERE)!r}); import soak; "
            f"f = soak.run(__import__('pathlib').Path({str(work / 'vault')!r}), {writers}, {ops}); "
            "import epimem; f['epimem'] = epimem.__file__; "
            "print(json.dumps({k: f.get(k) for k in ('wall_s', 'errors', 'commits_expected', 'commits_landed', "
            "'write_latency_s', 'lock_wait_s', 'lock_hold_s', 'lock_holds', 'lock_phases_s', 'observations_lost', "
            "'observations_doubled', 'validate_ok', 'fsck_ok', 'epimem')}))")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    # From a neutral folder: `python -c` puts the working directory first on sys.path, and the
    # checkout's own epimem/ would shadow the tree under test.
    work.mkdir(parents=True, exist_ok=True)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=work)
    if p.returncode != 0:
        raise SystemExit(p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="the git revision to compare against")
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--ops", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--tmp", type=Path, default=None, help="where the trees and vaults go (default: the system's)")
    a = ap.parse_args(argv)
    if a.tmp is not None:
        a.tmp.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="epimem-bench-lock-", dir=a.tmp))
    base = tmp / "baseline"
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), a.baseline], cwd=REPO, check=True)
    rows = []
    try:
        for r in range(a.rounds):
            for name, tree in (("baseline", base), ("current", REPO)):
                work = tmp / f"{name}-{r}"
                load = os.getloadavg()[0]
                rows.append({"round": r, "tree": name, "load_1min": round(load, 2),
                             **one(tree, a.writers, a.ops, work)})
                shutil.rmtree(work, ignore_errors=True)
                print(json.dumps(rows[-1]), flush=True)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=REPO)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
