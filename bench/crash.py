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
    python bench/crash.py --trials 0 --git-trials 200     # sync and the hook's commit only

`--git-trials` kills `epimem sync` (a vault and its bare remote that both moved: a real
merge by meaning, then a push) and the session-start hook's detached commit of the session
count, half of them with the whole process group (git dies too). After each it also checks:
no unfinished merge, no conflict marker, git's `index.lock` gone after the next command, and
for sync that the next sync converges with the remote with every observation exactly once;
for the hook that the next command lands and takes a pending count along.

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
    # A session the vault counted: the trials' own names are sessions it never counted, which share
    # one session's bound a day (rule 9), and a batch of three must fit in it.
    epimem(v, "session", "start", "--session", "seed")
    epimem(v, "observe", "--connects", "likes-tabs", "--strength", "confirming", "--evidence", "Tabs again.",
           "--session", "seed")
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
    if not lock_free_within(v):
        return "broken", "the vault lock was still held 1 s after the kill"
    records, problems = _open(v)  # what every command opens first: recovery happens there
    if records and os.environ.get("EPIMEM_CRASH_DEBUG"):
        print("recovery:", records, file=sys.stderr)
    if problems:
        return "broken", "; ".join(problems[:3])
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


# --- sync and the hook's background commit ------------------------------------------------
#
# These two run several git processes of their own, so a kill may land in a git as well as in
# epimem: half the trials kill epimem alone (the git it started runs on, orphaned), half kill
# its whole process group (git dies too and leaves its `index.lock`, a half-made merge, a
# half-sent push). Both are what a user meets: a closed terminal, an OOM kill, a power cut.

def git(v: Path, *args: str, check: bool = True) -> str:
    return subprocess.run(["git", "-C", str(v), *args], capture_output=True, text=True, check=check,
                          env=_env()).stdout.strip()


def obs_ids(v: Path, rev: str | None = None) -> list[str]:
    """Every observation heading in the vault's logs (at `rev`, else on disk), duplicates kept."""
    if rev is None:
        texts = [p.read_text(encoding="utf-8") for p in sorted((v / "observations").glob("*.md"))]
    else:
        names = git(v, "ls-tree", "--name-only", rev, "observations/").split()
        texts = [git(v, "show", f"{rev}:{n}") for n in names if n.endswith(".md")]
    return [ln[3:].strip() for t in texts for ln in t.splitlines() if ln.startswith("## obs-")]


def seed_sync(where: Path) -> tuple[Path, Path]:
    """A vault `a` one commit ahead of its bare remote `r`, which is one commit ahead of it:
    both changed the same belief and the same month's log, so sync must merge by meaning."""
    a = seed_vault(where)
    r = where / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(r)], check=True)
    git(a, "remote", "add", "origin", str(r))
    epimem(a, "sync")
    b = where / "other"
    epimem(b, "clone", str(r), "--no-index")
    epimem(b, "observe", "--connects", "likes-tabs", "--strength", "confirming",
           "--evidence", "Tabs on the other machine.", "--session", "other-1")
    epimem(b, "belief", "add", "--title", "Other machine belief", "--statement", "Made elsewhere.",
           "--kind", "workflow", "--basis", "behavioral", "--permanence", "durable")
    epimem(b, "sync")
    epimem(a, "observe", "--connects", "likes-tabs", "--strength", "complicating",
           "--evidence", "Spaces here once.", "--session", "here-1")
    epimem(a, "observe", "--connects", "small-pull-requests", "--strength", "confirming",
           "--evidence", "Split a PR here.", "--session", "here-2")
    return a, r


def seed_hook(where: Path) -> Path:
    """A vault whose session counter holds today's session, not yet committed (as the hook
    leaves it before its background commit)."""
    from epimem.core import kernel
    from epimem.store import sessions as sessions_file

    v = seed_vault(where)
    p = v / sessions_file.PATH
    s = sessions_file.loads(p.read_text(encoding="utf-8"))
    from datetime import date, timedelta

    day = date.fromisoformat(TODAY)
    for d in (day - timedelta(days=3), day):  # an earlier day committed, today's pending
        s = kernel.start_session(s, kernel.COUNTED_SOURCE, d, 30, 14)[0]
        p.write_text(sessions_file.dump(s), encoding="utf-8")
        if d != day:
            git(v, "commit", "--quiet", "-m", "session: earlier", "--", sessions_file.PATH)
    return v


def _kill(proc: subprocess.Popen, group: bool) -> None:
    try:
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.send_signal(signal.SIGKILL)
    except ProcessLookupError:
        pass


