"""`epimem install AGENT`: the plan of file changes for one agent, Claude Code as the others, and
what is wired where.

Four parts, each where the table (`table.py`) says: instruction lines between markers in the
agent's always-on file, the skills, the MCP server entry, the session hooks. Each part is a
change to one file's text (several parts may change the same file: Gemini CLI's settings.json
holds both its server and its hooks), computed from the file as read before anything is
written, so `--dry-run` says exactly what `base.apply` does and a file that cannot be parsed
stops the plan. Every part recognises its own by content, so an install twice changes nothing,
an uninstall removes exactly what was added, and the same uninstall applied to a backup says
whether the backup still holds anything of the user's.

What differs between agents is in each agent's module (`codex.py`, `claude_code.py`, …): the
entry it reads, its hooks, and for Claude Code the vault in settings.json's "env", the legacy
project file and the plugin it must not be installed beside.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import base, jsonc, tomlcfg
from . import hooks as hook_files
from .base import Action, InstallError
from .table import AGENTS, Agent, Config, config_path, place
from .wiring import is_our_server

Edit = Callable[[str | None], str | None]  # one part's change to a file's text (None: no file)


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


def command_of(agent: Agent) -> list[str]:
    """How the agent starts this epimem (`base.epimem_command`, unless its module says otherwise)."""
    own = getattr(agent.module, "default_command", None)
    return own() if own is not None else base.epimem_command()


def cli_line(command: list[str], vault: str) -> str:
    import shlex

    return shlex.join([*command, "--vault", vault])


def instruction_text(agent: Agent, command: list[str], vault: str) -> str:
    own = getattr(agent.module, "instruction_text", None)
    if own is not None:
        return own(command, vault)
    hooks = " (and, at session start, a hook that adds the beliefs that matter here)" if agent.hooks else ""
    skills = " (the `observe` skill says how)" if agent.skills != (None, None) else ""
    block = base.template("instructions.md", agent=agent.name, cli=cli_line(command, vault),
                          version=base.FILES_VERSION, hook_line=hooks, skills_line=skills).rstrip("\n")
    if agent.name == "cursor":
        return base.template("cursor-rule.mdc", block=block)
    return block


def skill_texts(agent: Agent, command: list[str], vault: str, scope: str) -> dict[str, str]:
    own = getattr(agent.module, "skill_texts", None)
    if own is not None:
        return own(command, vault, scope)
    return {name: base.skill_text(name, agent=agent.name, cli=cli_line(command, vault)) for name in base.SKILLS}


# --- the MCP entry and the hooks: one config file each -----------------------------------------

def _read_entry(cfg: Config, text: str | None, path: Path, key: tuple[str, ...] | None = None) -> Any:
    key = key or cfg.key
    if not text or not text.strip():
        return None
    try:
        if cfg.format == "toml":
            return tomlcfg.get_table(text, key)
        return jsonc.get_path(text, key, comments=cfg.format == "jsonc")
    except ValueError as e:
        raise InstallError(f"{path}: invalid {'TOML' if cfg.format == 'toml' else 'JSON'} ({e}); "
                           "fix it first, nothing was changed") from None


def _set_entry(cfg: Config, text: str, value: Any, path: Path, key: tuple[str, ...]) -> str:
    try:
        if cfg.format == "toml":
            return tomlcfg.set_table(text, key, value)
        return jsonc.set_path(text, key, value, comments=cfg.format == "jsonc")
    except ValueError as e:
        raise InstallError(f"{path}: {e}; nothing was changed") from None


def _delete_entry(cfg: Config, text: str, key: tuple[str, ...]) -> str:
    if cfg.format == "toml":
        return tomlcfg.remove_table(text, key)
    # the wrapper objects ("mcpServers", "mcp", a project's) go too when ours was all they held
    return jsonc.delete_path(text, key, comments=cfg.format == "jsonc", prune=len(key) - 1)


@dataclass
class _File:
    """One file as the plan goes: the parts that change it, in order, and what they say."""
    path: Path
    old: str | None
    edits: list[Edit] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    backup: bool = True
    mode: int | None = None

    def text(self, start: str | None) -> str | None:
        t = start
        for e in self.edits:
            t = e(t)
        return t


def plan(name: str, scope: str = "user", *, project: Path | None = None, vault: str,
         command: list[str] | None = None, uninstall: bool = False, **options: bool) -> list[Action]:
    """What `epimem install NAME` would change, file by file; nothing is written. `options` are the
    agent's own (Claude Code: auto_observe, llm, mcp)."""
    agent = _agent(name)
    _check_scope(agent, scope)
    mod = agent.module
    project = (project or Path.cwd()).absolute()
    if scope == "project" and project_is_user(agent, project):
        # Claude Code's project settings.json here is the user's: a project install would take
        # epimem's hooks out of it as a project's old file.
        raise InstallError(f"{agent.label}'s project files in {project} are its user files (the home folder): "
                           f"run `epimem install {name}` without --scope project, or from the project's own folder")
    command = command or command_of(agent)
    if hasattr(mod, "check"):
        mod.check(scope, project, uninstall)
    # Folders an uninstall leaves empty go (`~/.agents/` as a skill's folder), up to the user's home
    # or the project: an empty folder holds nothing of anyone's.
    top = base.home() if scope == "user" else project
    files: dict[Path, _File] = {}
    actions: list[Action] = []

    def edit(path: Path) -> _File:
        if path not in files:
            files[path] = _File(path, base.read(path))
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
                text = instruction_text(agent, command, vault) + "\n"
                f.edits.append((lambda t: None) if uninstall else (lambda t, text=text: text))
                f.details.append("epimem's rule (always applied)")
                f.backup = False
        elif uninstall:
            sharing = [a.label for a in AGENTS.values() if a is not agent
                       and place(a.instructions, scope, project) == ipath and wired(a, scope, project)]
            if sharing:
                f.details.append(f"epimem's lines kept: {', '.join(sharing)} still reads them")
            elif f.old is not None and base.BEGIN in f.old:
                f.edits.append(_without_block)
                f.details.append("epimem's lines")
        else:
            block = instruction_text(agent, command, vault)
            f.edits.append(lambda t, block=block: base.add_block(t or "", block))
            f.details.append("epimem's lines between markers")
    # 2. skills
    sdir = place(agent.skills, scope, project)
    if sdir is not None:
        actions += base.skill_actions(sdir, skill_texts(agent, command, vault, scope), uninstall=uninstall,
                                      stop=top,
                                      label=getattr(mod, "SKILL_LABEL", "{name}"))
    # 3. the MCP server
    mpath = config_path(agent.mcp, scope, project)
    if mpath is not None and (uninstall or not agent.mcp.optional or options.get("mcp")):
        f = edit(mpath)
        mkey = agent.mcp.key_for(scope, project)
        current = _read_entry(agent.mcp, f.old, mpath, mkey)
        if current is not None and not is_our_server(current):
            actions.append(Action(mpath, "unchanged" if uninstall else "refused",
                                  "an MCP server named epimem that is not `epimem mcp`; left alone" if uninstall
                                  else "an MCP server named epimem that is not `epimem mcp` is configured there; "
                                       "rename or remove it to install epimem's"))
        elif uninstall:
            if current is not None:
                f.edits.append(lambda t, cfg=agent.mcp, k=mkey: _delete_entry(cfg, t, k) if t else t)
                f.details.append("the epimem MCP server")
        else:
            entry = mod.mcp_entry(command, vault, scope)
            f.edits.append(lambda t, cfg=agent.mcp, entry=entry, p=mpath, k=mkey: _set_entry(cfg, t or "", entry, p, k))
            f.details.append(f"MCP server epimem ({_argv(entry)})")
        f.mode = getattr(mod, "mcp_mode", lambda p: None)(mpath)
    # 4. the session hooks
    hpath = config_path(agent.hooks, scope, project)
    if hpath is not None:
        f = edit(hpath)
        comments = agent.hooks.format == "jsonc"
        specs = [] if uninstall else mod.hook_specs(command, vault, **{k: v for k, v in options.items()
                                                                        if k != "mcp"})

        def hooks_edit(t, specs=specs, comments=comments, p=hpath):
            if t is None and not specs:
                return t
            try:
                t = hook_files.merge_hooks(t or "", specs, comments=comments)
            except ValueError as e:
                raise InstallError(f"{p}: {e}; fix it first, nothing was changed") from None
            if hasattr(mod, "edit_hooks_file"):
                t = mod.edit_hooks_file(t, p, vault=vault, uninstall=uninstall)
            return t

        f.edits.append(hooks_edit)
        f.details.append(mod.hooks_detail(uninstall, vault=vault, **options) if hasattr(mod, "hooks_detail")
                         else "epimem's hooks" if uninstall else "SessionStart hook (counts startup only)")
    for f in files.values():
        old_text = f.old
        new = f.text(old_text)
        strip = _stripper(f, uninstall)
        if uninstall and new is not None:
            new = base.emptied(new, f.path, strip)
        if old_text is None and new is None:
            continue
        detail = ("removed " if uninstall else "") + "; ".join(f.details)
        same = "already as wanted" if not uninstall else ("; ".join(f.details) or "nothing of epimem's")
        a = base.change(f.path, old_text, new, detail, same=same)
        a.backup, a.mode, a.strip, a.stop = f.backup, f.mode, strip, top
        actions.append(a)
    actions += _legacy(mod, scope, project, top)
    order = {p: i for i, p in enumerate([ipath, sdir, mpath, hpath])}
    return sorted(actions, key=lambda a: next((i for p, i in order.items()
                                               if p is not None and (a.path == p or p in a.path.parents)), 9))


