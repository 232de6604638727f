"""The session-start context cache: `.epimem/context.json`.

The hook runs before every Claude Code session and must not parse a 10,000
belief vault to do it. Every epimem write calls `refresh_context`, which
keeps, per scope and for global beliefs, the few dozen active beliefs most
worth showing, as compact records carrying exactly what the hook needs to
decay and render them. The hook reads this one small file.

The module is imported by the hook, so its top level imports only the
standard library; the vault and the rules are imported inside the functions
that rebuild the cache.

`python -m epimem.store.context_cache VAULT` rebuilds the cache (the hook starts it in
the background when it finds the cache older than the beliefs).
"""

from __future__ import annotations

import json
import os
import sys
from datetime import date

from ..core import kernel
from ..core import record as belief_record
from ..core.ids import SLUG
from .files import compact_json, write_cache
from .paths import note_entries
from .statcache import StatCache

CACHE_VERSION = 1
CACHE_NAME = "context.json"
PER_SCOPE = 50  # records kept per scope and for global: more than any budget shows
GIST_CHARS = 220

# What the hook needs from `epistemology.md` when there is no cache yet: the
# kernel's defaults (`core.params.Params` takes the same ones).
FALLBACK_PARAMS = kernel.hook_params()


# --- shared with the hook: cheap, dependency-free ---------------------------------

def signature(root: str | os.PathLike) -> dict[str, int]:
    """What the cache was built from: the beliefs folder and the rules file.

    epimem writes files by rename, which changes the folder's mtime, so a
    write anywhere in `beliefs/` is seen with one stat. (An editor that saves
    in place does not change it: `epimem watch` or the next epimem command
    refreshes the cache then.)
    """
    out = {}
    for key, rel in (("beliefs", "beliefs"), ("epistemology", "epistemology.md"), ("tensions", "tensions")):
        try:
            out[key] = os.stat(os.path.join(root, rel)).st_mtime_ns
        except OSError:
            out[key] = 0
    return out


def effective(rec: dict, today: date, params: dict) -> float:
    """Rule 7 (`kernel.effective_at`) on a cache record, with the cache's parameters."""
    return decayed(rec["confidence"], rec["permanence"], rec["first"], rec.get("confirmed"),
                   rec.get("pinned", False), today, params)


def decayed(stored: float, permanence: str, first: str, confirmed: str | None, pinned: bool,
            today: date, params: dict) -> float:
    return kernel.effective_at(stored, permanence, date.fromisoformat(kernel.anchor(first, confirmed)), pinned, today,
                               params["decay"], params["decay_floor"])


def tier(confidence: float, basis: str, params: dict) -> str:
    return kernel.tier(confidence, params["tiers"], basis)


def cache_path(root: str | os.PathLike) -> str:
    return os.path.join(root, ".epimem", CACHE_NAME)


def refresh_marker(root: str | os.PathLike) -> str:
    """Made by the hook when it starts a background refresh (`main`), removed when that ends: while
    it is young, no second one is started."""
    return os.path.join(root, ".epimem", "context.refreshing")


def read_context_cache(root: str | os.PathLike) -> dict | None:
    """The cache, or None when it is missing, unreadable or of another version."""
    try:
        with open(cache_path(root), encoding="utf-8") as fh:
            cache = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(cache, dict) or cache.get("version") != CACHE_VERSION:
        return None
    return cache


def still_current(root: str | os.PathLike):
    """For a reader of the cache as it is (the hook, while a refresh runs in the background):
    `current(id)`, whether a belief the cache lists as active may still be shown as current.

    SPEC §14: a superseded or retired belief is never shown as current. A file changed since the
    cache was written (an editor's save, in place or by rename; a sync) is read for its `status`
    line, and one that no longer says `active`, or is gone, is not shown until the refresh has
    read it as every reader does. An unchanged file costs one stat."""
    try:
        built = os.stat(cache_path(root)).st_mtime_ns
    except OSError:
        built = 0
    bdir = os.path.join(root, "beliefs")

    def current(bid: str) -> bool:
        path = os.path.join(bdir, bid + ".md")
        try:
            if os.stat(path).st_mtime_ns < built:
                return True
            with open(path, encoding="utf-8", errors="replace") as fh:
                head = fh.read(STATUS_READ)
        except (OSError, ValueError):
            return False
        return frontmatter_status(head) == "active"

    return current


STATUS_READ = 8192  # a belief's frontmatter is far shorter


