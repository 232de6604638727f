"""What the recall index holds: one `Item` per belief and per observation.

Pure: built from the core's Belief and Observation values, turned into the
flat metadata Chroma accepts, and into rows of the sidecar table. The text of
an item is what is both embedded and keyword-indexed, so the two rankers see
the same words.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date

from ..core import record
from ..core.model import Belief, Observation

BELIEF = "belief"
OBSERVATION = "observation"


@dataclass(frozen=True)
class Item:
    id: str
    type: str                    # BELIEF or OBSERVATION
    title: str
    text: str                    # embedded and keyword-indexed
    kind: str = ""
    basis: str = ""
    permanence: str = ""
    status: str = "active"
    scope: str = "global"
    tags: tuple[str, ...] = ()
    confidence: float | None = None   # stored; observations have none
    pinned: bool = False
    first: date | None = None
    confirmed: date | None = None
    challenged: date | None = None
    date: date | None = None          # an observation's date
    connects: str = ""                # an observation's belief, or "new"
    strength: str = ""
    path: str = ""

    @property
    def key(self) -> str:
        """Unique across types: a belief may be called `obs-…` too."""
        return ("b/" if self.type == BELIEF else "o/") + self.id

    @property
    def updated(self) -> date | None:
        """The date the date-range filters look at: the last thing that happened to it."""
        if self.type == OBSERVATION:
            return self.date
        ds = [d for d in (self.first, self.confirmed, self.challenged) if d is not None]
        return max(ds) if ds else None

    @property
    def text_digest(self) -> str:
        return hashlib.sha1(self.text.encode("utf-8")).hexdigest()[:16]


def belief_text(b: Belief) -> str:
    parts = [b.title.strip()]
    if b.statement.strip():
        parts.append(b.statement.strip())
    if b.tags:
        parts.append("Tags: " + ", ".join(t.replace("-", " ") for t in b.tags))
    return "\n".join(parts)


def observation_text(o: Observation) -> str:
    return "\n".join(s.strip() for s in (o.evidence, o.suggests, o.therefore) if s and s.strip())


def from_belief(b: Belief) -> Item:
    return Item(id=b.id, type=BELIEF, title=b.title, text=belief_text(b), kind=b.kind, basis=b.basis,
                permanence=b.permanence, status=b.status, scope=b.scope or "global",
                tags=tuple(b.tags), confidence=float(b.confidence), pinned=b.pinned, first=b.first,
                confirmed=b.confirmed, challenged=b.challenged, path=b.path)


def _title(text: str, n: int = 80) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[:n - 1].rstrip() + "…"


def from_observation(o: Observation) -> Item:
    return Item(id=o.id, type=OBSERVATION, title=_title(o.evidence or o.suggests or o.id),
                text=observation_text(o), basis=o.basis, date=o.date, connects=o.connects,
                strength=o.strength, path=o.path)


# --- rows of the sidecar table, and Chroma metadata ------------------------------------

# An item's row in the sidecar table: `core.record`'s names and encodings, over an Item
# (a belief's fields, plus an observation's `type`, `date`, `connects`, `strength`).
ROW_FIELDS = ("id", "type", "title", "kind", "basis", "permanence", "status", "scope", "tags",
              "confidence", "pinned", "first", "confirmed", "challenged", "date", "connects",
              "strength", "path")
to_row = record.encoder(ROW_FIELDS)


def from_row(r: list, text: str = "") -> Item:
    d = record.decode(ROW_FIELDS, r)
    d["pinned"] = bool(d["pinned"])
    return Item(text=text, **d)


def _ordinal(d: date | None) -> int:
    return int(d.strftime("%Y%m%d")) if d else 0


def chroma_metadata(it: Item) -> dict:
    """Flat scalars only (Chroma's rule); dates as YYYYMMDD integers so a server
    user can filter on them too. Tags become `tag:NAME` flags."""
    md: dict = {"type": it.type, "title": it.title[:500], "path": it.path}
    if it.type == BELIEF:
        md.update(kind=it.kind, basis=it.basis, permanence=it.permanence, status=it.status,
                  scope=it.scope, confidence=float(it.confidence or 0.0), pinned=it.pinned,
                  first=_ordinal(it.first), confirmed=_ordinal(it.confirmed),
                  challenged=_ordinal(it.challenged), updated=_ordinal(it.updated))
        for t in it.tags[:32]:
            md[f"tag:{t}"[:120]] = True
    else:
        md.update(basis=it.basis, date=_ordinal(it.date), updated=_ordinal(it.date),
                  connects=it.connects, strength=it.strength)
    return md
