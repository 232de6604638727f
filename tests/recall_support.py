"""Helpers for the recall tests: small real vaults written through the core's
renderers, and a real Chroma server on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from epimem.core.model import Belief, Observation
from epimem.core.notes import render_belief, render_observation

BELIEFS = [
    ("small-pull-requests", "Keeps pull requests small",
     "Splits work into small pull requests that a reviewer can read in one sitting.",
     "preference", 0.70, "durable", ("code-review",), "global"),
    ("tests-first", "Writes the failing test first",
     "Starts every bug fix with a failing regression test before touching the code.",
     "workflow", 0.55, "durable", ("testing",), "global"),
    ("real-postgres-tests", "Tests against a real Postgres",
     "Repository tests run against a real Postgres database in a container, never mocks.",
     "convention", 0.45, "durable", ("testing", "postgres"), "billing"),
    ("conventional-commits", "Conventional commit messages",
     "Every commit message follows Conventional Commits, like fix(billing): round totals.",
     "convention", 0.95, "stable", ("git",), "global"),
    ("morning-deep-work", "Deep work in the morning",
     "Keeps mornings free of meetings for focused programming; reviews happen after lunch.",
     "workflow", 0.40, "situational", ("focus",), "global"),
    ("terse-answers", "Wants terse answers",
     "Prefers short direct answers without preamble or summaries at the end.",
     "preference", 0.80, "stable", ("communication",), "global"),
]


def make_belief(bid, title, statement, kind="preference", confidence=0.5, permanence="durable", tags=(),
                scope="global", **kw) -> Belief:
    # Only a verified fact may stand above 0.90 (rule 2); readers show nothing else there (rule 21).
    d = dict(id=bid, title=title, kind=kind, basis="fact" if confidence > 0.90 else "behavioral", confidence=confidence,
             permanence=permanence, first=date(2026, 6, 1), confirmed=date(2026, 11, 1), tags=tuple(tags),
             scope=scope, statement=statement)
    d.update(kw)
    return Belief(**d)


def write_belief(root: Path, b: Belief) -> Path:
    p = root / "beliefs" / f"{b.id}.md"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(render_belief(b), encoding="utf-8")
    return p


def observation(oid, evidence, connects="new", d=date(2026, 11, 2), **kw) -> Observation:
    return Observation(id=oid, date=d, evidence=evidence, strength="confirming", basis="behavioral",
                       connects=connects, **kw)


def write_observations(root: Path, month: str, obs: list[Observation]) -> Path:
    p = root / "observations" / f"{month}.md"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(render_observation(o) for o in obs), encoding="utf-8")
    return p


def mini_vault(root: Path) -> Path:
    """Six beliefs, one retired belief and a month of observations."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "epistemology.md").write_text("---\ndecay_floor: 0.20\n---\nRules.\n", encoding="utf-8")
    for bid, title, st, kind, conf, perm, tags, scope in BELIEFS:
        write_belief(root, make_belief(bid, title, st, kind, conf, perm, tags, scope))
    write_belief(root, make_belief("likes-mocks", "Tests with mocks", "Mocks the database in unit tests.",
                                   "convention", 0.30, "durable", ("testing",), "billing", status="retired"))
    write_observations(root, "2026-11", [
        observation("obs-20261102-a1b2", "Split a large refactor into four pull requests before asking for review.",
                    "small-pull-requests"),
        observation("obs-20261103-c3d4", "Wrote a regression test reproducing the rounding bug before fixing it.",
                    "tests-first"),
        observation("obs-20261104-e5f6", "Asked to reschedule a meeting away from the morning.", "new"),
    ])
    return root


# --- a real Chroma server -------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_chroma_server(path: Path, timeout: float = 60.0):
    """`chroma run` from this environment's bin, on loopback; returns (process, url)."""
    port = free_port()
    exe = Path(sys.executable).parent / "chroma"
    log = open(path.parent / "chroma-server.log", "wb")
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.Popen([str(exe), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chroma run exited with {proc.returncode}; see {log.name}")
        try:
            if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError("chroma run did not answer its heartbeat in time")


def stop(proc) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
