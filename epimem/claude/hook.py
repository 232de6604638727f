"""Claude Code hooks: `epimem hook session-start` and `epimem hook session-end`.

session-start runs before every session, so it is built for speed and for
never getting in the way:
- it imports only the standard library, the kernel of the rules
  (`epimem.core.kernel`) and the stdlib-only parts of `epimem.store` (the
  core's dataclasses alone cost more to import than the whole baseline hook);
- it counts the session (`source == "startup"` only, `kernel.start_session`)
  in `state/sessions.json` through the one write path
  (`store.transaction.apply`, no commit) under the vault lock, and leaves the
  git commit of that change to a detached background process;
- it reads `.epimem/context.json`, a cache every epimem write keeps current,
  never the belief files; a stale cache is used as it is while a background
  process rebuilds it;
- whatever goes wrong (no vault, a broken file, bad stdin) it prints nothing
  harmful, writes a line to `.epimem/hook.log` and exits 0.

session-end (installed only with `--auto-observe`) hands the transcript to a
background process running `record_from_transcript` and returns at once.

Background workers (hidden commands, not for people): `epimem hook commit-session
VAULT [SESSION]` and `epimem hook observe-transcript PATH --vault VAULT [--session ID]
[--llm]`. Their command lines, and the hooks', are parsed by the CLI's one parser
(`epimem/cli/hook.py` declares them); nothing here reads argv.
"""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import date
from pathlib import Path

from ..api.context import CHARS_PER_TOKEN, DEFAULT_BUDGET, MAX_CHARS, render_context, vault_label
from ..core import kernel
from ..core.errors import EpimemError
from ..store import refused_passes, vault_format
from ..store import sessions as sessions_file
from ..store.clock import lenient_today, lenient_write_day
from ..store.context_cache import (
    FALLBACK_PARAMS,
    cache_path,
    read_context_cache,
    refresh_marker,
    signature,
    still_current,
)
from ..store.files import VaultLock, journal_pending, lock_path
from ..store.paths import inbox_waiting, is_vault, resolve_root

LOCK_WAIT = 2.0             # seconds; after that the session is not counted (logged)
LOG_LIMIT = 256 * 1024
REFRESH_MARKER_AGE = 60.0
CONTEXT_MAX_AGE = 300.0     # seconds; an older cache is refreshed in the background (in-place saves)

_log_root: str | None = None

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: this path must stay lean
if TYPE_CHECKING:
    from collections.abc import Callable


# --- small plumbing ------------------------------------------------------------------

def _log(message: str) -> None:
    """One line in `<vault>/.epimem/hook.log`; stderr when there is no vault to log in."""
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {message}\n"
    if _log_root and os.path.isdir(_log_root):
        try:
            d = os.path.join(_log_root, ".epimem")
            os.makedirs(d, 0o700, exist_ok=True)
            path = os.path.join(d, "hook.log")
            try:
                if os.path.getsize(path) > LOG_LIMIT:
                    os.replace(path, path + ".1")
            except OSError:
                pass
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(line)
            return
        except OSError:
            pass
    try:
        sys.stderr.write("epimem hook: " + line)
    except Exception:
        pass


def vault_root(explicit: str | None) -> str:
    return str(resolve_root(explicit or None))


def _today(override: str | None = None) -> date:
    return lenient_today(override or None, warn=lambda e: _log(f"{e}; using today's date"))


def _read_payload() -> dict:
    """Claude Code's JSON on stdin; {} (and a log line) for anything else."""
    try:
        if sys.stdin is None or sys.stdin.isatty():
            return {}
        text = sys.stdin.read(1_000_000)
    except (OSError, ValueError) as e:
        _log(f"cannot read stdin: {e}")
        return {}
    if not text.strip():
        return {}
    try:
        payload = json.loads(text)
    except ValueError as e:
        _log(f"stdin is not JSON ({e}); continuing without it")
        return {}
    if not isinstance(payload, dict):
        _log("stdin JSON is not an object; continuing without it")
        return {}
    return payload


