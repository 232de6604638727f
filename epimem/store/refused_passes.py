"""Session-end passes the vault refused: what they would have recorded is not lost, only waiting.

The transcript pass runs detached after a session, and nobody watches it. When the vault refuses
what it found (a hand edit broke this month's observation log, the inbox is full, the vault is
half merged), the only trace used to be a line in `.epimem/hook.log`: the session's evidence was
gone unless the user happened to read it. Each refusal is kept here instead — which transcript,
which session, the day, and why — so the next session start says so in one line, `epimem doctor`
lists each with the command that records it, and a pass of the same transcript that goes through
(`epimem transcript FILE`, once the cause is fixed) takes it off the list.

`.epimem/refused-passes.json` is not a cache (it cannot be rebuilt from the vault), so it is
written fsynced, under the vault lock, and a file that does not parse is set aside, not dropped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

NAME = os.path.join(".epimem", "refused-passes.json")
KEEP = 50  # Claude Code keeps a transcript about a month: more than a month's sessions is noise


def read(root: str | os.PathLike[str]) -> list[dict]:
    """The refused passes, oldest first; [] when there are none. One open on the session-start
    path: no file is the common case, and costs a failed open only."""
    try:
        with open(os.path.join(os.fspath(root), NAME), encoding="utf-8") as fh:
            return _passes(json.load(fh)) or []
    except (OSError, ValueError):
        return []


def _passes(doc) -> list[dict] | None:
    """The entries of the file's JSON, or None when it is not this file's shape."""
    items = doc.get("passes") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        return None
    return [p for p in items if isinstance(p, dict) and isinstance(p.get("transcript"), str)]


def add(root: Path, transcript: str, session: str, day: str, why: str) -> None:
    """Keep one refusal (the same transcript again replaces its entry). The caller holds the lock."""
    passes = [p for p in _load(root) if p.get("transcript") != transcript]
    passes.append({"transcript": transcript, "session": session, "day": day, "why": why})
    _write(root, passes[-KEEP:])


def drop(root: Path, transcript: str) -> None:
    """The transcript's pass went through: it no longer waits. The caller holds the lock."""
    passes = _load(root)
    kept = [p for p in passes if p.get("transcript") != transcript]
    if len(kept) != len(passes):
        _write(root, kept)


def _load(root: Path) -> list[dict]:
    path = root / NAME
    if not path.exists():
        return []
    try:
        passes = _passes(json.loads(path.read_text(encoding="utf-8")))
        if passes is None:
            raise ValueError("not a list of passes")
        return passes
    except (OSError, ValueError) as e:
        from .recovery import set_aside

        set_aside(str(path), "the list of refused session-end passes", e)  # a person can still read it
        return []


def _write(root: Path, passes: list[dict]) -> None:
    from .files import atomic_write

    path = root / NAME
    if not passes:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(exist_ok=True)
    atomic_write(path, json.dumps({"passes": passes}, ensure_ascii=False, indent=1) + "\n")
