"""Embedding cost of each offline embedder, in the same loop: load time, texts
per second on real vault texts (bench/synth.py beliefs), one query's latency.

    python bench/bench_embedders.py [--texts 1000] [--embedders wordllama,minilm]

Each embedder loads in a fresh process (what a CLI call pays), then embeds the
same texts; rounds alternate between the embedders so a busy machine slows
them alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[3])
t = time.perf_counter()
from epimem.recall.embed import get_embedder
e = get_embedder(sys.argv[1])
load = time.perf_counter() - t
texts = json.loads(open(sys.argv[2]).read())
e.embed(texts[:8])
t = time.perf_counter()
e.embed(texts)
bulk = time.perf_counter() - t
q = []
for s in texts[:20]:
    t = time.perf_counter()
    e.embed([s])
    q.append(time.perf_counter() - t)
q.sort()
print(json.dumps({"load_s": load, "per_s": len(texts) / bulk, "query_ms": q[len(q) // 2] * 1000}))
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--texts", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--embedders", default="wordllama,minilm")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parent))
    import tempfile

    import synth

    from epimem.recall.manifest import parse_file, scan
    from epimem.store.vault import Vault

    tmp = Path(tempfile.mkdtemp(prefix="epimem-embed-bench-"))
    synth.make_vault(tmp / "v", n_beliefs=args.texts, n_observations=args.texts, seed=0, commit=False,
                     labels_path=tmp / "labels.json")
    texts = []
    reader = Vault(tmp / "v").reader(date.today())
    for rel in sorted(scan(tmp / "v")):
        texts.extend(it.text for it in parse_file(rel, (tmp / "v" / rel).read_bytes(), reader).items)
    texts = texts[:args.texts]
    (tmp / "texts.json").write_text(json.dumps(texts))
    names = args.embedders.split(",")
    res: dict[str, list[dict]] = {n: [] for n in names}
    for _ in range(args.rounds):
        for n in names:
            p = subprocess.run([sys.executable, "-c", CHILD, n, str(tmp / "texts.json"), str(HERE.parent)],
                               capture_output=True, text=True, check=True)
            res[n].append(json.loads(p.stdout))
    for n, rows in res.items():
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        print(f"{n}: load {med['load_s']:.2f}s, {med['per_s']:.0f} texts/s, one query {med['query_ms']:.1f} ms "
              f"({len(texts)} texts, {args.rounds} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
