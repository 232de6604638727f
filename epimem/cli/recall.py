"""`epimem recall`, `epimem index rebuild|sync|status`, `epimem watch` (SPEC §6).

Parses options, calls `epimem.recall`, renders. Every error the user can fix
(an empty query, a bad date, an unreachable Chroma server, a broken model
file) ends the command with a message, never a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from .common import emit_json, fail, state, warn

index_app = typer.Typer(no_args_is_help=True, help="The recall index in .epimem/ (rebuildable from the files).")

CHROMA_URL = typer.Option(None, "--chroma-url", envvar="EPIMEM_CHROMA_URL",
                          help="Use a Chroma server (http://HOST:PORT) instead of the embedded store.")
EMBEDDER = typer.Option(None, "--embedder", envvar="EPIMEM_EMBEDDER",
                        help="wordllama (default, offline), minilm (offline, the minilm extra), "
                             "chroma-minilm, or ollama:MODEL.")
JSON = typer.Option(False, "--json", help="Machine-readable output (fields in docs/recall.md).")


def _root(ctx: typer.Context) -> Path:
    from ..core.errors import VaultError
    from ..store.paths import resolve_root
    from ..store.vault import Vault

    root = resolve_root(state(ctx).vault)
    try:
        Vault(root).require()
    except VaultError as e:
        fail(str(e))
    return root


def _errors():
    from ..core.errors import VaultError
    from ..recall.embed import EmbedderError
    from ..recall.errors import RecallIndexError
    from ..recall.rank import QueryError

    return (QueryError, RecallIndexError, EmbedderError, VaultError, OSError)


def _recaller(ctx: typer.Context, embedder: str | None, chroma_url: str | None, quiet: bool = False):
    from ..recall.api import Recaller
    from ..recall.config import read_config

    root = _root(ctx)
    st = state(ctx)
    try:
        config = read_config(root, embedder=embedder, chroma_url=chroma_url)
    except _errors() as e:
        fail(str(e))
    return Recaller(root, config=config, today=st.today,
                    progress=None if quiet else (lambda m: typer.echo(m, err=True)))


# --- recall --------------------------------------------------------------------------------

def recall_cmd(ctx: typer.Context,
               query: str | None = typer.Argument(None, help="What to recall, in words."),
               limit: int = typer.Option(5, "--limit", "-n", min=1, help="How many results."),
               kind: list[str] = typer.Option([], "--kind", help="Only these kinds (repeatable)."),
               permanence: list[str] = typer.Option([], "--permanence", help="Only these permanences (repeatable)."),
               tag: list[str] = typer.Option([], "--tag", help="Only beliefs with one of these tags (repeatable)."),
               scope: str | None = typer.Option(None, "--scope", help="A project: its beliefs plus global ones."),
               min_confidence: float | None = typer.Option(None, "--min-confidence",
                                                              help="On effective (decayed) confidence."),
               since: str | None = typer.Option(None, "--since", help="Last activity on or after YYYY-MM-DD."),
               until: str | None = typer.Option(None, "--until", help="Last activity on or before YYYY-MM-DD."),
               observations: bool = typer.Option(False, "--observations", help="Rank observations too."),
               inactive: bool = typer.Option(False, "--inactive", help="Include retired and superseded beliefs."),
               budget: int | None = typer.Option(None, "--budget-tokens", metavar="N", min=0,
                                                    help="Print compact markdown of at most N tokens."),
               old_budget: int | None = typer.Option(None, "--budget", min=0, hidden=True,
                                                        help="Deprecated spelling of --budget-tokens."),
               queries: str | None = typer.Option(None, "--queries",
                                                     help="Read queries from FILE (- for stdin), one per line "
                                                          "or JSON objects; write JSON lines."),
               mode: str = typer.Option("fused", "--mode", help="fused (default), keyword or semantic."),
               as_json: bool = JSON,
               no_sync: bool = typer.Option(False, "--no-sync", help="Use the index as it is."),
               embedder: str | None = EMBEDDER,
               chroma_url: str | None = CHROMA_URL):
    """The beliefs most relevant to QUERY: keyword and semantic relevance, weighted by confidence."""
    errors = _errors()
    if budget is None:
        budget = old_budget  # same unit: the old spelling only lacked the unit's name
    if (query is None) == (queries is None):
        fail("give a QUERY, or --queries FILE (one query per line)", code=2)
    r = _recaller(ctx, embedder, chroma_url, quiet=as_json or queries is not None)
    r.auto_sync = not no_sync
    filters = dict(kind=kind, permanence=permanence, tag=tag, scope=scope, min_confidence=min_confidence,
                   since=since, until=until, include_observations=observations, include_inactive=inactive)
    if queries is not None:
        _batch(r, queries, dict(filters, limit=limit, budget=budget, mode=mode))
        return
    try:
        res = r.recall(query, limit=limit, budget=budget, mode=mode, **filters)
    except errors as e:
        fail(str(e), code=2 if type(e).__name__ == "QueryError" else 1)
    if r.last_report and r.last_report.action in ("synced", "rebuilt"):
        for p in r.last_report.problems:
            warn(f"skipped {p}")
    if as_json:
        emit_json(res.as_json())
        return
    if budget is not None:
        sys.stdout.write(res.markdown or "")
        return
    if not res.hits:
        typer.echo("Nothing recalled.")
        return
    for i, h in enumerate(res.hits, 1):
        if h.type == "belief":
            conf = f"{h.effective_confidence:.2f} {h.tier}"
            typer.echo(f"{i}. {h.id} — {h.title}  ({conf})")
        else:
            typer.echo(f"{i}. {h.id} ({h.date}, {h.connects}) — {h.title}")
        typer.echo(f"   score {h.score:.4f} · {h.why}")


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
    errors = _errors()
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
    except errors as e:
        fail(str(e))
    out.flush()


# --- index --------------------------------------------------------------------------------

@index_app.command("rebuild")
def index_rebuild(ctx: typer.Context, as_json: bool = JSON, embedder: str | None = EMBEDDER,
                  chroma_url: str | None = CHROMA_URL):
    """Build the index from nothing, from the vault's files."""
    r = _recaller(ctx, embedder, chroma_url, quiet=as_json)
    try:
        rep = r.rebuild("asked for")
    except _errors() as e:
        fail(str(e))
    _report(rep, as_json)


