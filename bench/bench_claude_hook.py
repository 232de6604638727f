"""The session-start hook's wall time as the real Claude Code logs it, beside a no-op `python3` hook.

    python bench/bench_claude_hook.py [--rounds N] [--version 2.1.332]

One temporary HOME with epimem installed (`epimem install claude-code`, a vault of 40 beliefs),
then N rounds; each round runs `claude -p` once with epimem's hook and once with
`python3 -c pass` in its place, in alternating order so that a loaded machine slows both alike.
The figure is what Claude Code writes to its debug log ("Hooks: SessionStart:startup [...]
finished with status 0 (NNNms)"): the hook as the user's session waits for it. Claude Code talks
to the mock Messages API of tests/e2e on 127.0.0.1; nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "e2e"), str(ROOT / "tests")]

from claude_harness import CURRENT, ClaudeCode, claude_binary  # noqa: E402
from mock_api import MockAPI  # noqa: E402

NOOP = "python3 -c pass"


def hook_ms(cc: ClaudeCode) -> int:
    run = cc.claude("-p", "hello")
    starts = [h for h in run.hook_runs("SessionStart") if h.status == 0 and h.ms >= 0]
    if len(starts) != 1:
        raise SystemExit("no SessionStart hook time in Claude Code's log:\n" + run.explain())
    return starts[0].ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--version", default=CURRENT)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, MockAPI(lifetime=1800) as api:
        cc = ClaudeCode(claude_binary(args.version), Path(tmp), api)
        cc.epimem("install", "claude-code")
        for i in range(40):
            cc.epimem("belief", "add", "--title", f"Belief number {i} about how they work",
                      "--statement", f"Statement {i}.", "--kind", "workflow", "--basis", "behavioral",
                      "--permanence", "durable", "--confidence", "0.6")
        settings = cc.home / ".claude" / "settings.json"
        ours = settings.read_text()
        data = json.loads(ours)
        for group in data["hooks"]["SessionStart"]:
            group["hooks"] = [{"type": "command", "command": NOOP, "timeout": 10}]
        noop = json.dumps(data)
        times: dict[str, list[int]] = {"epimem": [], "noop": []}
        hook_ms(cc)  # warm the page cache and Claude Code's own first-run work
        for r in range(args.rounds):
            order = [("epimem", ours), ("noop", noop)]
            for name, text in order if r % 2 == 0 else order[::-1]:
                settings.write_text(text)
                times[name].append(hook_ms(cc))
        settings.write_text(ours)
    print(f"Claude Code {args.version}, {args.rounds} rounds, SessionStart hook wall time as logged (ms):")
    for name, label in (("epimem", "epimem hook session-start"), ("noop", NOOP)):
        t = sorted(times[name])
        print(f"  {label:<28} median {statistics.median(t):6.0f}   min {t[0]:5d}   max {t[-1]:5d}")


if __name__ == "__main__":
    main()
