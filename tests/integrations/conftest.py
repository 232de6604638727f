"""The memory tool's tests drive the real anthropic SDK against the mock Messages API of the
Claude Code tests (tests/e2e/mock_api.py), on loopback: no network, no API key."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
