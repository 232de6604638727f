"""What the recall index's day of judgement costs a sync (medians, in-process).

    python bench/bench_index_judged.py                     # 10,000 beliefs + 50,000 observations
    python bench/bench_index_judged.py --vault bench/out/vault-10k --repeat 5

The manifest says on which machine day it judged rule 20 (`judged`). Beside a sync with nothing
changed (what every fresh `epimem recall` pays) and a sync of one changed belief, in the same
loop:

- the first sync after an upgrade from an index with no `judged`: every belief file is read and
  judged again (parsed, not embedded);
- the first sync of a new day: only the refused files are read again (the vault is given some).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def _manifest(root: Path) -> Path:
    return root / ".epimem" / "recall" / "manifest.json"


def _set_judged(root: Path, value: str | None) -> None:
    m = json.loads(_manifest(root).read_text())
    if value is None:
        m.pop("judged", None)
    else:
        m["judged"] = value
    _manifest(root).write_text(json.dumps(m))


def _timed_sync(root: Path) -> tuple[float, str]:
    from epimem.recall.index import Index

    ix = Index(root, chroma="later")
    t = time.perf_counter()
    rep = ix.sync()
    return time.perf_counter() - t, rep.action


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--beliefs", type=int, default=10000)
    ap.add_argument("--observations", type=int, default=50000)
    ap.add_argument("--vault", help="use (or create) this synthetic vault instead of a temporary one")
    ap.add_argument("--refused", type=int, default=5, help="belief files given a hand edit dated ahead")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    import synth

    from epimem.recall.index import Index

    os.environ.pop("EPIMEM_TEST_CLOCK", None)   # the machine's day judges, as for a user
    tmp = None
    if args.vault:
        root = Path(args.vault).absolute()
    else:
        tmp = Path(tempfile.mkdtemp(prefix="epimem-bench-judged-"))
        root = tmp / "vault"
    try:
        if not (root / "beliefs").is_dir():
            synth.make_vault(root, n_beliefs=args.beliefs, n_observations=args.observations, seed=0,
                             labels_path=root.parent / (root.name + ".labels.json"))
        beliefs = sorted((root / "beliefs").glob("*.md"))
        ahead = "2099-01-01"
        originals = {p: p.read_text() for p in beliefs[:args.refused]}
        for p, text in originals.items():
            p.write_text(re.sub(r"^confirmed:.*$", f"confirmed: {ahead}", text, count=1, flags=re.M))
        if not _manifest(root).exists():
            Index(root, chroma="later").rebuild("benchmark")
        one = beliefs[-1]
        one_text = one.read_text()
        rows: dict[str, list[float]] = {"unchanged": [], "one belief changed": [],
                                        "no `judged` (first sync after the upgrade)": [],
                                        f"a new day ({args.refused} refused files)": []}
        for i in range(args.repeat):
            _timed_sync(root)
            rows["unchanged"].append(_timed_sync(root)[0])
            one.write_text(one_text + f"\n<!-- run {i} -->\n")
            rows["one belief changed"].append(_timed_sync(root)[0])
            _set_judged(root, None)
            dt, action = _timed_sync(root)
            assert action == "synced", action
            rows["no `judged` (first sync after the upgrade)"].append(dt)
            _set_judged(root, "2000-01-01")
            rows[f"a new day ({args.refused} refused files)"].append(_timed_sync(root)[0])
        one.write_text(one_text)
        for p, text in originals.items():
            p.write_text(text)
        _timed_sync(root)
        print(f"{len(beliefs)} belief files; medians of {args.repeat}\n")
        print("| `Index.sync()` | seconds |\n|---|---|")
        for name, xs in rows.items():
            print(f"| {name} | {statistics.median(xs):.3f} ({min(xs):.3f}–{max(xs):.3f}) |")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
