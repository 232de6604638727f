"""The vocabulary of epimem: small frozen values, no I/O.

Everything the rules, the mirror and recall reason about is one of these
dataclasses. They are built by `epimem.core.notes` from the vault's files and
turned back into text by the same module; nothing here knows about disks, Git
or Chroma.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from .display import visible
from .kernel import REVIEW_EVERY_SESSIONS

BASES = ("fact", "behavioral", "self-report", "interpretive")
PERMANENCES = ("stable", "durable", "situational", "unknown")
STATUSES = ("active", "superseded", "retired")
STRENGTHS = ("single", "confirming", "complicating", "contradicting")
TENSION_STATUSES = ("unresolved", "watching", "resolved")


@dataclass(frozen=True)
class Evidence:
    """One line of a belief's `## Evidence` section.

    `kind` is an observation strength (single, confirming, ...) or a user or
    review action (added, edited, rejected, retired, reinforced, review, ...).
    `link` is the wikilink target without brackets, `note` the free text.
    """

    date: date | None
    kind: str
    link: str = ""
    note: str = ""


@dataclass(frozen=True)
class Belief:
    id: str
    title: str
    kind: str
    basis: str
    confidence: float
    permanence: str
    first: date
    confirmed: date | None = None
    challenged: date | None = None
    status: str = "active"
    tags: tuple[str, ...] = ()
    scope: str = "global"
    pinned: bool = False
    supersedes: tuple[str, ...] = ()
    # The beliefs this one rests on (SPEC §14): when one of them is superseded, retired or
    # falls a tier, this one is flagged by a tension, never lowered by itself.
    depends_on: tuple[str, ...] = ()
    statement: str = ""
    evidence: tuple[Evidence, ...] = ()
    # The Claude session that last confirmed the belief: rule 3 only counts a
    # confirmation from a *different* session.
    confirmed_session: str = ""
    path: str = ""  # relative to the vault, "beliefs/<id>.md"


@dataclass(frozen=True)
class Observation:
    id: str
    date: date
    evidence: str
    strength: str
    basis: str
    connects: str  # a belief id or "new"
    suggests: str = ""
    therefore: str = ""
    source: str = ""
    session: str = ""
    # The beliefs the assistant cited ([id]) in the session this observation came from: what
    # it relied on, so the mirror can show beliefs that are used but never confirmed.
    cited: tuple[str, ...] = ()
    path: str = ""  # "observations/<YYYY-MM>.md"


@dataclass(frozen=True)
class Tension:
    id: str  # the file stem: "<YYYY-MM-DD>-<slug>"
    date: date
    belief: str
    status: str
    title: str
    what_happened: str = ""
    evidence: tuple[str, ...] = ()  # wikilink targets
    suggests: str = ""
    resolution: str = ""
    path: str = ""
    # SPEC §14: the belief a contradicting observation proposed in place of `belief`, so
    # that the question names both sides; and, for a flag "rests on a belief that changed",
    # the belief that changed under `belief`. Each is a belief id ("" when not set).
    successor: str = ""
    rests_on: str = ""


@dataclass(frozen=True)
class Sessions:
    """`state/sessions.json`. `days` maps a date to the sessions started that
    day, so "how many sessions since D" is answerable without a log file."""

    count: int = 0
    last_session: date | None = None
    last_review: date | None = None
    next_review_at: int = REVIEW_EVERY_SESSIONS
    created: date | None = None
    days: tuple[tuple[str, int], ...] = ()
    # machine id → sessions it counted (their sum is `count`: a grow-only counter, SPEC §1.4)
    machines: tuple[tuple[str, int], ...] = ()
    # session id → the ISO day it was counted, for a few days (rule 19)
    counted: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Problem:
    """A file the engine could not read, reported as `path:line: message`."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{visible(self.path)}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Refused:
    """A hand edit no reader shows (SPEC rule 21): the file is shown as it was last committed, or,
    when that commit holds the edit too (`since`: the commit it is shown from), as it was in the
    newest commit that is valid. `str()` is the one line every front end says about it."""

    path: str
    why: str
    since: str = ""

    @property
    def shown_as(self) -> str:
        return f"as committed in {self.since}, its last valid state" if self.since else "as last committed"

    def __str__(self) -> str:
        return f"{visible(self.path)}: an edit was refused, so it is shown {self.shown_as}: {self.why}"


@dataclass(frozen=True)
class Snapshot:
    """Everything read from a vault at one moment: the input of every view."""

    beliefs: tuple[Belief, ...] = ()
    observations: tuple[Observation, ...] = ()
    tensions: tuple[Tension, ...] = ()
    sessions: Sessions = field(default_factory=Sessions)
    problems: tuple[Problem, ...] = ()
    today: date | None = None
    refused: tuple[Refused, ...] = ()  # files shown as last committed (a reader's snapshot only)

    def belief(self, belief_id: str) -> Belief | None:
        for b in self.beliefs:
            if b.id == belief_id:
                return b
        return None
