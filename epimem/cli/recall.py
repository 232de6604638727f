"""`epimem recall`, `epimem index rebuild|sync|status`, `epimem watch` (SPEC §6).

Parses options, calls `epimem.recall`, renders. Every error the user can fix
(an empty query, a bad date, an unreachable Chroma server, a broken model
file) ends the command with a message, never a traceback. `recall`, which an
assistant may run at every turn, imports nothing here it does not use.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .common import echo, emit_json, fail, terminal, usage, warn
from .spec import Arg, Opt, command, group

EMBEDDER = Opt("--embedder", envvar="EPIMEM_EMBEDDER", metavar="NAME",
               help="wordllama (default, offline), minilm (offline, the minilm extra), chroma-minilm, "
                    "or ollama:MODEL.")
CHROMA_URL = Opt("--chroma-url", envvar="EPIMEM_CHROMA_URL", metavar="URL",
                 help="Use a Chroma server (http://HOST:PORT) instead of the embedded store.")
JSON = Opt("--json", dest="as_json", type=bool, help="Machine-readable output (fields in docs/recall.md).")


def root_of(vault: str | None) -> Path:
    from ..core.errors import VaultError
    from ..store.paths import resolve_root
    from ..store.vault import Vault

    root = resolve_root(vault)
    try:
        Vault(root).require()
    except VaultError as e:
        fail(str(e))
    return root


def errors():
    from ..core.errors import VaultError
    from ..recall.embed import EmbedderError
    from ..recall.errors import RecallIndexError
    from ..recall.rank import QueryError

    return (QueryError, RecallIndexError, EmbedderError, VaultError, OSError)


def recaller(vault: str | None, today: str | None, embedder: str | None, chroma_url: str | None,
             quiet: bool = False):
    from ..recall.api import Recaller
    from ..recall.config import read_config

    root = root_of(vault)
    try:
        config = read_config(root, embedder=embedder, chroma_url=chroma_url)
    except errors() as e:
        fail(str(e))
    # Chroma is brought up to date by a detached process: nothing the command
    # prints depends on it, and importing chromadb alone takes a second.
    # $EPIMEM_CHROMA_UPDATE=wait waits for it instead (a script that reads Chroma next).
    mode = os.environ.get("EPIMEM_CHROMA_UPDATE", "").strip() or "background"
    from ..recall.index import CHROMA_MODES

    if mode not in CHROMA_MODES:
        fail(f"EPIMEM_CHROMA_UPDATE must be one of {', '.join(CHROMA_MODES)}, not {mode!r}")
    return Recaller(root, config=config, today=today, chroma=mode,
                    progress=None if quiet else (lambda m: echo(m, err=True)))


# --- recall --------------------------------------------------------------------------------

# What a query may ask, whoever runs it: the vault's own index, ranked and filtered. `recall` adds
# what only its user chooses (`skill recall`, which a skill's allowed-tools grant a model, does not):
# `--queries FILE` reads any file and prints its lines back as queries, and `--embedder` /
# `--chroma-url` decide where the vault's text is sent.
QUERY_OPTIONS = (
         Opt("--limit", "-n", type=int, default=5, min=1, help="How many results."),
         Opt("--kind", multiple=True, help="Only these kinds (repeatable)."),
         Opt("--permanence", multiple=True, help="Only these permanences (repeatable)."),
         Opt("--tag", multiple=True, help="Only beliefs with one of these tags (repeatable)."),
         Opt("--scope", metavar="PROJECT", help="A project: its beliefs plus global ones."),
         Opt("--min-confidence", type=float, metavar="0-1", help="On effective (decayed) confidence."),
         Opt("--since", metavar="YYYY-MM-DD", help="Last activity on or after this day."),
         Opt("--until", metavar="YYYY-MM-DD", help="Last activity on or before this day."),
         Opt("--observations", type=bool, help="Rank observations too."),
         Opt("--inactive", type=bool, help="Include retired and superseded beliefs."),
         Opt("--budget-tokens", dest="budget", type=int, metavar="N", min=0,
             help="Print compact markdown of at most N tokens."),
         Opt("--budget", dest="old_budget", type=int, metavar="N", min=0, hidden=True,
             help="Deprecated spelling of --budget-tokens."),
         Opt("--mode", default="fused", choices=("fused", "keyword", "semantic"), help="How to rank."),
         JSON,
         Opt("--no-sync", type=bool, help="Use the index as it is."))


@command("recall",
         Arg("query", required=False, metavar="QUERY", help="What to recall, in words."),
         *QUERY_OPTIONS,
         Opt("--queries", metavar="FILE|-", complete="file",
             help="Read queries from FILE (- for stdin), one per line or JSON objects; write JSON lines."),
         EMBEDDER,
         CHROMA_URL)
def recall_cmd(ctx, *, query, limit, kind, permanence, tag, scope, min_confidence, since, until, observations,
               inactive, budget, old_budget, queries, mode, as_json, no_sync, embedder, chroma_url) -> None:
    """The beliefs most relevant to QUERY: keyword and semantic relevance, weighted by confidence."""
    errs = errors()
    if budget is None:
        budget = old_budget  # same unit: the old spelling only lacked the unit's name
    if (query is None) == (queries is None):
        usage("give a QUERY, or --queries FILE (one query per line)")
    r = recaller(ctx.vault, ctx.today, embedder, chroma_url, quiet=as_json or queries is not None)
    r.auto_sync = not no_sync
    filters = dict(kind=kind, permanence=permanence, tag=tag, scope=scope, min_confidence=min_confidence,
                   since=since, until=until, include_observations=observations, include_inactive=inactive)
    if queries is not None:
        _batch(r, queries, dict(filters, limit=limit, budget=budget, mode=mode))
        return
    try:
        res = r.recall(query, limit=limit, budget=budget, mode=mode, **filters)
    except errs as e:
        fail(str(e), code=2 if type(e).__name__ == "QueryError" else 1)
    if r.chroma_problem and as_json:
        warn(r.chroma_problem)  # said by the progress callback otherwise
    if r.last_report and r.last_report.action in ("synced", "rebuilt"):
        for p in r.last_report.problems:
            warn(f"skipped {p}")
    if as_json:
        emit_json(res.as_json())
        return
    for refused in res.refused:
        warn(str(refused))
    if budget is not None:
        sys.stdout.write(terminal(res.markdown or ""))
        return
    if not res.hits:
        echo("Nothing recalled.")
        return
    for i, h in enumerate(res.hits, 1):
        if h.type == "belief":
            conf = f"{h.effective_confidence:.2f} {h.tier}"
            if h.status and h.status != "active":  # asked for with --inactive (SPEC §14), as `hit_line` says it
                conf = f"{h.status}, no longer held, was {conf}"
            echo(f"{i}. {h.id} — {h.title}  ({conf})")
        else:
            echo(f"{i}. {h.id} ({h.date}, {h.connects}) — {h.title}")
        echo(f"   score {h.score:.4f} · {h.why}")


# --- index --------------------------------------------------------------------------------

group("index", "The recall index in .epimem/ (rebuildable from the files).")


@command("index rebuild", JSON, EMBEDDER, CHROMA_URL)
def index_rebuild(ctx, as_json, embedder, chroma_url):
    """Build the index from nothing, from the vault's files."""
    r = recaller(ctx.vault, ctx.today, embedder, chroma_url, quiet=as_json)
    try:
        rep = r.rebuild("asked for")
    except errors() as e:
        fail(str(e))
    report(rep, as_json)


