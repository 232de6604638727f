"""What checking a hand edit before an observation costs (issue 9: `hand_edits.settle`).

    python bench/bench_observe_settle.py [--beliefs 200] [--rounds 20] [--dir /tmp/NAME]

One vault with N beliefs; each round records one observation with the check and one
without it (the check replaced by a no-op, the baseline), alternating, on fresh sessions so
rule 9 never refuses. Prints the median and spread of each, their ratio, and the 1-minute
load average before and after (the machine is shared: compare the ratio, not the ms).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--beliefs", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    from epimem.api import hand_edits
    from epimem.api.memory import Memory

    base = Path(tempfile.mkdtemp(prefix="settle-", dir=a.dir))
    mem, _ = Memory.init(base / "v", today="2026-11-30")
    from synth import lift_session_bound

    lift_session_bound(mem.root)  # each round names a session nobody counted (rule 9: three a day)
    for i in range(a.beliefs):
        mem.add_belief(title=f"Belief number {i}", statement=f"Statement {i}.", kind="trait",
                       basis="behavioral", permanence="durable")
    real = hand_edits.settle
    times: dict[str, list[float]] = {"check": [], "baseline": []}
    load0 = os.getloadavg()[0]
    for r in range(a.rounds):
        for mode in (("check", "baseline") if r % 2 == 0 else ("baseline", "check")):
            hand_edits.settle = real if mode == "check" else (lambda mem, paths: None)  # type: ignore[assignment]
            obs = {"connects": f"belief-number-{r % a.beliefs}", "strength": "complicating",
                   "evidence": f"round {r} {mode}", "session": f"{mode}-{r}"}
            t = time.perf_counter()
            mem.observe([obs])
            times[mode].append((time.perf_counter() - t) * 1000)
    hand_edits.settle = real
    load1 = os.getloadavg()[0]
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in times.items():
        print(f"{k:9s} median {med[k]:7.1f} ms  min {min(v):7.1f}  max {max(v):7.1f}  (n={len(v)})")
    print(f"ratio check/baseline {med['check'] / med['baseline']:.2f}  "
          f"(+{med['check'] - med['baseline']:.1f} ms)  load1 {load0:.2f} → {load1:.2f}  beliefs {a.beliefs}")


if __name__ == "__main__":
    main()