def _text(payload: dict, key: str) -> str | None:
    v = payload.get(key)
    return v if isinstance(v, str) and v else None


def _spawn(root: str, args: list[str]) -> None:
    """Start `python -m ...` detached (store.spawn), its stderr in `.epimem/hook.log`."""
    from ..store.spawn import spawn_detached

    spawn_detached(os.path.join(root, ".epimem", "hook.log"), args)


# --- session counting ----------------------------------------------------------------

def update_sessions(root: str, source: str | None, today: date, prm: dict,
                    session_id: str | None = None) -> dict | None:
    """Count the session; None when the counter cannot be read (never overwritten then).
    The session's id becomes one the vault knows (rule 19): its observations move numbers."""
    path = os.path.join(root, sessions_file.PATH)

    def read() -> tuple[dict, tuple[int, int] | None]:
        try:
            st = os.stat(path)
            with open(path, encoding="utf-8") as fh:
                return sessions_file.loads(fh.read()), (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            return kernel.empty_sessions(), None

    def count(s: dict, machine: str = kernel.EARLIER):
        return kernel.start_session(s, source, today, prm["dormancy_days"], prm["review_every_days"],
                                    machine=machine, session_id=session_id)

    try:
        if source != kernel.COUNTED_SOURCE:
            s, counted, dormant, due = count(read()[0])
        else:
            from ..store import transaction  # what it imports (typing) is paid only when counting

            lock = VaultLock(lock_path(root), timeout=LOCK_WAIT)
            with lock:
                old, key = read()
                s, counted, dormant, due = count(old, sessions_file.machine_id(root))
                # The one write path, without a commit: the background `--commit-session` makes it.
                transaction.apply(root, [transaction.replace(sessions_file.PATH, sessions_file.dump(s), key)],
                                  lock=lock)
    except (ValueError, TypeError) as e:
        _log(f"state/sessions.json is not a valid session counter ({e}); the session was not counted")
        return None
    except (OSError, TimeoutError, EpimemError) as e:
        _log(f"could not count the session: {e}")
        return None
    return {"count": s["count"], "counted": counted, "dormant": dormant, "due": due}


def _maybe_refresh(root: str, cache: dict | None) -> None:
    """Start a background rebuild when the cache is stale, or merely old.

    The signature sees every write made by rename (epimem's own, most
    editors'), but Obsidian and VS Code save in place, which leaves the
    folder's mtime alone. So a cache older than CONTEXT_MAX_AGE is refreshed
    too: the rebuild re-reads only files whose mtime or size changed, in the
    background, and this session already has its answer.
    """
    if cache is not None and cache.get("signature") == signature(root):
        try:
            if time.time() - os.stat(cache_path(root)).st_mtime < CONTEXT_MAX_AGE:
                return
        except OSError:
            pass
    marker = refresh_marker(root)
    try:
        if time.time() - os.stat(marker).st_mtime < REFRESH_MARKER_AGE:
            return  # one is already running
    except OSError:
        pass
    try:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        with open(marker, "w") as fh:
            fh.write(str(os.getpid()))
        _spawn(root, ["-m", "epimem.store.context_cache", root])
    except OSError as e:
        _log(f"could not start the context refresh: {e}")


def _budget(tokens: str | None = None, chars: str | None = None) -> int:
    """Characters of context from --budget-tokens / EPIMEM_HOOK_BUDGET_TOKENS.

    The character forms (--budget, EPIMEM_HOOK_BUDGET) are what settings.json
    files written by hand before tokens still say: honoured, and logged. Given
    as written: a value that is not a number is logged, never an error.
    """
    sources = ((tokens, CHARS_PER_TOKEN, "--budget-tokens", None),
               (os.environ.get("EPIMEM_HOOK_BUDGET_TOKENS"), CHARS_PER_TOKEN, "EPIMEM_HOOK_BUDGET_TOKENS", None),
               (chars, 1, "--budget", "--budget-tokens"),
               (os.environ.get("EPIMEM_HOOK_BUDGET"), 1, "EPIMEM_HOOK_BUDGET", "EPIMEM_HOOK_BUDGET_TOKENS"))
    for value, per, name, instead in sources:
        if not value:
            continue
        if instead:
            _log(f"{name} (characters) is deprecated: use {instead} (tokens)")
        try:
            return max(0, min(int(value) * per, MAX_CHARS))
        except ValueError:
            _log(f"{name} must be a whole number; using the default")
            break
    return DEFAULT_BUDGET


def _event(vault: str | None) -> tuple[str, dict]:
    """(vault root, Claude Code's payload) of a hook event; from here on the log is the vault's."""
    global _log_root
    root = vault_root(vault)
    _log_root = root
    return root, _read_payload()


def session_start(vault: str | None = None, today: str | None = None, budget_tokens: str | None = None,
                  budget: str | None = None, via: str | None = None, skills: str | None = None) -> int:
    """`epimem hook session-start`: count the session, print the context as Claude Code's JSON."""
    root, payload = _event(vault)
    if not is_vault(root):
        _log(f"no epimem vault at {root} (`epimem init` creates one); nothing added to the session")
        return 0
    if not os.path.exists(os.path.join(root, ".git")):  # one stat: copied without `.git`, or inside a checkout
        _log(f"{root} is not a git repository of its own; the session was not counted "
             f"(`epimem init {root}` makes it one)")
        _say(f"epimem: the user's vault ({vault_label(root)}) is not a git repository of its own, so nothing can be "
             f"recorded in it; `epimem init {root}` makes it one.")
        return 0
    try:
        vault_format.require_known(root)  # one small read: a newer epimem's vault is not counted into
    except EpimemError as e:
        _log(f"{e}; the session was not counted")
        _say(f"epimem: the user's vault ({vault_label(root)}) cannot be used by this epimem: {e}")
        return 0
    if journal_pending(root):  # one stat: a change a killed process left half-made
        from ..store.journal import recover_if_needed

        try:
            note = recover_if_needed(root)
        except (OSError, EpimemError) as e:
            note = f"an interrupted change could not be recovered: {e}"
        if note:
            _log(note)
    chars = _budget(budget_tokens, budget)
    day = _today(today)
    source = _text(payload, "source")
    cwd = _text(payload, "cwd") or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    if _standing_down(via, cwd):
        return 0
    cache = read_context_cache(root)
    prm = (cache or {}).get("params") or FALLBACK_PARAMS
    from ..store.drivers import unfinished  # three stats: a merge or rebase left half done

    pending = unfinished(Path(root))
    # Half-merged files are not counted into (state/sessions.json may hold both sides); the
    # session is told, so the assistant does not record evidence into a vault in that state.
    # Rule 20: the count is dated by the machine's clock, whatever --today says.
    sid = _text(payload, "session_id")
    info = None if pending else update_sessions(root, source, lenient_write_day(today or None), prm,
                                                sid if sid and kernel.is_session_id(sid) else None)
    if pending:
        _log(f"a git {pending} is unfinished in the vault; the session was not counted")
    if info is not None and info["counted"]:
        try:
            _spawn(root, ["-m", "epimem", "hook", "commit-session", root, _text(payload, "session_id") or ""])
        except OSError as e:
            _log(f"could not start the background commit: {e}")
    _maybe_refresh(root, cache)
    stale = _stale_skills(skills)
    # The cache as it is, but no belief its file no longer holds (SPEC §14) before the refresh reads it.
    text = render_context(cache, info, cwd=cwd, today=day, budget=max(0, chars - (len(stale) + 1 if stale else 0)),
                          vault_label=vault_label(root), waiting=inbox_waiting(root), current=still_current(root),
                          refused=refused_passes.read(root))
    if pending:
        text = (f"epimem: a git {pending} is unfinished in the user's vault ({vault_label(root)}): its files are "
                "half merged, so record nothing now; `epimem sync` (or any epimem command) says how to finish it.\n"
                + (text or ""))
    if stale:  # first: what the session must act on before it relies on the skills
        text = stale + ("\n" + text if text else "")
    if text:
        _say(text)
    return 0


def _stale_skills(installed: str | None) -> str | None:
    """A line for the session when the skills `epimem install claude-code` copied beside this hook
    are another epimem's (an upgrade since): their commands may be refused until it runs again."""
    if not installed:
        return None  # the plugin's hook (its skills are its own), another agent's, an older install's
    from ..agents.wiring import SKILLS_VERSION

    if installed == SKILLS_VERSION:
        return None
    return (f"epimem: the /observe and /mirror skills installed beside this hook are another epimem's (skills "
            f"version {installed}, this epimem's {SKILLS_VERSION}), so their commands may be refused: tell the "
            "user `epimem install claude-code` (`--scope project` for a project's) updates them.")


def _say(text: str) -> None:
    """The session's additional context, as Claude Code reads it from a SessionStart hook."""
    sys.stdout.write(json.dumps({"hookSpecificOutput": {
        "hookEventName": "SessionStart", "additionalContext": text}}, ensure_ascii=False))
    sys.stdout.flush()


def _standing_down(via: str | None, cwd: str) -> bool:
    """True for the plugin's hook when epimem's settings.json hooks are also installed: they run
    too, and one session must count once (epimem/agents/wiring.py)."""
    if via != "plugin":
        return False
    from ..agents.wiring import settings_hook_present

    # Claude Code reads the project's settings from the project root, which a session's cwd may be below.
    found = settings_hook_present(os.environ.get("CLAUDE_PROJECT_DIR") or cwd)
    if found is not None:
        _log(f"the epimem plugin and epimem's hooks in {found} are both installed; the plugin's hook "
             "did nothing (remove one: `epimem install claude-code --uninstall`, or uninstall the plugin)")
    return found is not None


def session_end(vault: str | None = None, llm: bool = False) -> int:
    """`epimem hook session-end`: start the transcript pass in the background; the session ends
    without waiting."""
    root, payload = _event(vault)
    if not is_vault(root):
        _log(f"no epimem vault at {root}; the transcript was not read")
        return 0
    path = _text(payload, "transcript_path")
    if not path or not os.path.isfile(path):
        _log(f"session-end: no readable transcript_path in the hook input ({path!r})")
        return 0
    args = ["-m", "epimem", "hook", "observe-transcript", path, "--vault", root]
    sid = _text(payload, "session_id")
    if sid:
        args += ["--session", sid]
    if llm:
        args.append("--llm")
    _spawn(root, args)
    return 0


# --- background workers ---------------------------------------------------------------

def commit_session(root: str, session: str = "") -> int:
    """Commit `state/sessions.json` after the hook counted a session (detached), at most once a day."""
    from pathlib import Path

    from ..store import git
    from ..store.session_commit import commit_counted

    root_p = Path(root).absolute()
    if not git.is_repo_root(root_p):
        return 0
    commit_counted(root_p, session)
    return 0


def observe_transcript(path: str, root: str, session: str | None, llm: bool) -> int:
    from ..api.memory import Memory
    from ..api.transcripts import record_from_transcript
    from .transcript import read_transcript

    report, notes = record_from_transcript(Memory(root), read_transcript(path), use_llm=llm, session=session,
                                           path=os.path.abspath(path))
    for n in notes:
        _log(f"session-end: {n}")
    if report is not None and report.commit:
        _log(f"session-end: recorded {len(report.results)} observation(s) in {report.commit[:8]}")
    return 0


def guarded(name: str, run: Callable[..., int], *args, log_root: str | None = None, **kwargs) -> int:
    """Run a hook or a background worker: whatever goes wrong is a line in the vault's hook.log
    (stderr when there is none), and the exit is 0 (a hook must never disturb a session)."""
    global _log_root
    if log_root is not None:
        _log_root = log_root
    try:
        return run(*args, **kwargs) or 0
    except BaseException as e:
        if isinstance(e, SystemExit) and not e.code:
            return 0
        _log(f"hook {name} failed: {type(e).__name__}: {e}")
        return 0