@command("index sync", JSON, EMBEDDER, CHROMA_URL)
def index_sync(ctx, *, as_json, embedder, chroma_url) -> None:
    """Update only what changed (mtime and size, then content hash)."""
    r = recaller(ctx.vault, ctx.today, embedder, chroma_url, quiet=as_json)
    try:
        rep = r.sync()
    except errors() as e:
        fail(str(e))
    url = r.index.config.chroma_url
    if url:
        from ..recall.chroma import unreachable

        # The sidecar is current; Chroma, which this command keeps current, is not.
        why = unreachable(url)
        if why:
            warn(f"{why}; the index is synced, Chroma is updated once the server answers")
    report(rep, as_json)


def report(rep, as_json: bool) -> None:
    if as_json:
        emit_json(rep.as_json())
        return
    for p in rep.problems:
        warn(f"skipped {p}")
    echo(rep.summary())


@command("index status", JSON, EMBEDDER, CHROMA_URL)
def index_status(ctx, as_json, embedder, chroma_url):
    """Say what is stale, without changing anything."""
    from ..recall.config import read_config
    from ..recall.index import Index

    root = root_of(ctx.vault)
    try:
        st = Index(root, read_config(root, embedder=embedder, chroma_url=chroma_url)).status()
    except errors() as e:
        fail(str(e))
    if as_json:
        emit_json(st.as_json())
        return
    if not st.exists:
        echo("No index yet: `epimem index rebuild` (or any `epimem recall`) builds it.")
        return
    if st.needs_rebuild:
        echo(f"The index must be rebuilt: {st.needs_rebuild}.")
    if st.written:
        echo(f"{st.items} items from {st.files} files; embedder {st.embedder}; store {st.store}; "
             f"written {st.written}.")
    for label, paths in (("new", st.new), ("changed", st.changed), ("deleted", st.deleted)):
        for p in paths:
            echo(f"  {label:<8} {p}")
    for p in st.problems:
        echo(f"  malformed {p}")
    lagging = st.chroma_pending or st.chroma_error
    if lagging:
        why = f" (the last update failed: {st.chroma_error})" if st.chroma_error else ""
        echo(f"Chroma lacks {st.chroma_pending} item(s) of the index{why}; "
             "`epimem index sync` updates it.")
    if st.stale:
        echo("Stale: `epimem index sync` updates it.")
    elif not lagging:  # "up to date" only when Chroma is too: the line above says it is not
        echo("Up to date.")
    else:
        echo("Every file is indexed; only Chroma is behind.")


