"""`epimem install AGENT | --list | --all`: wire epimem into every agent the user has (SPEC §10).

One command for each agent of the installer's table (`epimem/agents/table.py`), Claude Code as
the others; `install claude-code` has options of its own (its SessionEnd hook, the optional MCP
server, the plugin instead of settings.json).
"""

from __future__ import annotations

from pathlib import Path

from .common import echo, emit_json, fail, memory, usage
from .spec import COMMANDS, Opt, command, group

SCOPE = Opt("--scope", default="user", choices=("user", "project"),
            help="user (the agent's config in your home) or project (the current folder), where the agent has both.")
PROJECT = Opt("--project", type=Path, metavar="DIR", complete="dir",
              help="The project folder for --scope project (default: the current one).")
DRY_RUN = Opt("--dry-run", type=bool, help="Say what would change; change nothing.")
UNINSTALL = Opt("--uninstall", type=bool, help="Remove exactly what the install added.")


def _vault(ctx, *, create: bool, dry_run: bool) -> str:
    """The vault every agent is given, absolute; created (with its context cache) on a real install."""
    from ..store.paths import resolve_root

    root = resolve_root(ctx.vault).absolute()
    mem = memory(ctx)
    if create and not mem.vault.exists():
        echo(f"{'would create' if dry_run else 'create':<9} {root} — a new vault")
        if not dry_run:
            from ..api.memory import Memory

            Memory.init(root)
    return str(root)


def _run_agent(ctx, name: str, scope: str, project: Path | None, dry_run: bool, uninstall: bool,
               **options: bool) -> bool:
    """Plan and (unless a dry run) carry out one agent's install; False when a part was refused."""
    from ..agents import base
    from ..agents import install as agents_install
    from ..agents.table import AGENTS

    agent = AGENTS[name]
    try:
        vault = _vault(ctx, create=False, dry_run=dry_run)
        command = agents_install.command_of(agent)
        actions = agents_install.plan(name, scope, project=project, vault=vault, command=command,
                                      uninstall=uninstall, **options)
    except base.InstallError as e:
        fail(str(e))
    _vault(ctx, create=not uninstall, dry_run=dry_run)
    for a in actions:
        echo(a.line())
    for note in [] if uninstall else getattr(agent.module, "notes", lambda s, c: [])(scope, command):
        echo(f"Note: {note}")
    ok = not any(a.what == "refused" for a in actions)
    if dry_run:
        return ok
    for note in base.apply(actions, uninstall=uninstall):
        echo(note)
    if not uninstall:
        from ..store.context_cache import refresh_context

        refresh_context(Path(vault))  # the first session starts with context, not with a rebuild
        echo(getattr(agent.module, "DONE", f"Done: {agent.label} reaches the vault through the epimem MCP server."))
        if agent.module.NOTE:
            echo(f"Note: {agent.module.NOTE}")
    return ok


def _agent_command(name: str) -> None:
    from ..agents.table import AGENTS

    agent = AGENTS[name]
    parts = ["instructions" if agent.instructions != (None, None) else None,
             "skills" if agent.skills != (None, None) else None, "the MCP server",
             "a session-start hook" if agent.hooks else None]

    @command(("install", name), SCOPE, PROJECT, DRY_RUN, UNINSTALL,
             help=f"Wire epimem into {agent.label}: " + ", ".join(p for p in parts if p) + ".")
    def install_agent(ctx, scope, project, dry_run, uninstall):
        _finish(_run_agent(ctx, name, scope, project, dry_run, uninstall), dry_run)


def _finish(ok: bool, dry_run: bool) -> None:
    if dry_run:
        echo("Dry run: nothing was changed.")
    if not ok:
        raise SystemExit(1)


# --- Claude Code --------------------------------------------------------------------------

@command("install claude-code", SCOPE, PROJECT,
         Opt("--plugin", type=bool, help="Install epimem's Claude Code plugin (with `claude plugin …`) instead of "
                                         "hooks in settings.json."),
         Opt("--auto-observe", type=bool, help="Also install the SessionEnd hook that reads each transcript."),
         Opt("--llm", type=bool, help="With --auto-observe: also let Claude read the transcript (sends it to "
                                      "Anthropic; needs ANTHROPIC_API_KEY)."),
         Opt("--mcp", type=bool, help="Also register the MCP server (`epimem mcp`) in ~/.claude.json, for you "
                                      "or (--scope project) for this project only."),
         DRY_RUN, UNINSTALL)
