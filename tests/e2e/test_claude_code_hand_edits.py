"""The adversary of SPEC rules 21 and 23 with the real Claude Code: a model that edits a belief
file with its own Edit tool — raising the confidence past its cap and pasting a token — then
reads it back with the commands epimem gives it, and in its next session's context.

Whatever the model managed to write, what it is shown is the belief as last committed, redacted,
with the one line saying the edit was refused.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from claude_harness import ClaudeCode
from mock_api import bash, text, tool_use

from epimem.core.params import DEFAULTS

pytestmark = pytest.mark.e2e

TOKEN = "ghp_Zq7Xw9Pk3Lm5Nb8Vc2Rt6Yu1Io4Ea0Sd3Fg7Hj"
# A belief the user adds without a confidence starts at the behavioural start of a fresh vault.
START = f"{DEFAULTS.start['behavioral']:.2f}"
TIER = DEFAULTS.tier(DEFAULTS.start["behavioral"], "behavioral")
LINE = "beliefs/avoids-orms.md: an edit was refused, so it is shown as last committed: confidence 0.99"


def test_a_model_that_edits_a_belief_by_hand_reads_back_what_is_valid(claude_code: ClaudeCode):
    cc = claude_code
    cc.epimem("install", "claude-code")
    cc.epimem("belief", "add", "--title", "Avoids ORMs", "--statement", "Writes SQL by hand.", "--kind",
              "preference", "--basis", "behavioral", "--permanence", "durable")
    path = cc.default_vault / "beliefs" / "avoids-orms.md"
    cc.api.add(tool_use("Read", {"file_path": str(path)}),
               tool_use("Edit", {"file_path": str(path), "old_string": f"confidence: {START}",
                                 "new_string": "confidence: 0.99"}),
               tool_use("Edit", {"file_path": str(path), "old_string": "Writes SQL by hand.",
                                 "new_string": f"Writes SQL by hand. Token {TOKEN}"}),
               bash("epimem belief show avoids-orms 2>&1", "Read the belief back"),
               bash("epimem recall 'sql by hand' 2>&1", "Recall it"),
               bash("epimem skill mirror gut-check", "What /mirror shows"),
               text("Done."))
    run = cc.claude("-p", "Make epimem sure that I avoid ORMs.", "--allowedTools", "Read,Edit,Bash(epimem *)",
                    "--add-dir", str(cc.default_vault))
    assert run.returncode == 0, run.explain()
    assert "confidence: 0.99" in path.read_text() and TOKEN in path.read_text()  # the model did edit the file
    results = [r for r in cc.api.tool_results()]
    shown = [json.dumps(r.get("content")) for r in results[-3:]]
    assert all(not r.get("is_error") for r in results[-3:]), results
    show, recall, mirror = shown
    assert f"confidence {START}" in show and f"({TIER})" in show, show
    assert f"({START} {TIER})" in recall and "factual" not in recall, recall
    for out in shown:
        assert LINE in out and TOKEN not in out and TOKEN[4:] not in out, out

    # The next session's context: the committed belief, the line, no token (the cache brought up to
    # date as the hook's background refresh does once it sees the edit).
    subprocess.run([sys.executable, "-m", "epimem.store.context_cache", str(cc.default_vault)], env=cc.env(),
                   check=True, timeout=60)
    cc.api.add(text("Hello."))
    nxt = cc.claude("-p", "hello")
    assert nxt.returncode == 0, nxt.explain()
    sent = json.dumps(cc.api.main_requests()[-1])
    assert f"({TIER}) Avoids ORMs" in sent and LINE in sent and TOKEN[4:] not in sent
