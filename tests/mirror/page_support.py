"""Vaults with a known history for the visual mirror's tests (real git, real API commits)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KNOWN = "reviews-diffs-line-by-line"
XSS_TITLE = "<script>alert(1)</script>"
XSS = "script-alert-1-script"

# The belief with a known history: (commit date, stored confidence after it), oldest first,
# and its evidence markers (date, kind). Written through the real API on those days.
KNOWN_STEPS = [("2026-10-01", "0.30"), ("2026-10-08", "0.35"), ("2026-10-20", "0.40"),
               ("2026-11-02", "0.40"), ("2026-11-10", "0.20"), ("2026-11-20", "0.20")]
KNOWN_MARKERS = [("2026-10-01", "note"), ("2026-10-08", "confirmation"), ("2026-10-20", "confirmation"),
                 ("2026-11-02", "challenge"), ("2026-11-10", "rejection"), ("2026-11-20", "verdict")]


def sample_copy(dst: Path, when: str = "2026-11-28T12:00:00") -> Path:
    """The sample vault as its own repository, its one commit dated `when`."""
    shutil.copytree(ROOT / "vault", dst, ignore=shutil.ignore_patterns(".epimem"))
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=dst, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=dst, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "sample vault"], cwd=dst, check=True, env=env)
    return dst


def add_known_history(root: Path, markup: bool = True) -> None:
    """The known belief, moved by real observations and gut-check answers on known days,
    and (with `markup`) a belief whose title is markup."""
    from epimem.api.memory import Memory
    from epimem.mirror.gutcheck import answer

    Memory(root, today="2026-10-01").add_belief(
        title="Reviews diffs line by line", statement="Reads every line of a diff before approving.",
        kind="workflow", basis="behavioral", permanence="durable", tags=["review"], belief_id=KNOWN)
    for day, strength, text, session in (
            ("2026-10-08", "confirming", "Read all 400 lines of the migration diff before approving.", "s1"),
            ("2026-10-20", "confirming", "Asked for the full diff again, not a summary.", "s2"),
            ("2026-11-02", "contradicting", "Approved a 900-line PR after a glance.", "s3")):
        Memory(root, today=day).observe([{"connects": KNOWN, "strength": strength, "evidence": text,
                                          "basis": "behavioral", "session": session}])
    answer(Memory(root, today="2026-11-10"), KNOWN, "false", note="only for risky changes")
    answer(Memory(root, today="2026-11-20"), KNOWN, "true", note="yes, for migrations")
    if not markup:
        return
    Memory(root, today="2026-11-21").add_belief(
        title=XSS_TITLE, statement='Says <img src=x onerror="alert(2)"> & means it.', kind="preference",
        basis="self-report", permanence="unknown", tags=["<b>tag</b>"], belief_id=XSS)


def history_vault(dst: Path) -> Path:
    sample_copy(dst)
    add_known_history(dst)
    return dst