def frontmatter_status(text: str) -> str | None:
    """The `status` a belief file's frontmatter gives (`active` when it names none); None when
    it cannot be told without the parser. Not `core.notes`: importing it (and YAML) costs the hook
    some 30 ms, and this reads one key of a file the refresh is about to parse anyway, so any
    doubt — a second `status`, a quoted or spaced key — answers None, and the belief waits."""
    lines = text.splitlines()
    if not lines or lines[0].lstrip("\ufeff").strip() != "---":
        return None
    found = None
    for line in lines[1:]:
        if line.strip() == "---":
            return found or "active"
        key = line.split(":", 1)[0]
        if key == "status" and found is None:
            found = line[len("status:"):].split(" #", 1)[0].strip().strip("'\"").strip() or "active"
        elif ":" in line and key.strip().strip("'\"") == "status":
            return None
    return None


# --- building it (pure) --------------------------------------------------------------

def gist(statement: str, limit: int = GIST_CHARS) -> str:
    """The statement's first sentence, on one line."""
    text = " ".join(statement.split())
    for i, ch in enumerate(text):
        if ch in ".!?" and (i + 1 == len(text) or text[i + 1] == " ") and i >= 12:
            text = text[:i + 1]
            break
    if len(text) > limit:
        text = text[:limit - 1].rstrip() + "…"
    return text


# A record's fields, in the order the index stores them (lists load faster than dicts): a
# projection of `core.record` (public encoding), with the statement's first sentence as `gist`.
_SOURCE = ("id", "title", "statement", "kind", "basis", "confidence", "permanence", "first", "confirmed",
           "pinned", "scope", "tags")
FIELDS = tuple("gist" if n == "statement" else n for n in _SOURCE)
_encode = belief_record.encoder(_SOURCE, public=True)
_GIST = FIELDS.index("gist")
_ID, _CONF, _PERM, _FIRST, _CONFIRMED, _PINNED, _SCOPE = (
    FIELDS.index(n) for n in ("id", "confidence", "permanence", "first", "confirmed", "pinned", "scope"))


def record_row(b) -> list:
    row = _encode(b)
    row[_GIST] = gist(row[_GIST])
    return row


def record(b) -> dict:
    return dict(zip(FIELDS, record_row(b)))


def params_record(params) -> dict:
    return kernel.hook_params(params.decay, params.decay_floor, params.dormancy_days, params.review_every_days,
                              params.tiers)


def rank_records(rows, prm: dict, today: date, *, sig: dict | None = None, total: int | None = None,
                 problems: int = 0, per_scope: int = PER_SCOPE, refused: dict[str, str] | None = None) -> dict:
    """The cache from the rows (`FIELDS` order) of the active beliefs: per scope, the best first."""
    import heapq  # not needed by the hook, which only reads the result

    groups: dict[str, list[tuple[float, list]]] = {}
    active = 0
    for r in rows:
        active += 1
        eff = decayed(r[_CONF], r[_PERM], r[_FIRST], r[_CONFIRMED], r[_PINNED], today, prm)
        groups.setdefault(r[_SCOPE] or "global", []).append((eff, r))
    ranked: dict[str, list[dict]] = {}
    for scope, items in groups.items():
        best = heapq.nsmallest(per_scope, items, key=lambda x: (-x[0], -x[1][_CONF], x[1][_ID]))
        ranked[scope] = [dict(zip(FIELDS, r)) for _, r in best]
    return {
        "version": CACHE_VERSION,
        "built": today.isoformat(),
        "signature": sig or {},
        "params": prm,
        "counts": {"beliefs": active if total is None else total, "active": active, "problems": problems,
                   "scopes": {s: len(v) for s, v in groups.items()}},
        "global": ranked.pop("global", []),
        "scopes": ranked,
        # path → the line every reader says of a hand edit shown as last committed (SPEC rule 21)
        "refused": dict(sorted((refused or {}).items())),
    }


def build_context_cache(beliefs, params, today: date, *, sig: dict | None = None,
                        problems: int = 0, per_scope: int = PER_SCOPE) -> dict:
    """Per scope (and global), the active beliefs ranked by effective confidence today.

    Pure: `beliefs` are `Belief` values, `params` a `Params`. Decay moves
    slowly, so a ranking made at the last write is still right at the next
    session start; the hook re-ranks the kept records with today's date.
    """
    rows = [record_row(b) for b in beliefs if b.status == "active"]
    return rank_records(rows, params_record(params), today, sig=sig, total=len(beliefs),
                        problems=problems, per_scope=per_scope)


# --- I/O -------------------------------------------------------------------------------

