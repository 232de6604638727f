"""Rule 22 with the real Claude Code (issue 24, item 4): under the installed skills, a command that
is the user's decision is not run without their approval. In `claude -p` there is nobody to ask,
so Claude Code denies it; what the skill runs itself (`observe`) still runs."""

from __future__ import annotations

import json

import pytest
from mock_api import bash, request_text, text
from test_claude_code import commits, install, taught_command

from epimem.core.params import DEFAULTS

pytestmark = pytest.mark.e2e

FACT = ("epimem belief add --title 'Runs Postgres sixteen' --statement 'The shop runs on Postgres 16.' "
        "--kind fact --basis fact --permanence stable")


def test_under_observe_a_fact_is_not_added_without_the_user(claude_code):
    cc = claude_code
    install(cc)
    vault = cc.default_vault
    cc.api.add(bash(FACT, "Record it as a fact"),
               lambda body: bash(taught_command(request_text(body), "Wants a rollback plan before shipping"),
                                 "Record"),
               text("Done."))
    run = cc.claude("-p", "/observe")
    assert run.returncode == 0, run.explain()
    denied = [d.get("tool_input", {}).get("command", "") for d in run.denials]
    assert any("belief add" in c and "--basis fact" in c for c in denied), run.denials
    assert not (vault / "beliefs" / "runs-postgres-sixteen.md").exists()
    assert not any(s.startswith("add:") for s, _ in commits(cc, vault)), commits(cc, vault)
    # what the skill itself runs went through: the observation is a commit of its own
    assert [s for s, _ in commits(cc, vault) if s.startswith("observe:")], commits(cc, vault)
    results = cc.api.tool_results()
    assert results and results[0].get("is_error"), results  # the model is told it was not run


def test_under_mirror_an_answer_and_an_undo_wait_for_the_user(claude_code):
    cc = claude_code
    install(cc)
    vault = cc.default_vault
    cc.epimem("belief", "add", "--title", "Thinks out loud", "--statement", "Talks options through.", "--kind",
              "trait", "--basis", "interpretive", "--permanence", "unknown", "--confidence", "0.2")
    before = (vault / "beliefs" / "thinks-out-loud.md").read_text()
    cc.api.add(bash("epimem mirror answer thinks-out-loud --verdict true --note 'yes'", "Record the answer"),
               bash("epimem undo", "Undo"), bash("epimem belief edit thinks-out-loud --confidence 0.90", "Raise"),
               text("Asked."))
    run = cc.claude("-p", "/mirror gut-check")
    assert run.returncode == 0, run.explain()
    denied = " ".join(d.get("tool_input", {}).get("command", "") for d in run.denials)
    assert "mirror answer" in denied and "epimem undo" in denied and "belief edit" in denied, run.denials
    assert (vault / "beliefs" / "thinks-out-loud.md").read_text() == before
    show = json.loads(cc.epimem("belief", "show", "thinks-out-loud", "--json").stdout)
    assert show["confidence"] == 0.2


def test_the_session_the_hook_counted_is_the_one_observe_names(claude_code):
    """Rule 19 end to end: the hook counts Claude Code's session id, the skill's command names the
    same id (${CLAUDE_SESSION_ID}), so a confirmation in a real session moves the belief a step."""
    import re

    cc = claude_code
    install(cc)
    vault = cc.default_vault
    cc.epimem("belief", "add", "--title", "Prefers small pull requests", "--statement", "Splits work into small PRs.",
              "--kind", "workflow", "--basis", "behavioral", "--permanence", "durable", "--confidence", "0.6")

    def confirming(body):
        m = re.search(r"^(\S+ observe --origin skill --session \S+ --source claude-code --json --connects "
                      r"'prefers-small-pull-requests' --strength confirming .*)$", request_text(body), re.M)
        assert m, request_text(body)[-3000:]
        return bash(m.group(1), "Record")

    cc.api.add(confirming, text("Recorded."))
    run = cc.claude("-p", "/observe")
    assert run.returncode == 0 and run.denials == [], run.explain()
    counted = json.loads((vault / "state" / "sessions.json").read_text())["counted"]
    assert run.session_id in counted
    show = json.loads(cc.epimem("belief", "show", "prefers-small-pull-requests", "--json").stdout)
    assert show["confidence"] == round(0.6 + DEFAULTS.confirm_step, 2), show  # one step: a counted session


def test_a_replayed_day_in_front_of_the_skills_command_is_not_run_without_the_user(claude_code):
    """Rule 19 and 20 from a model's side: `EPIMEM_TODAY=<a past day> epimem observe --origin skill …`
    would date each write on a day of the model's choosing (a fresh step a made-up day). The skill
    grants the command, not the command behind an assignment: Claude Code does not run it unasked."""
    cc = claude_code
    install(cc)
    vault = cc.default_vault
    cc.api.add(lambda body: bash("EPIMEM_TODAY=2026-11-02 " + taught_command(request_text(body), "Likes dry runs"),
                                 "Record it on another day"),
               text("Done."))
    run = cc.claude("-p", "/observe")
    assert run.returncode == 0, run.explain()
    denied = [d.get("tool_input", {}).get("command", "") for d in run.denials]
    assert any(c.startswith("EPIMEM_TODAY=") for c in denied), (run.denials, commits(cc, vault))
    assert not (vault / "beliefs" / "likes-dry-runs.md").exists()
