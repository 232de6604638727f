"""Claude Code integration commands: `hook`, `install claude-code`, `skill`.

`epimem hook ...` normally never reaches Typer (`epimem/__main__.py` sends it
straight to `epimem.claude.hook`); these wrappers serve `epimem --vault X hook ...`
and `--help`.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import typer

from .common import fail, memory, state

# --- hook ---------------------------------------------------------------------------------

def _hook(ctx: typer.Context, event: str, extra: list[str]) -> None:
    from ..claude import hook

    args = [event, *extra]
    vault = state(ctx).vault
    if vault:
        args += ["--vault", vault]
    raise typer.Exit(hook.main(args))


def hook_session_start(ctx: typer.Context,
                       budget_tokens: int | None = typer.Option(
                           None, "--budget-tokens", metavar="N",
                           help="Tokens of context (default 1300), at 3 characters a token and never over "
                                "Claude Code's limit (docs/claude-code.md)."),
                       budget_chars: int | None = typer.Option(None, "--budget", hidden=True,
                                                                  help="Deprecated: characters.")):
    """SessionStart: count the session (startup only), print the context as Claude Code's JSON.

    Reads Claude Code's JSON on stdin; always exits 0.
    """
    extra = []
    if budget_tokens is not None:
        extra = ["--budget-tokens", str(budget_tokens)]
    elif budget_chars is not None:
        extra = ["--budget", str(budget_chars)]
    _hook(ctx, "session-start", extra)


def hook_session_end(ctx: typer.Context,
                     llm: bool = typer.Option(False, "--llm", help="Also run the Claude pass (ANTHROPIC_API_KEY).")):
    """SessionEnd: read the transcript in the background and record 0–3 observations."""
    _hook(ctx, "session-end", ["--llm"] if llm else [])


# --- install ------------------------------------------------------------------------------

def install_claude_code(ctx: typer.Context,
                        scope: str = typer.Option("user", "--scope", help="user (~/.claude) or project (./.claude)."),
                        project: Path | None = typer.Option(None, "--project",
                                                               help="The project folder for --scope project "
                                                                    "(default: the current one)."),
                        plugin: bool = typer.Option(False, "--plugin",
                                                    help="Install epimem's Claude Code plugin (with `claude plugin "
                                                         "…`) instead of hooks in settings.json."),
                        auto_observe: bool = typer.Option(False, "--auto-observe",
                                                          help="Also install the SessionEnd hook that reads "
                                                               "each transcript."),
                        llm: bool = typer.Option(False, "--llm", help="With --auto-observe: also let Claude "
                                                                      "read the transcript (sends it to "
                                                                      "Anthropic; needs ANTHROPIC_API_KEY)."),
                        mcp: bool = typer.Option(False, "--mcp", help="Also register the MCP server (`epimem mcp`): "
                                                                      "~/.claude.json for --scope user, .mcp.json "
                                                                      "for --scope project."),
                        dry_run: bool = typer.Option(False, "--dry-run", help="Say what would change; change nothing."),
                        uninstall: bool = typer.Option(False, "--uninstall",
                                                       help="Remove exactly what the install added.")):
    """Put the /observe and /mirror skills, the hooks and the CLAUDE.md lines in place."""
    from ..claude import install
    from ..store.paths import default_root, resolve_root

    if llm and not auto_observe and not uninstall:
        fail("--llm goes with --auto-observe")
    if plugin and mcp:
        fail("the plugin carries the MCP server already: --mcp goes with the settings install")
    if plugin and auto_observe:
        fail("--auto-observe is not part of the plugin yet: use the settings install for it")
    root = resolve_root(state(ctx).vault)
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
        typer.echo(f"{'would create' if dry_run else 'create':<9} {root} — a new vault")
    claude = shutil.which("claude")
    for argv in commands:
        typer.echo(f"{'run':<9} claude {' '.join(shlex.quote(a) for a in argv)}")
    for a in actions + mcp_actions:
        typer.echo(a.line())
    for note in install.notes(scope) if not plugin and not uninstall else []:
        typer.echo(f"Note: {note}")
    if dry_run:
        typer.echo("Dry run: nothing was changed.")
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
            typer.echo(said.splitlines()[-1])
    if commands:
        # `claude plugin …` has just rewritten settings.json (enabledPlugins): the env entries are
        # merged into what it wrote, not into the text read before.
        _, actions = install.plugin_plan(scope, project=project, uninstall=uninstall, vault=vault_arg)
    for note in install.apply(actions, uninstall=uninstall) + _mcp_apply(mcp_actions):
        typer.echo(note)
    if not uninstall:
        from ..store.context_cache import refresh_context

        refresh_context(root)  # the first session starts with context, not with a rebuild
        typer.echo("Done: new Claude Code sessions start with epimem's context; /observe and /mirror are ready.")
    if any(a.what == "refused" for a in actions + mcp_actions):
        raise typer.Exit(1)


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

def _never_fail(ctx: typer.Context, produce) -> None:
    """Run a skill's `!` line: whatever goes wrong is one readable line on stdout, and exit 0.

    Claude Code drops the whole skill, silently and before any model request, when a `!` line
    exits non-zero (docs/claude-code.md); a line saying what is wrong and what fixes it reaches
    the model instead, which can tell the user.
    """
    from ..core.errors import EpimemError
    from ..store.paths import resolve_root
    from .plain import error_message

    try:
        produce()
        return
    except typer.Exit as e:
        if not e.exit_code:
            raise
        line = "epimem could not compute this skill's data (its error is above)."
    except EpimemError as e:
        line = f"epimem: {error_message(e)}."
    except Exception as e:  # a bug must not take the skill down with it
        line = f"epimem failed while computing this skill's data ({type(e).__name__}: {e})."
    root = str(resolve_root(state(ctx).vault))
    where = "" if root in line else f" The vault looked at is {root}."
    typer.echo(f"{line}{where} For a vault elsewhere, `epimem --vault PATH install claude-code` records it "
               "for Claude Code. Tell the user, and go on without this data.")
    raise typer.Exit(0)


def skill_observe(ctx: typer.Context,
                  session: str = typer.Option("", "--session", help="The Claude Code session id."),
                  budget_tokens: int = typer.Option(2000, "--budget-tokens", metavar="N", min=0,
                                                    help="Tokens of context, at 3 characters a token.")):
    """What /observe starts from: the beliefs that matter here, and this session's count. Exits 0."""
    _never_fail(ctx, lambda: _skill_observe(ctx, session, budget_tokens))


