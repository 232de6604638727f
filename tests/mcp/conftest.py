"""Fixtures of the MCP tests: a vault with beliefs and a tension, and a running HTTP daemon."""

from __future__ import annotations

import pytest
from mcp_support import HttpServer


@pytest.fixture
def mvault(vault):
    """A vault with three beliefs and one contradiction on record; returns its root."""
    vault.add_belief(title="Prefers small pull requests", statement="Splits work into small, reviewable PRs.",
                     kind="workflow", basis="behavioral", permanence="durable", tags=["code-review"])
    vault.add_belief(title="Thinks out loud before deciding", statement="Talks options through at length.",
                     kind="trait", basis="interpretive", permanence="unknown", tags=["decision-making"])
    vault.add_belief(title="Writes SQL by hand", statement="Prefers hand-written SQL over an ORM.",
                     kind="preference", basis="self-report", permanence="stable", scope="billing")
    vault.observe([{"connects": "thinks-out-loud-before-deciding", "strength": "contradicting",
                    "evidence": "Decided on the schema in one minute without discussion.", "session": "s0"}])
    return vault.root


@pytest.fixture
def http_server(mvault):
    srv = HttpServer(mvault)
    yield srv
    srv.stop()