def install_claude_code(ctx, scope, project, plugin, auto_observe, llm, mcp, dry_run, uninstall):
    """Put the /observe and /mirror skills, the hooks and the CLAUDE.md lines in place."""
    if llm and not auto_observe and not uninstall:
        usage("--llm goes with --auto-observe")
    if plugin and mcp:
        usage("the plugin carries the MCP server already: --mcp goes with the settings install")
    if plugin and auto_observe:
        usage("--auto-observe is not part of the plugin yet: use the settings install for it")
    if plugin:
        _finish(_plugin(ctx, scope, project, dry_run, uninstall), dry_run)
        return
    # --uninstall removes the MCP entry an earlier --mcp added, whether or not --mcp is given again.
    _finish(_run_agent(ctx, "claude-code", scope, project, dry_run, uninstall, auto_observe=auto_observe,
                       llm=llm, mcp=mcp), dry_run)


def _plugin(ctx, scope: str, project: Path | None, dry_run: bool, uninstall: bool) -> bool:
    """The plugin's install: `claude plugin …`, then the vault (and the epimem to run) in "env"."""
    import shlex

    from ..agents import base, claude_code

    vault = _vault(ctx, create=False, dry_run=dry_run)
    try:
        commands, actions = claude_code.plugin_plan(scope, project=project, uninstall=uninstall, vault=vault)
    except base.InstallError as e:
        fail(str(e))
    _vault(ctx, create=not uninstall, dry_run=dry_run)
    for argv in commands:
        echo(f"{'run':<9} claude {shlex.join(argv)}")
    for a in actions:
        echo(a.line())
    if dry_run:
        return True
    try:
        for said in claude_code.run_plugin_commands(commands, project=project, uninstall=uninstall):
            echo(said)
    except base.InstallError as e:
        fail(str(e))
    # `claude plugin …` has just rewritten settings.json (enabledPlugins): the env entries are
    # merged into what it wrote, not into the text read before.
    _, actions = claude_code.plugin_plan(scope, project=project, uninstall=uninstall, vault=vault)
    for note in base.apply(actions, uninstall=uninstall):
        echo(note)
    if not uninstall:
        from ..store.context_cache import refresh_context

        refresh_context(Path(vault))
        echo(claude_code.DONE)
    return True


# --- --list and --all ---------------------------------------------------------------------

def _print_list(rows: list[dict]) -> None:
    echo(f"{'agent':<15} {'scope':<8} {'present':<8} {'wired':<6} {'files':<6} parts")
    for r in rows:
        parts = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in r["parts"].items())
        echo(f"{r['agent']:<15} {r['scope']:<8} {'yes' if r['present'] else 'no':<8} "
             f"{'yes' if r['wired'] else 'no':<6} {r['version'] or '-':<6} {parts}"
             + (f"  ({r['problem']})" if r.get("problem") else ""))


def install_group(ctx, list_, all_, as_json, scope, project, dry_run, uninstall):
    """`epimem install` without an agent: --list, --all, or this help."""
    if list_ and all_:
        usage("give --list or --all, not both")
    if list_:
        from ..agents.install import listing

        rows = listing(project)
        if as_json:
            emit_json(rows)
        else:
            _print_list(rows)
        return
    if not all_:
        from .help import render

        echo(render(COMMANDS[ctx.command]))
        return
    _install_all(ctx, scope, project, dry_run, uninstall)


def _install_all(ctx, scope: str, project: Path | None, dry_run: bool, uninstall: bool) -> None:
    from ..agents import install as agents_install
    from ..agents.table import AGENTS

    ok = True
    done = []
    for name, agent in AGENTS.items():
        if scope not in agent.scopes():
            continue
        if uninstall:
            if not agents_install.wired(agent, scope, (project or Path.cwd()).absolute()):
                continue
        elif not agents_install.present(agent):
            continue
        echo(f"== {agent.label}")
        ok = _run_agent(ctx, name, scope, project, dry_run, uninstall) and ok
        done.append(agent.label)
    if not done:
        echo("No agent to " + ("uninstall from." if uninstall else "install: none found on this machine "
                               "(`epimem install --list`)."))
    _finish(ok, dry_run)


def _declare_agents() -> None:
    from ..agents.table import AGENTS

    for name in AGENTS:
        if ("install", name) not in COMMANDS:  # claude-code is declared above, with its own options
            _agent_command(name)


group("install", "Connect epimem to an assistant: claude-code, codex, gemini, opencode, cursor, claude-desktop.",
      Opt("--list", dest="list_", type=bool, help="Which agents are on this machine, which are wired, which "
                                                  "version of epimem's files each has."),
      Opt("--all", dest="all_", type=bool, help="Install (or with --uninstall remove) every agent present on "
                                                "this machine."),
      Opt("--json", dest="as_json", type=bool, help="With --list: machine-readable rows."),
      SCOPE, PROJECT, DRY_RUN, UNINSTALL, run=install_group, expand=_declare_agents)