@index_app.command("sync")
def index_sync(ctx: typer.Context, as_json: bool = JSON, embedder: str | None = EMBEDDER,
               chroma_url: str | None = CHROMA_URL):
    """Update only what changed (mtime and size, then content hash)."""
    r = _recaller(ctx, embedder, chroma_url, quiet=as_json)
    try:
        rep = r.sync()
    except _errors() as e:
        fail(str(e))
    _report(rep, as_json)


def _report(rep, as_json: bool) -> None:
    if as_json:
        emit_json(rep.as_json())
        return
    for p in rep.problems:
        warn(f"skipped {p}")
    typer.echo(rep.summary())


@index_app.command("status")
def index_status(ctx: typer.Context, as_json: bool = JSON, embedder: str | None = EMBEDDER,
                 chroma_url: str | None = CHROMA_URL):
    """Say what is stale, without changing anything."""
    from ..recall.config import read_config
    from ..recall.index import Index

    root = _root(ctx)
    try:
        st = Index(root, read_config(root, embedder=embedder, chroma_url=chroma_url)).status()
    except _errors() as e:
        fail(str(e))
    if as_json:
        emit_json(st.as_json())
        return
    if not st.exists:
        typer.echo("No index yet: `epimem index rebuild` (or any `epimem recall`) builds it.")
        return
    if st.needs_rebuild:
        typer.echo(f"The index must be rebuilt: {st.needs_rebuild}.")
    if st.written:
        typer.echo(f"{st.items} items from {st.files} files; embedder {st.embedder}; store {st.store}; "
                   f"written {st.written}.")
    for label, paths in (("new", st.new), ("changed", st.changed), ("deleted", st.deleted)):
        for p in paths:
            typer.echo(f"  {label:<8} {p}")
    for p in st.problems:
        typer.echo(f"  malformed {p}")
    if not st.stale:
        typer.echo("Up to date.")
    else:
        typer.echo("Stale: `epimem index sync` updates it.")


# --- watch --------------------------------------------------------------------------------

def watch_cmd(ctx: typer.Context,
              commit: bool = typer.Option(False, "--commit",
                                          help="Also commit hand edits, one commit per settled change."),
              debounce: int = typer.Option(1600, "--debounce", min=50, help="Longest wait (ms) to group events."),
              step: int = typer.Option(100, "--step", min=10, help="Quiet time (ms) that ends a group of events."),
              poll: bool = typer.Option(False, "--poll", help="Poll instead of OS notifications (network drives)."),
              embedder: str | None = EMBEDDER, chroma_url: str | None = CHROMA_URL):
    """Keep the index current while you edit the vault (and commit the edits with --commit)."""
    from ..recall import watch
    from ..recall.config import read_config
    from ..recall.index import Index

    root = _root(ctx)
    if commit:
        from ..store.git import HistoryError, require_repo

        try:
            require_repo(root)
        except HistoryError as e:
            fail(str(e))
    say = lambda m: typer.echo(m)  # noqa: E731 - flushes, so a supervisor sees each line
    try:
        index = Index(root, read_config(root, embedder=embedder, chroma_url=chroma_url),
                      progress=lambda m: typer.echo(m, err=True))
        code = watch.run(root, commit=commit, index=index, echo=say, debounce_ms=debounce,
                         step_ms=step, force_polling=True if poll else None)
    except _errors() as e:
        fail(str(e))
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("recall")(recall_cmd)
    app.add_typer(index_app, name="index")
    app.command("watch")(watch_cmd)
