"""Helpers for the review inbox's tests: a vault with `review: required`, its bytes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from vaults import IDENTITY


def require_review(mem, value: str = "required") -> None:
    """Set `review:` in epistemology.md and commit it, as the user would."""
    p = mem.root / "epistemology.md"
    text = p.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    p.write_text("---\nreview: " + value + "\n" + text[4:], encoding="utf-8")
    env = {**IDENTITY}
    import os

    subprocess.run(["git", "commit", "-qam", "review required"], cwd=mem.root, check=True,
                   env={**os.environ, **env})


def belief_bytes(root: Path) -> dict[str, bytes]:
    """Every file a number lives in or is derived from: beliefs, logs, tensions, the context cache."""
    out = {}
    for folder in ("beliefs", "observations", "tensions", "reviews"):
        for f in sorted((root / folder).glob("*.md")):
            out[f"{folder}/{f.name}"] = f.read_bytes()
    ctx = root / ".epimem" / "context.json"
    if ctx.exists():
        out[".epimem/context.json"] = ctx.read_bytes()
    return out


def head(root: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()
