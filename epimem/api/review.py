"""Whether what comes from an unattended path waits for the user (SPEC §15's review inbox).

`review: required` in `epistemology.md` (off by default) asks that what the session-end pass,
the memory tool, imports and agents over MCP record land as proposals the user accepts or
rejects. The inbox itself is issue 29 item 2 and not built yet: until it is, the paths that
check this setting (the memory tool, `integrations/anthropic_memory`) refuse to write rather
than let something land that the user asked to see first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .memory import Memory

SETTING = "review"
REQUIRED = "required"


def required(mem: Memory) -> bool:
    """The vault asks for review of what unattended paths record (`review: required`)."""
    value = mem.vault.settings().get(SETTING)
    return isinstance(value, str) and value.strip().lower() == REQUIRED
