"""Recall quality per ranker alone and fused, per question type, and the
fusion plateau: R@5, R@10 and MRR on the subjects set (bench/recall_sets.py:
people and projects, wrong-subject distractors, paraphrases), the sample
vault and synthetic vaults (bench/synth.py, bench/recall_eval.py's queries).

    python bench/recall_quality.py                 # sets + sample + synthetic 2,000
    python bench/recall_quality.py --quick         # subjects set + sample only (what CI runs)
    python bench/recall_quality.py --grid          # RRF k × keyword weight
    python bench/recall_quality.py --embedder minilm
    python bench/recall_quality.py --json out.json

Each query's two candidate lists (keyword and semantic, filtered, 100 deep)
are computed once by the real index; fusion is then replayed with every
setting (epimem.recall.rank.fuse, the code recall runs), so the grid costs
milliseconds per point and every row compares rankers on the same lists.

recall@k = |relevant ∩ top k| / min(k, |relevant|); MRR = mean of 1 / rank of
the first relevant result within the top 20 (0 when none).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from recall_sets import TODAY  # noqa: E402

METRICS = ("R@5", "R@10", "MRR")


def metrics(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    def rec(k):
        return len(set(ranked[:k]) & relevant) / min(k, len(relevant))
    rr = next((1.0 / (i + 1) for i, x in enumerate(ranked[:20]) if x in relevant), 0.0)
    return {"R@5": rec(5), "R@10": rec(10), "MRR": rr}


def mean(rows: list[dict]) -> dict:
    n = len(rows)
    return {m: sum(r[m] for r in rows) / n for m in METRICS} | {"queries": n}


def collect(recaller, queries: list[dict]) -> list[dict]:
    """Each query's candidates, computed once by the index."""
    from epimem.recall.rank import Filters

    f = Filters.make()
    out = []
    for q in queries:
        c = recaller.candidates(q["query"], f, depth=100)
        out.append({**q, "c": c})
    return out


def replay(collected: list[dict], mode: str = "fused", *, k: int, kw_weight: float,
           conf_weight: float = 0.05) -> list[dict]:
    from epimem.recall.rank import fuse

    rows = []
    for q in collected:
        c = q["c"]
        ranked = fuse(c.keyword, c.semantic, c.confidence, limit=20, mode=mode, k=k, conf_weight=conf_weight,
                      kw_weight=kw_weight)
        ids = [c.items[r.key].id for r in ranked]
        rows.append(metrics(ids, q["relevant"]) | {"type": q["type"]})
    return rows


def by_type(rows: list[dict]) -> dict[str, dict]:
    out = {"all": mean(rows)}
    for t in dict.fromkeys(r["type"] for r in rows):
        out[t] = mean([r for r in rows if r["type"] == t])
    return out


EMBEDDER = "wordllama"


def settings_now() -> dict:
    from epimem.recall.rank import KW_WEIGHT, rrf_k_for

    return {"k": rrf_k_for(EMBEDDER), "kw_weight": KW_WEIGHT}


def report(sets: dict[str, list[dict]]) -> dict:
    """Per set and question type: each ranker alone and fused (the defaults)."""
    now = settings_now()
    out = {}
    for name, col in sets.items():
        out[name] = {
            "keyword": by_type(replay(col, "keyword", **now)),
            "semantic": by_type(replay(col, "semantic", **now)),
            "fused": by_type(replay(col, **now)),
        }
    return out


def grid(sets: dict[str, list[dict]]) -> list[dict]:
    """Every setting's R@5 / MRR per set, and its worst margin over the better single ranker."""
    now = settings_now()
    best = {}
    for name, col in sets.items():
        kw = mean(replay(col, "keyword", **now))
        se = mean(replay(col, "semantic", **now))
        best[name] = {m: max(kw[m], se[m]) for m in METRICS}
    rows = []
    for k in (1, 2, 5, 10, 20, 40, 60):
        for w in (0.5, 0.75, 1.0, 1.5, 2.0, 3.0):
            r = {"k": k, "kw_weight": w, "sets": {}}
            margins = []
            for name, col in sets.items():
                m = mean(replay(col, k=k, kw_weight=w))
                r["sets"][name] = m
                margins += [m[x] - best[name][x] for x in ("R@5", "MRR")]
            r["worst_margin"] = min(margins)
            r["mean_margin"] = sum(margins) / len(margins)
            rows.append(r)
    return rows


