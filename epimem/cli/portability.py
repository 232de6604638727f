"""Moving the vault: `sync` and `clone` between machines (SPEC §11), `export` and
`import` in and out of epimem (§12), and the `merge-driver` git calls.

`epimem merge-driver` normally never reaches Typer (`epimem/__main__.py` sends it
straight to `epimem.api.sync.merge_driver`); the command here serves `--help`.
"""

from __future__ import annotations

from pathlib import Path

import typer

from .common import emit_json, import_json, memory, state

JSON = typer.Option(False, "--json", help="Machine-readable output (fields in docs/cli.md).")

# --- sync and clone ------------------------------------------------------------------------


def sync_cmd(ctx: typer.Context,
             remote: str | None = typer.Argument(None, metavar="[REMOTE]",
                                                 help="Default: the branch's upstream remote, else origin."),
             no_index: bool = typer.Option(False, "--no-index", help="Do not update the recall index afterwards."),
             as_json: bool = JSON):
    """Commit pending edits, fetch, merge by epimem's rules, push (retried once when rejected)."""
    from ..api import sync as sync_api

    rep = sync_api.sync(memory(ctx), remote, index=not no_index)
    if as_json:
        emit_json({"remote": rep.remote, "branch": rep.branch, "committed": rep.committed, "merged": rep.merged,
                   "incoming": rep.incoming, "outgoing": rep.outgoing, "pushed": rep.pushed,
                   "retried": rep.retried, "notes": rep.notes})
        return
    if rep.committed:
        typer.echo(f"Committed pending edits: {rep.committed[:8]}")
    got = f"{rep.incoming} commit{'s' if rep.incoming != 1 else ''} from {rep.remote}/{rep.branch}"
    typer.echo({"up to date": f"Up to date with {rep.remote}/{rep.branch}.",
                "fast-forward": f"Brought in {got}.",
                "merged": f"Merged {got}.",
                "pushed only": f"{rep.remote}/{rep.branch} is new."}[rep.merged])
    if rep.pushed:
        typer.echo(f"Sent {rep.outgoing} commit{'s' if rep.outgoing != 1 else ''} to {rep.remote}"
                   + (" (after a second try: the remote had moved)." if rep.retried else "."))
    for n in rep.notes:
        typer.echo(f"Note: {n}")


def clone_cmd(ctx: typer.Context,
              url: str = typer.Argument(..., metavar="URL", help="Any git remote: a path, ssh, https."),
              path: str | None = typer.Argument(None, metavar="[PATH]",
                                                help="Where the vault goes (default: --vault, $EPIMEM_VAULT, "
                                                     "else the user data dir)."),
              no_index: bool = typer.Option(False, "--no-index", help="Do not build the recall index now."),
              as_json: bool = JSON):
    """Set up this machine with a vault from another: clone, register the merge driver, build the index."""
    from ..api import sync as sync_api
    from ..store.paths import resolve_root

    st = state(ctx)
    rep = sync_api.clone(url, resolve_root(path or st.vault), index=not no_index, today=st.today)
    if as_json:
        emit_json({"vault": str(rep.root), "url": rep.url, "beliefs": rep.beliefs, "notes": rep.notes})
        return
    typer.echo(f"Cloned {rep.url} into {rep.root}: {rep.beliefs} beliefs.")
    for n in rep.notes:
        typer.echo(f"Note: {n}")
    typer.echo("`epimem sync` keeps it in step with the other machines.")


def merge_driver_cmd(base: str = typer.Argument(..., metavar="BASE"),
                     ours: str = typer.Argument(..., metavar="OURS"),
                     theirs: str = typer.Argument(..., metavar="THEIRS"),
                     path: str = typer.Argument(..., metavar="PATH")):
    """Git's merge driver for vault files (`.gitattributes` names it; you never run it yourself)."""
    from ..api.sync import merge_driver

    raise typer.Exit(merge_driver(base, ours, theirs, path))


# --- import ---------------------------------------------------------------------------------

def _report(report, as_json: bool, dry_run: bool) -> None:
    if as_json:
        emit_json(import_json(report, dry_run))
        return
    verb = "Would import" if dry_run else "Imported"
    typer.echo(f"{verb} {len(report.beliefs)} beliefs, {report.observations} observations, "
               f"{len(report.tensions)} tensions" + (", the session counter" if report.sessions else "") + ".")
    if report.commit:
        typer.echo(f"One commit: {report.commit[:10]}")
    for n in report.notes:
        typer.echo(f"Note: {n}")
    _refused(report.refused)
    if report.unmapped:
        typer.echo(f"\nCould not map ({len(report.unmapped)}):")
        for u in report.unmapped:
            typer.echo(f"  - {u}")
    if dry_run:
        typer.echo("\nDry run: nothing was written.")


def _refused(refused) -> None:
    if refused:
        typer.echo(f"\nRefused by the rules ({len(refused)}):")
        for r in refused:
            typer.echo(f"  - {r}")


DRY_RUN = typer.Option(False, "--dry-run")
IMPORT_JSON = typer.Option(False, "--json", help="Machine-readable output (fields in docs/cli.md).")


def _import(ctx: typer.Context, run_import, source: Path, dry_run: bool, as_json: bool):
    """Run an importer on the vault (which must exist unless nothing is written) and report."""
    mem = memory(ctx)
    if not dry_run:
        mem.vault.require()
    report = run_import(mem, source, dry_run=dry_run)
    _report(report, as_json, dry_run)
    return report


