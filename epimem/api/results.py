"""What the API's writes return: plain frozen values the CLI renders and Python callers read."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.model import Observation


@dataclass(frozen=True)
class ObservationResult:
    observation: Observation
    belief: str | None
    duplicate: bool = False
    created: bool = False
    before: float | None = None
    after: float | None = None
    reason: str = ""
    tension: str | None = None
    tension_opened: bool = False  # `tension` is new (else the evidence joined one already open)
    alert: bool = False
    # Rule 17: active beliefs close to the one this observation would create
    # ([{id, title, similarity}]); when any observation has some, nothing was written.
    similar: tuple[dict, ...] = ()
    # SPEC §14: the belief a contradicting observation proposed in place of the one it
    # contradicts (created of that observation, or an existing one), named by the tension too.
    successor: str | None = None


@dataclass(frozen=True)
class ObserveReport:
    results: tuple[ObservationResult, ...]
    commit: str | None
    # SPEC §15: with `review: required`, an unattended path's batch is proposed, not applied:
    # the ids of the proposals it wrote to the inbox (nothing else changed).
    proposed: tuple[str, ...] = ()
    accepted: tuple[str, ...] = ()  # `inbox accept`: the proposals this commit applied
    imported: tuple[str, ...] = ()  # `inbox accept` of an import's proposals: the beliefs it wrote

    @property
    def alerts(self) -> list[ObservationResult]:
        return [r for r in self.results if r.alert]

    @property
    def held(self) -> bool:
        """Rule 17 held the batch back: a new belief was close to an active one."""
        return any(r.similar for r in self.results)


@dataclass(frozen=True)
class SessionReport:
    counted: bool
    count: int
    dormant_days: int | None
    review_due: str | None
    commit: str | None = None

    def lines(self) -> list[str]:
        out = [f"Session {self.count} with this vault." if self.counted
               else f"Continuing a session (not counted); {self.count} sessions so far."]
        if self.dormant_days is not None:
            out.append(f"Returning from dormancy: the last session was {self.dormant_days} days ago; "
                       "confidences shown are decayed.")
        if self.review_due:
            out.append(f"A review is due ({self.review_due}): "
                       "run `epimem mirror audit --record` (or a gut-check) to record it.")
        return out