def build_sets(tmp: Path, *, quick: bool, embedder: str | None, beliefs: int = 2000,
               observations: int = 10000) -> tuple[dict, dict]:
    import recall_eval
    import recall_sets
    import synth

    from epimem.recall import Recaller

    timings = {}
    sets: dict[str, list[dict]] = {}
    t = time.perf_counter()
    subj = recall_sets.make_vault(tmp / "subjects")
    r = Recaller(subj, today=TODAY, embedder=embedder)
    r.sync()
    timings["subjects"] = time.perf_counter() - t
    sets["subjects"] = collect(r, recall_sets.queries())

    sample = tmp / "sample"
    shutil.copytree(HERE.parent / "vault", sample, ignore=shutil.ignore_patterns(".epimem"))
    r = Recaller(sample, today=TODAY, embedder=embedder)
    sets["sample vault"] = collect(r, [{"query": q, "relevant": rel, "type": "sample"}
                                       for q, rel in recall_eval.sample_set(sample)])
    if not quick:
        syn = tmp / "synthetic"
        labels_path = tmp / "synthetic.labels.json"
        synth.make_vault(syn, n_beliefs=beliefs, n_observations=observations, seed=0,
                         labels_path=labels_path, commit=False)
        t = time.perf_counter()
        r = Recaller(syn, today=TODAY, embedder=embedder)
        r.sync()
        timings["synthetic"] = time.perf_counter() - t
        cq, tq = recall_eval.synthetic_sets(syn, json.loads(labels_path.read_text()))
        sets[f"synthetic {beliefs}"] = collect(r, [{"query": q, "relevant": rel, "type": "claim"} for q, rel in cq]
                                               + [{"query": q, "relevant": rel, "type": "topic"} for q, rel in tq])
    return sets, timings


def print_report(rep: dict) -> None:
    for name, modes in rep.items():
        types = list(next(iter(modes.values())))
        print(f"\n### {name}\n")
        print("| ranking | " + " | ".join(f"{t} ({modes['fused'][t]['queries']})" for t in types) + " |")
        print("|---|" + "---|" * len(types))
        for mode, res in modes.items():
            cells = " | ".join(" / ".join(f"{res[t][m]:.3f}" for m in METRICS) for t in types)
            print(f"| {mode} | {cells} |")
    print("\n(cells: R@5 / R@10 / MRR)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the subjects set and the sample vault only")
    ap.add_argument("--grid", action="store_true")
    ap.add_argument("--embedder", default=None)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    global EMBEDDER
    from epimem.recall.embed import normalize_name

    EMBEDDER = normalize_name(args.embedder)
    tmp = Path(tempfile.mkdtemp(prefix="epimem-quality-"))
    try:
        sets, timings = build_sets(tmp, quick=args.quick, embedder=args.embedder)
        print(f"settings: {settings_now()}  build: " + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items()))
        rep = report(sets)
        print_report(rep)
        out = {"settings": settings_now(), "report": rep}
        if args.grid:
            rows = grid(sets)
            out["grid"] = rows
            names = list(sets)
            print("\n| k | kw weight | " + " | ".join(f"{n} R@5 / MRR" for n in names) + " | worst margin |")
            print("|---|---|" + "---|" * (len(names) + 1))
            for r in sorted(rows, key=lambda r: (-r["worst_margin"], -r["mean_margin"])):
                cells = " | ".join(f"{r['sets'][n]['R@5']:.3f} / {r['sets'][n]['MRR']:.3f}" for n in names)
                print(f"| {r['k']} | {r['kw_weight']} | {cells} | {r['worst_margin']:+.3f} |")
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=1, default=str))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
