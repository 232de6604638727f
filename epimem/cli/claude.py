"""Claude Code integration commands: `install claude-code` and `skill` (the hooks are cli/hook.py's)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

from .common import echo, fail, memory, usage
from .spec import Arg, Opt, command, group

# --- install ------------------------------------------------------------------------------

@command("install claude-code",
         Opt("--scope", default="user", choices=("user", "project"),
             help="user (~/.claude) or project (./.claude)."),
         Opt("--project", type=Path, metavar="DIR", complete="dir",
             help="The project folder for --scope project (default: the current one)."),
         Opt("--plugin", type=bool, help="Install epimem's Claude Code plugin (with `claude plugin …`) instead of "
                                         "hooks in settings.json."),
         Opt("--auto-observe", type=bool, help="Also install the SessionEnd hook that reads each transcript."),
         Opt("--llm", type=bool, help="With --auto-observe: also let Claude read the transcript (sends it to "
                                      "Anthropic; needs ANTHROPIC_API_KEY)."),
         Opt("--mcp", type=bool, help="Also register the MCP server (`epimem mcp`): ~/.claude.json for --scope "
                                      "user, .mcp.json for --scope project."),
         Opt("--dry-run", type=bool, help="Say what would change; change nothing."),
         Opt("--uninstall", type=bool, help="Remove exactly what the install added."))
def install_claude_code(ctx, scope, project, plugin, auto_observe, llm, mcp, dry_run, uninstall):
    """Put the /observe and /mirror skills, the hooks and the CLAUDE.md lines in place."""
    from ..claude import install
    from ..store.paths import default_root, resolve_root

    if llm and not auto_observe and not uninstall:
        usage("--llm goes with --auto-observe")
    if plugin and mcp:
        usage("the plugin carries the MCP server already: --mcp goes with the settings install")
    if plugin and auto_observe:
        usage("--auto-observe is not part of the plugin yet: use the settings install for it")
    root = resolve_root(ctx.vault)
    # The vault travels in settings.json's "env", which reaches the hooks, the skills' `!` lines and
    # the model's commands alike (docs/claude-code.md); the default place needs no entry.
    vault_arg = None if root == default_root().absolute() else str(root)
    try:
        if plugin:
            commands, actions = install.plugin_plan(scope, project=project, uninstall=uninstall, vault=vault_arg)
        else:
            commands = []
            actions = install.plan(scope, project=project, auto_observe=auto_observe, llm=llm,
                                   uninstall=uninstall, vault=vault_arg)
        # The plugin carries its own MCP server. --uninstall removes the entry an earlier --mcp added,
        # whether or not --mcp is given again.
        mcp_actions = _mcp_plan(scope, project, vault_arg, uninstall) if (mcp or uninstall) and not plugin else []
    except install.InstallError as e:
        fail(str(e))
    mem = memory(ctx)
    if not uninstall and not mem.vault.exists():
        echo(f"{'would create' if dry_run else 'create':<9} {root} — a new vault")
    claude = shutil.which("claude")
    for argv in commands:
        echo(f"{'run':<9} claude {' '.join(shlex.quote(a) for a in argv)}")
    for a in actions + mcp_actions:
        echo(a.line())
    for note in install.notes(scope) if not plugin and not uninstall else []:
        echo(f"Note: {note}")
    if dry_run:
        echo("Dry run: nothing was changed.")
        return
    if commands and claude is None:
        fail("`claude` is not on PATH: install Claude Code, or run the `claude plugin` commands above "
             "yourself; nothing was changed")
    if not uninstall and not mem.vault.exists():
        from ..api.memory import Memory

        Memory.init(root)
    for argv in commands:
        proc = subprocess.run([claude, *argv], capture_output=True, text=True, cwd=project or None)
        said = (proc.stdout + proc.stderr).strip()
        if proc.returncode != 0 and not uninstall:
            fail(f"claude {' '.join(argv)} failed: {said}")
        if said:
            echo(said.splitlines()[-1])
    if commands:
        # `claude plugin …` has just rewritten settings.json (enabledPlugins): the env entries are
        # merged into what it wrote, not into the text read before.
        _, actions = install.plugin_plan(scope, project=project, uninstall=uninstall, vault=vault_arg)
    for note in install.apply(actions, uninstall=uninstall) + _mcp_apply(mcp_actions):
        echo(note)
    if not uninstall:
        from ..store.context_cache import refresh_context

        refresh_context(root)  # the first session starts with context, not with a rebuild
        echo("Done: new Claude Code sessions start with epimem's context; /observe and /mirror are ready.")
    if any(a.what == "refused" for a in actions + mcp_actions):
        raise SystemExit(1)


def _mcp_plan(scope, project, vault, uninstall):
    from ..claude.install import InstallError
    from ..mcp import register

    try:
        return register.plan(scope, project=project, vault=vault, uninstall=uninstall)
    except register.RegisterError as e:
        raise InstallError(str(e)) from None


def _mcp_apply(actions) -> list[str]:
    from ..mcp import register

    return register.apply(actions) if actions else []


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
        line = f"epimem: {error_message(e)}."
    except Exception as e:  # a bug must not take the skill down with it
        line = f"epimem failed while computing this skill's data ({type(e).__name__}: {e})."
    root = str(resolve_root(ctx.vault))
    where = "" if root in line else f" The vault looked at is {root}."
    echo(f"{line}{where} For a vault elsewhere, `epimem --vault PATH install claude-code` records it "
               "for Claude Code. Tell the user, and go on without this data.")
    raise SystemExit(0)


group("skill", "The fresh data the /observe and /mirror skills start from.")


# Whatever the user typed after /mirror arrives at these: unknown options are words, not errors.
@command("skill observe", Opt("--session", default="", metavar="ID", help="The Claude Code session id."),
         Opt("--budget-tokens", type=int, default=2000, min=0, metavar="N",
             help="Tokens of context, at 3 characters a token."), loose=True)
def skill_observe(ctx, session, budget_tokens):
    """What /observe starts from: the beliefs that matter here, and this session's count. Exits 0."""
    _never_fail(ctx, lambda: _skill_observe(ctx, session, budget_tokens))


