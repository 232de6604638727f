"""`epimem inbox [accept|reject ID…]` (SPEC §15): what unattended paths proposed, and the user's word.

Parses, calls `epimem.api.inbox`, renders. Accepting and rejecting are the user's decisions
(rule 22): no skill allows these commands and the MCP server does not offer them.
"""

from __future__ import annotations

from ..api.shapes import inbox_listing_json
from .common import JSON, echo, emit_json, fail, memory, moved, observe_json, observed_line, say_error
from .spec import Arg, Opt, command, group

IDS = Arg("ids", multiple=True, metavar="ID", help="Proposal ids, as `epimem inbox` lists them.")


def inbox_list(ctx, as_json, diff):
    """What waits in the review inbox, each as the change accepting it would make."""
    mem = memory(ctx)
    mem.vault.require()
    previews, problems = mem.inbox()
    if as_json:
        emit_json(inbox_listing_json(mem.params.review, previews, problems))
    else:
        _print(mem, previews, diff)
    for x in problems:
        say_error(f"{x.path}:{x.line}: {x.message} (the file is left as it is)")
    if problems:
        raise SystemExit(1)


group("inbox", "Review what unattended paths propose to remember (`review: required`): list, accept, reject.",
      JSON, Opt("--diff", type=bool, help="Show each file's diff, as accepting would make it."), run=inbox_list)


def _print(mem, previews, diff: bool) -> None:
    if not previews:
        echo("The inbox is empty." + ("" if mem.params.review == "required" else
                                      " (review is off: observations are applied as they come; "
                                      "`review: required` in epistemology.md sends unattended ones here)"))
        return
    echo(f"{len(previews)} proposal{'s' if len(previews) != 1 else ''} waiting for your review:")
    for pv in previews:
        p = pv.proposal
        o = p.observation
        echo("")
        if p.kind == "import":
            echo(f"{p.id}  from `epimem import {p.importer}` ({p.source}), {p.proposed}")
            echo(f"  {', '.join(r.path for r in p.records)}")
        else:
            echo(f"{p.id}  from {p.origin} ({p.source}{', session ' + p.session if p.session else ''}), {p.proposed}")
            echo(f"  {o.get('strength')} → {o.get('connects')}" + (f" “{o['title']}”" if o.get("title") else "")
                 + f": {o.get('evidence')}")
        if pv.refused:
            echo(f"  accepting it today would be refused: {pv.refused}")
            continue
        for b in pv.beliefs:
            tier = mem.params.tier(b.confidence, b.basis)
            echo(f"  would write the belief {b.id} “{b.title}”: {b.basis}, {b.confidence:.2f} ({tier})")
        for n in pv.notes:
            echo(f"  note: {n}")
        for r in pv.results:
            echo(f"  would: {r.belief or 'record it, unconnected'}{moved(r, ' {}')} — {r.reason}")
            if r.tension:
                echo(f"  would {'open the tension' if r.tension_opened else 'add to the tension'} {r.tension}")
        for c in pv.changes:
            echo(f"  {c.action} {c.path}")
            if diff:
                for line in c.diff.splitlines():
                    echo(f"    {line}")
    echo("")
    echo("`epimem inbox accept ID…` applies one as if just observed; `epimem inbox reject ID…` declines it; "
         "`--diff` shows each file's diff.")


@command("inbox accept", IDS, JSON)
def accept_cmd(ctx, ids, as_json):
    """Accept proposals: the rules applied as if the observation had just been made (one commit)."""
    mem = memory(ctx)
    report = mem.inbox_accept(ids)
    if as_json:
        out = observe_json(report)
        out["accepted"] = list(report.accepted)
        out["imported"] = list(report.imported)
        emit_json(out)
    else:
        for r in report.results:
            echo(observed_line(r))
        if report.imported:
            echo(f"Imported {', '.join(report.imported)}, as the import proposed, under today's rules.")
        if report.accepted:
            echo(f"Accepted {', '.join(report.accepted)}: {report.commit[:8] if report.commit else ''}")
    if report.held:
        fail("nothing was accepted: a new belief would sit beside a similar one (rule 17); observe it again by "
             "hand, connected to one of them, and reject the proposal")


@command("inbox reject", IDS, Opt("--note", default="", metavar="TEXT", help="Why, in your words (kept on record)."),
         JSON)
def reject_cmd(ctx, ids, note, as_json):
    """Reject proposals: kept on record as rejected, nothing else changes (one commit)."""
    mem = memory(ctx)
    sha, done = mem.inbox_reject(ids, note=note)
    if as_json:
        emit_json({"commit": sha, "rejected": list(done)})
    else:
        echo(f"Rejected {', '.join(done)}: {sha[:8]}")
