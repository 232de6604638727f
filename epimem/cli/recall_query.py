"""`epimem recall` and `epimem index sync`: their options, declared once, and
their bodies — without Typer.

`epimem/__main__.py` runs it through `cli.fast` (no Typer, no pydantic, no
other command's module: 0.3–0.5 s of a fresh process); `cli.recall` makes the
Typer command from the same `OPTIONS`, which answers `--help` and every
command line `cli.fast.parse` leaves to it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .fast import Opt, parse, split_global
from .plain import echo, emit_json, error_message, fail, say_error, warn

EMBEDDER_HELP = ("wordllama (default, offline), minilm (offline, the minilm extra), "
                 "chroma-minilm, or ollama:MODEL.")
CHROMA_URL_HELP = "Use a Chroma server (http://HOST:PORT) instead of the embedded store."
EMBEDDER = Opt("embedder", ("--embedder",), envvar="EPIMEM_EMBEDDER", help=EMBEDDER_HELP)
CHROMA_URL = Opt("chroma_url", ("--chroma-url",), envvar="EPIMEM_CHROMA_URL", help=CHROMA_URL_HELP)

JSON = Opt("as_json", ("--json",), bool, False, "Machine-readable output (fields in docs/recall.md).")

OPTIONS = [
    Opt("query", (), help="What to recall, in words."),
    Opt("limit", ("--limit", "-n"), int, 5, "How many results.", min=1),
    Opt("kind", ("--kind",), help="Only these kinds (repeatable).", multiple=True),
    Opt("permanence", ("--permanence",), help="Only these permanences (repeatable).", multiple=True),
    Opt("tag", ("--tag",), help="Only beliefs with one of these tags (repeatable).", multiple=True),
    Opt("scope", ("--scope",), help="A project: its beliefs plus global ones."),
    Opt("min_confidence", ("--min-confidence",), float, help="On effective (decayed) confidence."),
    Opt("since", ("--since",), help="Last activity on or after YYYY-MM-DD."),
    Opt("until", ("--until",), help="Last activity on or before YYYY-MM-DD."),
    Opt("observations", ("--observations",), bool, False, "Rank observations too."),
    Opt("inactive", ("--inactive",), bool, False, "Include retired and superseded beliefs."),
    Opt("budget", ("--budget-tokens",), int, help="Print compact markdown of at most N tokens.",
        metavar="N", min=0),
    Opt("old_budget", ("--budget",), int, help="Deprecated spelling of --budget-tokens.", min=0, hidden=True),
    Opt("queries", ("--queries",), help="Read queries from FILE (- for stdin), one per line "
                                        "or JSON objects; write JSON lines."),
    Opt("mode", ("--mode",), default="fused", help="fused (default), keyword or semantic."),
    JSON,
    Opt("no_sync", ("--no-sync",), bool, False, "Use the index as it is."),
    EMBEDDER,
    CHROMA_URL,
]


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


def run(vault: str | None, today: str | None, *, query, limit, kind, permanence, tag, scope, min_confidence,
        since, until, observations, inactive, budget, old_budget, queries, mode, as_json, no_sync, embedder,
        chroma_url) -> None:
    """The beliefs most relevant to QUERY: keyword and semantic relevance, weighted by confidence."""
    errs = errors()
    if budget is None:
        budget = old_budget  # same unit: the old spelling only lacked the unit's name
    if (query is None) == (queries is None):
        fail("give a QUERY, or --queries FILE (one query per line)", code=2)
    r = recaller(vault, today, embedder, chroma_url, quiet=as_json or queries is not None)
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
        sys.stdout.write(res.markdown or "")
        return
    if not res.hits:
        echo("Nothing recalled.")
        return
    for i, h in enumerate(res.hits, 1):
        if h.type == "belief":
            conf = f"{h.effective_confidence:.2f} {h.tier}"
            echo(f"{i}. {h.id} — {h.title}  ({conf})")
        else:
            echo(f"{i}. {h.id} ({h.date}, {h.connects}) — {h.title}")
        echo(f"   score {h.score:.4f} · {h.why}")


SYNC_OPTIONS = [JSON, EMBEDDER, CHROMA_URL]


def sync(vault: str | None, today: str | None, *, as_json, embedder, chroma_url) -> None:
    """Update only what changed (mtime and size, then content hash)."""
    r = recaller(vault, today, embedder, chroma_url, quiet=as_json)
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


COMMANDS = {("recall",): (OPTIONS, "run"), ("index", "sync"): (SYNC_OPTIONS, "sync")}


def fast_main(global_opts: list[str], args: list[str], command: tuple[str, ...] = ("recall",)) -> int | None:
    """`epimem [--vault V] [--today D] COMMAND ARGS` without Typer; None: let Typer answer."""
    options, body = COMMANDS[command]
    g = split_global(global_opts)
    kw = parse(options, args)
    if g is None or kw is None:
        return None
    from ..core.errors import EpimemError

    try:
        globals()[body](*g, **kw)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except EpimemError as e:
        say_error(error_message(e))
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    return 0


def _batch(r, source: str, defaults: dict) -> None:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        fail(f"cannot read {source}: {e}")
    name = "stdin" if source == "-" else source
    entries = []
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


