"""The vault on disk: where it is, how its files are read, how they are written.

Reading goes through a parse cache in `.epimem/cache/` keyed by each file's
mtime and size (basic-memory's "sync by checksum" idea, cheaper): the files
stay the truth, the cache only saves re-parsing 10,000 unchanged beliefs.

Writing is atomic (temp file + rename in the same directory) and serialized
by an advisory lock on `.epimem/lock`, so two assistant sessions observing at
once never interleave.
"""

from __future__ import annotations

import json
import marshal
import os
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from ..core import record
from ..core.errors import EpimemError, VaultError
from ..core.ids import IdError, check_id
from ..core.model import Belief, Observation, Problem, Sessions, Snapshot, Tension
from ..core.notes import NoteError, parse_belief, parse_note, parse_observations, parse_tension
from ..core.params import DEFAULTS, Params, params_from_meta
from . import sessions as sessions_file
from .files import (
    JOURNAL_NAME,
    NotUTF8,
    VaultLock,
    compact_json,
    contained,
    lock_path,
    read_text,
    stat_key,
    write_cache,
)
from .paths import is_vault, leaves, note_entries

_T = TypeVar("_T")
INTERNAL = ".epimem"
CACHE_VERSION = 5  # 4: a belief is `core.record`'s row, not a dict; 5: `depends_on`


def _obs_row(o: Observation) -> tuple:
    return (o.id, o.date.isoformat(), o.evidence, o.strength, o.basis, o.connects, o.suggests,
            o.therefore, o.source, o.session)


def _obs_from_row(r: tuple, rel: str) -> Observation:
    return Observation(r[0], date.fromisoformat(r[1]), r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], path=rel)


class ObservationLog:
    """Every observation as the parse cache holds it (plain rows, per file), for a reader
    that counts them and looks a few up: building 50,000 `Observation`s costs a large
    vault's page a good part of a second, and it shows a few hundred."""

    def __init__(self, files: list[tuple[str, tuple]]):
        self._files = files  # (vault-relative path, rows in `_obs_row`'s order)

    def __len__(self) -> int:
        return sum(len(rows) for _, rows in self._files)

    def count_since(self, day: date) -> int:
        """How many are dated `day` or later."""
        iso = day.isoformat()  # ISO dates order as strings
        return sum(1 for _, rows in self._files for r in rows if r[1] >= iso)

    def find(self, ids: set[str]) -> dict[str, Observation]:
        """{id: observation} of those of `ids` the log holds."""
        return {r[0]: _obs_from_row(r, rel) for rel, rows in self._files for r in rows if r[0] in ids}

    def observations(self) -> list[Observation]:
        return [_obs_from_row(r, rel) for rel, rows in self._files for r in rows]


# --- (de)serialising beliefs for the cache: `core.record`'s exact row ---------------

belief_to_record = record.to_row
belief_from_record = record.from_row


# --- the vault -------------------------------------------------------------------

