"""What every service is given: one vault, the day it is used on, and the reads built on them.

A service (`api/beliefs`, `api/observe`, `mirror/gutcheck`, …) is a plain function taking a
`Service`: the vault (its reader, its lock, its parameters), the day (`today`, and `write_today`,
never after the machine's date) and the snapshot readers see. It is frozen and small on purpose:
a service calls another service's function, never the `Memory` facade, so no service imports
`api/memory` and the facade can import them all (docs/architecture.md, "Services").

`Memory` (`api/memory.py`) is a `Service` with the facade's methods on it, which is what the
front ends hold; a service called with a `Memory` is given a `Service` and sees no more of it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TypeVar

from ..core import rules
from ..core.errors import VaultError
from ..core.model import Belief, Snapshot
from ..core.params import Params
from ..store import clock
from ..store.files import purge_pending
from ..store.journal import recover_if_needed
from ..store.vault import ObservationLog, Vault

_T = TypeVar("_T")


# eq=False: two services over one folder are two readers, as two `Memory`s always were.
@dataclass(frozen=True, eq=False)
class Service:
    vault: Vault
    given_today: str | date | None = None  # the caller's `today` (`--today`); None: the clock's

    def recover(self) -> None:
        # Any command finishes or rolls back a change a killed process left half-made
        # (one stat when there is none), before it reads or writes anything.
        recover_if_needed(self.root, self.vault.lock())
        if purge_pending(self.root):  # what the store cannot finish of a killed purge: recall's index
            _finish_purge(self)

    @property
    def root(self) -> Path:
        return self.vault.root

    @property
    def today(self) -> date:
        return clock.today(self.given_today)

    @property
    def write_today(self) -> date:
        """The day written evidence is dated: `today`, never after the machine's date (rule 20)."""
        return clock.write_day(self.given_today)

    @property
    def machine_day(self) -> date | None:
        """The machine's date, which no date in the vault may pass (rule 20); None under the
        test-only clock switch."""
        return clock.machine_day()

    @property
    def replayed(self) -> date | None:
        """The overridden date when the clock is replayed (tests, EPIMEM_TODAY): commits carry it."""
        if self.given_today is not None or os.environ.get("EPIMEM_TODAY"):
            return self.today
        return None

    @property
    def params(self) -> Params:
        return self.vault.params()[0]

    def effective(self, b: Belief) -> float:
        return rules.effective_confidence(b, self.today, self.params)

    def snapshot(self, observations: bool = True) -> Snapshot:
        """The vault as readers see it (SPEC rules 21, 23): redacted, a belief whose hand edit
        breaks a rule as it was last committed (`Snapshot.refused` says which)."""
        return self._reading(lambda: self.vault.snapshot(self.today, observations=observations, shown=True))

    def snapshot_and_log(self) -> tuple[Snapshot, ObservationLog]:
        """The snapshot without its observations, and them as a `store.vault.ObservationLog`
        (counted and looked up without building them all), read as one state."""
        return self._reading(lambda: self.vault.snapshot_and_log(self.today, shown=True))

    def _reading(self, read: Callable[[], _T]) -> _T:
        self.vault.require()
        try:
            return read()
        except OSError as e:  # an unreadable folder (permissions, a vault on a lost mount)
            raise VaultError(f"cannot read the vault at {self.root}: {e.strerror or e}",
                             path=e.filename and str(e.filename)) from None


def open_service(root: str | Path, today: str | date | None = None) -> Service:
    """The service for the vault at `root`, once what a killed process left is finished."""
    s = Service(Vault(root), today)
    s.recover()
    return s


def _finish_purge(mem: Service) -> str | None:
    """A purge killed after its history landed leaves its caches to finish (the recall index):
    the store finished the git part; this finishes the rest. One stat when there is none."""
    from ..store import rewrite

    if not rewrite.pending(mem.root):
        return None
    note = rewrite.recover(mem.root, mem.vault.lock())
    if rewrite.pending(mem.root):
        rewrite.drop_caches(mem.root)
        try:
            from ..recall.api import erase

            erase(mem.root)
        except Exception:  # noqa: BLE001 - the next recall rebuilds; what matters is the history
            pass
        rewrite.end(mem.root)
        if note is None:
            import logging

            note = "an interrupted purge was finished: its history had landed; the caches are now rebuilt"
            logging.getLogger("epimem").warning("epimem: %s", note)
    return note
