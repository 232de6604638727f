"""`epimem skill observe|mirror|recall`: what the /observe and /mirror skills start from and ask (the
hooks are cli/hook.py's, `install claude-code` is cli/install.py's)."""

from __future__ import annotations

import os

from .common import echo, memory
from .recall import QUERY_OPTIONS
from .spec import Arg, Opt, command, group

# --- the data the skills start from -------------------------------------------------------------

def _never_fail(ctx, produce) -> None:
    """Run a skill's `!` line: whatever goes wrong is one readable line on stdout, and exit 0.

    Claude Code drops the whole skill, silently and before any model request, when a `!` line
    exits non-zero (docs/claude-code.md); a line saying what is wrong and what fixes it reaches
    the model instead, which can tell the user.
    """
    from ..core.errors import EpimemError
    from ..store.paths import resolve_root
    from .common import error_message

    try:
        produce()
        return
    except SystemExit as e:
        if not e.code:
            raise
        line = "epimem could not compute this skill's data (its error is above)."
    except EpimemError as e:
        from .spec import COMMANDS

        line = f"epimem: {error_message(e, COMMANDS.get(ctx.command))}."
    except Exception as e:  # a bug must not take the skill down with it
        line = f"epimem failed while computing this skill's data ({type(e).__name__}: {e})."
    root = str(resolve_root(ctx.vault))
    where = "" if root in line else f" The vault looked at is {root}."
    echo(f"{line}{where} For a vault elsewhere, `epimem --vault PATH install claude-code` records it "
               "for Claude Code. Tell the user, and go on without this data.")
    raise SystemExit(0)


group("skill", "The fresh data the /observe and /mirror skills start from.")


# The skills' allowed-tools grant this, not `recall`: `recall --queries FILE` prints any file's lines
# back as queries, and `--chroma-url` sends the vault's text to any server, choices of the user
# that must meet the permission prompt (rule 22). Here a model can ask only what a query asks.
@command("skill recall", Arg("query", metavar="QUERY", help="What to recall, in words."), *QUERY_OPTIONS)
def skill_recall(ctx, *, query, limit, kind, permanence, tag, scope, min_confidence, since, until, observations,
                 inactive, budget, old_budget, mode, as_json, no_sync):
    """What /observe and /mirror recall: `recall` on the vault's own index, one query in words."""
    from .recall import recall_cmd

    recall_cmd(ctx, query=query, limit=limit, kind=kind, permanence=permanence, tag=tag, scope=scope,
               min_confidence=min_confidence, since=since, until=until, observations=observations,
               inactive=inactive, budget=budget, old_budget=old_budget, mode=mode, as_json=as_json,
               no_sync=no_sync, queries=None, embedder=None, chroma_url=None)


# Whatever the user typed after /mirror arrives at these: unknown options are words, not errors.
@command("skill observe", Opt("--session", default="", metavar="ID", help="The Claude Code session id."),
         Opt("--budget-tokens", type=int, default=2000, min=0, metavar="N",
             help="Tokens of context, at 3 characters a token."), loose=True)
def skill_observe(ctx, session, budget_tokens):
    """What /observe starts from: the beliefs that matter here, and this session's count. Exits 0."""
    _never_fail(ctx, lambda: _skill_observe(ctx, session, budget_tokens))


def _skill_observe(ctx, session: str, budget_tokens: int) -> None:
    from ..api.context import chars_for_tokens, session_context
    from ..api.sessions import recorded_in
    from ..claude import hook
    from ..store.context_cache import refresh_context

    mem = memory(ctx)
    mem.vault.require()
    root = str(mem.vault.root)
    cache = refresh_context(root, mem.today)
    info = hook.update_sessions(root, None, mem.today, cache["params"])  # read, not counted: no source
    echo(session_context(root, os.getcwd(), mem.today, info=info, budget=chars_for_tokens(budget_tokens), cache=cache))
    if session and not session.startswith("${"):
        n = recorded_in(mem, session)
        limit = mem.params.observations_per_session
        echo(f"\nThis session has {n} observation(s) recorded; at most {limit} per session.")


@command("skill mirror", Arg("words", multiple=True, required=False, metavar="MODE",
                              help="portrait (default), audit, gut-check, interview or calibration; "
                                   "later words are ignored."),
         loose=True)
def skill_mirror(ctx, words):
    """What /mirror starts from: the chosen mode's markdown (a portrait when none is given). Exits 0."""
    _never_fail(ctx, lambda: _skill_mirror(ctx, words))


def _skill_mirror(ctx, words: list[str] | None) -> None:
    from ..api.mirror import MODES, run

    # `/mirror audit please` hands the skill every word the user typed
    mode = (words[0] if words else "portrait").strip().lower()
    if mode not in MODES:
        echo(f"Unknown mode {mode!r}: /mirror takes one of {', '.join(MODES)} (nothing, for the portrait).")
        return
    mem = memory(ctx)
    mem.vault.require()
    echo(run(mem, mode).markdown, nl=False)
