"""Moving the vault: `sync` and `clone` between machines (SPEC §11), `export` and
`import` in and out of epimem (§12), and the `merge-driver` git calls.

git runs `epimem merge-driver` once for each file both sides of a merge changed: it imports
nothing here beyond this module and `epimem.api.sync`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .common import JSON, echo, emit_json, import_json, memory
from .spec import Arg, Opt, command, group

# --- sync and clone ------------------------------------------------------------------------


@command("sync", Arg("remote", required=False, help="Default: the branch's upstream remote, else origin."),
         Opt("--no-index", type=bool, help="Do not update the recall index afterwards."),
         Opt("--adopt-purge", type=bool, help="The remote's history was purged on another machine: rewrite this "
                                              "clone the same way (epimem forget --purge)."),
         Opt("--purge-text", multiple=True, metavar="TEXT",
             help="With --adopt-purge: a text that purge removed; - reads it from stdin."),
         JSON)
def sync_cmd(ctx, remote, no_index, adopt_purge, purge_text, as_json):
    """Commit pending edits, fetch, merge by epimem's rules, push (retried once when rejected)."""
    from ..api import sync as sync_api
    from .forget import _read_text

    texts = tuple(_read_text() if t == "-" else t for t in purge_text)
    rep = sync_api.sync(memory(ctx), remote, index=not no_index, adopt_purge=adopt_purge, purge_texts=texts)
    if as_json:
        emit_json({"remote": rep.remote, "branch": rep.branch, "committed": rep.committed, "merged": rep.merged,
                   "incoming": rep.incoming, "outgoing": rep.outgoing, "pushed": rep.pushed,
                   "retried": rep.retried, "beliefs": rep.beliefs, "notes": rep.notes})
        return
    if rep.committed:
        echo(f"Committed pending edits: {rep.committed[:8]}")
    got = f"{rep.incoming} commit{'s' if rep.incoming != 1 else ''} from {rep.remote}/{rep.branch}"
    echo({"up to date": f"Up to date with {rep.remote}/{rep.branch}.",
                "fast-forward": f"Brought in {got}.",
                "merged": f"Merged {got}.",
                "pushed only": f"{rep.remote}/{rep.branch} is new."}[rep.merged])
    moved = [f"{len(ids)} {what}" for what, ids in rep.beliefs.items() if ids]
    if moved:
        gone = rep.beliefs["removed"]
        echo(f"Beliefs: {', '.join(moved)}"
             + (f"; removed there: {', '.join(gone[:10])}" + (f" and {len(gone) - 10} more" if len(gone) > 10 else "")
                + " (`git log --diff-filter=D -- beliefs/` names the commits that removed them)"
                if gone else "") + ".")
    if rep.pushed:
        echo(f"Sent {rep.outgoing} commit{'s' if rep.outgoing != 1 else ''} to {rep.remote}"
                   + (" (after a second try: the remote had moved)." if rep.retried else "."))
    for n in rep.notes:
        echo(f"Note: {n}")


@command("clone", Arg("url", metavar="URL", help="Any git remote: a path, ssh, https."),
         Arg("path", required=False, complete="dir",
             help="Where the vault goes (default: --vault, $EPIMEM_VAULT, else the user data dir)."),
         Opt("--no-index", type=bool, help="Do not build the recall index now."), JSON)
def clone_cmd(ctx, url, path, no_index, as_json):
    """Set up this machine with a vault from another: clone, register the merge driver, build the index."""
    from ..api import sync as sync_api
    from ..store.paths import resolve_root

    rep = sync_api.clone(url, resolve_root(path or ctx.vault), index=not no_index, today=ctx.today)
    if as_json:
        emit_json({"vault": str(rep.root), "url": rep.url, "beliefs": rep.beliefs, "notes": rep.notes})
        return
    echo(f"Cloned {rep.url} into {rep.root}: {rep.beliefs} beliefs.")
    for n in rep.notes:
        echo(f"Note: {n}")
    echo("`epimem sync` keeps it in step with the other machines.")


