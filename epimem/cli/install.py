"""`epimem install AGENT | --list | --all`: wire epimem into every agent the user has (SPEC §10).

The group is created here; `install claude-code` (cli/claude.py) is one of its
commands, the others come from the table in `epimem/agents/table.py`.
"""

from __future__ import annotations

from pathlib import Path

from .common import echo, emit_json, memory, usage
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
      SCOPE, PROJECT, DRY_RUN, UNINSTALL, run=install_group)


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


from . import claude  # noqa: E402,F401  (declares `install claude-code`)


def _declare_agents() -> None:
    from ..agents.table import AGENTS

    for name in AGENTS:
        _agent_command(name)


_declare_agents()
