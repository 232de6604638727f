"""The thin scripts in hooks/ run the real hook and never fail a session."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_session_start_script_counts_and_answers(vault, tmp_path):
    env = {**os.environ, "EPIMEM_VAULT": str(vault.root),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    payload = json.dumps({"session_id": "abc", "source": "startup", "cwd": str(tmp_path),
                          "hook_event_name": "SessionStart", "transcript_path": ""})
    out = subprocess.run([str(ROOT / "hooks" / "session-start")], input=payload, capture_output=True,
                         text=True, env=env, timeout=30)
    assert out.returncode == 0
    ctx = json.loads(out.stdout)["hookSpecificOutput"]
    assert ctx["hookEventName"] == "SessionStart" and "ession" in ctx["additionalContext"]


def test_scripts_exit_0_without_epimem_on_path(tmp_path):
    for name in ("session-start", "session-end"):
        out = subprocess.run(["/bin/sh", str(ROOT / "hooks" / name)], input="{}", capture_output=True,
                             text=True, env={"PATH": str(tmp_path)}, timeout=30)
        assert out.returncode == 0 and out.stdout == ""


def test_settings_example_is_valid_json():
    data = json.loads((ROOT / "hooks" / "settings.example.json").read_text())
    assert data["hooks"]["SessionStart"][0]["matcher"] == "startup"