@command("merge-driver", Arg("base", help="The common ancestor's version (git's %O)."),
         Arg("ours", help="Ours (git's %A): the merge is written here."),
         Arg("theirs", help="Theirs (git's %B)."), Arg("path", help="The file's path in the vault (git's %P)."),
         hidden=True)
def merge_driver_cmd(ctx, base, ours, theirs, path):
    """Git's merge driver for vault files (`.gitattributes` names it; you never run it yourself)."""
    from ..api.sync import merge_driver

    raise SystemExit(merge_driver(base, ours, theirs, path))


# --- import ---------------------------------------------------------------------------------

def _report(report, as_json: bool, dry_run: bool) -> None:
    if as_json:
        emit_json(import_json(report, dry_run))
        return
    if report.proposed or report.on_file:
        _proposed(report.proposed, report.commit)
        for n in report.notes:
            echo(f"Note: {n}")
        _tail(replace(report, commit=None, notes=()))
        return
    verb = "Would import" if dry_run else "Imported"
    echo(f"{verb} {len(report.beliefs)} beliefs, {report.observations} observations, "
               f"{len(report.tensions)} tensions" + (", the session counter" if report.sessions else "") + ".")
    _tail(report)
    if dry_run:
        echo("\nDry run: nothing was written.")


def _proposed(ids, commit) -> None:
    """What an import says when `review: required` sent its batch to the inbox."""
    n = len(ids)
    echo(f"Proposed {n} change{'s' if n != 1 else ''} for your review (review: required in epistemology.md); "
         "nothing else was written." if n else "Nothing new to propose: what this import holds is in the inbox "
         "already (waiting, or rejected) or in the vault.")
    if commit:
        echo(f"One commit: {commit[:10]}")
    if n:
        echo("`epimem inbox` shows what each would write; `epimem inbox accept ID…` writes it, "
             "`epimem inbox reject ID…` declines it.")


def _tail(rep) -> None:
    """What every import and migration says after its counts: the commit, notes, what the rules
    refused and what could not be mapped."""
    if rep.commit:
        echo(f"One commit: {rep.commit[:10]}")
    for n in rep.notes:
        echo(f"Note: {n}")
    if rep.refused:
        echo(f"\nRefused by the rules ({len(rep.refused)}):")
        for r in rep.refused:
            echo(f"  - {r}")
    if rep.unmapped:
        echo(f"\nCould not map ({len(rep.unmapped)}):")
        for u in rep.unmapped:
            echo(f"  - {u}")


DRY_RUN = Opt("--dry-run", type=bool, help="Say what would be imported; write nothing.")
IMPORT_JSON = JSON

group("import", "Bring beliefs in from another memory.")


def _import(ctx, run_import, source: Path, dry_run: bool, as_json: bool):
    """Run an importer on the vault (which must exist unless nothing is written) and report."""
    mem = memory(ctx)
    if not dry_run:
        mem.vault.require()
    report = run_import(mem, source, dry_run=dry_run)
    _report(report, as_json, dry_run)
    _under_review(mem, dry_run, as_json)
    return report


def _under_review(mem, dry_run: bool, as_json: bool) -> None:
    if dry_run and not as_json and mem.vault.exists() and mem.params.review == "required":
        echo("Review is required (epistemology.md): without --dry-run these wait in the inbox, one proposal "
             "a belief, for you to accept or reject.")


@command("import epistemic-memory", Arg("directory", metavar="DIR", type=Path, complete="dir",
                                        help="The folder with the profile's .md files."), DRY_RUN, IMPORT_JSON)
def import_epistemic_memory(ctx, directory, dry_run, as_json):
    """Import a hand-kept profile (conf:/first:/perm: lines, tensions.md, observations.md, session-counter.json)."""
    from ..importers.epistemic_memory import import_epistemic_memory as run_import

    _import(ctx, run_import, directory, dry_run, as_json)


@command("import claude-memory", Arg("file", type=Path, complete="file", help="A bullet-list memory file."),
         DRY_RUN, IMPORT_JSON)
