"""`epimem recall`, `epimem index rebuild|sync|status`, `epimem watch` (SPEC §6).

Parses options, calls `epimem.recall`, renders. Every error the user can fix
(an empty query, a bad date, an unreachable Chroma server, a broken model
file) ends the command with a message, never a traceback.
"""

from __future__ import annotations

from pathlib import Path

import typer

from . import recall_query
from .common import emit_json, fail, state, typer_command
from .recall_query import errors as _errors
from .recall_query import recaller, report, root_of

index_app = typer.Typer(no_args_is_help=True, help="The recall index in .epimem/ (rebuildable from the files).")

CHROMA_URL = typer.Option(None, "--chroma-url", envvar="EPIMEM_CHROMA_URL", help=recall_query.CHROMA_URL_HELP)
EMBEDDER = typer.Option(None, "--embedder", envvar="EPIMEM_EMBEDDER", help=recall_query.EMBEDDER_HELP)
JSON = typer.Option(False, "--json", help="Machine-readable output (fields in docs/recall.md).")


def _root(ctx: typer.Context) -> Path:
    return root_of(state(ctx).vault)


def _recaller(ctx: typer.Context, embedder: str | None, chroma_url: str | None, quiet: bool = False):
    st = state(ctx)
    return recaller(st.vault, st.today, embedder, chroma_url, quiet=quiet)


# --- recall --------------------------------------------------------------------------------

def recall_cmd(ctx: typer.Context, **kw):
    """The beliefs most relevant to QUERY: keyword and semantic relevance, weighted by confidence."""
    st = state(ctx)
    recall_query.run(st.vault, st.today, **kw)


typer_command(recall_cmd, recall_query.OPTIONS)


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
    report(rep, as_json)


def index_sync(ctx: typer.Context, **kw):
    """Update only what changed (mtime and size, then content hash)."""
    st = state(ctx)
    recall_query.sync(st.vault, st.today, **kw)


typer_command(index_sync, recall_query.SYNC_OPTIONS)
index_app.command("sync")(index_sync)


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
    lagging = st.chroma_pending or st.chroma_error
    if lagging:
        why = f" (the last update failed: {st.chroma_error})" if st.chroma_error else ""
        typer.echo(f"Chroma lacks {st.chroma_pending} item(s) of the index{why}; "
                   "`epimem index sync` updates it.")
    if st.stale:
        typer.echo("Stale: `epimem index sync` updates it.")
    elif not lagging:  # "up to date" only when Chroma is too: the line above says it is not
        typer.echo("Up to date.")
    else:
        typer.echo("Every file is indexed; only Chroma is behind.")


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
