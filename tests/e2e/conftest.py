"""Fixtures for the end-to-end tests with the real Claude Code (see claude_harness.py)."""

from __future__ import annotations

import pytest
from claude_harness import ClaudeCode, claude_binary
from mock_api import MockAPI


@pytest.fixture(scope="session")
def claude_bin():
    return claude_binary()


@pytest.fixture
def api():
    with MockAPI(lifetime=600) as server:
        yield server


@pytest.fixture
def claude_code(claude_bin, api, tmp_path):
    """A user with epimem on PATH, a fresh HOME and the current Claude Code."""
    return ClaudeCode(claude_bin, tmp_path, api)
