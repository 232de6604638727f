"""The floor for a session-start hook: the least a session-counting protocol
needs, and nothing more. It reads Claude Code's JSON from stdin and adds one to
a counter in a JSON file (on `startup` only).

    python3 bench/baseline_hook.py COUNTER.json < hook-input.json

bench/bench_hook.py runs it beside `epimem hook session-start`.
"""

import json
import sys

path = sys.argv[1]
try:
    payload = json.load(sys.stdin)
except ValueError:
    payload = {}
try:
    with open(path) as fh:
        counter = json.load(fh)
except (OSError, ValueError):
    counter = {"count": 0}
if payload.get("source") == "startup":
    counter["count"] = counter.get("count", 0) + 1
    with open(path, "w") as fh:
        json.dump(counter, fh)