def write_context_cache(root: str | os.PathLike, cache: dict, patterns=None) -> dict:
    """Atomic: the hook reads the old cache or the new one, never half of one.

    The context goes to a model at every session start, so its texts are
    redacted here, whatever their source (a secret typed into a belief by hand
    too); `patterns` are the vault's (`Params.redact`), else the defaults.
    Returns the cache as written: what a caller renders is what the hook reads."""
    redacted = redact_records(cache, patterns)
    write_cache(cache_path(root), compact_json(redacted))
    return redacted


_TEXT_FIELDS = ("title", "gist", "scope", "what", "successor_title", "rests_on_title")


def redact_records(cache: dict, patterns=None) -> dict:
    from ..core.params import DEFAULTS
    from ..core.redact import redact

    pats = DEFAULTS.redact if patterns is None else patterns

    def one(r: dict) -> dict:
        r = dict(r)
        for k in _TEXT_FIELDS:
            if isinstance(r.get(k), str):
                r[k] = redact(r[k], pats)
        if isinstance(r.get("tags"), list):
            r["tags"] = [redact(t, pats) if isinstance(t, str) else t for t in r["tags"]]
        return r

    out = dict(cache)
    out["questions"] = [one(r) for r in cache.get("questions", [])]
    out["global"] = [one(r) for r in cache.get("global", [])]
    out["scopes"] = {s: [one(r) for r in recs] for s, recs in (cache.get("scopes") or {}).items()}
    return out


# The index of the context: one row per belief file, through the one per-file cache.
INDEX_NAME = "context"
# 2: in store/statcache, with its settle rule per entry; 3: rows as readers are shown them
# (SPEC rules 21, 23), a refused edit with its line; 4: a tension row's `asked`; 5: a hand edit
# dated after the machine's day is refused (rule 20 in `core.reading.breaks`).
INDEX_VERSION = 5


def refresh_context(root: str | os.PathLike, today: date | None = None,
                    changed: list[str] | tuple[str, ...] | set[str] | None = None,
                    sig: dict | None = None) -> dict:
    """Bring `.epimem/context.json` up to date with the vault's files (after every write).

    Incremental: the index (`store.statcache`, `.epimem/cache/context.marshal`) keeps one
    compact record per belief file with its (mtime, size). With `changed` (the vault-relative
    paths a write just made) only those files are read again; without it,
    every file's (mtime, size) is checked and only the ones that differ are
    parsed. Either way a write to a 10,000-belief vault costs a re-rank, not
    a parse of the vault.
    """
    from .clock import lenient_today
    from .vault import Vault

    vault = Vault(root)
    root_s = str(vault.root)
    # Taken before reading, so a write that lands while we read leaves the
    # cache marked stale rather than looking current.
    if sig is None or (changed is None and sig != signature(root_s)):
        sig = signature(root_s)
    if today is None:
        today = lenient_today()
    params, _ = vault.params()
    reader = vault.reader(today)
    index = StatCache(root_s, INDEX_NAME, INDEX_VERSION, reader.redacted_with)
    bdir = os.path.join(root_s, "beliefs")
    if changed is not None and index.loaded:
        index.keep()
        ids = {p[len("beliefs/"):-3] for p in changed if p.startswith("beliefs/") and p.endswith(".md")}
        for bid in ids:
            path = os.path.join(bdir, bid + ".md")
            try:
                st = os.stat(path)
            except FileNotFoundError:
                index.drop(bid)
                continue
            index.put(bid, st, _row(reader, path, bid))
    else:
        _scan(bdir, index, reader)
    index.save()
    entries = index.items()
    rows = [v[0] for _, v in entries if v[0]]
    problems = sum(1 for _, v in entries if v[0] is None)
    refused = {f"beliefs/{bid}.md": v[1] for bid, v in entries if len(v) > 1 and v[1]}
    cache = rank_records(rows, params_record(params), today, sig=sig, total=len(entries), problems=problems,
                         refused=refused)
    cache["questions"] = open_questions(root_s, reader)
    return write_context_cache(root_s, cache, params.redact)