class Vault:
    def __init__(self, root: str | os.PathLike):
        self.root = Path(root).absolute()
        self.internal = self.root / INTERNAL
        self._lock = VaultLock(lock_path(self.root))
        self._rules: tuple[tuple[int, int] | None, Params, list[Problem], dict[str, Any]] | None = None
        self._git_checked = False
        # A front end that wants every reader of `epistemology.md` to report its invalid
        # values (SPEC §3: "reported with the file and key") sets this; it is called once
        # per parse of the file, with the problems, whichever command read it.
        self.on_rules_problems: Any = None

    # paths
    def path(self, rel: str) -> Path:
        """A path inside the vault; anything that would escape it is refused."""
        return contained(self.root, rel)

    def belief_path(self, belief_id: str) -> Path:
        return self.root / "beliefs" / f"{check_id(belief_id)}.md"

    def exists(self) -> bool:
        return is_vault(self.root)

    def require(self) -> None:
        if not self.root.is_dir():
            raise VaultError(f"no vault at {self.root}; create one with `epimem init`")
        if not self.exists():
            raise VaultError(f"{self.root} is not an epimem vault (no epistemology.md, no beliefs/); "
                             "create one with `epimem init`")
        if not self._git_checked:
            self._git_checked = True
            from . import (
                drivers,  # a merge half done reads as an empty vault; a clone lacks the driver
                vault_format,
            )

            try:
                vault_format.require_known(self.root)  # a newer epimem's vault is refused, not misread
            except VaultError:
                self._git_checked = False
                raise
            what = drivers.unfinished(self.root)
            if what is not None:
                self._git_checked = False
                raise VaultError(drivers.unfinished_message(self.root, what))
            drivers.ensure_registered(self.root)

    def lock(self) -> VaultLock:
        return self._lock

    # writes
    # Writing is not here: every change goes through `store.transaction` (the one write path).

    def read_text(self, rel: str) -> str:
        return read_text(self.path(rel), rel)

    # epistemology.md: the one reader, parsed once per change of the file
    def _read_rules(self) -> tuple[Params, list[Problem], dict[str, Any]]:
        problems: list[Problem]
        meta: dict[str, Any]
        p = self.root / "epistemology.md"
        key = stat_key(p)
        if self._rules is not None and self._rules[0] == key:
            return self._rules[1], list(self._rules[2]), self._rules[3]
        params, problems, meta = DEFAULTS, [], {}
        if key is not None:
            try:
                note = parse_note(read_text(p, "epistemology.md"))
                params, problems = params_from_meta(note.meta, "epistemology.md", note.key_lines)
                meta = dict(note.meta)
            except (NoteError, NotUTF8) as e:
                problems = [Problem("epistemology.md", e.line or 1, f"{e.message}; using the default parameters")]
        self._rules = (key, params, list(problems), meta)
        if problems and self.on_rules_problems is not None:
            self.on_rules_problems(list(problems))
        return params, problems, meta

    def params(self) -> tuple[Params, list[Problem]]:
        """The rules' parameters (SPEC §2) and what is wrong with them (each defaulted)."""
        params, problems, _ = self._read_rules()
        return params, problems

    def settings(self) -> dict[str, Any]:
        """The whole frontmatter of `epistemology.md`, for the settings that are not rule
        parameters (recall's embedder and store, the mirror's model); {} when missing or broken."""
        return self._read_rules()[2]

    # beliefs
    def read_belief(self, belief_id: str) -> tuple[str, Belief, tuple[int, int]]:
        """(text, belief, stat key) of one belief file; VaultError naming path:line if bad."""
        path = self.belief_path(belief_id)
        key = stat_key(path)
        if key is not None and leaves(self.root, path):
            raise VaultError(f"beliefs/{belief_id}.md is a symbolic link to outside the vault; epimem does not read it",
                             path=f"beliefs/{belief_id}.md")
        if key is None:
            raise VaultError(f"no belief '{belief_id}' (beliefs/{belief_id}.md does not exist)")
        try:
            text = read_text(path, f"beliefs/{belief_id}.md")
            return text, parse_belief(text, belief_id), key
        except (NoteError, NotUTF8) as e:
            raise VaultError(f"beliefs/{belief_id}.md:{e.line}: {e.message} "
                             "(fix the file; epimem will not rewrite it)") from None

    def load_beliefs(self) -> tuple[list[Belief], list[Problem]]:
        bdir = self.root / "beliefs"
        cache_path = self.internal / "cache" / "beliefs.json"
        cached: dict = {}
        try:
            raw = json.loads(cache_path.read_text(encoding="utf-8"))
            if raw.get("version") == CACHE_VERSION:
                cached = raw["files"]
        except (OSError, ValueError, KeyError, TypeError):
            cached = {}  # a missing or corrupt cache is just a cold start
        beliefs: list[Belief] = []
        problems: list[Problem] = []
        fresh: dict = {}
        changed = False
        # Racy-git trap: a file rewritten twice within the filesystem's mtime
        # granularity keeps its (mtime, size). An entry younger than this is
        # stored as unsettled and re-parsed until it is older.
        settle_ns = time.time_ns() - 2_000_000_000
        for entry in sorted(note_entries(bdir), key=lambda e: e.name):
            name = entry.name
            belief_id = name[:-3]
            try:
                st = entry.stat()
            except FileNotFoundError:
                continue  # deleted while we listed (an editor's delete-then-recreate)
            settled = st.st_mtime_ns < settle_ns
            hit = cached.get(belief_id)
            if hit is not None and hit[0] == st.st_mtime_ns and hit[1] == st.st_size and hit[3]:
                entry_rec = hit
            else:
                record = self._parse_record(entry.path, belief_id, f"beliefs/{name}")
                entry_rec = [st.st_mtime_ns, st.st_size, record, settled]
                if hit is None or hit[:3] != entry_rec[:3] or hit[3] != settled:
                    changed = True
            fresh[belief_id] = entry_rec
            record = entry_rec[2]
            if "problem" in record:
                problems.append(Problem(f"beliefs/{name}", record["problem"][0], record["problem"][1]))
            else:
                beliefs.append(belief_from_record(record["belief"]))
        if changed or len(fresh) != len(cached):
            try:
                write_cache(cache_path, compact_json({"version": CACHE_VERSION, "files": fresh}))
            except OSError:
                pass  # a read-only vault still reads
        return beliefs, problems

    @staticmethod
    def _parse_record(path: str, belief_id: str, rel: str) -> dict:
        try:
            check_id(belief_id)
        except IdError as e:
            return {"problem": [1, str(e)]}
        try:
            text = read_text(path, rel)
            return {"belief": belief_to_record(parse_belief(text, belief_id, rel))}
        except (NoteError, NotUTF8) as e:
            return {"problem": [e.line or 1, e.message]}
        except (OSError, UnicodeDecodeError) as e:
            return {"problem": [1, f"cannot read: {e}"]}

    # observations
    def observation_files(self) -> list[Path]:
        return sorted(Path(e.path) for e in note_entries(self.root / "observations"))

    def load_observations(self) -> tuple[list[Observation], list[Problem]]:
        log, problems = self.observation_log()
        return log.observations(), problems

    def observation_log(self) -> tuple[ObservationLog, list[Problem]]:
        """Every observation, through a per-file cache.

        Monthly logs are append-only, so all but the current month's are
        parsed once; the cache holds plain tuples in `marshal` format, the
        fastest safe way to load 50,000 of them (marshal builds only
        built-in values, it never runs code).
        """
        cache_path = self.internal / "cache" / "observations.marshal"
        cached: dict = {}
        try:
            raw = marshal.loads(cache_path.read_bytes())
            if isinstance(raw, dict) and raw.get("version") == CACHE_VERSION:
                cached = raw["files"]
        except (OSError, ValueError, EOFError, TypeError, KeyError):
            cached = {}
        settle_ns = time.time_ns() - 2_000_000_000  # the racy-git trap, as for beliefs
        fresh: dict = {}
        changed = False
        out: list[tuple[str, tuple]] = []
        problems: list[Problem] = []
        for p in self.observation_files():
            rel = f"observations/{p.name}"
            try:
                st = p.stat()
                hit = cached.get(rel)
                if hit is not None and hit[0] == st.st_mtime_ns and hit[1] == st.st_size and hit[2]:
                    entry = hit
                else:
                    obs, bad = parse_observations(read_text(p, rel), rel)
                    entry = (st.st_mtime_ns, st.st_size, st.st_mtime_ns < settle_ns,
                             tuple(_obs_row(o) for o in obs), tuple(bad))
                    changed = True
            except NotUTF8 as e:
                problems.append(Problem(rel, e.line or 1, e.message))
                continue
            except OSError as e:
                problems.append(Problem(rel, 1, f"cannot read: {e}"))
                continue
            fresh[rel] = entry
            out.append((rel, entry[3]))
            problems.extend(Problem(rel, line, msg) for line, msg in entry[4])
        if changed or len(fresh) != len(cached):
            try:
                write_cache(cache_path, marshal.dumps({"version": CACHE_VERSION, "files": fresh}))
            except (OSError, ValueError):
                pass  # a read-only vault still reads
        return ObservationLog(out), problems

    # tensions
    def load_tensions(self) -> tuple[list[Tension], list[Problem]]:
        out: list[Tension] = []
        problems: list[Problem] = []
        for p in sorted(Path(e.path) for e in note_entries(self.root / "tensions")):
            rel = f"tensions/{p.name}"
            try:
                out.append(parse_tension(read_text(p, rel), p.stem, rel))
            except (NoteError, NotUTF8) as e:
                problems.append(Problem(rel, e.line or 1, e.message))
            except (OSError, UnicodeDecodeError) as e:
                problems.append(Problem(rel, 1, f"cannot read: {e}"))
        return out, problems

    # sessions
    def read_sessions(self) -> Sessions:
        s, _ = self.read_sessions_checked()
        return s

    def read_sessions_checked(self) -> tuple[Sessions, list[Problem]]:
        p = self.root / sessions_file.PATH
        try:
            raw = json.loads(read_text(p, sessions_file.PATH))
        except FileNotFoundError:
            return Sessions(), []
        except NotUTF8 as e:
            return Sessions(), [Problem(sessions_file.PATH, e.line or 1, e.message)]
        except RecursionError:
            return Sessions(), [Problem(sessions_file.PATH, 1, "invalid JSON: nested too deeply")]
        except (OSError, ValueError) as e:
            line = getattr(e, "lineno", 1)
            return Sessions(), [Problem(sessions_file.PATH, line, f"invalid JSON: {e}")]
        try:
            return sessions_file.from_raw(raw), []
        except (TypeError, ValueError, AttributeError, OverflowError) as e:
            return Sessions(), [Problem(sessions_file.PATH, 1, f"invalid session counter: {e}")]

    # everything
    def snapshot(self, today: date, *, observations: bool = True) -> Snapshot:
        """Every note of the vault as one state: before a change or after it, never half of one.

        Readers take no lock, so that many of them never slow a writer. A change of several
        files is journalled from before its first file until after its commit (`store.journal`),
        and a commit moves HEAD: a read that began and ended with no journal and the same HEAD
        saw no change in between (a seqlock over the files). One that did is read again; one
        that keeps meeting changes reads under the vault lock, as a writer would.
        The soak saw `validate` report an observation linking to a belief not yet written.
        """
        return self._consistent(lambda: self._snapshot(today, observations))

    def snapshot_and_log(self, today: date) -> tuple[Snapshot, ObservationLog]:
        """A snapshot without its observations, and them as an `ObservationLog`, read as one
        state (for a reader that only counts observations and shows a few)."""
        return self._consistent(lambda: self._read(today, False, True))

    def _consistent(self, read: Callable[[], _T]) -> _T:
        for attempt in range(8):
            before = self._generation()
            if before is not None:
                value = read()
                if self._generation() == before:
                    return value
            time.sleep(0.02 * (attempt + 1))
        try:
            with self._lock:  # reentrant: a writer of this process reading its own vault does not wait
                return read()
        except (OSError, EpimemError):
            return read()  # a read-only vault: as it is

    def _generation(self) -> tuple[str | None, int] | None:
        """What changes when a change is made: None while one is being made (by another process)."""
        from .git import head_sha

        journal = os.path.join(self.root, INTERNAL, JOURNAL_NAME)
        try:
            with open(journal, "rb") as fh:
                doc = json.loads(fh.read())
            if not (isinstance(doc, dict) and doc.get("pid") == os.getpid()):
                return None  # another process's change, under way (or its crash, which the lock sorts out)
        except FileNotFoundError:
            pass
        except (OSError, ValueError, RecursionError):
            return None
        return head_sha(self.root), os.getpid()

    def _snapshot(self, today: date, observations: bool) -> Snapshot:
        return self._read(today, observations, False)[0]

    def _read(self, today: date, observations: bool, log: bool) -> tuple[Snapshot, ObservationLog]:
        params, pp = self.params()
        beliefs, bp = self.load_beliefs()
        obs_log, op = self.observation_log() if observations or log else (ObservationLog([]), [])
        obs = tuple(obs_log.observations()) if observations else ()
        tensions, tp = self.load_tensions()
        sessions, sp = self.read_sessions_checked()
        return Snapshot(tuple(beliefs), obs, tuple(tensions), sessions,
                        tuple(pp + bp + op + tp + sp), today), obs_log
