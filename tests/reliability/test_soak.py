"""The soak suite with counts bounded for CI (SPEC §8): writers and readers at once lose nothing.

`python bench/soak.py` runs the same with 8 writers × 50 operations; its figures are in
docs/reliability.md.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _soak():
    sys.path.insert(0, str(ROOT / "bench"))  # the writer processes import it by name too
    spec = importlib.util.spec_from_file_location("soak", ROOT / "bench" / "soak.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.soak
def test_writers_and_readers_at_once_lose_nothing(tmp_path):
    fig = _soak().run(tmp_path / "vault", writers=4, ops=8)
    assert fig["crashed_writers"] == []
    assert fig["errors"] == []
    assert fig["commits_landed"] == fig["commits_expected"]
    assert fig["observations_lost"] == [] and fig["observations_doubled"] == []
    assert fig["validate_ok"], fig["validate"]
    assert fig["fsck_ok"], fig["fsck"]
    assert fig["tree_clean"]
    assert fig["hand_edit"] == "committed"
    assert fig["read_errors"] == []
    assert fig["reads"] > 0