def _without_block(text: str | None) -> str | None:
    if not text:
        return text
    rest = base.remove_block(text)
    return rest if rest.strip() else None


def _argv(entry: dict) -> str:
    cmd = entry.get("command")
    argv = cmd if isinstance(cmd, list) else [cmd, *(entry.get("args") or [])]
    return " ".join(map(str, argv))


def _stripper(f: _File, uninstall: bool) -> Callable[[str], str | None] | None:
    """The uninstall of this file as a function of its text: what makes a backup redundant."""
    if not uninstall:
        return None
    return lambda text: f.text(text)


def _legacy(mod, scope: str, project: Path, top: Path) -> list[Action]:
    """Files an older install wrote what now goes elsewhere: epimem's parts taken out of them on
    every run (`strip`), like an uninstall: they are committed files, given back without a backup."""
    out = []
    for path, detail, strip in getattr(mod, "legacy_files", lambda s, p: [])(scope, project):
        old = base.read(path)
        if old is None:
            continue
        new = base.emptied(strip(old), path, strip)
        if new == old:
            continue
        a = base.change(path, old, new, detail, same="")
        a.backup, a.strip, a.stop = False, strip, top
        out.append(a)
    return out


# --- what is there ---------------------------------------------------------------------------

def wired(agent: Agent, scope: str, project: Path) -> bool:
    """Whether the agent's config holds what makes it wired at this scope (`Agent.wired_by`)."""
    if agent.wired_by == "hook":
        path = config_path(agent.hooks, scope, project)
        return path is not None and hook_files.has_ours(_read_quietly(path),
                                                        comments=agent.hooks is not None
                                                        and agent.hooks.format == "jsonc")
    return _has_server(agent, scope, project)


