"""Fixtures of the MCP tests: a vault with beliefs and a tension, and a running HTTP daemon."""

from __future__ import annotations

import pytest
from mcp_support import HttpServer, seed


@pytest.fixture
def mvault(vault):
    """A vault with three beliefs and one contradiction on record; returns its root."""
    seed(vault)
    return vault.root


@pytest.fixture
def http_server(mvault):
    srv = HttpServer(mvault)
    yield srv
    srv.stop()
