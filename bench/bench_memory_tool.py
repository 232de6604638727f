"""The memory tool's commands beside the API reads they render, in one alternating loop.

    python bench/bench_memory_tool.py [--beliefs 500] [--runs 9] [--vault V] [--json OUT]

On a synthetic vault (bench/synth.py) with warm caches, in one process, each measure alternates
with its baseline so the machine's load hits both alike (median of `runs`):

- `view /memories` against the reads it renders: the listing of the strongest 30, the open
  tensions and the session context (`Memory.listing`, `Memory.tensions`, `api/context`);
- `view /memories/beliefs/<id>.md` against `Memory.shown_belief` of the same belief;
- `insert` of a confirming line (one observation, one commit) against `Memory.observe` of the
  same observation, each in a session of its own so rule 9 never refuses one.

The difference is what the memory tool adds to the read path and the write path it calls.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--beliefs", type=int, default=500)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--vault", help="an existing vault (default: a synthetic one in a temporary folder)")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args(argv)

    from epimem.api.context import session_context
    from epimem.api.memory import Memory
    from epimem.integrations.anthropic_memory import EpimemMemoryTool

    root = Path(args.vault) if args.vault else Path(tempfile.mkdtemp(prefix="epimem-bench-")) / "vault"
    if not args.vault:
        from synth import lift_session_bound, make_vault

        make_vault(root, n_beliefs=args.beliefs, n_observations=args.beliefs * 5, seed=0)
        lift_session_bound(root)  # each run is a conversation nobody counted (rule 9: three a day)
    mem = Memory(root)
    bid = mem.listing(status="active", limit=1).beliefs[0].id
    path = f"/memories/beliefs/{bid}.md"
    EpimemMemoryTool(root).call({"command": "view", "path": "/memories"})  # warm every cache once

    def api_root():
        m = Memory(root)
        m.listing(status="active", limit=30)
        m.tensions()
        session_context(str(root), str(Path.cwd()), m.today)

    runs: dict[str, list[float]] = {k: [] for k in ("view /memories", "  its reads", "view a belief", "  its read",
                                                    "insert (observe)", "  Memory.observe")}
    for n in range(args.runs):
        runs["view /memories"].append(timed(lambda: EpimemMemoryTool(root).call(
            {"command": "view", "path": "/memories"})))
        runs["  its reads"].append(timed(api_root))
        runs["view a belief"].append(timed(lambda: EpimemMemoryTool(root).call({"command": "view", "path": path})))
        runs["  its read"].append(timed(lambda: Memory(root).shown_belief(bid)))
        runs["insert (observe)"].append(timed(lambda n=n: EpimemMemoryTool(root, session=f"bench-tool-{n}").call(
            {"command": "insert", "path": path, "insert_line": 0,
             "insert_text": f"confirming: did it again, run {n}"})))
        runs["  Memory.observe"].append(timed(lambda n=n: Memory(root).observe(
            [{"connects": bid, "strength": "confirming", "evidence": f"did it again, api run {n}"}],
            source="bench", session=f"bench-api-{n}")))
    out = {k: round(statistics.median(v), 1) for k, v in runs.items()}
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"{args.beliefs if not args.vault else root} beliefs, median of {args.runs} runs (ms), load {' '.join(load)}")
    for k, v in out.items():
        print(f"  {k:<20} {v:>8.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"beliefs": args.beliefs, "load": load, "ms": out}, indent=1))
    if not args.vault:
        shutil.rmtree(root.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
