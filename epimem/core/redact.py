"""Secrets never reach the vault or a model: every text written or sent
passes through `redact` with the patterns of `epistemology.md`."""

from __future__ import annotations

import re
from functools import lru_cache

from .params import DEFAULTS


@lru_cache(maxsize=16)
def _compiled(patterns: tuple[tuple[str, str], ...]) -> tuple[tuple[str, re.Pattern], ...]:
    return tuple((name, re.compile(p)) for name, p in patterns)


def redact(text: str, patterns: tuple[tuple[str, str], ...] = DEFAULTS.redact) -> str:
    if not text:
        return text
    for name, rx in _compiled(patterns):
        def sub(m: re.Match, name=name) -> str:
            keep = m.groupdict().get("keep") or ""
            return f"{keep}[REDACTED:{name}]"
        text = rx.sub(sub, text)
    return text
