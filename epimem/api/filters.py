"""Which beliefs a listing shows."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.kernel import scope_matches
from ..core.model import Belief


@dataclass(frozen=True)
class Filters:
    kind: str | None = None
    permanence: str | None = None
    status: str | None = "active"  # None: every status
    tag: str | None = None
    scope: str | None = None       # a project: its beliefs plus global ones (kernel.scope_matches)
    min_confidence: float | None = None  # on effective confidence

    def match(self, b: Belief, effective: float) -> bool:
        return ((self.kind is None or b.kind == self.kind)
                and (self.permanence is None or b.permanence == self.permanence)
                and (self.status is None or b.status == self.status)
                and (self.tag is None or self.tag in b.tags)
                and scope_matches(b.scope, self.scope)
                and (self.min_confidence is None or effective >= self.min_confidence - 1e-9))
