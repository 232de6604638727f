"""Recall speed at scale (medians), on a synthetic vault from bench/synth.py.

    python bench/bench_recall.py                          # 10,000 beliefs + 50,000 observations
    python bench/bench_recall.py --beliefs 2000 --observations 10000 --repeat 3
    python bench/bench_recall.py --vault bench/out/vault-10k   # reuse a vault (it is not modified
                                                               # except for one belief, restored after)

Measures, against the targets of the recall issue:
- `index rebuild` throughput (items/s), next to the raw speed of the
  embedding model alone on the same texts, and the share of rebuild time
  that is not embedding;
- `index sync` with nothing changed, and with one belief file changed;
- recall through the Python API with the model loaded (median of many queries);
- `epimem recall` as a fresh process (median of several runs);
- the bad inputs: a 100 KB query, an empty one, one in another script.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

QUERIES = [
    "how do they write and run tests", "what should I know before opening a pull request",
    "how should errors be handled in this Go service", "naming conventions for variables",
    "is it ok to deploy on a Friday", "how do they like answers to be written",
    "should I add a new dependency for date parsing", "what do they think about microservices",
    "how to run the database migration safely", "do they want a plan before big changes",
    "logging format for the worker", "how do they estimate work", "caching strategy for exchange rates",
    "feature flag cleanup", "on-call handover", "how do they give feedback",
]


def median_time(fn, repeat: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), times


def _rebuild_figures(out, root, rep, rb, items, get_embedder, parse_file, scan):
    out["items"] = items
    out["rebuild_s"] = rb
    out["rebuild_items_per_s"] = items / rb
    out["rebuild_timings"] = rep.timings
    # the model alone, on the very texts the rebuild embedded
    from epimem.store.clock import lenient_today
    from epimem.store.vault import Vault

    texts = []
    reader = Vault(root).reader(lenient_today())
    for rel in sorted(scan(root)):
        texts.extend(it.text for it in parse_file(rel, (root / rel).read_bytes(), reader).items)
    emb = get_embedder()
    t = time.perf_counter()
    for s in range(0, len(texts), 2048):
        emb.embed(texts[s:s + 2048])
    raw = time.perf_counter() - t
    out["embed_only_s"] = raw
    out["embed_only_items_per_s"] = len(texts) / raw
    out["not_embedding_share"] = 1 - rep.timings.get("embed", raw) / rb
    print(f"rebuild (the sidecar, what recall reads): {items} items in {rb:.1f}s = {items / rb:.0f} items/s "
          f"(parse {rep.timings['parse']:.1f}s, embed {rep.timings['embed']:.1f}s, "
          f"keyword+table {rep.timings['keyword']:.1f}s, save {rep.timings['save']:.1f}s)")
    print(f"model alone: {len(texts)} texts in {raw:.2f}s = {len(texts) / raw:.0f} items/s; "
          f"{out['not_embedding_share']:.0%} of rebuild time is not embedding")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--beliefs", type=int, default=10000)
    ap.add_argument("--observations", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--vault", help="use (or create) this synthetic vault instead of a temporary one")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each slow measurement (rebuild: 1)")
    ap.add_argument("--rebuilds", type=int, default=1, help="how many rebuilds to take the median of")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--no-rebuild", action="store_true",
                    help="skip the rebuild figures (the vaults' indexes must exist)")
    ap.add_argument("--baseline-src", help="another checkout of epimem (e.g. the main branch): its `index "
                    "rebuild` and fresh `recall` are timed in the same loops, on a copy of the vault")
    args = ap.parse_args(argv)

    import synth

    tmp = None
    if args.vault:
        root = Path(args.vault).absolute()
    else:
        tmp = Path(tempfile.mkdtemp(prefix="epimem-bench-recall-"))
        root = tmp / "vault"
    env = {**os.environ, "EPIMEM_TODAY": "2026-11-30", "ANONYMIZED_TELEMETRY": "False"}
    # Fresh processes as an installed epimem runs them: with compiled bytecode
    # (kept outside the checkouts), whatever the shell's PYTHONDONTWRITEBYTECODE.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "epimem-bench-pycache")
    os.environ.update(EPIMEM_TODAY="2026-11-30")
    out: dict = {"beliefs": args.beliefs, "observations": args.observations, "load_1min_start": os.getloadavg()[0]}
    try:
        if not (root / "beliefs").is_dir():
            t = time.perf_counter()
            synth.make_vault(root, n_beliefs=args.beliefs, n_observations=args.observations, seed=args.seed,
                             labels_path=root.parent / (root.name + ".labels.json"), commit=False)
            print(f"synthetic vault: {time.perf_counter() - t:.1f}s")

        from epimem.recall.api import Recaller
        from epimem.recall.embed import get_embedder
        from epimem.recall.index import Index
        from epimem.recall.manifest import parse_file, scan

        # -- rebuild, beside the raw model -------------------------------------------------------
        rebuilds = []
        rep = None
        for _ in range(0 if args.no_rebuild else args.rebuilds):
            shutil.rmtree(root / ".epimem" / "recall", ignore_errors=True)
            shutil.rmtree(root / ".epimem" / "chroma", ignore_errors=True)
            from epimem.recall.chroma import release_embedded

            release_embedded()
            ix = Index(root, chroma="later")
            t = time.perf_counter()
            rep = ix.rebuild("benchmark")
            rebuilds.append(time.perf_counter() - t)
            t = time.perf_counter()
            ix.update_chroma()
            out["chroma_fill_s"] = time.perf_counter() - t
            print(f"Chroma filled from the sidecar after the rebuild: {out['chroma_fill_s']:.1f}s")
        if args.no_rebuild:
            items = Index(root).status().items
        else:
            rb = statistics.median(rebuilds)
            items = rep.items
            _rebuild_figures(out, root, rep, rb, items, get_embedder, parse_file, scan)
        # -- sync, as fresh processes (what `epimem index sync` costs) ---------------------------------
        cli = [sys.executable, "-m", "epimem", "--vault", str(root)]
        base_root = base_env = None
        if args.baseline_src and args.no_rebuild:
            base_root = root.parent / (root.name + "-baseline")
            base_env = {**env, "PYTHONPATH": str(Path(args.baseline_src).absolute())}
            base_cli = [sys.executable, "-m", "epimem", "--vault", str(base_root)]
        if args.baseline_src and not args.no_rebuild:
            base_root = root.parent / (root.name + "-baseline")
            if not (base_root / "beliefs").is_dir():
                shutil.copytree(root, base_root, ignore=shutil.ignore_patterns(".epimem"))
            base_env = {**env, "PYTHONPATH": str(Path(args.baseline_src).absolute())}
            base_cli = [sys.executable, "-m", "epimem", "--vault", str(base_root)]
            t = time.perf_counter()
            # cwd matters: `python -m` puts the working directory first on sys.path.
            subprocess.run(base_cli + ["index", "rebuild"], check=True, env=base_env, capture_output=True,
                           cwd=args.baseline_src)
            out["baseline_rebuild_s"] = time.perf_counter() - t
            shutil.rmtree(root / ".epimem", ignore_errors=True)
            t = time.perf_counter()
            subprocess.run(cli + ["index", "rebuild"], check=True, env=env, capture_output=True)
            out["rebuild_cli_s"] = time.perf_counter() - t
            Index(root).update_chroma()   # waits for the detached update the command started
            out["rebuild_cli_with_chroma_s"] = time.perf_counter() - t
            print(f"  and Chroma complete (the detached update done): {out['rebuild_cli_with_chroma_s']:.1f}s")
            print(f"index rebuild as a command, one after the other: this checkout {out['rebuild_cli_s']:.1f}s "
                  f"= {items / out['rebuild_cli_s']:.0f} items/s; baseline {out['baseline_rebuild_s']:.1f}s "
                  f"= {items / out['baseline_rebuild_s']:.0f} items/s")

        def run(*a):
            p = subprocess.run(cli + list(a), capture_output=True, text=True, env=env, timeout=600)
            if p.returncode != 0:
                raise RuntimeError(p.stderr)
            return p.stdout

        Index(root).update_chroma()
        m, ts = median_time(lambda: run("index", "sync"), args.repeat)
        out["sync_unchanged_s"] = m
        print(f"index sync, nothing changed (fresh process): median {m:.2f}s {[f'{x:.2f}' for x in ts]}")
        target = sorted((root / "beliefs").glob("*.md"))[len(list((root / "beliefs").glob("*.md"))) // 2]
        original = target.read_text(encoding="utf-8")

        takes = itertools.count(1)

        chroma_after = []

        def settle():
            """Wait for the detached Chroma update a command started (outside the timings)."""
            t = time.perf_counter()
            Index(root).update_chroma()
            chroma_after.append(time.perf_counter() - t)

        def one_change():
            edited = f"\nEdited by hand, take {next(takes)}.\n\n## Evidence"
            target.write_text(original.replace("\n## Evidence", edited, 1), encoding="utf-8")
            s = json.loads(run("index", "sync", "--json"))
            assert s["files_changed"] == [f"beliefs/{target.name}"], s

        base_target = base_root / "beliefs" / target.name if base_root else None

        def base_change():
            edited = f"\nEdited by hand, take {next(takes)}.\n\n## Evidence"
            base_target.write_text(original.replace("\n## Evidence", edited, 1), encoding="utf-8")
            subprocess.run(base_cli + ["index", "sync"], check=True, env=base_env, capture_output=True,
                           cwd=args.baseline_src)

        def base_settle():
            """The baseline's detached Chroma update, waited for as `settle` waits for ours: left
            running, it would share the two cores with the next timing of this tree."""
            subprocess.run([sys.executable, "-c", "import sys; from epimem.recall.index import Index; "
                            "Index(sys.argv[1]).update_chroma()", str(base_root)],
                           check=True, env=base_env, capture_output=True, cwd=args.baseline_src)

        ts, bts = [], []
        try:
            for _ in range(args.repeat):
                settle()
                ts.append(median_time(one_change, 1)[0])
                settle()
                if base_target:
                    bts.append(median_time(base_change, 1)[0])
                    base_settle()
        finally:
            target.write_text(original, encoding="utf-8")
            run("index", "sync")
            if base_target:
                base_target.write_text(original, encoding="utf-8")
        m = statistics.median(ts)
        out["sync_one_file_s"] = m
        out["chroma_catch_up_s"] = statistics.median(chroma_after)
        print(f"Chroma's detached update after a one-file sync (waited for outside the timing): "
              f"median {out['chroma_catch_up_s']:.2f}s of waiting")
        print(f"index sync, one belief file changed (fresh process): median {m:.2f}s {[f'{x:.2f}' for x in ts]}")
        if bts:
            out["baseline_sync_one_file_s"] = statistics.median(bts)
            print(f"  baseline checkout, same loop: median {out['baseline_sync_one_file_s']:.2f}s "
                  f"{[f'{x:.2f}' for x in bts]}")

        # -- recall ----------------------------------------------------------------------------------
        r = Recaller(root)
        r.recall("warm up")
        lat = []
        for _ in range(5):
            for q in QUERIES:
                t = time.perf_counter()
                r.recall(q, limit=5)
                lat.append(time.perf_counter() - t)
        out["api_recall_ms_median"] = statistics.median(lat) * 1000
        out["api_recall_ms_p95"] = sorted(lat)[int(len(lat) * 0.95)] * 1000
        filt = []
        for q in QUERIES:
            t = time.perf_counter()
            r.recall(q, limit=5, kind="preference", scope="billing-service", include_observations=True)
            filt.append(time.perf_counter() - t)
        out["api_recall_filtered_ms_median"] = statistics.median(filt) * 1000
        print(f"API recall (model loaded): median {out['api_recall_ms_median']:.1f} ms, "
              f"p95 {out['api_recall_ms_p95']:.1f} ms; with kind+scope filters and observations: "
              f"median {out['api_recall_filtered_ms_median']:.1f} ms")
        # A fresh `epimem recall`, interleaved with `python -c "import numpy"` in the
        # same loop: the baseline says what the machine's load costs any process.
        fresh, base, other = [], [], []
        Index(root).update_chroma()
        out["load_1min_before_fresh"] = os.getloadavg()[0]
        for _ in range(args.repeat + 4):
            t = time.perf_counter()
            run("recall", "how do they write and run tests", "--json")
            fresh.append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import numpy"], check=True, env=env)
            base.append(time.perf_counter() - t)
            if base_root:
                t = time.perf_counter()
                subprocess.run(base_cli + ["recall", "how do they write and run tests", "--json"], check=True,
                               env=base_env, capture_output=True, cwd=args.baseline_src)
                other.append(time.perf_counter() - t)
        out["fresh_recall_s"] = statistics.median(fresh)
        out["import_numpy_s"] = statistics.median(base)
        if other:
            out["baseline_fresh_recall_s"] = statistics.median(other)
            print(f"baseline checkout's fresh recall in the same loop: median {out['baseline_fresh_recall_s']:.2f}s "
                  f"{[f'{x:.2f}' for x in other]}")
        print(f"epimem recall as a fresh process: median {out['fresh_recall_s']:.2f}s "
              f"{[f'{x:.2f}' for x in fresh]}; python -c 'import numpy' in the same loop: "
              f"median {out['import_numpy_s']:.2f}s")

        # -- bad input ---------------------------------------------------------------------------------
        big = ("retry payments with idempotency keys and write tests first " * 2000)[:100_000]
        for name, q in (("100 KB query", big), ("Japanese query", "テストはいつ書きますか"),
                        ("Russian query", "как они пишут тесты")):
            t = time.perf_counter()
            n = len(r.recall(q, limit=5).hits)
            out[f"{name} ms"] = (time.perf_counter() - t) * 1000
            print(f"{name}: {n} results in {(time.perf_counter() - t) * 1000:.0f} ms")
        p = subprocess.run(cli + ["recall", ""], capture_output=True, text=True, env=env)
        print(f"empty query: exit {p.returncode}, {p.stderr.strip()}")
        out["load_1min_end"] = os.getloadavg()[0]
        print(f"load average (1 min): {out['load_1min_start']:.1f} at the start, "
              f"{out.get('load_1min_before_fresh', 0):.1f} before the fresh recalls, "
              f"{out['load_1min_end']:.1f} at the end")
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=2))
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