def import_claude_memory(ctx, file, dry_run, as_json):
    """Import each bullet of a memory file as a speculative self-report belief, for you to confirm."""
    from ..importers.claude_memory import import_claude_memory as run_import

    report = _import(ctx, run_import, file, dry_run, as_json)
    if report.beliefs and not report.proposed and not report.on_file and not dry_run and not as_json:
        echo("\nThey start at 0.20 (speculative): confirm the true ones with "
                   "`epimem belief edit ID --confidence 0.40`, retire the rest with `epimem belief retire ID`.")


@command("import mcp-memory", Arg("file", type=Path, complete="file", help="The MCP memory server's memory.jsonl."),
         DRY_RUN, IMPORT_JSON)
def import_mcp_memory(ctx, file, dry_run, as_json):
    """Import the MCP reference memory server's entities and relations, each a speculative belief."""
    from ..importers.other_memories import import_mcp_memory as run_import

    _import(ctx, run_import, file, dry_run, as_json)


@command("import claude-auto-memory", Arg("folder", metavar="DIR", type=Path, complete="dir",
                                          help="The memory folder: ~/.claude/projects/<project>/memory."),
         Opt("--project", metavar="NAME", help="The scope (default: the project the folder is named after)."),
         DRY_RUN, IMPORT_JSON)
def import_claude_auto_memory(ctx, folder, project, dry_run, as_json):
    """Import Claude Code's auto memory (MEMORY.md and topic files), scoped to its project."""
    from ..importers.other_memories import import_claude_auto_memory as run

    _import(ctx, lambda mem, src, dry_run: run(mem, src, dry_run=dry_run, project=project), folder, dry_run, as_json)


@command("import mem0", Arg("file", type=Path, complete="file", help="A mem0 export (a JSON list of memories)."),
         DRY_RUN, IMPORT_JSON)
def import_mem0(ctx, file, dry_run, as_json):
    """Import a mem0 export: each memory a speculative belief, first seen when mem0 made it."""
    from ..importers.other_memories import import_mem0 as run_import

    _import(ctx, run_import, file, dry_run, as_json)


# --- export and import jsonl ------------------------------------------------------------------

@command("export", Opt("--out", type=Path, metavar="FILE", complete="file", help="Default: standard output."))
def export_cmd(ctx, out):
    """Write the whole vault as JSON Lines (one typed record a line, schema version first)."""
    import sys

    from ..api import portability

    mem = memory(ctx)
    if out is None:
        portability.export(mem, sys.stdout)
        return
    out, n = portability.export_file(mem, out)  # whole or not at all, no temporary file left
    echo(f"Exported {n} records to {out}", err=True)


@command("import jsonl", Arg("file", type=Path, complete="file", help="An `epimem export`."), DRY_RUN, IMPORT_JSON)
def import_jsonl(ctx, file, dry_run, as_json):
    """Recreate an export in this vault (`epimem init` makes an empty one); files it has already are merged."""
    from ..api import portability

    mem = memory(ctx)
    rep = portability.import_jsonl(mem, file, dry_run=dry_run)
    if as_json:
        emit_json({"commit": rep.commit, "files": rep.files, "totals": rep.counts, "dry_run": dry_run,
                   "unmapped": rep.unmapped, "notes": rep.notes, "refused": rep.refused,
                   "proposed": list(rep.proposed)})
        return
    if rep.proposed or (not dry_run and mem.params.review == "required" and not rep.files):
        _proposed(rep.proposed, rep.commit)
        for n in rep.notes:
            echo(f"Note: {n}")
        return
    verb = "Would import" if dry_run else "Imported"
    echo(f"{verb} {', '.join(f'{n} × {k}' for k, n in rep.counts.items()) or 'nothing'}.")
    made = {}
    for v in rep.files.values():
        made[v] = made.get(v, 0) + 1
    if made:
        echo("Files: " + ", ".join(f"{n} {k}" for k, n in sorted(made.items())))
    _tail(rep)
    _under_review(mem, dry_run, as_json)
