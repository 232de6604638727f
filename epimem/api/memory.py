"""The Python API: one `Memory` per vault, every operation one commit.

`Memory` is a thin facade: a `Service` (`api/service.py`: the vault and the
day) whose methods check nothing and decide nothing themselves but hand it to
a focused service — `beliefs` (add, edit, reject, reinforce, pin, supersede),
`observe` (the observe pipeline), `tensions`, `timeline` (history, diff, undo,
hand edits), `validate`, `sessions` (session start, reviews) and `setup`
(init). The services take a `Service`, never a `Memory`: they read through
`Vault`, decide with the pure functions of `epimem.core.rules` and write
through the one write path, `epimem.store.transaction`. The CLI, the hook,
the skills, MCP and the benchmarks go through here.

Each method imports its service when first called: a read command such as
`belief list` loads one service, not the seven.

Every error a caller can act on is an `EpimemError` (`epimem.core.errors`),
carrying the field, file or line where it is known.

    import epimem
    mem = epimem.open("~/notes/epimem")
    mem.observe([{"connects": "prefers-small-prs", "strength": "confirming",
                  "evidence": "Split the refactor into three PRs unprompted.",
                  "basis": "behavioral", "session": "8f3a2c"}])
    for b in mem.beliefs(min_confidence=0.5):
        print(b.id, b.confidence, mem.effective(b))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.changes import Change
from ..core.errors import EpimemError
from ..core.filters import Filters
from ..core.model import Belief, Problem, Refused, Tension
from ..store.paths import resolve_root
from ..store.vault import Vault
from .results import ObservationResult, ObserveReport, SessionReport
from .service import Service

if TYPE_CHECKING:
    from ..store.git import HistoryPoint
    from .listing import Listing

__all__ = ["open", "Memory", "Filters", "EpimemError", "ObservationResult", "ObserveReport", "SessionReport"]


def open(path: str | Path | None = None, today: str | date | None = None) -> Memory:  # noqa: A001
    """Open the vault at `path` (else $EPIMEM_VAULT, else the user data dir)."""
    return Memory(resolve_root(path), today=today)


class Memory(Service):
    """The facade: a `Service` (the vault, the day) with every operation as a method."""

    def __init__(self, root: str | Path, today: str | date | None = None):
        super().__init__(Vault(root), today)
        self.recover()

    @classmethod
    def init(cls, root: str | Path | None = None, today: str | date | None = None) -> tuple[Memory, bool]:
        """Create a vault (idempotent): folders, rules, counter, .gitignore, git, first commit."""
        mem = cls(resolve_root(root), today=today)
        from . import setup as _setup
        return mem, _setup.init(mem)

    # -- reading -------------------------------------------------------------------
    def beliefs(self, filters: Filters | None = None, **kw: Any) -> list[Belief]:
        """The beliefs that pass the filters (a `Filters`, or `kind=`, `status=`, …), in id order,
        as every reader shows them (`shown_belief`)."""
        from . import listing as _listing
        return _listing.beliefs(self, _listing.filters(filters, kw))

    def listing(self, filters: Filters | None = None, *, limit: int | None = None, offset: int = 0,
                **kw: Any) -> Listing:
        """`belief list`: the beliefs that pass the filters, strongest first, with the files not
        shown and the hand edits refused."""
        from . import listing as _listing
        return _listing.listing(self, _listing.filters(filters, kw), limit=limit, offset=offset)

    def belief(self, belief_id: str) -> Belief:
        """A belief as every reader shows it: redacted, and as it was last committed when a
        hand edit to it breaks a rule (SPEC rule 21; `shown_belief` also says why)."""
        return self.shown_belief(belief_id)[0]

    def shown_belief(self, belief_id: str) -> tuple[Belief, Refused | None]:
        from . import listing as _listing
        return _listing.get(self, belief_id)

    def shown_file(self, belief_id: str) -> tuple[str, Belief, Refused | None]:
        """A belief's file as readers are given it: redacted, its committed text when a hand
        edit to it was refused."""
        from . import listing as _listing
        return _listing.get_file(self, belief_id)

    def describe(self) -> dict[str, Any]:
        """What the vault holds: counts, the vocabulary in use, the rules in brief, sessions, a due review."""
        from . import describe as _describe
        return _describe.describe(self)

    def tensions(self, status: str | None = None) -> list[Tension]:
        from . import tensions as _tensions
        return _tensions.select(self, status)

    # -- writing beliefs -------------------------------------------------------------
    def add_belief(self, *, title: str, statement: str, kind: str, basis: str, permanence: str,
                   confidence: float | None = None, tags: Iterable[str] = (), scope: str = "global",
                   belief_id: str | None = None, supersedes: Iterable[str] = (),
                   pinned: bool = False, note: str = "", depends_on: Iterable[str] = ()) -> Belief:
        from . import beliefs as _beliefs
        return _beliefs.add(self, title=title, statement=statement, kind=kind, basis=basis, permanence=permanence,
                            confidence=confidence, tags=tags, scope=scope, belief_id=belief_id,
                            supersedes=supersedes, pinned=pinned, note=note, depends_on=depends_on)

    def edit_belief(self, belief_id: str, note: str = "", **changes: Any) -> Belief:
        """Change fields by the user's hand; a confidence change is a user action with provenance."""
        from . import beliefs as _beliefs
        return _beliefs.edit(self, belief_id, note, changes)

    def reject(self, belief_id: str, *, retire: bool = False, note: str = "") -> Belief:
        """Rule 5: the user says it is no longer true: −0.20, or retire it."""
        from . import beliefs as _beliefs
        return _beliefs.reject(self, belief_id, retire=retire, note=note)

    def retire(self, belief_id: str, note: str = "") -> Belief:
        return self.reject(belief_id, retire=True, note=note)

    def reinforce(self, belief_id: str, note: str = "", kind: str = "reinforcing", affirm: bool = False) -> Belief:
        """The user restating a belief: recorded as evidence, no number changes (rule 3);
        `affirm` (a gut-check's "still true") also makes decay count from today (rule 16)."""
        from . import beliefs as _beliefs
        return _beliefs.reinforce(self, belief_id, note, kind, affirm)

    def set_pinned(self, belief_id: str, pinned: bool) -> Belief:
        from . import beliefs as _beliefs
        return _beliefs.set_pinned(self, belief_id, pinned)

    def supersede(self, old_ids: Iterable[str], by: str, note: str = "") -> Belief:
        from . import beliefs as _beliefs
        return _beliefs.supersede(self, old_ids, by, note)

    def merge(self, keep: str, other: str, note: str = "") -> Belief:
        """Two beliefs the user says are one: `other`'s evidence joins `keep`, which supersedes it."""
        from . import beliefs as _beliefs
        return _beliefs.merge(self, keep, other, note)

    def apply_review(self, changes: list[tuple[str, dict[str, Any], str]], subject: str) -> tuple[str, list[Belief]]:
        """The user accepts a review's proposals (belief id, fields, why): one commit."""
        from . import beliefs as _beliefs
        return _beliefs.apply_review(self, changes, subject)

    # -- observing -------------------------------------------------------------------
    def observe(self, items: list[dict[str, Any]], *, source: str = "cli",
                session: str | None = None, origin: str | None = None, own: str | None = None) -> ObserveReport:
        """Record 0–N observations as one commit, applying the rules to the beliefs they connect.

        `origin`: the unattended path the batch comes from ("session-end", "mcp", "memory-tool",
        "import", "api", "skill"); with `review: required` in `epistemology.md` it is proposed to
        the user instead (`report.proposed` names the proposals; nothing else changed). `own`: the
        session the caller itself gives the batch, not one the model named (an MCP connection, a
        memory tool's conversation): rule 9 bounds it as a session of its own (`observe.apply`)."""
        from . import inbox as _inbox
        return _inbox.observe_or_propose(self, items, source=source, session=session, origin=origin, own=own)

    # -- the review inbox (SPEC §15): proposals, and the user's decision on each ----------------
    def inbox(self):
        """The pending proposals, each with what accepting it would change; and the unreadable files."""
        from . import inbox as _inbox
        return _inbox.previews(self)

    def inbox_accept(self, ids: Iterable[str], seen: Mapping[str, str] | None = None) -> ObserveReport:
        """The user accepts proposals: the rules applied as if just observed, one commit; `seen`
        (id → `core.inbox.fingerprint` of what they were shown) refuses one changed since."""
        from . import inbox as _inbox
        return _inbox.accept(self, list(ids), seen)

    def inbox_reject(self, ids: Iterable[str], note: str = "", seen: Mapping[str, str] | None = None
                     ) -> tuple[str, tuple[str, ...]]:
        """The user rejects proposals: kept on file as rejected, one commit."""
        from . import inbox as _inbox
        return _inbox.reject(self, list(ids), note, seen)

    def similar(self, title: str, statement: str = "") -> list[dict]:
        """Rule 17: active beliefs close to a would-be new one ([{id, title, similarity}])."""
        from . import similar as _similar
        return _similar.similar(self, title, statement)

    # -- tensions ------------------------------------------------------------------------
    def resolve_tension(self, tension_id: str, note: str) -> Tension:
        from . import tensions as _tensions
        return _tensions.resolve(self, tension_id, note)

    def open_tension(self, belief_id: str, note: str, title: str = "") -> Tension:
        """The user opens a tension on a belief (`status: unresolved`)."""
        from . import tensions as _tensions
        return _tensions.open_tension(self, belief_id, note, title)

    def propose(self, belief_id: str, action: str, *, by: str = "", title: str = "",
                source: str = "an assistant") -> tuple[Tension, bool]:
        """An assistant proposes what only the user decides — `retire` a belief, let `by`
        `supersede` it, `rename` it `title` — as an open question on it, never applied;
        (the tension, whether it was opened now)."""
        from . import tensions as _tensions
        return _tensions.propose(self, belief_id, action, by=by, title=title, source=source)

    def reopen_tension(self, tension_id: str, note: str) -> Tension:
        """A resolved tension is open again (`unresolved`), with the user's note."""
        from . import tensions as _tensions
        return _tensions.set_status(self, tension_id, "unresolved", note)

    def watch_tension(self, tension_id: str, note: str = "") -> Tension:
        """Keep an eye on a tension (`watching`)."""
        from . import tensions as _tensions
        return _tensions.set_status(self, tension_id, "watching", note)

    # -- sessions and reviews --------------------------------------------------------------
    def session_start(self, source: str = "startup", session: str | None = None) -> SessionReport:
        """Count a session; `session` is its id, which rule 19 then knows as a counted session."""
        from . import sessions as _sessions
        return _sessions.start(self, source, session)

    def record_review(self, kind: str, markdown: str, beliefs: Iterable[str] = ()) -> str:
        """Write `reviews/<date>.md` (appending when one exists) and reset the review counter."""
        from . import sessions as _sessions
        return _sessions.record_review(self, kind, markdown, beliefs)

    # -- history -----------------------------------------------------------------------------
    def history(self, belief_id: str) -> list[HistoryPoint]:
        from . import timeline as _timeline
        return _timeline.history(self, belief_id)

    def diff(self, since: str) -> list[Change]:
        from . import timeline as _timeline
        return _timeline.diff(self, since)

    def undo(self, commit: str | None = None) -> tuple[str, str]:
        """Revert `commit` (an epimem commit), or the last one not yet undone that changed a
        belief, an observation or a tension, with a new commit; returns (new sha, undone subject)."""
        from . import timeline as _timeline
        return _timeline.undo(self, commit)

    def redo(self) -> tuple[str, str]:
        """Re-apply what the last undo took back; returns (new sha, redone subject)."""
        from . import timeline as _timeline
        return _timeline.redo(self)

    # -- forgetting (SPEC §15): the user's decision, planned first, confirmed, then done ----------
    def forget_plan(self, beliefs: Iterable[str] = (), *, purge: bool = False, texts: Iterable[str] = (),
                    remotes: str | None = None):
        """What forgetting `beliefs` (with `purge`: from the history too; `texts`: strings typed
        anywhere) would change: files, commits, remotes. Writes nothing; show it to the user."""
        from . import forget as _forget
        return _forget.plan(self, beliefs, purge=purge, texts=tuple(texts), remotes=remotes)

    def forget(self, plan, *, confirm: str):
        """Do what `plan` says; `confirm` is the plan's token, given once the user said yes."""
        from . import forget as _forget
        return _forget.forget(self, plan, confirm=confirm)

    def commit_hand_edits(self) -> tuple[str | None, list[Change], list[Problem]]:
        """Commit what the user changed by hand, with a message naming it."""
        from . import hand_edits as _hand_edits
        return _hand_edits.commit_hand_edits(self)

    # -- validation ------------------------------------------------------------------------------
    def validate(self) -> list[Problem]:
        from . import validate as _validate
        return _validate.validate(self)

    def merge_leftovers(self) -> list[Problem]:
        """What a merge kept in both versions for the user to settle (SPEC §11)."""
        from . import validate as _validate
        return _validate.merge_leftovers(self.root)

    def bare_links(self) -> list[str]:
        """Notes written before references were wikilinks (SPEC §1): they name beliefs by bare id."""
        from . import validate as _validate
        return _validate.bare_links(self)

    def upgrade_links(self) -> tuple[str | None, list[str]]:
        """Rewrite those references as wikilinks in one commit; (the commit or None, the files)."""
        from . import validate as _validate
        return _validate.upgrade_links(self)
