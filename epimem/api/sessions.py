"""Sessions and reviews: counting a session (rule 8) and recording a review (rule 10)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..core import kernel, rules
from ..core.errors import InputError, VaultError
from ..core.model import Sessions
from ..core.notes import wikilink
from ..core.redact import redact
from ..store import sessions as sessions_file
from ..store import transaction as tx
from ..store.files import stat_key
from ..store.session_commit import commit_counted
from . import common
from .results import SessionReport

if TYPE_CHECKING:
    from .service import Service

SOURCES = ("startup", "resume", "clear", "compact", "fork")
REVIEW_KINDS = ("audit", "gut-check", "interview", "review")
SESSIONS = sessions_file.PATH


def recorded_in(mem: Service, session: str) -> int:
    """What `session` has recorded, as rule 9 counts it (`observe.session_observation_count`), for
    a reader (/observe's data, the transcript pass): its observations in the logs, and what it
    proposed for review (which counts as recorded). Read leniently: a log that is not UTF-8 is the
    writers' to refuse."""
    from ..core.notes import parse_observations
    from . import inbox, observe

    def month_obs(rel: str):
        p = mem.vault.path(rel)
        return parse_observations(p.read_text(encoding="utf-8", errors="replace"))[0] if p.is_file() else []

    # as rule 9 counts it: a session the vault never counted shares its source's bound of the day
    counted = frozenset(kernel.known_sessions(dict(mem.vault.read_sessions().counted), mem.today))
    key = rules.session_key(session, mem.today, counted)
    n = observe.session_observation_count(key, mem.today, month_obs, counted=counted)
    if (mem.root / "inbox").is_dir():
        n += sum(1 for p in inbox.read_all(mem)[0]
                 if p.kind == "observation" and rules.session_key(p.session, p.proposed, counted) == key)
    return n


def start(mem: Service, source: str, session: str | None = None) -> SessionReport:
    """Count a session; `session` (the hook's session id) becomes one the vault knows (rule 19)."""
    if source not in SOURCES:
        raise InputError(f"'source' must be one of {', '.join(SOURCES)}; not {source!r}", field="source")
    if session is not None and not kernel.is_session_id(session):
        raise InputError("'session' must be a plain id (letters, digits, - _ . :)", field="session")
    common.require_repo(mem)  # a count in a folder that is not a repository would never be committed
    with common.lock(mem):
        s, key = _for_write(mem)
        res = rules.start_session(s, source, mem.write_today, mem.params,
                                  machine=sessions_file.machine_id(mem.root), session_id=session)
        sha = None
        if res.counted:
            # No commit of its own (SPEC §4): the count rides along with the next
            # commit, or is committed alone at most once a day.
            tx.apply(mem.root, [tx.replace(SESSIONS, sessions_file.to_json(res.sessions), key)], None,
                     lock=mem.vault.lock())
            sha = commit_counted(mem.root, lock=mem.vault.lock())
    return SessionReport(res.counted, res.sessions.count, res.dormant_days, res.review_due, sha)


def record_review(mem: Service, kind: str, markdown: str, beliefs: Iterable[str]) -> str:
    """Write `reviews/<date>.md` (appending when one exists) and reset the review counter."""
    if kind not in REVIEW_KINDS:
        raise InputError(f"unknown review kind {kind!r}", field="kind")
    today = mem.write_today.isoformat()
    rel = f"reviews/{today}.md"
    body = redact(markdown.strip(), mem.params.redact)
    for attempt in common.attempts(mem):
        with attempt:
            p = mem.vault.path(rel)
            key = stat_key(p)
            ids = list(dict.fromkeys(beliefs))
            # The review's beliefs are wikilinks, so Obsidian's graph links the review to them (SPEC §1).
            links = ("beliefs: [" + ", ".join(f'"{wikilink(b)}"' for b in ids) + "]\n") if ids else ""
            # A rendered review brings its own heading: one heading, not two.
            own = body.startswith("# ")
            if p.exists():
                part = body.replace("# ", "## ", 1) if own else f"## {kind}\n\n{body}"
                text = p.read_text(encoding="utf-8").rstrip("\n") + f"\n\n{part}\n"
                if ids:
                    text = _with_beliefs(text, ids)
            else:
                head = "" if own else f"# {kind.capitalize()} {today}\n\n"
                text = f"---\ndate: {today}\nkind: {kind}\n{links}---\n{head}{body}\n"
            s, skey = _for_write(mem)
            s = rules.record_review(s, mem.write_today, mem.params)
            writes = [tx.replace(rel, text, key), tx.replace(SESSIONS, sessions_file.to_json(s), skey)]
            return common.commit(mem, writes, f"review: {kind} recorded; next review at session {s.next_review_at}",
                                 op="review", beliefs=list(beliefs))


def _for_write(mem: Service) -> tuple[Sessions, tuple[int, int] | None]:
    """The counter and its stat key, or an error: a malformed counter is reported, never overwritten."""
    key = stat_key(mem.vault.path(SESSIONS))
    s, problems = mem.vault.read_sessions_checked()
    if problems:
        raise VaultError(f"{problems[0]} (fix it by hand; epimem will not overwrite it)",
                         path=problems[0].path, line=problems[0].line)
    return s, key


def _with_beliefs(text: str, ids: list[str]) -> str:
    """A review file's `beliefs` list with these ids added (as wikilinks)."""
    from ..core.notes import edit_frontmatter, link_target, parse_note

    note = parse_note(text, lenient=True)
    if note is None:
        return text
    have = note.meta.get("beliefs") or []
    if not isinstance(have, list):
        return text
    known = [link_target(str(x)) for x in have]
    merged = known + [b for b in ids if b not in known]
    return edit_frontmatter(text, {"beliefs": [wikilink(b) for b in merged]})