def update_context(root: str | os.PathLike, changed, params, today: date,
                   sig_before: dict | None, sig_after: dict | None = None) -> dict:
    """Fold the beliefs one write changed into the cache, without reading the vault.

    A full rebuild reads 10,000 beliefs; an observation touches three. The
    update is exact for the changed beliefs. If anything else changed since
    the cache was built (`sig_before` differs), or a top list has lost beliefs
    that the next ones should replace, it falls back to `refresh_context`
    (incremental through its index, so still no parse of the vault).
    """
    cache = read_context_cache(root)
    prm = params_record(params)
    if cache is None or cache.get("signature") != sig_before or cache.get("params") != prm:
        return refresh_context(root, today)
    # `sig_after` (taken under the vault lock) rather than the signature now: a write that
    # landed since this one, and whose update has not run, must leave the cache stale.
    ids = {b.id for b in changed}
    if any(f"beliefs/{i}.md" in (cache.get("refused") or {}) for i in ids):
        return refresh_context(root, today)  # a refused edit settled by this write: its file is read again
    groups: dict[str, list[dict]] = {"global": cache.get("global", []), **cache.get("scopes", {})}
    touched = set()
    for scope, recs in groups.items():
        kept = [r for r in recs if r["id"] not in ids]
        if len(kept) != len(recs):
            groups[scope] = kept
            touched.add(scope)
    for b in changed:
        if b.status == "active":
            scope = b.scope or "global"
            groups.setdefault(scope, []).append(record(b))
            touched.add(scope)
    sizes = (cache.get("counts") or {}).get("scopes") or {}
    for scope in touched:
        groups[scope].sort(key=lambda r: (-effective(r, today, prm), -r["confidence"], r["id"]))
        del groups[scope][PER_SCOPE:]
        if len(groups[scope]) < min(PER_SCOPE, sizes.get(scope, 0)):
            return refresh_context(root, today)  # a belief left the list: the next one moves up
    cache["global"] = groups.pop("global")
    cache["scopes"] = groups
    cache["signature"] = sig_after if sig_after is not None else signature(root)
    cache["questions"] = open_questions(root)
    return write_context_cache(root, cache, params.redact)


# --- open questions (SPEC §14) ------------------------------------------------------------

QUESTIONS_KEPT = 20   # more than the context shows; the rest are marked in the lists
QUESTION_CHARS = 160
TENSIONS_INDEX = "tensions"          # store/statcache: open tensions' rows by file
QUESTION_BELIEFS = "question-beliefs"  # and the beliefs they name, by theirs


def open_questions(root: str | os.PathLike, reader=None) -> list[dict]:
    """The open tensions, as the session context asks them: a proposed successor names both
    sides, a flag names the belief that changed, a contradiction says what happened. Each
    row carries the titles and scope it needs, so the hook reads nothing else. What a question
    shows of a tension or a belief is what readers are shown (SPEC rules 21, 23): `reader`, a
    `store.vault.Reader` the caller already has (one is made when it has none).

    Tension files are parsed once per (mtime, size) through the one stat cache
    (`store/statcache`): a write re-reads only the tensions it changed."""
    root_s = str(root)
    if reader is None:
        from .clock import lenient_today
        from .vault import Vault

        reader = Vault(root_s).reader(lenient_today())
    # Salted with the redaction patterns: a row redacted under other patterns is stale.
    salt = reader.redacted_with
    tensions = StatCache(root_s, TENSIONS_INDEX, INDEX_VERSION, salt)
    for entry in note_entries(os.path.join(root_s, "tensions")):
        try:
            st = entry.stat()
        except FileNotFoundError:
            continue
        found, _ = tensions.lookup(entry.name, st)
        if not found:
            tensions.put(entry.name, st, _tension_row(entry.path, entry.name[:-3], reader.params.redact))
    # The beliefs the questions name, by their file's (mtime, size) as the tensions are: a write
    # re-reads the few it changed, not the twenty a context may ask about.
    named = StatCache(root_s, QUESTION_BELIEFS, INDEX_VERSION, salt)

    def brief(bid: str) -> dict | None:
        # The parser refuses a tension naming anything but a slug; a row cached before it did
        # may still hold a path, or a NUL byte that makes os.stat raise ValueError, not OSError.
        if not SLUG.match(bid):
            return None
        try:
            st = os.stat(os.path.join(root_s, "beliefs", bid + ".md"))
        except OSError:
            return None
        found, value = named.lookup(bid, st)
        if not found:
            value = _belief_brief(reader, root_s, bid)
            named.put(bid, st, value)
        return value

    out = questions_from([v for v in tensions.values() if v], brief)
    tensions.save()
    named.save()
    return out