def _quiet_git(v: Path, seconds: float = 10.0) -> None:
    """Wait for an orphaned git (epimem killed, its git not) to finish, as a user's next
    command would meet it some time later; a kill of the group leaves none."""
    deadline = time.monotonic() + seconds
    r = str(v.resolve())
    while time.monotonic() < deadline:
        busy = False
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                if (d / "comm").read_text().startswith("git") and os.readlink(d / "cwd").startswith(r):
                    busy = True
                    break
            except OSError:
                continue
        if not busy:
            return
        time.sleep(0.05)


def _markers(v: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(v):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".epimem")]
        for f in filenames:
            p = Path(dirpath) / f
            if f.endswith(".epimem-merge"):
                out.append(f"temp: {p.relative_to(v)}")
                continue
            try:
                text = p.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if any(ln.startswith(("<<<<<<< ", ">>>>>>> ")) or ln == "=======" for ln in text.splitlines()):
                out.append(f"conflict marker: {p.relative_to(v)}")
    return out


def _open(v: Path) -> tuple[list[str], list[str]]:
    """(what the next command logged while recovering, the problems `validate` then reports)."""
    import logging

    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    h = Keep()
    log = logging.getLogger("epimem")
    log.addHandler(h)
    try:
        from epimem.api.memory import Memory
        from epimem.core.errors import EpimemError

        try:
            mem = Memory(v, today=TODAY)
            problems = [f"{p.path}:{p.line}: {p.message}" for p in mem.validate()]
        except EpimemError as e:
            problems = [f"{type(e).__name__}: {e}"]
    finally:
        log.removeHandler(h)
    return records, problems


def check_sync(v: Path, r: Path, before: str, expected_obs: set[str]) -> tuple[str, str]:
    if not lock_free_within(v):
        return "broken", "the vault lock was still held 1 s after the kill"
    records, problems = _open(v)
    if problems:
        return "broken", "; ".join(problems[:3])
    g = drivers_unfinished(v)
    if g:
        return "broken", f"a git {g} left unfinished"
    bad = _markers(v) + stray_temp_files(v)
    if bad:
        return "broken", ", ".join(bad[:3])
    dirty = [ln for ln in git(v, "status", "--porcelain", "--untracked-files=all").splitlines() if ln.strip()]
    if dirty:
        return "broken", "uncommitted: " + ", ".join(dirty[:4])
    mid = head(v)
    again = epimem(v, "sync", check=False)  # what the user does next: it must converge
    if again.returncode != 0:
        return "broken", f"the next sync failed: {(again.stderr or again.stdout).strip()[:300]}"
    records += [again.stderr]
    if (v / ".git" / "index.lock").exists():
        return "broken", ".git/index.lock left after the next sync"
    if head(v) != git(r, "rev-parse", "refs/heads/main"):
        return "broken", "the vault and its remote differ after the next sync"
    ids = obs_ids(v)
    if set(ids) != expected_obs or len(ids) != len(set(ids)):
        lost = sorted(expected_obs - set(ids))
        doubled = sorted({i for i in ids if ids.count(i) > 1})
        return "broken", f"observations lost {lost}, doubled {doubled}"
    if sorted(obs_ids(v, "HEAD")) != sorted(ids):
        return "broken", "the committed logs differ from the files"
    _, problems = _open(v)
    if problems or git(v, "status", "--porcelain", "--untracked-files=all"):
        return "broken", "after the next sync: " + "; ".join(problems[:3])
    fsck = subprocess.run(["git", "-C", str(r), "fsck", "--no-progress"], capture_output=True, text=True)
    if fsck.returncode != 0:
        return "broken", f"the remote fails git fsck: {fsck.stderr.strip()[:200]}"
    said = " ".join(records)
    if "rolled back" in said or "given up" in said:
        return "rolled-back", said
    if "had been committed" in said or "finished" in said:
        return "finished", said
    return ("whole" if mid != before else "absent"), ""


def drivers_unfinished(v: Path) -> str | None:
    from epimem.store.drivers import unfinished

    return unfinished(v)