def import_epistemic_memory(ctx: typer.Context,
                            directory: Path = typer.Argument(..., metavar="DIR",
                                                             help="The folder with the profile's .md files."),
                            dry_run: bool = DRY_RUN, as_json: bool = IMPORT_JSON):
    """Import a hand-kept profile (conf:/first:/perm: lines, tensions.md, observations.md, session-counter.json)."""
    from ..importers.epistemic_memory import import_epistemic_memory as run_import

    _import(ctx, run_import, directory, dry_run, as_json)


def import_claude_memory(ctx: typer.Context,
                         file: Path = typer.Argument(..., metavar="FILE", help="A bullet-list memory file."),
                         dry_run: bool = DRY_RUN, as_json: bool = IMPORT_JSON):
    """Import each bullet of a memory file as a speculative self-report belief, for you to confirm."""
    from ..importers.claude_memory import import_claude_memory as run_import

    report = _import(ctx, run_import, file, dry_run, as_json)
    if report.beliefs and not dry_run and not as_json:
        typer.echo("\nThey start at 0.20 (speculative): confirm the true ones with "
                   "`epimem belief edit ID --confidence 0.40`, retire the rest with `epimem belief retire ID`.")


def import_mcp_memory(ctx: typer.Context,
                      file: Path = typer.Argument(..., metavar="FILE",
                                                  help="The MCP memory server's memory.jsonl."),
                      dry_run: bool = DRY_RUN, as_json: bool = IMPORT_JSON):
    """Import the MCP reference memory server's entities and relations, each a speculative belief."""
    from ..importers.other_memories import import_mcp_memory as run_import

    _import(ctx, run_import, file, dry_run, as_json)


def import_claude_auto_memory(ctx: typer.Context,
                              folder: Path = typer.Argument(..., metavar="DIR",
                                                            help="~/.claude/projects/<project>/memory"),
                              project: str | None = typer.Option(None, "--project",
                                                                 help="The scope (default: the project the "
                                                                      "folder is named after)."),
                              dry_run: bool = DRY_RUN, as_json: bool = IMPORT_JSON):
    """Import Claude Code's auto memory (MEMORY.md and topic files), scoped to its project."""
    from ..importers.other_memories import import_claude_auto_memory as run

    _import(ctx, lambda mem, src, dry_run: run(mem, src, dry_run=dry_run, project=project), folder, dry_run, as_json)


def import_mem0(ctx: typer.Context,
                file: Path = typer.Argument(..., metavar="FILE", help="A mem0 export (a JSON list of memories)."),
                dry_run: bool = DRY_RUN, as_json: bool = IMPORT_JSON):
    """Import a mem0 export: each memory a speculative belief, first seen when mem0 made it."""
    from ..importers.other_memories import import_mem0 as run_import

    _import(ctx, run_import, file, dry_run, as_json)


# --- export and import jsonl ------------------------------------------------------------------

def export_cmd(ctx: typer.Context,
               out: Path | None = typer.Option(None, "--out", metavar="FILE", help="Default: standard output.")):
    """Write the whole vault as JSON Lines (one typed record a line, schema version first)."""
    import sys

    from ..api import portability

    mem = memory(ctx)
    if out is None:
        portability.export(mem, sys.stdout)
        return
    out, n = portability.export_file(mem, out)  # whole or not at all, no temporary file left
    typer.echo(f"Exported {n} records to {out}", err=True)


def import_jsonl(ctx: typer.Context, file: Path = typer.Argument(..., metavar="FILE", help="An `epimem export`."),
                 dry_run: bool = DRY_RUN, as_json: bool = IMPORT_JSON):
    """Recreate an export in this vault (`epimem init` makes an empty one); files it has already are merged."""
    from ..api import portability

    rep = portability.import_jsonl(memory(ctx), file, dry_run=dry_run)
    if as_json:
        emit_json({"commit": rep.commit, "files": rep.files, "totals": rep.counts, "dry_run": dry_run,
                   "unmapped": rep.unmapped, "notes": rep.notes, "refused": rep.refused})
        return
    verb = "Would import" if dry_run else "Imported"
    typer.echo(f"{verb} {', '.join(f'{n} × {k}' for k, n in rep.counts.items()) or 'nothing'}.")
    made = {}
    for v in rep.files.values():
        made[v] = made.get(v, 0) + 1
    if made:
        typer.echo("Files: " + ", ".join(f"{n} {k}" for k, n in sorted(made.items())))
    if rep.commit:
        typer.echo(f"One commit: {rep.commit[:10]}")
    for n in rep.notes:
        typer.echo(f"Note: {n}")
    _refused(rep.refused)
    if rep.unmapped:
        typer.echo(f"\nCould not map ({len(rep.unmapped)}):")
        for u in rep.unmapped:
            typer.echo(f"  - {u}")


def register(app: typer.Typer) -> None:
    app.command("sync")(sync_cmd)
    app.command("clone")(clone_cmd)
    app.command("merge-driver", hidden=True)(merge_driver_cmd)
    app.command("export")(export_cmd)

    import_app = typer.Typer(no_args_is_help=True, help="Bring beliefs in from another memory.")
    import_app.command("epistemic-memory")(import_epistemic_memory)
    import_app.command("claude-memory")(import_claude_memory)
    import_app.command("jsonl")(import_jsonl)
    import_app.command("mcp-memory")(import_mcp_memory)
    import_app.command("claude-auto-memory")(import_claude_auto_memory)
    import_app.command("mem0")(import_mem0)
    app.add_typer(import_app, name="import")
