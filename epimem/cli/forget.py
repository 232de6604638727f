"""`epimem forget ID… [--purge] [--purge-text TEXT]` (SPEC §15): the plan shown, the user's yes, done.

Parses, calls `epimem.api.forget` (plan, then forget with the plan's token), renders. It never
runs without a confirmation: a prompt in a terminal, `--yes` in a script. Rule 22: forgetting is
the user's decision, so no skill allows this command and the MCP server does not offer it.
"""

from __future__ import annotations

import sys

from .common import echo, emit_json, fail, memory
from .spec import Arg, Opt, command


@command("forget", Arg("beliefs", multiple=True, required=False, metavar="ID", complete="belief",
                       help="The beliefs to forget."),
         Opt("--purge", type=bool, help="Rewrite the history too: no commit, log, index or later export holds it."),
         Opt("--purge-text", multiple=True, metavar="TEXT",
             help="A text typed somewhere (a secret), purged from the files and the history; - reads it from "
                  "stdin. Implies --purge."),
         Opt("--remotes", choices=("push", "later"),
             help="With remotes: send the purged history now (push), or at the next `epimem sync` (later); "
                  "both use a lease."),
         Opt("--yes", type=bool, help="Do not ask (scripts): the user confirmed already."),
         Opt("--json", dest="as_json", type=bool, help="Machine-readable output (fields in docs/cli.md)."))
def forget_cmd(ctx, beliefs, purge, purge_text, remotes, yes, as_json):
    """Forget beliefs for good: a tombstone keeps the id and the day; --purge rewrites the history."""
    mem = memory(ctx)
    texts = [_read_text() if t == "-" else t for t in purge_text]
    plan = mem.forget_plan(beliefs or [], purge=purge, texts=texts, remotes=remotes)
    if not as_json:
        _show(plan)
    if not yes:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            if as_json:
                emit_json({**_plan_json(plan), "done": False})
            fail("forgetting never runs without the user's confirmation: run it in a terminal to be asked, "
                 "or add --yes once the user has said yes to the plan above")
        sys.stdout.write("Forget this for good? Type yes to go on: ")
        sys.stdout.flush()
        answer = sys.stdin.readline()
        if answer.strip().lower() != "yes":
            echo("Nothing was forgotten.")
            raise SystemExit(1)
    rep = mem.forget(plan, confirm=plan.token)
    if as_json:
        emit_json({**_plan_json(plan), "done": True, "commit": rep.commit, "record": rep.record, "head": rep.head,
                   "rewritten": rep.rewritten, "pushed": rep.pushed, "notes": rep.notes})
        return
    if rep.commit:
        echo(f"Forgotten in the files: {rep.commit[:8]}")
    if plan.purge:
        echo(f"History rewritten: {len(rep.rewritten)} commit{'s' if len(rep.rewritten) != 1 else ''} "
                   f"have new ids; reflogs expired, old objects pruned; record {rep.record}.")
        for old, new in list(rep.rewritten.items())[:20]:
            echo(f"  {old[:8]} → {new[:8]}")
        if len(rep.rewritten) > 20:
            echo(f"  … and {len(rep.rewritten) - 20} more (all in {rep.record})")
    for name in rep.pushed:
        echo(f"Sent to {name} with a lease. Its other clones: `epimem sync` there refuses the old "
                   "history and says how to follow (a new clone, or `epimem sync --adopt-purge`).")
    for n in rep.notes:
        echo(f"Note: {n}")


def _read_text() -> str:
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass("Text to purge (not shown): ")
    line = sys.stdin.readline()
    return line.rstrip("\r\n")


def _show(plan) -> None:
    what = ", ".join(plan.beliefs)
    if plan.texts:
        what += (" and " if what else "") + f"{plan.texts} typed text{'s' if plan.texts != 1 else ''}"
    echo(f"Forgetting {what}:")
    for c in plan.files:
        echo(f"  {c.path} — {c.what}")
    if not plan.files:
        echo("  (the files hold nothing of it any more)")
    if plan.purge:
        n = plan.counts()
        later = n.get("parents", 0)
        own = len(plan.commits) - later
        echo(f"History: {own} commit{'s' if own != 1 else ''} change"
                   + (f" ({', '.join(f'{v} {k}' for k, v in sorted(n.items()) if k != 'parents')})" if own else "")
                   + (f", {later} later one{'s' if later != 1 else ''} get new ids" if later else "")
                   + "; reflogs expired and old objects pruned.")
        for c in plan.commits:
            if c.how != "parents":
                echo(f"  {c.sha[:8]} {c.how:<8} {c.subject}")
        for a in plan.remotes:
            echo(f"Remote {a.name}/{a.branch}: " + (
                "sent now, with a lease" if a.action == "push" else "sent by the next `epimem sync`, with a lease")
                + "; its other clones are refused the old history and told how to follow.")
        echo("This cannot be undone. Exports made before (files outside the vault) still hold it.")
    else:
        echo("The history still holds it (`epimem undo` brings it back); --purge takes it out of there too.")


def _plan_json(plan) -> dict:
    return {"beliefs": list(plan.beliefs), "texts": plan.texts, "purge": plan.purge,
            "files": [{"path": c.path, "what": c.what} for c in plan.files],
            "commits": [{"sha": c.sha, "subject": c.subject, "how": c.how} for c in plan.commits],
            "remotes": [{"name": a.name, "branch": a.branch, "action": a.action} for a in plan.remotes]}