def check_hook(v: Path, before: str) -> tuple[str, str]:
    from epimem.store import sessions as sessions_file

    if not lock_free_within(v):
        return "broken", "the vault lock was still held 1 s after the kill"
    records, problems = _open(v)
    if problems:
        return "broken", "; ".join(problems[:3])
    bad = _markers(v) + stray_temp_files(v)
    if bad:
        return "broken", ", ".join(bad[:3])
    on_disk = (v / sessions_file.PATH).read_text(encoding="utf-8")
    dirty = [ln for ln in git(v, "status", "--porcelain", "--untracked-files=all").splitlines() if ln.strip()]
    if [d for d in dirty if not d.endswith(sessions_file.PATH)]:
        return "broken", "uncommitted: " + ", ".join(dirty[:4])
    committed_now = not dirty
    # The next command: an observe must land, and take the count along if it is still pending.
    nxt = epimem(v, "observe", "--connects", "likes-tabs", "--strength", "confirming",
                 "--evidence", "After the kill.", "--session", "after-kill", check=False)
    if nxt.returncode != 0:
        return "broken", f"the next command failed: {(nxt.stderr or nxt.stdout).strip()[:300]}"
    if (v / ".git" / "index.lock").exists():
        return "broken", ".git/index.lock left after the next command"
    left = git(v, "status", "--porcelain", "--untracked-files=all")
    if left:
        return "broken", "after the next command: " + left.replace("\n", ", ")
    if git(v, "show", f"HEAD:{sessions_file.PATH}") != on_disk.strip():
        return "broken", "the session count is not the committed one after the next command"
    if not committed_now and "session" not in git(v, "log", "-1", "--format=%B"):
        return "broken", "the pending count rode along unnamed"
    if committed_now:
        return ("whole" if head(v) != before else "absent"), " ".join(records)
    return "finished", "the next commit took the count along"


def run_git_trials(trials: int, seed: int = 1, ops: tuple[str, ...] = ("sync", "hook-commit"),
                   budget_s: float | None = None) -> list[Trial]:
    """Kill -9 trials of `epimem sync` and of the hook's background commit of the session count."""
    rng = random.Random(seed)
    out: list[Trial] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="epimem-crash-git-") as d:
        tmp = Path(d)
        seeds: dict[str, tuple[Path, Path | None]] = {}
        if "sync" in ops:
            seeds["sync"] = seed_sync(tmp / "sync")
        if "hook-commit" in ops:
            seeds["hook-commit"] = (seed_hook(tmp / "hook"), None)
        expected = set(obs_ids(seeds["sync"][0]) + obs_ids(seeds["sync"][1], "refs/heads/main")) \
            if "sync" in ops else set()

        def argv(name: str, v: Path) -> list[str]:
            if name == "sync":
                return [sys.executable, "-m", "epimem", "--vault", str(v), "sync"]
            return [sys.executable, "-m", "epimem", "hook", "commit-session", str(v), "crash"]

        def copy(name: str, i: int | str) -> tuple[Path, Path | None]:
            a, r = seeds[name]
            v = tmp / f"t{i}" / "v"
            shutil.copytree(a, v, symlinks=True)
            rr = None
            if r is not None:
                rr = tmp / f"t{i}" / "remote.git"
                shutil.copytree(r, rr, symlinks=True)
                git(v, "remote", "set-url", "origin", str(rr))
            return v, rr

        durations: dict[str, float] = {}
        for name in ops:  # the faster of two runs: the first pays for cold caches
            for n in range(2):
                v, _ = copy(name, f"time-{name}-{n}")
                t0 = time.monotonic()
                subprocess.run(argv(name, v), env=_env(), capture_output=True, check=True, timeout=120)
                durations[name] = min(durations.get(name, 1e9), time.monotonic() - t0)
        for i in range(trials):
            if budget_s is not None and time.monotonic() - started > budget_s:
                break
            name = ops[i % len(ops)]
            group = (i // len(ops)) % 2 == 1
            v, r = copy(name, i)
            before = head(v)
            d = durations[name]
            delay = rng.uniform(0.05, d * 1.1) if (i // 2) % 2 else rng.uniform(d * 0.4, d * 1.05)
            proc = subprocess.Popen(argv(name, v), env=_env(), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True)
            time.sleep(delay)
            finished = proc.poll() is not None
            if not finished:
                _kill(proc, group)
            proc.wait()
            if not group:
                _quiet_git(v)
            if name == "sync":
                assert r is not None
                outcome, detail = check_sync(v, r, before, expected)
            else:
                outcome, detail = check_hook(v, before)
            if finished and outcome in ("whole", "absent"):
                outcome = "completed"
            out.append(Trial(f"{name}{' (group)' if group else ''}", round(delay, 3), outcome, detail))
            keep = os.environ.get("EPIMEM_CRASH_KEEP")
            if keep and outcome == "broken":
                shutil.copytree(v.parent, Path(keep) / f"t{i}-{name}", symlinks=True)
            shutil.rmtree(v.parent, ignore_errors=True)
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
    ap.add_argument("--git-trials", type=int, default=0,
                    help="also kill `epimem sync` and the hook's background commit this many times")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    t0 = time.monotonic()
    res = run_trials(a.trials, a.seed) if a.trials else []
    if a.git_trials:
        res += run_git_trials(a.git_trials, a.seed)
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
