"""`epimem install AGENT | --list | --all`: wire epimem into every agent the user has (SPEC §10).

The group is created here; `install claude-code` (cli/claude.py) is one of its
commands, the others come from the table in `epimem/agents/table.py`.
"""

from __future__ import annotations

from pathlib import Path

from .common import echo, emit_json, fail, memory, usage
from .spec import Opt, command, group

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


def _run_agent(ctx, name: str, scope: str, project: Path | None, dry_run: bool,
               uninstall: bool) -> bool:
    """Plan and (unless a dry run) carry out one agent's install; False when a part was refused."""
    from ..agents import base
    from ..agents import install as agents_install
    from ..agents.table import AGENTS

    vault = _vault(ctx, create=not uninstall, dry_run=dry_run)
    actions = agents_install.plan(name, scope, project=project, vault=vault, uninstall=uninstall)
    for a in actions:
        echo(a.line())
    if dry_run:
        return not any(a.what == "refused" for a in actions)
    for note in base.apply(actions):
        echo(note)
    if not uninstall:
        from ..store.context_cache import refresh_context

        refresh_context(Path(vault))  # the first session starts with context, not with a rebuild
        label = AGENTS[name].label
        echo(f"Done: {label} reaches the vault through the epimem MCP server.")
        if AGENTS[name].module.NOTE:
            echo(f"Note: {AGENTS[name].module.NOTE}")
    return not any(a.what == "refused" for a in actions)


def _agent_command(name: str) -> None:
    from ..agents.table import AGENTS

    agent = AGENTS[name]
    parts = ["instructions" if agent.instructions != (None, None) else None,
             "skills" if agent.skills != (None, None) else None, "the MCP server",
             "a session-start hook" if agent.hooks else None]

    @command(("install", name), SCOPE, PROJECT, DRY_RUN, UNINSTALL,
             help=f"Wire epimem into {agent.label}: " + ", ".join(p for p in parts if p) + ".")
    def install_agent(ctx, scope, project, dry_run, uninstall):
        ok = _run_agent(ctx, name, scope, project, dry_run, uninstall)
        if dry_run:
            echo("Dry run: nothing was changed.")
        if not ok:
            raise SystemExit(1)


# --- Claude Code --------------------------------------------------------------------------

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
    import shlex
    import shutil
    import subprocess

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


def _claude_code_status() -> dict:
    """Claude Code's row of `--list`, from the files its own installer writes."""
    import shutil

    from ..agents import base
    from ..claude import install as claude_install

    t = claude_install.targets("user")
    settings = base.read(t["settings"]) or ""
    hooked = bool(settings.strip()) and claude_install.remove_hooks(settings, t["settings"]) != settings
    versions = [base.skill_version(base.read(t["skills"] / s / "SKILL.md")) for s in claude_install.SKILLS]
    return {"agent": "claude-code", "label": "Claude Code", "scope": "user",
            "present": bool(shutil.which("claude")) or claude_install.claude_dir().is_dir(),
            "wired": hooked, "parts": {"hook": hooked, "skills": all(versions)},
            "version": next((v for v in versions if v), None)}


def _statuses(project: Path | None) -> list[dict]:
    from ..agents import install as agents_install
    from ..agents.table import AGENTS, config_path

    here = (project or Path.cwd()).absolute()
    rows = []
    try:
        rows.append(_claude_code_status())
    except Exception as e:  # a broken settings.json must not hide the other agents
        rows.append({"agent": "claude-code", "label": "Claude Code", "scope": "user", "present": True,
                     "wired": False, "parts": {}, "version": None, "problem": str(e)})
    for name, agent in AGENTS.items():
        for scope in agent.scopes():
            s = agents_install.status(name, scope, project)
            if scope == "project" and (not any(s.parts.values()) or config_path(agent.mcp, "project", here)
                                       == config_path(agent.mcp, "user", here)):
                continue  # a project row only where something of epimem's is, and is not the user's
            rows.append({"agent": s.agent, "label": s.label, "scope": s.scope, "present": s.present,
                         "wired": s.wired, "parts": s.parts, "version": s.version})
    return rows


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
        rows = _statuses(project)
        if as_json:
            emit_json(rows)
        else:
            _print_list(rows)
        return
    if not all_:
        echo(ctx.help())
        return
    _install_all(ctx, scope, project, dry_run, uninstall)


group("install", "Connect epimem to an assistant: claude-code, codex, gemini, opencode, cursor, claude-desktop.",
      Opt("--list", dest="list_", type=bool, help="Which agents are on this machine, which are wired, which "
                                                  "version of epimem's files each has."),
      Opt("--all", dest="all_", type=bool, help="Install (or with --uninstall remove) every agent present on "
                                                "this machine."),
      Opt("--json", dest="as_json", type=bool, help="With --list: machine-readable rows."),
      SCOPE, PROJECT, DRY_RUN, UNINSTALL, run=install_group, expand=lambda: _declare_agents())


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
    ok = _claude_code_all(ctx, scope, project, dry_run, uninstall, done) and ok
    if not done:
        echo("No agent to " + ("uninstall from." if uninstall else "install: none found on this machine "
                                     "(`epimem install --list`)."))
    if dry_run:
        echo("Dry run: nothing was changed.")
    if not ok:
        raise SystemExit(1)


def _claude_code_all(ctx, scope: str, project: Path | None, dry_run: bool, uninstall: bool,
                     done: list[str]) -> bool:
    """Claude Code's part of --all, through its own installer (the defaults of `install claude-code`)."""
    from ..claude import install as claude_install
    from ..store.paths import default_root

    row = _claude_code_status()
    if not (row["wired"] if uninstall else row["present"]):
        return True
    echo("== Claude Code")
    done.append("Claude Code")
    vault = _vault(ctx, create=not uninstall, dry_run=dry_run)
    vault_arg = None if Path(vault) == default_root().absolute() else vault
    actions = claude_install.plan(scope, project=project, uninstall=uninstall, vault=vault_arg)
    for a in actions:
        echo(a.line())
    if not dry_run:
        for note in claude_install.apply(actions):
            echo(note)
    return not any(a.what == "refused" for a in actions)


def _declare_agents() -> None:
    from ..agents.table import AGENTS

    for name in AGENTS:
        _agent_command(name)

