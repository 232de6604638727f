"""Soak: many writer processes and readers on one vault at once; nothing may be lost.

    python bench/soak.py [--writers 8] [--ops 50] [--workdir bench/out/soak]

Each writer is its own process, half through the CLI (`epimem observe --input -`, `belief add`,
`mirror answer`), half through the Python API, and runs `ops` operations in a fixed mix:
observe a confirmation (and resubmit the same batch, which must record nothing), add a belief,
give the user's verdict on a belief, retire the belief it added. Readers loop `belief list`,
`validate` and the session-start hook while the writers run, and the main process commits a hand
edit midway. Then the vault is checked: commits landed against expected, every observation
present exactly once, `validate` clean, `git fsck` clean, the tree clean.

`run()` returns the figures as a dict; `tests/reliability/test_soak.py` runs it with bounded
counts and asserts on it; run this script for the large figures in docs/reliability.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

SEEDS = [("Prefers small pull requests", "Splits work into small pull requests."),
         ("Reads the docs before guessing", "Looks up an API's documentation before trying it."),
         ("Writes tests first", "Starts a change with the failing test.")]
# The belief the user edits by hand: no writer touches it, so the edit is committed by `epimem
# commit` and not swept into a writer's commit of the same file.
HAND = ("Names things carefully", "Spends time on names of functions and files.")
WORDS = ["harbour", "violin", "glacier", "lantern", "orchard", "compass", "meadow", "falcon", "quarry",
         "saffron", "tundra", "walnut", "beacon", "cobalt", "ember", "juniper"]


_STATS: dict[str, str] = {}  # EPIMEM_LOCK_STATS for this run's processes


def _env() -> dict[str, str]:
    env = {**os.environ, **_STATS, "GIT_AUTHOR_NAME": "soak", "GIT_AUTHOR_EMAIL": "soak@example.com",
           "GIT_COMMITTER_NAME": "soak", "GIT_COMMITTER_EMAIL": "soak@example.com"}
    env.pop("EPIMEM_TODAY", None)
    return env


def _cli(root: Path, *args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "epimem", "--vault", str(root), *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout, env=_env())


def _title(w: int, i: int) -> str:
    # Distinct words, so no two soak beliefs read as near-duplicates of each other.
    return f"Keeps a {WORDS[w % len(WORDS)]} {WORDS[(i * 7 + w) % len(WORDS)]} notebook {w}x{i}"


# --- a writer -------------------------------------------------------------------------------------

def writer(root: Path, w: int, ops: int, use_cli: bool) -> list[dict]:
    """Run `ops` operations; one row per operation: what, whether it should commit, latency, error."""
    from epimem.api.memory import Memory

    rows: list[dict] = []
    mine: list[str] = []
    seeds = [re.sub(r"[^a-z0-9]+", "-", t.lower()).strip("-") for t, _ in SEEDS]

    def timed(what: str, commits: bool, fn) -> None:
        t = time.perf_counter()
        err = None
        try:
            fn()
        except Exception as e:  # the figure is what failed and how, not a traceback
            err = f"{type(e).__name__}: {e}"
        rows.append({"writer": w, "op": what, "commits": commits and err is None,
                     "seconds": time.perf_counter() - t, "error": err})

    for i in range(ops):
        kind = i % 4
        if kind == 0:
            batch = [{"connects": seeds[(w + i) % len(seeds)], "strength": "confirming",
                      "evidence": f"soak writer {w} op {i} split the work", "session": f"soak-{w}-{i}"}]

            def observe(batch=batch):
                if use_cli:
                    p = _cli(root, "observe", "--input", "-", "--json", stdin=json.dumps(batch))
                    if p.returncode != 0:
                        raise RuntimeError(p.stderr.strip())
                    if json.loads(p.stdout)["commit"] is None:
                        raise RuntimeError("the first submission recorded nothing")
                else:
                    if Memory(root).observe(batch).commit is None:
                        raise RuntimeError("the first submission recorded nothing")

            def resubmit(batch=batch):
                if use_cli:
                    p = _cli(root, "observe", "--input", "-", "--json", stdin=json.dumps(batch))
                    if p.returncode != 0:
                        raise RuntimeError(p.stderr.strip())
                    if json.loads(p.stdout)["commit"] is not None:
                        raise RuntimeError("an exact resubmission was recorded twice")
                elif Memory(root).observe(batch).commit is not None:
                    raise RuntimeError("an exact resubmission was recorded twice")

            timed("observe", True, observe)
            timed("resubmit", False, resubmit)
        elif kind == 1:
            title = _title(w, i)

            def add(title=title):
                if use_cli:
                    p = _cli(root, "belief", "add", "--title", title, "--statement", f"{title}, every day.",
                             "--kind", "workflow", "--basis", "self-report", "--permanence", "situational",
                             "--json")
                    if p.returncode != 0:
                        raise RuntimeError(p.stderr.strip())
                    mine.append(json.loads(p.stdout)["id"])
                else:
                    b = Memory(root).add_belief(title=title, statement=f"{title}, every day.", kind="workflow",
                                                basis="self-report", permanence="situational")
                    mine.append(b.id)

            timed("add", True, add)
        elif kind == 2:
            target = mine[-1] if mine else seeds[w % len(seeds)]

            def verdict(target=target, i=i):
                if use_cli:
                    p = _cli(root, "mirror", "answer", target, "--verdict", "true", "--note", f"still true {w}/{i}")
                    if p.returncode != 0:
                        raise RuntimeError(p.stderr.strip())
                else:
                    Memory(root).reinforce(target, note=f"still true {w}/{i}")

            timed("verdict", True, verdict)
        elif mine:
            target = mine.pop()

            def retire(target=target):
                if use_cli:
                    p = _cli(root, "belief", "retire", target, "--note", "no longer")
                    if p.returncode != 0:
                        raise RuntimeError(p.stderr.strip())
                else:
                    Memory(root).retire(target, note="no longer")

            timed("retire", True, retire)
    return rows


# --- readers and the hand edit ---------------------------------------------------------------------

def reader(root: Path, stop: threading.Event, rows: list[dict]) -> None:
    commands = [("belief list", ["belief", "list", "--json"]), ("validate", ["validate", "--json"])]
    i = 0
    while not stop.is_set():
        name, args = commands[i % len(commands)]
        t = time.perf_counter()
        p = _cli(root, *args)
        rows.append({"reader": name, "seconds": time.perf_counter() - t, "exit": p.returncode,
                     "problems": (json.loads(p.stdout).get("problems", []) if name == "validate" and p.stdout
                                  else []),
                     "error": p.stderr.strip()[-300:] if p.returncode not in (0, 1) else None})
        i += 1


def hook_reader(root: Path, stop: threading.Event, rows: list[dict]) -> None:
    while not stop.is_set():
        payload = json.dumps({"session_id": f"soak-hook-{len(rows)}", "source": "resume", "cwd": str(root),
                              "hook_event_name": "SessionStart"})
        t = time.perf_counter()
        p = _cli(root, "hook", "session-start", stdin=payload)
        ok = p.returncode == 0 and "additionalContext" in p.stdout
        rows.append({"reader": "hook", "seconds": time.perf_counter() - t, "exit": p.returncode,
                     "error": None if ok else (p.stderr.strip()[-300:] or "no context")})
        stop.wait(0.2)


def hand_edit(root: Path) -> dict:
    """The user edits a belief in their editor and commits it with `epimem commit`."""
    slug = re.sub(r"[^a-z0-9]+", "-", HAND[0].lower()).strip("-")
    p = root / "beliefs" / f"{slug}.md"
    for _ in range(50):  # retry when a writer's commit holds the vault
        text = p.read_text(encoding="utf-8")
        new = text.replace(HAND[1], HAND[1] + " Edited by hand during the soak.", 1)
        p.write_text(new, encoding="utf-8")
        r = _cli(root, "commit")
        if r.returncode == 0 and "Edited by hand" in _git(root, "show", f"HEAD:beliefs/{slug}.md"):
            return {"hand_edit": "committed", "output": r.stdout.strip()[-200:]}
        time.sleep(0.2)
    return {"hand_edit": "failed", "output": r.stderr.strip()[-300:]}


# --- the run -------------------------------------------------------------------------------------

def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=_env()).stdout


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 3)


def run(root: Path, writers: int = 8, ops: int = 50) -> dict:
    from epimem.api.memory import Memory

    root = Path(root)
    stats = root.parent / f"{root.name}.lock-stats.jsonl"
    stats.unlink(missing_ok=True)
    mem, _ = Memory.init(root)
    from synth import lift_session_bound

    lift_session_bound(root)  # every op names a session nobody counted (rule 9: three a day)
    for title, statement in [*SEEDS, HAND]:
        mem.add_belief(title=title, statement=statement, kind="preference", basis="behavioral", permanence="durable")
    commits_before = int(_git(root, "rev-list", "--count", "HEAD").strip())
    _STATS["EPIMEM_LOCK_STATS"] = str(stats)

    stop = threading.Event()
    reads: list[dict] = []
    threads = [threading.Thread(target=reader, args=(root, stop, reads)),
               threading.Thread(target=hook_reader, args=(root, stop, reads))]
    for t in threads:
        t.start()
    t0 = time.perf_counter()
    procs = []
    for w in range(writers):
        code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import soak; "
                f"print(json.dumps(soak.writer(__import__('pathlib').Path({str(root)!r}), {w}, {ops}, {w % 2 == 0})))")
        procs.append(subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, env=_env()))
    time.sleep(1.0)
    edit = hand_edit(root)
    rows: list[dict] = []
    crashed = []
    for p in procs:
        out, err = p.communicate(timeout=3600)
        if p.returncode != 0:
            crashed.append(err.strip()[-500:])
            continue
        rows += json.loads(out.strip().splitlines()[-1])
    wall = time.perf_counter() - t0
    stop.set()
    for t in threads:
        t.join()
    _STATS.clear()
    holds = [json.loads(line) for line in stats.read_text(encoding="utf-8").splitlines()] if stats.exists() else []

    commits_after = int(_git(root, "rev-list", "--count", "HEAD").strip())
    expected = sum(1 for r in rows if r["commits"]) + (1 if edit["hand_edit"] == "committed" else 0)
    texts = "".join(p.read_text(encoding="utf-8") for p in sorted((root / "observations").glob("*.md")))
    wanted = {f"soak writer {w} op {i} split the work" for w in range(writers) for i in range(ops) if i % 4 == 0}
    counts = {ev: texts.count(ev) for ev in wanted}
    validate = _cli(root, "validate", "--json")
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=root, capture_output=True, text=True)
    lat = [r["seconds"] for r in rows if r["commits"]]
    return {
        "writers": writers, "ops_per_writer": ops, "wall_s": round(wall, 1),
        "operations": len(rows), "errors": [r["error"] for r in rows if r["error"]], "crashed_writers": crashed,
        "commits_expected": expected, "commits_landed": commits_after - commits_before,
        "observations_lost": sorted(ev for ev, n in counts.items() if n == 0),
        "observations_doubled": sorted(ev for ev, n in counts.items() if n > 1),
        "validate_ok": validate.returncode == 0, "validate": validate.stdout[-1000:],
        "fsck_ok": fsck.returncode == 0 and not fsck.stdout.strip(), "fsck": (fsck.stdout + fsck.stderr)[-500:],
        "tree_clean": _git(root, "status", "--porcelain").strip() == "",
        "write_latency_s": {"p50": _pct(lat, 0.5), "p99": _pct(lat, 0.99), "max": _pct(lat, 1.0),
                            "mean": round(statistics.fmean(lat), 3) if lat else 0.0},
        "lock_wait_s": {q: _pct([h["wait"] for h in holds], v) for q, v in (("p50", .5), ("p95", .95), ("p99", .99))}
        | {"max": _pct([h["wait"] for h in holds], 1.0)},
        "lock_hold_s": {q: _pct([h["hold"] for h in holds], v) for q, v in (("p50", .5), ("p95", .95), ("p99", .99))}
        | {"max": _pct([h["hold"] for h in holds], 1.0)},
        "lock_holds": len(holds),
        # What the holds are made of (where the version notes phases): the mean seconds per hold
        # and the p95 of each phase over the holds that had it.
        "lock_phases_s": {k: {"mean": round(sum(h.get("phases", {}).get(k, 0.0) for h in holds) / len(holds), 4),
                              "p95": _pct([h["phases"][k] for h in holds if k in h.get("phases", {})], .95)}
                          for k in sorted({k for h in holds for k in h.get("phases", {})})} if holds else {},
        "reads": len(reads), "read_errors": [r["error"] for r in reads if r.get("error")],
        "reads_seeing_problems": sum(1 for r in reads if r.get("problems")),
        "hand_edit": edit["hand_edit"],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--ops", type=int, default=50)
    ap.add_argument("--workdir", type=Path, default=Path(__file__).parent / "out" / "soak")
    a = ap.parse_args(argv)
    if a.workdir.exists():
        import shutil

        shutil.rmtree(a.workdir)
    fig = run(a.workdir / "vault", a.writers, a.ops)
    print(json.dumps(fig, indent=2))
    ok = (not fig["errors"] and not fig["crashed_writers"] and fig["commits_landed"] == fig["commits_expected"]
          and not fig["observations_lost"] and not fig["observations_doubled"] and fig["validate_ok"]
          and fig["fsck_ok"] and fig["tree_clean"])
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
