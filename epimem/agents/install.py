"""`epimem install AGENT`: the plan of file changes for one agent, and what is wired where.

Four parts, each where the table (`table.py`) says: instruction lines between
markers in the agent's always-on file, the skills, the MCP server entry (the
vault passed explicitly), the session-start hook. Every part recognises its
own by content, so an install twice changes nothing and an uninstall removes
exactly what was added.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import base, jsonc, tomlcfg
from . import hooks as hook_files
from .base import Action, InstallError
from .table import AGENTS, Agent, Config, config_path, place


def _agent(name: str) -> Agent:
    try:
        return AGENTS[name]
    except KeyError:
        raise InstallError(f"unknown agent {name!r}: one of {', '.join(AGENTS)}") from None


def _check_scope(agent: Agent, scope: str) -> None:
    if scope not in ("user", "project"):
        raise InstallError(f"'scope' must be user or project, not {scope!r}")
    if scope not in agent.scopes():
        raise InstallError(f"{agent.label} has no project scope; install it for the user")


def cli_line(command: list[str], vault: str) -> str:
    import shlex

    return shlex.join([*command, "--vault", vault])


def instruction_text(agent: Agent, command: list[str], vault: str) -> str:
    hooks = " (and, at session start, a hook that adds the beliefs that matter here)" if agent.hooks else ""
    skills = " (the `observe` skill says how)" if agent.skills != (None, None) else ""
    block = base.template("instructions.md", agent=agent.name, cli=cli_line(command, vault),
                          version=base.FILES_VERSION, hook_line=hooks, skills_line=skills).rstrip("\n")
    if agent.name == "cursor":
        return base.template("cursor-rule.mdc", block=block)
    return block


# --- the MCP entry and the hooks: one config file each -----------------------------------------

def _read_entry(cfg: Config, text: str | None, path: Path) -> Any:
    if not text or not text.strip():
        return None
    try:
        if cfg.format == "toml":
            return tomlcfg.get_table(text, cfg.key)
        return jsonc.get_path(text, cfg.key, comments=cfg.format == "jsonc")
    except ValueError as e:
        raise InstallError(f"{path}: invalid {'TOML' if cfg.format == 'toml' else 'JSON'} ({e}); "
                           "fix it first, nothing was changed") from None


def _is_our_server(entry: Any) -> bool:
    """An `epimem` entry that runs `… mcp` is ours; one the user wrote for something else is not."""
    if not isinstance(entry, dict):
        return False
    cmd = entry.get("command")
    argv = cmd if isinstance(cmd, list) else [cmd, *(entry.get("args") or [])]
    return bool(argv) and argv[-1] == "mcp" and any(isinstance(a, str) and "epimem" in a for a in argv)


def _set_entry(cfg: Config, text: str, value: Any, path: Path) -> str:
    try:
        if cfg.format == "toml":
            return tomlcfg.set_table(text, cfg.key, value)
        return jsonc.set_path(text, cfg.key, value, comments=cfg.format == "jsonc")
    except ValueError as e:
        raise InstallError(f"{path}: {e}; nothing was changed") from None


def _delete_entry(cfg: Config, text: str) -> str:
    if cfg.format == "toml":
        return tomlcfg.remove_table(text, cfg.key)
    # the wrapper object ("mcpServers", "mcp") goes too when ours was all it held
    return jsonc.delete_path(text, cfg.key, comments=cfg.format == "jsonc", prune=len(cfg.key) - 1)


def _emptied(new: str, cfg: Config) -> str | None:
    """None (delete the file) when what is left is only the empty document epimem started it as."""
    if cfg.format == "toml":
        return new if new.strip() else None
    return None if new.strip() in ("", "{}") else new


@dataclass
class _File:
    """One file's text as the plan goes: several parts may edit the same file (Gemini's settings)."""
    path: Path
    old: str | None
    new: str | None
    details: list[str]


def plan(name: str, scope: str = "user", *, project: Path | None = None, vault: str,
         command: list[str] | None = None, uninstall: bool = False) -> list[Action]:
    agent = _agent(name)
    _check_scope(agent, scope)
    project = (project or Path.cwd()).absolute()
    command = command or base.epimem_command()
    files: dict[Path, _File] = {}
    actions: list[Action] = []

    def edit(path: Path) -> _File:
        if path not in files:
            old = base.read(path)
            files[path] = _File(path, old, old, [])
        return files[path]

    # 1. instructions
    ipath = place(agent.instructions, scope, project)
    if ipath is not None:
        f = edit(ipath)
        if agent.name == "cursor":  # the whole rule file is ours
            if f.old is not None and base.BEGIN not in f.old:
                actions.append(Action(ipath, "refused", "a rule file that is not epimem's is there; move it away"))
                files.pop(ipath)
            else:
                f.new = None if uninstall else instruction_text(agent, command, vault) + "\n"
                f.details.append("epimem's rule (always applied)")
        elif uninstall:
            sharing = [a.label for a in AGENTS.values() if a is not agent
                       and place(a.instructions, scope, project) == ipath and wired(a, scope, project)]
            if f.new is not None and base.BEGIN in f.new and not sharing:
                f.new = base.remove_block(f.new)
                f.new = f.new if f.new.strip() else None
                f.details.append("epimem's lines")
            elif sharing:
                f.details.append(f"epimem's lines kept: {', '.join(sharing)} still reads them")
        else:
            f.new = base.add_block(f.new or "", instruction_text(agent, command, vault))
            f.details.append("epimem's lines between markers")
    # 2. skills
    sdir = place(agent.skills, scope, project)
    if sdir is not None:
        actions += base.skill_actions(sdir, agent=agent.name, cli=cli_line(command, vault), uninstall=uninstall)
    # 3. the MCP server
    mpath = config_path(agent.mcp, scope, project)
    f = edit(mpath)
    current = _read_entry(agent.mcp, f.new, mpath)
    if current is not None and not _is_our_server(current):
        raise InstallError(f"{mpath}: an 'epimem' server that is not epimem's MCP server is configured; "
                           "rename or remove it first, nothing was changed")
    if uninstall:
        if current is not None:
            f.new = _emptied(_delete_entry(agent.mcp, f.new), agent.mcp)
            f.details.append("the epimem MCP server")
    else:
        f.new = _set_entry(agent.mcp, f.new or "", agent.module.mcp_entry(command, vault), mpath)
        f.details.append(f"MCP server epimem (vault {vault})")
    # 4. the session-start hook
    hpath = config_path(agent.hooks, scope, project)
    if hpath is not None:
        f = edit(hpath)
        specs = [] if uninstall else agent.module.hook_specs(command, vault)
        if f.new is not None or specs:
            try:
                merged = hook_files.merge_hooks(f.new or "", specs, comments=agent.hooks.format == "jsonc")
            except ValueError as e:
                raise InstallError(f"{hpath}: {e}; fix it first, nothing was changed") from None
            if merged != f.new:
                f.new = _emptied(merged, agent.hooks) if uninstall else merged
                f.details.append("SessionStart hook" + ("" if uninstall else " (counts startup only)"))
    for f in files.values():
        detail = ("removed " if uninstall else "") + "; ".join(f.details)
        same = "already as wanted" if not uninstall else ("; ".join(f.details) or "nothing of epimem's")
        if f.old is None and f.new is None:
            continue
        actions.append(base.change(f.path, f.old, f.new, detail, same=same))
    order = {p: i for i, p in enumerate([ipath, sdir, mpath, hpath])}
    return sorted(actions, key=lambda a: next((i for p, i in order.items()
                                               if p is not None and (a.path == p or p in a.path.parents)), 9))


# --- what is there ---------------------------------------------------------------------------

def wired(agent: Agent, scope: str, project: Path) -> bool:
    """Whether the agent's config holds epimem's MCP server at this scope."""
    path = config_path(agent.mcp, scope, project)
    if path is None:
        return False
    try:
        return _is_our_server(_read_entry(agent.mcp, base.read(path), path))
    except InstallError:
        return False


def present(agent: Agent) -> bool:
    """Installed on this machine: its CLI on PATH or its config folder exists."""
    from .table import resolve

    return bool(agent.binary and shutil.which(agent.binary)) or resolve(agent.home, Path.cwd()).is_dir()


@dataclass(frozen=True)
class Status:
    agent: str
    label: str
    present: bool
    scope: str
    parts: dict[str, bool]      # instructions, skills, mcp, hook → wired
    version: str | None         # epimem's files version found (instructions or skills)

    @property
    def wired(self) -> bool:
        return self.parts.get("mcp", False)


def status(name: str, scope: str, project: Path | None = None) -> Status:
    agent = _agent(name)
    project = (project or Path.cwd()).absolute()
    parts: dict[str, bool] = {}
    version = None
    ipath = place(agent.instructions, scope, project)
    if ipath is not None:
        text = base.read(ipath)
        parts["instructions"] = base.block_version(text) is not None
        version = base.block_version(text)
    sdir = place(agent.skills, scope, project)
    if sdir is not None:
        versions = [base.skill_version(base.read(sdir / s / "SKILL.md")) for s in base.SKILLS]
        parts["skills"] = all(versions)
        version = version or next((v for v in versions if v), None)
    parts["mcp"] = wired(agent, scope, project)
    hpath = config_path(agent.hooks, scope, project)
    if hpath is not None:
        parts["hook"] = hook_files.has_ours(base.read(hpath), comments=agent.hooks.format == "jsonc")
    return Status(agent.name, agent.label, present(agent), scope, parts, version)


def wiring(vault: str, project: Path | None = None) -> list:
    """Each agent of the table that is on this machine or wired, and whether its files are what
    `epimem install` would write now for `vault` (`epimem doctor`)."""
    from ..api.doctor import AgentWiring

    here = (project or Path.cwd()).absolute()
    rows = []
    for name, agent in AGENTS.items():
        for scope in agent.scopes():
            if scope == "project" and config_path(agent.mcp, "project", here) == config_path(agent.mcp, "user", here):
                continue
            try:
                s = status(name, scope, here)
                mine = any(s.parts.values())
                if not mine and (scope == "project" or not s.present):
                    continue
                stale = tuple(str(a.path) for a in plan(name, scope, project=here, vault=vault)
                              if a.what != "unchanged") if mine else ()
            except InstallError as e:
                rows.append(AgentWiring(name, agent.label, scope, True, False, problem=str(e)))
                continue
            rows.append(AgentWiring(name, agent.label, scope, s.present, mine, stale))
    return rows
