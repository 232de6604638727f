"""What the recall index's integrity check costs (docs/decisions.md, "Index integrity"), in the tree
this script is run from, on a vault whose index exists:

    PYTHONPATH=. .venv/bin/python bench/bench_index_integrity.py V

Prints the medians of warm recall (a recaller holding the state: the check does not run), of one
`load_state` (what a fresh recall pays, the check included where the tree has it) and, where the
tree has them, of the check alone (`damage`) and of what `index status` reads (`verify`). Run it
from a baseline tree (`git archive main`) and from this one in turn.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def _median_ms(fn, n: int) -> tuple[float, float]:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    times.sort()
    return statistics.median(times) * 1000, times[int(len(times) * 0.95)] * 1000


def main(argv=None) -> int:
    os.environ.setdefault("EPIMEM_TODAY", "2026-11-30")
    from bench_recall import QUERIES

    from epimem.recall import manifest
    from epimem.recall.api import Recaller

    root = Path((argv or sys.argv[1:])[0]).absolute()
    r = Recaller(root, auto_sync=False)
    r.recall(QUERIES[0])
    queries = iter(QUERIES * 100)
    warm, warm95 = _median_ms(lambda: r.recall(next(queries), limit=5), 3 * len(QUERIES))
    paths = manifest.Paths(root)
    load, _ = _median_ms(lambda: manifest.load_state(paths), 15)
    out = f"warm recall {warm:.1f} ms (p95 {warm95:.1f}); load_state {load:.1f} ms"
    if hasattr(manifest, "damage"):
        m = manifest.load_manifest(paths)
        check, _ = _median_ms(lambda: manifest.damage(paths, m), 2000)
        status, _ = _median_ms(lambda: manifest.verify(paths, m), 20)
        out += f"; the check {check * 1000:.0f} µs; status's full read {status:.1f} ms"
    print(f"{Path(manifest.__file__).parents[2].name}: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
