"""The vault on disk: where it is, how its files are read, how they are written.

Reading goes through a parse cache in `.epimem/cache/` keyed by each file's
mtime and size (basic-memory's "sync by checksum" idea, cheaper): the files
stay the truth, the cache only saves re-parsing 10,000 unchanged beliefs.
What it hands out is redacted (`core/reading`, SPEC rule 23), whatever the
file's state, so the cache keeps the redacted values and the patterns they
were redacted with.

Readers see the vault through `Vault.reader` (`shown_beliefs`, `shown_belief`,
`snapshot(shown=True)`): a belief file whose hand edit breaks a rule is shown
as it was last committed (rule 21). Only such files cost a look at git, all of
them in one `git cat-file`; a vault without one pays one rule check a belief.

Writing is atomic (temp file + rename in the same directory) and serialized
by an advisory lock on `.epimem/lock`, so two assistant sessions observing at
once never interleave.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from ..core import reading, record
from ..core.errors import EpimemError, VaultError
from ..core.ids import IdError, check_id
from ..core.model import Belief, Observation, Problem, Refused, Sessions, Snapshot, Tension
from ..core.nesting import loads_json
from ..core.notes import NoteError, parse_belief, parse_note, parse_observations, parse_tension
from ..core.params import DEFAULTS, Params, params_from_meta
from . import sessions as sessions_file
from .files import (
    JOURNAL_NAME,
    NotUTF8,
    VaultLock,
    contained,
    lock_path,
    read_text,
    stat_key,
)
from .paths import is_vault, leaves, note_entries
from .statcache import StatCache

_T = TypeVar("_T")
INTERNAL = ".epimem"
# 4: a belief is `core.record`'s row, not a dict; 5: `depends_on`; 6: an observation's `cited`;
# 7: values redacted as read (rule 23); 8: an observation field given twice is a problem, its first value kept.
CACHE_VERSION = 8


def _patterns_key(patterns: tuple[tuple[str, str], ...]) -> str:
    """What the parse caches were redacted with: a cache redacted otherwise is parsed again."""
    import hashlib

    return hashlib.sha1(repr(patterns).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _obs_row(o: Observation) -> tuple:
    return (o.id, o.date.isoformat(), o.evidence, o.strength, o.basis, o.connects, o.suggests,
            o.therefore, o.source, o.session, list(o.cited))


def _obs_from_row(r: tuple, rel: str) -> Observation:
    return Observation(r[0], date.fromisoformat(r[1]), r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
                       cited=tuple(r[10]), path=rel)


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
    def _belief_file(self, belief_id: str) -> tuple[Path, str, tuple[int, int]]:
        """(path, vault-relative path, stat key) of a belief file that exists inside the vault."""
        path = self.belief_path(belief_id)
        rel = f"beliefs/{belief_id}.md"
        key = stat_key(path)
        if key is not None and leaves(self.root, path):
            raise VaultError(f"{rel} is a symbolic link to outside the vault; epimem does not read it", path=rel)
        if key is None:
            raise VaultError(f"no belief '{belief_id}' ({rel} does not exist)")
        return path, rel, key

    def read_belief(self, belief_id: str) -> tuple[str, Belief, tuple[int, int]]:
        """(text, belief, stat key) of one belief file as it is on disk, for a writer about to
        change it (readers: `shown_belief`); VaultError naming path:line if bad."""
        path, _, key = self._belief_file(belief_id)
        try:
            text = read_text(path, f"beliefs/{belief_id}.md")
            return text, parse_belief(text, belief_id), key
        except (NoteError, NotUTF8) as e:
            raise VaultError(f"beliefs/{belief_id}.md:{e.line}: {e.message} "
                             "(fix the file; epimem will not rewrite it)") from None

    def load_beliefs(self) -> tuple[list[Belief], list[Problem]]:
        """Every belief file as it is on disk, redacted; those that do not parse as problems.
        (What a reader shows of them is `shown_beliefs`.)"""
        patterns = self.params()[0].redact
        cache = StatCache(self.root, "beliefs", CACHE_VERSION, _patterns_key(patterns))
        beliefs: list[Belief] = []
        problems: list[Problem] = []
        for entry in sorted(note_entries(self.root / "beliefs"), key=lambda e: e.name):
            name = entry.name
            belief_id = name[:-3]
            try:
                st = entry.stat()
            except FileNotFoundError:
                continue  # deleted while we listed (an editor's delete-then-recreate)
            record = cache.get(belief_id, st)
            if record is None:
                record = self._parse_record(entry.path, belief_id, f"beliefs/{name}", patterns)
                cache.put(belief_id, st, record)
            if "problem" in record:
                problems.append(Problem(f"beliefs/{name}", record["problem"][0], record["problem"][1]))
            else:
                beliefs.append(belief_from_record(record["belief"]))
        cache.save()
        return beliefs, problems

    @staticmethod
    def _parse_record(path: str, belief_id: str, rel: str, patterns=()) -> dict:
        try:
            check_id(belief_id)
        except IdError as e:
            return {"problem": [1, str(e)]}
        try:
            text = read_text(path, rel)
            return {"belief": belief_to_record(reading.belief(parse_belief(text, belief_id, rel), patterns))}
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
        patterns = self.params()[0].redact
        cache = StatCache(self.root, "observations", CACHE_VERSION, _patterns_key(patterns))
        out: list[tuple[str, tuple]] = []
        problems: list[Problem] = []
        for p in self.observation_files():
            rel = f"observations/{p.name}"
            try:
                st = p.stat()
                parsed = cache.get(rel, st)
                if parsed is None:
                    obs, bad = parse_observations(read_text(p, rel), rel)
                    parsed = (tuple(_obs_row(reading.observation(o, patterns)) for o in obs), tuple(bad))
                    cache.put(rel, st, parsed)
            except NotUTF8 as e:
                problems.append(Problem(rel, e.line or 1, e.message))
                continue
            except OSError as e:
                problems.append(Problem(rel, 1, f"cannot read: {e}"))
                continue
            out.append((rel, parsed[0]))
            problems.extend(Problem(rel, line, msg) for line, msg in parsed[1])
        cache.save()
        return ObservationLog(out), problems

    # tensions
    def load_tensions(self) -> tuple[list[Tension], list[Problem]]:
        """Every tension, redacted; those that do not parse as problems."""
        out: list[Tension] = []
        problems: list[Problem] = []
        patterns = self.params()[0].redact
        for p in sorted(Path(e.path) for e in note_entries(self.root / "tensions")):
            rel = f"tensions/{p.name}"
            try:
                out.append(reading.tension(parse_tension(read_text(p, rel), p.stem, rel), patterns))
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
            raw = loads_json(read_text(p, sessions_file.PATH))
        except FileNotFoundError:
            return Sessions(), []
        except NotUTF8 as e:
            return Sessions(), [Problem(sessions_file.PATH, e.line or 1, e.message)]
        except (OSError, ValueError) as e:
            line = getattr(e, "lineno", 1)
            return Sessions(), [Problem(sessions_file.PATH, line, f"invalid JSON: {e}")]
        try:
            return sessions_file.from_raw(raw), []
        except (TypeError, ValueError, AttributeError, OverflowError) as e:
            return Sessions(), [Problem(sessions_file.PATH, 1, f"invalid session counter: {e}")]

    # everything
    def snapshot(self, today: date, *, observations: bool = True, shown: bool = False) -> Snapshot:
        """Every note of the vault as one state: before a change or after it, never half of one.

        Readers take no lock, so that many of them never slow a writer. A change of several
        files is journalled from before its first file until after its commit (`store.journal`),
        and a commit moves HEAD: a read that began and ended with no journal and the same HEAD
        saw no change in between (a seqlock over the files). One that did is read again; one
        that keeps meeting changes reads under the vault lock, as a writer would.
        The soak saw `validate` report an observation linking to a belief not yet written.

        `shown`: the beliefs as readers show them (`shown_beliefs`), the refused edits in
        `Snapshot.refused`; else as the files are (what `validate` checks).
        """
        return self._consistent(lambda: self._read(today, observations, False, shown)[0])

    def snapshot_and_log(self, today: date, *, shown: bool = False) -> tuple[Snapshot, ObservationLog]:
        """A snapshot without its observations, and them as an `ObservationLog`, read as one
        state (for a reader that only counts observations and shows a few)."""
        return self._consistent(lambda: self._read(today, False, True, shown))

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
        from .gitrun import head_sha

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

    def _read(self, today: date, observations: bool, log: bool, shown: bool) -> tuple[Snapshot, ObservationLog]:
        params, pp = self.params()
        beliefs, bp = self.load_beliefs()
        refused: list[Refused] = []
        if shown:
            beliefs, bp, refused = self.reader(today).settle(beliefs, bp)
        obs_log, op = self.observation_log() if observations or log else (ObservationLog([]), [])
        obs = tuple(obs_log.observations()) if observations else ()
        tensions, tp = self.load_tensions()
        sessions, sp = self.read_sessions_checked()
        return Snapshot(tuple(beliefs), obs, tuple(tensions), sessions,
                        tuple(pp + bp + op + tp + sp), today, tuple(refused)), obs_log

    # what readers are shown (SPEC rules 21 and 23)
    def reader(self, today: date) -> Reader:
        return Reader(self, today)

    def shown_beliefs(self, today: date) -> tuple[list[Belief], list[Problem], list[Refused]]:
        """Every belief as readers show it today: (beliefs, files not shown, edits refused)."""
        beliefs, problems = self.load_beliefs()
        return self.reader(today).settle(beliefs, problems)

    def shown_belief(self, belief_id: str, today: date) -> tuple[Belief, Refused | None]:
        """One belief as readers show it, and the refused edit it is shown without; a VaultError
        naming path:line when there is nothing to show."""
        _, b, refused = self.shown_file(belief_id, today)
        return b, refused

    def shown_file(self, belief_id: str, today: date) -> tuple[str, Belief, Refused | None]:
        """(the file's text, its belief, the refused edit) as readers show them: the text redacted
        and, when a hand edit breaks a rule, as it was last committed."""
        path, rel, _ = self._belief_file(belief_id)
        try:
            text: str | Problem = read_text(path, rel)
        except NotUTF8 as e:
            text = Problem(rel, e.line or 1, e.message)
        shown, seen = self.reader(today).file(rel, text)
        if seen.belief is None or shown is None:
            p = seen.problem or Problem(rel, 1, "cannot be read")
            raise VaultError(f"{p} (fix the file; epimem will not rewrite it)", path=rel, line=p.line)
        return shown, seen.belief, seen.refused


# How far back a reader looks for a belief's last valid state when HEAD holds a broken one: each
# commit of that file costs one more blob in one `git cat-file`, and only such files pay it.
HISTORY_DEPTH = 50


class Reader:
    """What readers are shown of a vault's belief files today (`core/reading` decides; this
    fetches what it needs): redacted, and a file whose edit breaks a rule as it was committed.

    Which files need their committed text is known from the parse alone (a problem, or a rule
    broken), so a vault with none runs no git; with some, one `git cat-file` reads them all."""

    def __init__(self, vault: Vault, today: date):
        from .clock import machine_day

        self.vault, self.today = vault, today
        # Rule 20 for a hand edit: judged against the machine's day, never a replayed `today`.
        self.real = machine_day()
        self.params = vault.params()[0]
        # What a cache of what this reader shows was redacted with: one redacted otherwise is stale.
        self.redacted_with = _patterns_key(self.params.redact)

    def observation(self, o: Observation) -> Observation:
        return reading.observation(o, self.params.redact)

    def parse(self, rel: str, text: str) -> Belief | Problem:
        """A belief file's text, parsed and redacted, or the problem parsing it."""
        try:
            return reading.belief(parse_belief(text, rel[len("beliefs/"):-3], rel), self.params.redact)
        except NoteError as e:
            return Problem(rel, e.line or 1, e.message)

    def file(self, rel: str, text: str | Problem) -> tuple[str | None, reading.Seen]:
        """A belief file's text (or the problem reading it) as readers are given it whole: the
        text redacted, and its committed text when a hand edit was refused (None: nothing to
        give); and what it shows."""
        now = self.parse(rel, text) if isinstance(text, str) else text
        if isinstance(now, Belief) and isinstance(text, str) \
                and not reading.breaks(now, self.params, self.today, real=self.real):
            return reading.text(rel, text, self.params.redact), reading.Seen(now)
        seen, shown = self._last_valid(rel, rel[len("beliefs/"):-3],
                                       reading.why_not(now, self.params, self.today, real=self.real),
                                       self.committed([rel])[0],
                                       problem=now if isinstance(now, Problem) else None,
                                       was=now if isinstance(now, Belief) else None)
        return (reading.text(rel, shown, self.params.redact) if shown is not None else None), seen

    def _last_valid(self, rel: str, bid: str, why: str, head: str | None, *, problem: Problem | None,
                    was: Belief | None) -> tuple[reading.Seen, str | None]:
        """What readers are shown of a file that may not be shown as it is, and the text it is shown
        as (None: nothing). HEAD's text first; when HEAD holds the broken state too, the newest older
        commit of the file that is valid. HEAD is not always epimem's: Obsidian's git plugin commits
        every few minutes, a plain `git commit` or another machine's push (through `sync`) commits
        whatever the file held, and the belief would then vanish from every reader until fixed."""
        seen = reading.last_valid(rel, bid, why, head, self.params, self.today, problem=problem, now=was)
        if seen.belief is not None or head is None:
            return seen, (head if seen.belief is not None else None)
        for sha, text in self._history(rel):
            if text == head:
                continue
            older = reading.last_valid(rel, bid, why, text, self.params, self.today, problem=problem, now=was)
            if older.belief is not None:
                return reading.Seen(older.belief, Refused(rel, why, since=sha[:7])), text
        return seen, None

    def _history(self, rel: str) -> list[tuple[str, str]]:
        """(commit, text) of `rel` in the newest HISTORY_DEPTH commits that changed it, newest first."""
        from . import git

        try:
            shas = [c.sha for c in git.log(self.vault.root, rel, limit=HISTORY_DEPTH)]
            texts = git.show_many(self.vault.root, [f"{sha}:{rel}" for sha in shas])
        except (OSError, ValueError, EpimemError):
            return []
        return [(sha, text) for sha, text in zip(shas, texts) if text is not None]

    def committed(self, rels: list[str]) -> list[str | None]:
        """The texts of `rels` at HEAD (None: not there), in order; all None outside git."""
        from .gitrun import head_sha

        if not rels or head_sha(self.vault.root) is None:
            return [None] * len(rels)
        from . import git

        try:
            return git.show_many(self.vault.root, [f"HEAD:{rel}" for rel in rels])
        except (OSError, ValueError, EpimemError):
            return [None] * len(rels)  # git cannot say: nothing valid to fall back on

    def seen(self, items: list[Belief | Problem]) -> list[reading.Seen]:
        """What readers are shown of each belief file, parsed (`parse`, `load_beliefs`)."""
        params, today = self.params, self.today
        out: list[reading.Seen | None] = []
        # (at, path, id, why, its problem, the belief as it is)
        pending: list[tuple[int, str, str, str, Problem | None, Belief | None]] = []
        for now in items:
            if isinstance(now, Problem):
                bid = now.path[len("beliefs/"):-3] if now.path.endswith(".md") else ""
                if not _valid_id(bid):
                    out.append(reading.Seen(None, problem=now))  # a name no belief can have
                    continue
                pending.append((len(out), now.path, bid, reading.why_not(now, params, today), now, None))
                out.append(None)
                continue
            why = reading.breaks(now, params, today, real=self.real)
            if not why:
                out.append(reading.Seen(now))
                continue
            pending.append((len(out), now.path or f"beliefs/{now.id}.md", now.id, why, None, now))
            out.append(None)
        for (at, rel, bid, why, problem, was), text in zip(pending, self.committed([p[1] for p in pending])):
            out[at] = self._last_valid(rel, bid, why, text, problem=problem, was=was)[0]
        return [s for s in out if s is not None]

    def settle(self, beliefs: list[Belief], problems: list[Problem]
               ) -> tuple[list[Belief], list[Problem], list[Refused]]:
        """`load_beliefs`' result as readers show it: (beliefs, files not shown, edits refused)."""
        if not any(p.path.startswith("beliefs/") for p in problems) \
                and not any(reading.breaks(b, self.params, self.today, real=self.real) for b in beliefs):
            return beliefs, problems, []  # the common case: every file shown as it is
        at_rest = [p for p in problems if not p.path.startswith("beliefs/")]
        seen = self.seen([*beliefs, *(p for p in problems if p.path.startswith("beliefs/"))])
        shown = sorted((s.belief for s in seen if s.belief is not None), key=lambda b: b.id)
        return (shown, at_rest + [s.problem for s in seen if s.problem is not None],
                sorted((s.refused for s in seen if s.refused is not None), key=lambda r: r.path))


def _valid_id(belief_id: str) -> bool:
    try:
        check_id(belief_id)
    except IdError:
        return False
    return True
