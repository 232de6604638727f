"""bench/bench_index_judged.py runs what it says at a small scale: its figures come from syncs
that re-read (a manifest without `judged`, a new day) and leave the vault as it found it."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import bench_index_judged as bench  # noqa: E402


def test_the_bench_times_each_sync_and_restores_the_vault(tmp_path, capsys):
    root = tmp_path / "vault"
    assert bench.main(["--vault", str(root), "--beliefs", "30", "--observations", "60", "--refused", "2",
                       "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "seconds" not in line]
    assert [r.split(" | ")[0] for r in rows] == [
        "| unchanged", "| one belief changed", "| no `judged` (first sync after the upgrade)",
        "| a new day (2 refused files)"], out
    import subprocess

    status = subprocess.run(["git", "status", "--porcelain", "--", "beliefs"], cwd=root, capture_output=True,
                            text=True, check=True).stdout
    assert status == "", status