def _skill_observe(ctx, session: str, budget_tokens: int) -> None:
    from ..claude import hook
    from ..claude.session_end import session_observation_count
    from ..store import context_cache as context

    mem = memory(ctx)
    mem.vault.require()
    root = mem.vault.root
    cache = context.read_context_cache(root)
    if cache is None or cache.get("signature") != context.signature(root):
        cache = context.refresh_context(root)
    info = hook.update_sessions(str(root), None, mem.today, cache["params"])
    text = hook.render_context(cache, info, cwd=os.getcwd(), today=mem.today,
                               budget=hook.chars_for_tokens(budget_tokens))
    echo(text)
    if session and not session.startswith("${"):
        n = session_observation_count(mem, session)
        limit = mem.params.observations_per_session
        echo(f"\nThis session has {n} observation(s) recorded; at most {limit} per session.")


MODES = ("portrait", "audit", "gut-check", "interview")


@command("skill mirror", Arg("words", multiple=True, required=False, metavar="MODE",
                              help="portrait (default), audit, gut-check or interview; later words are ignored."),
         loose=True)
def skill_mirror(ctx, words):
    """What /mirror starts from: the chosen mode's markdown (a portrait when none is given). Exits 0."""
    _never_fail(ctx, lambda: _skill_mirror(ctx, words))


def _skill_mirror(ctx, words: list[str] | None) -> None:
    from . import mirror

    # `/mirror audit please` hands the skill every word the user typed
    mode = (words[0] if words else "portrait").strip().lower()
    if mode not in MODES:
        echo(f"Unknown mode {mode!r}: /mirror takes one of {', '.join(MODES)} (nothing, for the portrait).")
        return
    if mode == "portrait":
        mirror.portrait_cmd(ctx, as_json=False, as_md=True, llm=False, model=None, timeout=60.0)
    elif mode == "audit":
        mirror.audit_cmd(ctx, as_json=False, as_md=True, record=False, apply=False, apply_only=[])
    elif mode == "gut-check":
        mirror.gut_check_cmd(ctx, as_json=False, as_md=True, record=False)
    else:
        mirror.interview_cmd(ctx, as_json=False, as_md=True, record=False)