def questions_from(rows: list[dict], brief) -> list[dict]:
    """The questions the session context may ask, from open tensions' rows (`tension_row`)
    and `brief(id)` → {title, scope, status} of a belief (None when unreadable). Pure, so
    the tracking benchmark's in-memory path ranks questions with the product's code."""
    import heapq

    # Proposed successors first (the person may have changed), then flags, then the newest.
    rank = lambda r: (0 if r["successor"] else 1 if r["rests_on"] else 2, -_day_number(r["date"]), r["tension"])  # noqa: E731
    kept = heapq.nsmallest(QUESTIONS_KEPT, rows, key=rank)
    out = []
    for r in kept:
        named = {k: brief(r[k]) for k in ("belief", "successor", "rests_on") if r[k]}
        b = named.get("belief")
        if b is None or b["status"] != "active":
            continue  # about a belief no longer held: nothing to ask at session start
        s = named.get("successor")
        q = dict(r, title=b["title"], scope=b["scope"], successor_title="", rests_on_title="")
        if s is not None and s["status"] == "active":
            q["successor_title"] = s["title"]
        else:
            q["successor"] = ""
        if r["rests_on"]:
            q["rests_on_title"] = (named.get("rests_on") or {}).get("title", r["rests_on"])
        out.append(q)
    return out


def _day_number(iso: str) -> int:
    try:
        return date.fromisoformat(iso).toordinal()
    except (TypeError, ValueError):
        return 0


def _tension_row(path: str, tid: str, patterns=()):
    """One open tension as a question row, redacted; 0 when it is resolved, None when unreadable."""
    from ..core import reading
    from ..core.notes import NoteError, parse_tension

    try:
        with open(path, encoding="utf-8") as fh:
            t = reading.tension(parse_tension(fh.read(), tid), patterns)
    except (NoteError, OSError, UnicodeDecodeError):
        return None
    return tension_row(t)


def tension_row(t) -> dict | int:
    """A `Tension` as a question row (0 when it is resolved)."""
    if t.status == "resolved":
        return 0
    what = " ".join(t.what_happened.split())
    if len(what) > QUESTION_CHARS:
        what = what[:QUESTION_CHARS - 1].rstrip() + "…"
    return {"tension": t.id, "date": t.date.isoformat(), "status": t.status, "belief": t.belief,
            "successor": t.successor, "rests_on": t.rests_on, "what": what,
            "divergence": t.title.startswith("Said and did differ"),
            # A question put as the tension's title (an assistant's proposal, `api/tensions.propose`):
            # asked as it was put, not as a contradiction.
            "asked": t.title if t.title.endswith("?") and not t.successor and not t.rests_on else ""}


def _belief_brief(reader, root: str, bid: str) -> dict | None:
    """A belief a question names, as readers are shown it (`store.vault.Reader`: redacted, a
    refused hand edit as last committed); None when there is nothing to show. `bid` is a
    slug (`brief` checked it)."""
    try:
        with open(os.path.join(root, "beliefs", bid + ".md"), encoding="utf-8") as fh:
            b = reader.seen([reader.parse(f"beliefs/{bid}.md", fh.read())])[0].belief
    except (OSError, UnicodeDecodeError):
        return None
    return belief_brief(b) if b is not None else None


def belief_brief(b) -> dict:
    return {"title": b.title, "scope": b.scope or "global", "status": b.status}


def _row(reader, path: str, bid: str) -> tuple:
    """The index entry of one belief file as readers are shown it (`store.vault.Reader`): its row
    (0 when not active, None when there is nothing to show) and, when a hand edit was refused,
    the line that says so."""
    from ..core.ids import IdError, check_id

    rel = f"beliefs/{bid}.md"
    try:
        check_id(bid)
        with open(path, encoding="utf-8") as fh:
            seen = reader.seen([reader.parse(rel, fh.read())])[0]
    except (IdError, OSError, UnicodeDecodeError):
        return (None,)  # reported by `epimem validate`; counted here
    b = seen.belief
    if b is None:
        return (None,)
    row = record_row(b) if b.status == "active" else 0
    return (row,) if seen.refused is None else (row, str(seen.refused))


def _scan(bdir: str, index: StatCache, reader) -> None:
    for entry in note_entries(bdir):
        bid = entry.name[:-3]
        try:
            st = entry.stat()
        except FileNotFoundError:
            continue
        found, value = index.lookup(bid, st)
        # A refused edit is read again each time: what it is shown as is HEAD's, which moves.
        if not found or len(value) > 1:
            index.put(bid, st, _row(reader, entry.path, bid))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m epimem.store.context_cache VAULT", file=sys.stderr)
        return 2
    marker = refresh_marker(args[0])
    try:
        refresh_context(args[0])
    finally:
        try:
            os.unlink(marker)
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
