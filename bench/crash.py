"""Kill -9 at random moments: a change is committed whole or absent, never half.

Each trial copies a small seeded vault, starts a real `epimem` command in a
subprocess (observe, an observe batch, belief add, import epistemic-memory,
index rebuild), sends it SIGKILL after a random delay within that command's
usual run time, and then checks what a user would meet next:

- the vault lock is free within 1 s;
- the next command (here `Memory(...)`, which every command opens) finishes
  or rolls back the interrupted change, and `validate` reports nothing;
- the work tree is clean: the change is in a commit whole, or not at all;
- no temp file is left in the vault outside `.epimem/`, and none was committed.

    python bench/crash.py --trials 200 [--seed 1] [--json]

The test suite runs the same trials, fewer of them (tests/store/test_crash.py,
marked soak). Figures are recorded in docs/reliability.md.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "epistemic-memory"
TODAY = "2026-11-20"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["EPIMEM_TODAY"] = TODAY
    # `index rebuild` updates Chroma inside the command that is killed, not in a detached
    # process that would outlive the trial (and write into a vault being deleted).
    env["EPIMEM_CHROMA_UPDATE"] = "wait"
    env.setdefault("GIT_AUTHOR_NAME", "crash")
    env.setdefault("GIT_AUTHOR_EMAIL", "crash@localhost")
    env.setdefault("GIT_COMMITTER_NAME", "crash")
    env.setdefault("GIT_COMMITTER_EMAIL", "crash@localhost")
    return env


def epimem(vault: Path, *args: str, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "epimem", "--vault", str(vault), *args], env=_env(),
                          capture_output=True, text=True, check=check, input=stdin, timeout=120)


def seed_vault(where: Path) -> Path:
    """A vault with two beliefs and an observation, committed."""
    v = where / "seed"
    epimem(v, "init")
    epimem(v, "belief", "add", "--title", "Likes tabs", "--statement", "Indents with tabs.",
           "--kind", "preference", "--basis", "self-report", "--permanence", "stable")
    epimem(v, "belief", "add", "--title", "Small pull requests", "--statement", "Keeps PRs small.",
           "--kind", "workflow", "--basis", "behavioral", "--permanence", "durable")
    epimem(v, "observe", "--connects", "likes-tabs", "--strength", "confirming", "--evidence", "Tabs again.")
    return v


def _batch(tmp: Path, n: int) -> Path:
    items = [
        {"connects": "new", "title": f"Crash new belief {n}", "kind": "workflow", "basis": "behavioral",
         "permanence": "situational", "strength": "single", "evidence": f"Did the new thing ({n})."},
        {"connects": "small-pull-requests", "strength": "confirming", "evidence": f"Split a PR ({n})."},
        {"connects": "likes-tabs", "strength": "complicating", "evidence": f"Used spaces once ({n})."},
    ]
    for it in items:
        it["session"] = f"crash-{n}"  # rule 9 counts per session: each trial is a session of its own
    p = tmp / f"batch-{n}.json"
    p.write_text(json.dumps(items), encoding="utf-8")
    return p


def operations(tmp: Path, n: int) -> dict[str, list[str]]:
    return {
        "observe": ["observe", "--connects", "likes-tabs", "--strength", "confirming",
                    "--evidence", f"Tabs in trial {n}.", "--session", f"crash-{n}"],
        "observe-batch": ["observe", "--input", str(_batch(tmp, n))],
        "belief-add": ["belief", "add", "--title", f"Crash belief {n}", "--statement", "Written to be killed.",
                       "--kind", "preference", "--basis", "self-report", "--permanence", "stable"],
        "import": ["import", "epistemic-memory", str(FIXTURE)],
        "index-rebuild": ["index", "rebuild"],
    }


def head(v: Path) -> str:
    return subprocess.run(["git", "-C", str(v), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def lock_free_within(v: Path, seconds: float = 1.0) -> bool:
    deadline = time.monotonic() + seconds
    fd = os.open(v / ".epimem" / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
                return True
            except OSError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.01)
    finally:
        os.close(fd)


def stray_temp_files(v: Path) -> list[str]:
    from epimem.store.files import is_temp

    out = []
    for dirpath, dirnames, filenames in os.walk(v):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".epimem")]
        out += [os.path.relpath(os.path.join(dirpath, f), v) for f in filenames if is_temp(f)]
    committed = subprocess.run(["git", "-C", str(v), "ls-files"], capture_output=True, text=True).stdout.split("\n")
    out += [f"committed: {p}" for p in committed if is_temp(os.path.basename(p))]
    return out


@dataclass
class Trial:
    op: str
    delay: float
    outcome: str  # whole | absent | finished | rolled-back | broken | completed
    detail: str = ""


def check(v: Path, before: str) -> tuple[str, str]:
    """(outcome, detail) of a vault after a kill."""
    import logging

    if not lock_free_within(v):
        return "broken", "the vault lock was still held 1 s after the kill"
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    h = Keep()
    log = logging.getLogger("epimem")
    log.addHandler(h)
    try:
        from epimem.api.memory import Memory

        mem = Memory(v, today=TODAY)  # what every command opens first: recovery happens here
        problems = mem.validate()
    finally:
        log.removeHandler(h)
    if records and os.environ.get("EPIMEM_CRASH_DEBUG"):
        print("recovery:", records, file=sys.stderr)
    if problems:
        return "broken", "; ".join(f"{p.path}:{p.line}: {p.message}" for p in problems[:3])
    dirty = [ln for ln in subprocess.run(["git", "-C", str(v), "status", "--porcelain", "--untracked-files=all"],
                                         capture_output=True, text=True).stdout.splitlines() if ln.strip()]
    if dirty:
        return "broken", "uncommitted: " + ", ".join(dirty[:4])
    strays = stray_temp_files(v)
    if strays:
        return "broken", "temp files: " + ", ".join(strays[:3])
    recovered = " ".join(records)
    if "rolled back" in recovered:
        return "rolled-back", recovered
    if "had been committed" in recovered:
        return "finished", recovered
    return ("whole" if head(v) != before else "absent"), ""


def run_trials(trials: int, seed: int = 1, ops: list[str] | None = None,
               budget_s: float | None = None) -> list[Trial]:
    rng = random.Random(seed)
    out: list[Trial] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="epimem-crash-") as d:
        tmp = Path(d)
        seed_v = seed_vault(tmp)
        names = ops or list(operations(tmp, 0))
        # Each command's usual run time, measured once: delays are drawn within it.
        durations: dict[str, float] = {}
        for name in names:
            v = tmp / f"time-{name}"
            shutil.copytree(seed_v, v, symlinks=True)
            t0 = time.monotonic()
            epimem(v, *operations(tmp, 0)[name])
            durations[name] = time.monotonic() - t0
        for i in range(trials):
            if budget_s is not None and time.monotonic() - started > budget_s:
                break
            name = names[i % len(names)]
            v = tmp / f"t{i}"
            shutil.copytree(seed_v, v, symlinks=True)
            before = head(v)
            # Half the kills anywhere in the run, half in its last 40 %, where the
            # files and the commit are written (the start is Python importing).
            d = durations[name]
            delay = rng.uniform(0.05, d * 1.1) if i % 2 else rng.uniform(d * 0.6, d * 1.05)
            proc = subprocess.Popen([sys.executable, "-m", "epimem", "--vault", str(v),
                                     *operations(tmp, i + 1)[name]], env=_env(),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(delay)
            finished = proc.poll() is not None
            if not finished:
                proc.send_signal(signal.SIGKILL)
            proc.wait()
            outcome, detail = check(v, before)
            if finished and outcome in ("whole", "absent"):
                outcome = "completed"  # the command ran to its end before the kill
            out.append(Trial(name, round(delay, 3), outcome, detail))
            keep = os.environ.get("EPIMEM_CRASH_KEEP")
            if keep and outcome == "broken":
                shutil.copytree(v, Path(keep) / f"t{i}-{name}", symlinks=True)
            shutil.rmtree(v, ignore_errors=True)
    return out


def summary(results: list[Trial]) -> dict:
    by_op: dict[str, Counter] = {}
    for t in results:
        by_op.setdefault(t.op, Counter())[t.outcome] += 1
    return {"trials": len(results), "outcomes": dict(Counter(t.outcome for t in results)),
            "by_op": {k: dict(v) for k, v in by_op.items()},
            "broken": [t.__dict__ for t in results if t.outcome == "broken"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    t0 = time.monotonic()
    res = run_trials(a.trials, a.seed)
    s = summary(res)
    s["seconds"] = round(time.monotonic() - t0, 1)
    if a.json:
        print(json.dumps(s, indent=2))
    else:
        print(f"{s['trials']} trials in {s['seconds']} s: {s['outcomes']}")
        for op, c in s["by_op"].items():
            print(f"  {op}: {c}")
        for b in s["broken"]:
            print(f"  BROKEN {b['op']} after {b['delay']} s: {b['detail']}")
    return 1 if s["broken"] else 0


if __name__ == "__main__":
    sys.exit(main())
