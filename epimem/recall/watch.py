"""`epimem watch`: keep the recall index current while the user edits the
vault in Obsidian or an editor, and optionally commit those hand edits.

The handler does not trust event types. Editors save in many ways — write in
place, write a temp file and rename it over the original, delete and
recreate — and the events of one save arrive in any order. So a batch of
events only says "something changed"; the handler then runs the index sync,
which compares the files on disk with the manifest. A file that is gone is
removed, a file that is back is indexed, a malformed file is reported with
its path and line and skipped (never rewritten) until a later save fixes it.

With `--commit`, each settled batch becomes at most one commit made by
`api/hand_edits.commit_hand_edits`, whose message names the beliefs and fields
changed ("edit: prefers-small-prs confidence 0.55 → 0.70").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..core.model import Problem

IGNORED_DIRS = frozenset({".git", ".epimem", ".obsidian", ".trash", ".stfolder", ".stversions",
                          "__pycache__", "node_modules"})
TEMP_SUFFIXES = ("~", ".swp", ".swo", ".swx", ".tmp", ".temp", ".bak", ".crswap", ".part", ".kate-swp")
INDEXED_DIRS = ("beliefs", "observations")


def is_temp_name(name: str) -> bool:
    """Editors' scratch files: hidden files, backups, swap files, vim's `4913` probe,
    Emacs lock files (`.#x.md`), and the `.x.md.epimem-….tmp` of epimem's own writes."""
    return (name.startswith((".", "#", "~$")) or name.endswith(TEMP_SUFFIXES) or name == "4913"
            or ".sb-" in name)


def relative(root: Path, path: str | os.PathLike) -> str | None:
    """The vault-relative path of an event, or None when the event is noise."""
    try:
        rel = Path(path).absolute().relative_to(root)
    except ValueError:
        return None
    parts = rel.parts
    if not parts or any(p in IGNORED_DIRS for p in parts) or is_temp_name(parts[-1]):
        return None
    return rel.as_posix()


def indexed(rel: str) -> bool:
    parts = rel.split("/")
    return len(parts) == 2 and parts[0] in INDEXED_DIRS and parts[1].endswith(".md")


@dataclass
class Outcome:
    paths: list[str] = field(default_factory=list)
    synced: object = None                 # index Report, when the index was touched
    new_problems: list[Problem] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    commit: str | None = None
    commit_changes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class WatchHandler:
    """Reacts to one settled batch of file events. Usable without a watcher:
    tests feed it real files and synthetic (change, path) events."""

    def __init__(self, root: str | os.PathLike, *, index=None, commit: bool = False, memory=None,
                 echo: Callable[[str], None] = print):
        from .index import Index

        self.root = Path(root).absolute()
        self.index = index or Index(self.root)
        self.commit = commit
        self.memory = memory
        if commit and memory is None:
            from ..api.service import open_service

            self.memory = open_service(self.root)
        self.echo = echo
        self._reported: dict[tuple[str, int, str], None] = {}
        self._commit_reported: set[tuple[str, int, str]] = set()

    def watch_filter(self, change, path: str) -> bool:
        rel = relative(self.root, path)
        if rel is None:
            return False
        return self.commit or indexed(rel) or Path(path).is_dir()

    def start(self):
        """Catch up with edits made while nobody watched: sync, and commit them."""
        rep = self.index.sync()
        self._note_problems(rep.problems, rep.refused)
        if self.commit:
            self._commit(Outcome())
        return rep

    def handle(self, changes: Iterable[tuple[object, str]]) -> Outcome:
        out = Outcome()
        rels = sorted({r for _, p in changes if (r := relative(self.root, p)) is not None})
        out.paths = rels
        if not rels:
            return out
        if any(indexed(r) or "/" not in r or r.split("/")[0] in INDEXED_DIRS for r in rels):
            try:
                rep = self.index.sync()
                out.synced = rep
                out.new_problems, out.fixed = self._note_problems(rep.problems, rep.refused)
                if rep.action in ("synced", "rebuilt"):
                    self.echo(rep.summary())
            except Exception as e:  # a watcher must outlive a bad moment (a server restart…)
                out.errors.append(f"index: {e}")
                self.echo(f"epimem watch: could not update the index: {e}")
        if self.commit:
            self._commit(out)
        return out

    def _commit(self, out: Outcome) -> None:
        try:
            from ..api.hand_edits import commit_hand_edits

            sha, changes, problems = commit_hand_edits(self.memory)
        except Exception as e:
            out.errors.append(f"commit: {e}")
            self.echo(f"epimem watch: could not commit: {e}")
            return
        now = {(p.path, p.line, p.message) for p in problems}
        for p in problems:
            if (p.path, p.line, p.message) not in self._commit_reported:
                self.echo(str(p))
        self._commit_reported = now
        if sha:
            out.commit = sha
            out.commit_changes = [c.sentence() for c in changes]
            self.echo(f"Committed {sha[:8]}: " + "; ".join(out.commit_changes))

    def _note_problems(self, problems: list[Problem], refused=()) -> tuple[list[Problem], list[str]]:
        """Say each problem (and each hand edit indexed as last committed, SPEC rule 21) once, and
        say when a reported file is fine again."""
        now = {(p.path, p.line, p.message): p for p in problems}
        said = {(r.path, 0, r.why): r for r in refused}
        new = [p for k, p in now.items() if k not in self._reported]
        for p in new:
            self.echo(f"{p} (skipped until fixed; the file is not rewritten)")
        for k, r in said.items():
            if k not in self._reported:
                self.echo(str(r))
                new.append(Problem(r.path, 1, str(r)))
        now.update({k: Problem(r.path, 1, str(r)) for k, r in said.items()})
        gone_paths = sorted({k[0] for k in self._reported if k not in now} - {k[0] for k in now})
        for path in gone_paths:
            self.echo(f"{path}: fixed, indexed again")
        self._reported = {k: None for k in now}
        return new, gone_paths


def run(root: str | os.PathLike, *, commit: bool = False, index=None, echo: Callable[[str], None] = print,
        debounce_ms: int = 1600, step_ms: int = 100, stop_event=None, force_polling: bool | None = None) -> int:
    """Watch until interrupted (or `stop_event` is set). Returns an exit code."""
    import watchfiles

    handler = WatchHandler(root, index=index, commit=commit, echo=echo)
    handler.start()
    armed = False
    try:
        # The OS watch is set when watchfiles starts, after the start's sync: a save in between
        # would wait for the next change. The first (empty) yield comes once it is set; a second
        # sync then catches such a save, and only then does "Watching" promise anything.
        for changes in watchfiles.watch(handler.root, watch_filter=handler.watch_filter,
                                        debounce=debounce_ms, step=step_ms, stop_event=stop_event,
                                        rust_timeout=ARMED_CHECK_MS, yield_on_timeout=True,
                                        raise_interrupt=False, force_polling=force_polling):
            if not armed:
                armed = True
                rep = handler.start()
                echo(f"Watching {handler.root} ({rep.items} items indexed"
                     + (", committing hand edits" if commit else "") + "). Ctrl-C to stop.")
            if changes:
                handler.handle(changes)
    except KeyboardInterrupt:
        pass
    return 0


# How long the watcher waits for a change before it yields an empty batch (the first one says
# the OS watch is set); later empty batches are skipped, a wake-up of the loop a few times a second.
ARMED_CHECK_MS = 200