def _read_quietly(path: Path) -> str | None:
    try:
        return base.read(path)
    except InstallError:
        return None


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
    wired: bool


def status(name: str, scope: str, project: Path | None = None) -> Status:
    agent = _agent(name)
    project = (project or Path.cwd()).absolute()
    parts: dict[str, bool] = {}
    versions: list[str | None] = []
    ipath = place(agent.instructions, scope, project)
    if ipath is not None:
        text = base.read(ipath)
        parts["instructions"] = base.block_version(text) is not None
        versions.append(base.block_version(text))
    sdir = place(agent.skills, scope, project)
    if sdir is not None:
        found = [base.skill_version(base.read(sdir / s / "SKILL.md")) for s in base.SKILLS]
        parts["skills"] = all(found)
        versions += found
    parts["mcp"] = wired(agent, scope, project) if agent.wired_by == "mcp" else _has_server(agent, scope, project)
    hpath = config_path(agent.hooks, scope, project)
    if hpath is not None:
        parts["hook"] = hook_files.has_ours(_read_quietly(hpath), comments=agent.hooks.format == "jsonc")
    version = next((v for v in versions if v and v != "?"), next((v for v in versions if v), None))
    return Status(agent.name, agent.label, present(agent), scope, parts, version, wired(agent, scope, project))


def _has_server(agent: Agent, scope: str, project: Path) -> bool:
    path = config_path(agent.mcp, scope, project)
    try:
        return path is not None and is_our_server(_read_entry(agent.mcp, base.read(path), path,
                                                               agent.mcp.key_for(scope, project)))
    except InstallError:
        return False


def project_is_user(agent: Agent, here: Path) -> bool:
    """Whether the agent's project scope here is its user scope: the same config file and entry,
    or the same skills folder (a project in the home folder: Claude Code's `~/.claude/skills` is
    both). Its project row would list the user's again, and a project install would rewrite the
    user's files as a project's."""
    if (config_path(agent.mcp, "project", here), agent.mcp.key_for("project", here)) == \
            (config_path(agent.mcp, "user", here), agent.mcp.key_for("user", here)):
        return True
    mine, users = place(agent.skills, "project", here), place(agent.skills, "user", here)
    return mine is not None and users is not None and mine.resolve() == users.resolve()


def listing(project: Path | None = None) -> list[dict]:
    """`epimem install --list`: a row an agent and scope, as JSON shows it; a project row only where
    something of epimem's is, and is not the user's."""
    here = (project or Path.cwd()).absolute()
    rows = []
    for name, agent in AGENTS.items():
        for scope in agent.scopes():
            try:
                s = status(name, scope, project)
            except Exception as e:  # a broken config must not hide the other agents
                rows.append({"agent": name, "label": agent.label, "scope": scope, "present": True,
                             "wired": False, "parts": {}, "version": None, "problem": str(e)})
                continue
            if scope == "project" and (not any(s.parts.values()) or project_is_user(agent, here)):
                continue
            rows.append({"agent": s.agent, "label": s.label, "scope": s.scope, "present": s.present,
                         "wired": s.wired, "parts": s.parts, "version": s.version})
    return rows


def wiring(vault: str, project: Path | None = None) -> list:
    """Each agent of the table (Claude Code included) that is on this machine or wired, and
    whether its files are what `epimem install` would write now for `vault` (`epimem doctor`)."""
    from ..api.doctor import AgentWiring

    here = (project or Path.cwd()).absolute()
    rows = []
    for name, agent in AGENTS.items():
        for scope in agent.scopes():
            if scope == "project" and project_is_user(agent, here):
                continue
            how = getattr(agent.module, "installed_as", lambda s, p: "")(scope, here)
            try:
                if how:  # another way of installing it than this installer's (Claude Code's plugin)
                    rows.append(AgentWiring(name, agent.label, scope, present(agent), True, how=how))
                    continue
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