def _skill_observe(ctx: typer.Context, session: str, budget_tokens: int) -> None:
    from ..api.context import chars_for_tokens, render_context
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
    text = render_context(cache, info, cwd=os.getcwd(), today=mem.today, budget=chars_for_tokens(budget_tokens))
    typer.echo(text)
    if session and not session.startswith("${"):
        n = session_observation_count(mem, session)
        limit = mem.params.observations_per_session
        typer.echo(f"\nThis session has {n} observation(s) recorded; at most {limit} per session.")


def skill_mirror(ctx: typer.Context,
                 words: list[str] | None = typer.Argument(None, metavar="[MODE]",
                                                             help="portrait (default), audit, gut-check or "
                                                                  "interview; later words are ignored.")):
    """What /mirror starts from: the chosen mode's markdown (a portrait when none is given). Exits 0."""
    _never_fail(ctx, lambda: _skill_mirror(ctx, words))


def _skill_mirror(ctx: typer.Context, words: list[str] | None) -> None:
    from ..api.mirror import MODES, run

    # `/mirror audit please` hands the skill every word the user typed
    mode = (words[0] if words else "portrait").strip().lower()
    if mode not in MODES:
        typer.echo(f"Unknown mode {mode!r}: /mirror takes one of {', '.join(MODES)} (nothing, for the portrait).")
        return
    mem = memory(ctx)
    mem.vault.require()
    typer.echo(run(mem, mode).markdown, nl=False)


def register(app: typer.Typer) -> None:
    hook_app = typer.Typer(no_args_is_help=True, help="Claude Code hooks (read JSON on stdin, always exit 0).")
    hook_app.command("session-start")(hook_session_start)
    hook_app.command("session-end")(hook_session_end)
    app.add_typer(hook_app, name="hook")

    from .install import install_app  # the `install` group is cli/install.py's

    install_app.command("claude-code")(install_claude_code)

    skill_app = typer.Typer(no_args_is_help=True, help="The fresh data the /observe and /mirror skills start from.")
    # Whatever the user typed after /mirror arrives here: unknown options are words, not errors.
    loose = {"ignore_unknown_options": True, "allow_extra_args": True}
    skill_app.command("observe", context_settings=loose)(skill_observe)
    skill_app.command("mirror", context_settings=loose)(skill_mirror)
    app.add_typer(skill_app, name="skill")
