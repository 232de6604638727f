"""The read paths beside another checkout's, in one alternating loop, on the same 10,000-belief vault.

    python bench/bench_readers.py --baseline-src DIR [--vault V] [--runs 9] [--json OUT]

What every reader pays to show what is valid and redacted (SPEC rules 21, 23; issue 24): each
checkout gets its own copy of the vault (their caches differ), and each measure runs as fresh
processes, this checkout and the baseline alternating, so the machine's load hits both alike:

- `belief list --json`, warm parse cache, and cold (the cache removed before each run);
- the same with one belief hand-edited to break a rule (this checkout reads its committed state),
  `belief show` of it, and both again once that edit is committed by plain git (HEAD broken too:
  this checkout looks back through the file's history);
- the session-start hook (`resume`: it reads the context cache and counts nothing);
- a fresh `recall --json` on a current index, and warm recall in one process (median of 25);
- `mirror page`, its cache valid (the unchanged-vault path) and cold (cache removed).

DIR is a checkout (or `git archive`) of the baseline, e.g. the main branch; both run on this
interpreter, each with its own tree first on `sys.path`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WARM = """
import statistics, sys, time
from epimem.recall.api import Recaller
r = Recaller(sys.argv[1]); r.recall("warm up")
qs = ["how do they write tests", "code review habits", "database migrations", "what editor", "deploys"]
lat = []
for _ in range(5):
    for q in qs:
        t = time.perf_counter(); r.recall(q, limit=5); lat.append(time.perf_counter() - t)
print(statistics.median(lat) * 1000)
"""


class Tree:
    def __init__(self, name: str, src: Path, vault: Path):
        self.name, self.src, self.vault = name, src, vault
        self.env = {**os.environ, "PYTHONPATH": str(src), "EPIMEM_TODAY": "2026-11-30", "ANONYMIZED_TELEMETRY": "False",
                    "EPIMEM_CHROMA_UPDATE": "later"}
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)

    def run(self, *args: str, stdin: str | None = None, check: bool = True) -> float:
        t = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "epimem", *args], input=stdin, capture_output=True, text=True,
                           env=self.env, cwd=self.src, timeout=900)
        dt = time.perf_counter() - t
        if p.returncode != 0 and check:
            raise RuntimeError(f"{self.name}: epimem {' '.join(args)}: {p.stderr[-2000:]}")
        return dt

    def py(self, code: str, *args: str) -> str:
        p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=self.env,
                           cwd=self.src, timeout=900, check=True)
        return p.stdout


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline-src", required=True, help="the other checkout (e.g. main)")
    ap.add_argument("--vault", help="a synthetic vault to copy (default: made by bench/synth.py)")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="epimem-bench-readers-"))
    try:
        src = Path(args.vault) if args.vault else tmp / "synth"
        if not args.vault:
            sys.path.insert(0, str(HERE))
            from synth import make_vault

            make_vault(src, n_beliefs=10000, n_observations=50000, seed=0)
        trees = []
        for name, code in (("this", REPO), ("baseline", Path(args.baseline_src).absolute())):
            v = tmp / f"vault-{name}"
            shutil.copytree(src, v, symlinks=True, ignore=shutil.ignore_patterns(".epimem"))
            trees.append(Tree(name, code, v))
        figures: dict[str, dict[str, list[float]]] = {t.name: {} for t in trees}
        load = [os.getloadavg()]

        def loop(measure: str, fn, runs: int) -> None:
            for _ in range(runs):
                for t in trees:
                    figures[t.name].setdefault(measure, []).append(fn(t))

        resume = json.dumps({"source": "resume", "cwd": str(tmp)})
        for t in trees:  # indexes, caches and bytecode, outside the timings
            t.run("--vault", str(t.vault), "index", "rebuild")
            t.run("--vault", str(t.vault), "belief", "list", "--json")
            t.run("hook", "session-start", "--vault", str(t.vault), stdin=resume)
            t.run("--vault", str(t.vault), "mirror", "page", "--out", str(tmp / f"page-{t.name}.html"))

        def list_cold(t: Tree) -> float:
            (t.vault / ".epimem" / "cache" / "beliefs.json").unlink(missing_ok=True)
            return t.run("--vault", str(t.vault), "belief", "list", "--json")

        def page_cold(t: Tree) -> float:
            for n in ("page.html", "page.key"):
                (t.vault / ".epimem" / n).unlink(missing_ok=True)
            return t.run("--vault", str(t.vault), "mirror", "page", "--out", str(tmp / f"page-{t.name}.html"))

        loop("belief list --json, warm", lambda t: t.run("--vault", str(t.vault), "belief", "list", "--json"),
             args.runs)
        loop("belief list --json, cold", list_cold, max(3, args.runs // 3))
        loop("hook session-start (resume)", lambda t: t.run("hook", "session-start", "--vault", str(t.vault),
                                                            stdin=resume), args.runs * 2)
        loop("recall --json, fresh process", lambda t: t.run("--vault", str(t.vault), "recall",
                                                             "how do they write tests", "--json"), args.runs)
        loop("recall, warm (ms, in process)", lambda t: float(t.py(WARM, str(t.vault))) / 1000, 3)
        loop("mirror page, cached", lambda t: t.run("--vault", str(t.vault), "mirror", "page", "--out",
                                                    str(tmp / f"page-{t.name}.html")), args.runs)
        loop("mirror page, cold", page_cold, max(3, args.runs // 3))
        load.append(os.getloadavg())
        for t in trees:  # one hand edit that breaks rule 2
            target = sorted((t.vault / "beliefs").glob("*.md"))[17]
            text = re.sub(r"^basis: .*$", "basis: behavioral", target.read_text(encoding="utf-8"), flags=re.M)
            target.write_text(re.sub(r"^confidence: .*$", "confidence: 0.99", text, flags=re.M), encoding="utf-8")
            t.run("--vault", str(t.vault), "belief", "list", "--json")
        loop("belief list --json, warm, one refused edit",
             lambda t: t.run("--vault", str(t.vault), "belief", "list", "--json"), args.runs)
        shown = sorted((trees[0].vault / "beliefs").glob("*.md"))[17].stem
        loop("belief show, one refused edit", lambda t: t.run("--vault", str(t.vault), "belief", "show", shown),
             args.runs)
        for t in trees:  # the same edit committed by plain git (Obsidian's git plugin): HEAD is broken too
            subprocess.run(["git", "-C", str(t.vault), "-c", "user.name=bench", "-c", "user.email=b@example.com",
                            "commit", "-qam", "vault backup"], check=True, capture_output=True)
            t.run("--vault", str(t.vault), "belief", "list", "--json")
        loop("belief list --json, warm, the edit committed",
             lambda t: t.run("--vault", str(t.vault), "belief", "list", "--json"), args.runs)
        # The baseline shows nothing for it (it vanished) and exits 1: timed all the same.
        loop("belief show, the edit committed", lambda t: t.run("--vault", str(t.vault), "belief", "show", shown,
                                                                check=False), args.runs)
        load.append(os.getloadavg())

        out = {"load": load, "runs": args.runs, "figures": figures}
        print(f"load average: {', '.join(f'{a[0]:.1f}' for a in load)}")
        print(f"{'measure':45} {'this':>10} {'baseline':>10} {'ratio':>7}")
        for measure in figures["this"]:
            a, b = (statistics.median(figures[n][measure]) for n in ("this", "baseline"))
            print(f"{measure:45} {a * 1000:8.1f}ms {b * 1000:8.1f}ms {a / b:7.2f}")
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
