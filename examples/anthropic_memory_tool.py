"""A Claude app whose memory is the user's epimem vault: the SDK's tool runner with epimem's backend
of the memory tool (docs/anthropic-memory.md).

    epimem init                                    # once: the vault (or set EPIMEM_VAULT)
    export ANTHROPIC_API_KEY=...
    python examples/anthropic_memory_tool.py "By the way, I always indent with tabs."
    python examples/anthropic_memory_tool.py --conversation c-42 --counted "Set up my editor."

The model views /memories (the vault as files), and what it writes there becomes observations
under the vault's rules: `epimem diff --since today`, `epimem tensions` or `git log` in the vault
show what it recorded and proposed.
`--counted` says this conversation is a session with the user (rule 19); leave it out for runs
that are not (a batch job, a test), whose observations then move a belief at most a step a day.
"""

from __future__ import annotations

import argparse
import sys

import anthropic

from epimem.integrations.anthropic_memory import INSTRUCTIONS, EpimemMemoryTool


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("message", help="what the user says")
    ap.add_argument("--vault", help="the vault (default: $EPIMEM_VAULT, else the user's default vault)")
    ap.add_argument("--conversation", help="this conversation's id: the session its observations count for")
    ap.add_argument("--counted", action="store_true", help="count this conversation as a session with the user")
    ap.add_argument("--model", default="claude-sonnet-5-5")
    args = ap.parse_args(argv)

    memory = EpimemMemoryTool(args.vault, session=args.conversation)
    if args.counted:
        print(f"[epimem] {' '.join(memory.start_session().lines())}", file=sys.stderr)
    client = anthropic.Anthropic()  # ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL from the environment
    runner = client.beta.messages.tool_runner(
        model=args.model, max_tokens=2048, system=INSTRUCTIONS, tools=[memory],
        messages=[{"role": "user", "content": args.message}])
    for message in runner:  # each assistant turn; the runner answers the memory tool's calls between them
        for block in message.content:
            if block.type == "text":
                print(block.text)
            elif block.type == "tool_use":
                print(f"[memory] {block.input.get('command')} {block.input.get('path', '')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