# --- watch --------------------------------------------------------------------------------

@command("watch",
         Opt("--commit", type=bool, help="Also commit hand edits, one commit per settled change."),
         Opt("--debounce", type=int, default=1600, min=50, metavar="MS", help="Longest wait (ms) to group events."),
         Opt("--step", type=int, default=100, min=10, metavar="MS",
             help="Quiet time (ms) that ends a group of events."),
         Opt("--poll", type=bool, help="Poll instead of OS notifications (network drives)."),
         EMBEDDER, CHROMA_URL)
def watch_cmd(ctx, commit, debounce, step, poll, embedder, chroma_url):
    """Keep the index current while you edit the vault (and commit the edits with --commit)."""
    from ..recall import watch
    from ..recall.config import read_config
    from ..recall.index import Index

    root = root_of(ctx.vault)
    if commit:
        from ..store.git import HistoryError, require_repo

        try:
            require_repo(root)
        except HistoryError as e:
            fail(str(e))
    say = echo  # flushes, so a supervisor sees each line
    try:
        index = Index(root, read_config(root, embedder=embedder, chroma_url=chroma_url),
                      progress=lambda m: echo(m, err=True))
        code = watch.run(root, commit=commit, index=index, echo=say, debounce_ms=debounce,
                         step_ms=step, force_polling=True if poll else None)
    except errors() as e:
        fail(str(e))
    raise SystemExit(code)


def _batch(r, source: str, defaults: dict) -> None:
    import json

    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        fail(f"cannot read {source}: {e}")
    name = "stdin" if source == "-" else source
    entries: list = []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            entries.append(None)
            continue
        if s.startswith("{"):
            try:
                entries.append(json.loads(s))
            except json.JSONDecodeError as e:
                entries.append(("bad", f"{name}:{n}: invalid JSON: {e.msg}"))
            continue
        entries.append(s)
    defaults = {k: v for k, v in defaults.items() if v not in (None, [], False)}
    out = sys.stdout
    errs = errors()
    try:
        for n, entry in enumerate(entries, 1):
            if entry is None:
                continue
            if isinstance(entry, tuple):
                row = {"line": n, "error": entry[1]}
            else:
                row = next(r.batch([entry], defaults=defaults))
                row["line"] = n
            out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    except errs as e:
        fail(str(e))
    out.flush()
