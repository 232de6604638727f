"""A conversation with the real SDK's tool runner, the model scripted by the mock Messages API."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import anthropic
from mock_api import MODEL, MockAPI, text, tool_use

NUMBER = re.compile(r"(?<![\w.])0?\.\d\d(?!\d)")  # a confidence the model could copy back


@dataclass(frozen=True)
class Result:
    text: str
    is_error: bool


def client(api: MockAPI) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="no-key-needed", base_url=api.url, max_retries=0)


def converse(tool, calls: list[dict], *, user: str = "Help me set up my editor.") -> tuple[list[Result], MockAPI]:
    """Run one conversation in which the model calls the memory tool with each of `calls` in turn,
    then stops; the tool results the SDK sent back, in order, and the server (for its log)."""
    script = [tool_use("memory", c) for c in calls] + [text("Done.")]
    with MockAPI(script, lifetime=120) as api:
        runner = client(api).beta.messages.tool_runner(
            model=MODEL, max_tokens=1024, messages=[{"role": "user", "content": user}], tools=[tool])
        runner.until_done()
    return tool_results(api), api


def tool_results(api: MockAPI) -> list[Result]:
    out = []
    for block in api.tool_results():
        content = block.get("content")
        if isinstance(content, list):
            content = "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
        out.append(Result(content or "", bool(block.get("is_error"))))
    return out


def head(root: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file of the vault outside `.git` and `.epimem`, by path: what a refused write must leave."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not {".git", ".epimem"} & set(p.relative_to(root).parts)}
