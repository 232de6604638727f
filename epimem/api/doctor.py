"""`epimem doctor`: what state the vault, its wiring and its index are in, with the fix for each problem.

Two halves. `gather` looks (and changes nothing: no migration, no merge-driver registration, no
commit, no fetch): where the vault is and why, its folder's mode, git, the format, the files and
parameters, what `epimem commit` would do with the hand edits, the recall index and a Chroma
server, the session-start hook timed once, the remotes. The agents' wiring is looked at by the
installers themselves (`agents/install.wiring`, Claude Code included, from their own
tables) and handed in as `AgentWiring` rows. `diagnose` is pure: the facts in, one `Check` per
thing out, each `ok`, a `note` (worth knowing, nothing to fix) or a `problem` with its fix.
"""

from __future__ import annotations

import shlex
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..core import kernel
from ..core.errors import EpimemError
from ..core.redact import redact
from ..store import gitrun

# The session-start hook is budgeted in tens of milliseconds (docs/benchmarks.md); above a second
# it is worth a note, and at half of the 10 s after which Claude Code gives up on it, a problem.
HOOK_SLOW_MS = 1000
HOOK_TOO_SLOW_MS = 5000
REMOTE_TIMEOUT_S = 15
CHROMA_TIMEOUT_S = 3


@dataclass(frozen=True)
class AgentWiring:
    """One agent as its installer sees it (the front ends fill these in)."""
    agent: str
    label: str
    scope: str
    present: bool               # on this machine (its CLI on PATH, or its config folder)
    wired: bool                 # epimem's parts are there
    stale: tuple[str, ...] = ()  # the files `epimem install` would still change
    how: str = ""               # "plugin" for Claude Code's plugin
    problem: str = ""           # a config the installer cannot read


@dataclass(frozen=True)
class Remote:
    name: str
    branch: str
    ahead: int | None = None    # commits here the remote lacks (None: cannot tell)
    behind: int | None = None   # commits there this vault lacks (-1: some, how many unknown)
    error: str = ""


@dataclass(frozen=True)
class Facts:
    root: str
    source: str                                   # "flag", "env" or "default"
    exists: bool = False
    is_vault: bool = False
    repo: bool = False
    mode: int | None = None
    commits: int = 0
    drivers_registered: bool = True
    attributes_missing: bool = False
    unfinished: str = ""                          # the message of a half-done merge or rebase
    format: int | None = None
    format_error: str = ""
    beliefs: int = 0
    file_problems: tuple[str, ...] = ()           # validate's lines, parameters aside
    parameter_problems: tuple[str, ...] = ()
    hand_edits: tuple[str, ...] = ()              # what `epimem commit` would record
    hand_edits_refused: tuple[str, ...] = ()      # what it would leave out (rule 18)
    refused_passes: tuple[dict, ...] = ()         # session-end passes the vault refused (store.refused_passes)
    index: dict | None = None                     # recall's index status (as_json), None: not looked at
    index_error: str = ""
    chroma_url: str = ""
    chroma_error: str = ""                        # "" when reachable (or no server named)
    agents: tuple[AgentWiring, ...] = ()
    hook_ms: float | None = None
    hook_error: str = ""
    remotes: tuple[Remote, ...] = ()


@dataclass(frozen=True)
class Check:
    name: str
    status: str      # "ok", "note" or "problem"
    said: str
    fix: str = ""


@dataclass(frozen=True)
class Report:
    root: str
    source: str
    checks: tuple[Check, ...] = field(default_factory=tuple)

    @property
    def problems(self) -> list[Check]:
        return [c for c in self.checks if c.status == "problem"]

    @property
    def healthy(self) -> bool:
        return not self.problems

    def as_json(self) -> dict:
        return {"vault": self.root, "source": self.source, "healthy": self.healthy,
                "checks": [{"name": c.name, "status": c.status, "said": c.said, "fix": c.fix or None}
                           for c in self.checks]}


# --- the analysis (pure) ------------------------------------------------------------------------

SOURCES = {"flag": "given by --vault", "env": "from $EPIMEM_VAULT",
           "default": "the default place: no --vault, no $EPIMEM_VAULT"}


def _cmd(f: Facts, *args: str) -> str:
    """A command line for this vault as the user reached it: `--vault` named when they named it."""
    return "`epimem " + (f"--vault {f.root} " if f.source == "flag" else "") + " ".join(args) + "`"


def diagnose(f: Facts) -> Report:
    out: list[Check] = []

    def ok(name: str, said: str) -> None:
        out.append(Check(name, "ok", said))

    def note(name: str, said: str) -> None:
        out.append(Check(name, "note", said))

    def problem(name: str, said: str, fix: str) -> None:
        out.append(Check(name, "problem", said, fix))

    where = f"{f.root} ({SOURCES.get(f.source, f.source)})"
    if not f.exists or not f.is_vault:
        what = "nothing is there" if not f.exists else "the folder is not an epimem vault"
        problem("vault", f"{where}: {what}",
                f"`epimem init {f.root}` creates one" + ("" if f.source == "default" else
                                                          ", or point --vault / $EPIMEM_VAULT at yours"))
        return Report(f.root, f.source, tuple(out))
    ok("vault", where)
    if f.mode is not None:
        if f.mode & 0o077:
            problem("folder", f"mode {f.mode:04o}: others can read what it believes about you",
                    f"`chmod 700 {f.root}` (as `epimem init` makes it)")
        else:
            ok("folder", f"private (mode {f.mode:04o})")
    # git
    if not f.repo:
        problem("git", "not a git repository of its own, so nothing can be recorded",
                f"`epimem init {f.root}` makes it one (its files become the first commit)")
    elif f.unfinished:
        problem("git", f.unfinished, "finish it or give it up as said, then run `epimem doctor` again")
    else:
        lacks, fixes = [], []
        if not f.drivers_registered:
            lacks.append("the merge driver is not registered in .git/config, so a `git pull` merges line by line")
            fixes.append(f"any command that reads the vault registers it ({_cmd(f, 'validate')})")
        if f.attributes_missing:
            lacks.append(".gitattributes lacks epimem's merge lines")
            fixes.append(f"`epimem init {f.root}` adds them")
        if lacks:
            problem("git", "its own repository, but " + "; ".join(lacks), "; ".join(fixes))
        else:
            ok("git", f"its own repository ({f.commits} commit{'s' if f.commits != 1 else ''}); "
                      "merge drivers registered")
    # format
    if f.format_error:
        problem("format", f.format_error, "`git checkout -- state/vault.json` restores the committed one")
    elif f.format is not None:
        if f.format > kernel.VAULT_FORMAT:
            problem("format", kernel.too_new(f.format) or "", "install the newer epimem that wrote it")
            return Report(f.root, f.source, tuple(out))
        if f.format < kernel.VAULT_FORMAT:
            note("format", f"format {f.format}, an older epimem's: the next change migrates it to "
                           f"{kernel.VAULT_FORMAT} in one commit of its own (`epimem init {f.root}` does it now)")
        else:
            ok("format", f"format {f.format} (this epimem's)")
    # files and parameters
    if f.parameter_problems:
        problem("parameters", f"{len(f.parameter_problems)} invalid in epistemology.md, each replaced by its "
                              "default: " + "; ".join(f.parameter_problems[:3]),
                "fix epistemology.md at the line named (`epimem validate` lists them all)")
    else:
        ok("parameters", "epistemology.md's parameters are valid")
    if f.file_problems:
        problem("files", f"{len(f.file_problems)} problem{'s' if len(f.file_problems) != 1 else ''}: "
                         + "; ".join(f.file_problems[:3]) + (" …" if len(f.file_problems) > 3 else ""),
                "fix each file at the line named; `epimem validate` lists them all")
    else:
        ok("files", f"{f.beliefs} belief{'s' if f.beliefs != 1 else ''}, every file valid")
    if f.hand_edits_refused:
        problem("refused edits", "edited by hand and refused by the rules, so `epimem commit` leaves them out: "
                              + "; ".join(f.hand_edits_refused[:3]),
                f"fix the file as said (rule 18), then {_cmd(f, 'commit')}")
    if f.hand_edits:
        note("hand edits", f"not committed yet; {_cmd(f, 'commit')} would record: "
                           + "; ".join(f.hand_edits[:5]) + (" …" if len(f.hand_edits) > 5 else ""))
    elif not f.hand_edits_refused:
        ok("hand edits", "none waiting")
    if f.refused_passes:
        n = len(f.refused_passes)
        problem("session-end passes", f"{n} recorded nothing, the vault refused {'it' if n == 1 else 'them'}: "
                + "; ".join(f"{p.get('day') or '?'}: {p.get('why') or 'no reason kept'}"
                            for p in f.refused_passes[-3:]) + (" …" if n > 3 else ""),
                "fix what is said, then record each session: "
                + " ".join(_cmd(f, "transcript", shlex.quote(str(p["transcript"]))) for p in f.refused_passes))
    # recall
    if f.index_error:
        problem("index", f.index_error, _cmd(f, "index", "rebuild"))
    elif f.index is not None:
        ix = f.index
        if not ix.get("exists"):
            note("index", f"none yet; the first `epimem recall` (or `epimem index rebuild`) builds it "
                          f"(embedder {ix.get('embedder') or 'wordllama'})")
        elif ix.get("needs_rebuild"):
            problem("index", f"must be rebuilt: {ix['needs_rebuild']}", _cmd(f, "index", "rebuild"))
        else:
            lag = ix.get("chroma_pending") or 0
            what = f"{ix.get('items', 0)} items from {ix.get('files', 0)} files, embedder {ix.get('embedder')}"
            if ix.get("chroma_error"):
                problem("index", f"{what}; the last update of Chroma failed: {ix['chroma_error']}",
                        _cmd(f, "index", "sync"))
            elif ix.get("stale") or lag:
                changed = len(ix.get("new", [])) + len(ix.get("changed", [])) + len(ix.get("deleted", []))
                note("index", f"{what}; behind the files by {changed} file(s)"
                              + (f", Chroma by {lag} item(s)" if lag else "")
                              + f": the next recall catches up ({_cmd(f, 'index', 'sync')} now)")
            else:
                ok("index", f"{what}; up to date")
    if f.chroma_url:
        if f.chroma_error:
            problem("chroma", f"the server at {f.chroma_url} cannot be reached: {f.chroma_error}",
                    "start it, or unset chroma_url ($EPIMEM_CHROMA_URL, epistemology.md) for the embedded store")
        else:
            ok("chroma", f"the server at {f.chroma_url} answers")
    else:
        ok("chroma", "embedded in .epimem/ (no server named)")
    # agents
    wired = [a for a in f.agents if a.wired]
    for a in f.agents:
        name = a.agent + (f" ({a.scope})" if a.scope != "user" else "")
        again = _cmd(f, "install", a.agent, *(("--scope", "project") if a.scope == "project" else ()))
        if a.problem:
            problem(name, a.problem, "fix that file, then " + again)
        elif a.wired and a.how == "plugin":
            ok(name, f"{a.label}: wired through the epimem plugin")
        elif a.wired and a.stale:
            problem(name, f"{a.label}: wired, but not as this epimem wires it (an older version, or "
                          f"another vault): {', '.join(a.stale[:4])} would change", f"{again} updates it")
        elif a.wired:
            ok(name, f"{a.label}: wired to this vault, its files current")
        elif a.present:
            note(name, f"{a.label} is on this machine, not wired: {again} wires it")
    if not wired:
        note("agents", f"no assistant is wired to this vault yet: {_cmd(f, 'install', 'claude-code')} "
                       "(`epimem install --list` shows the others)")
    # the hook
    if f.hook_error:
        problem("hook", f"the session-start hook failed: {f.hook_error}",
                f"{f.root}/.epimem/hook.log says why; a session still starts, without epimem's context")
    elif f.hook_ms is not None:
        slow = f"the session-start hook took {f.hook_ms:.0f} ms, and every session waits for it"
        if f.hook_ms > HOOK_TOO_SLOW_MS:
            problem("hook", slow + " (Claude Code gives up at 10 s)",
                    f"{f.root}/.epimem/hook.log says what it waited on; run `epimem doctor` again to measure anew")
        elif f.hook_ms > HOOK_SLOW_MS:
            note("hook", slow + f" (a busy machine? it usually takes tens of ms; {f.root}/.epimem/hook.log)")
        else:
            ok("hook", f"the session-start hook answered in {f.hook_ms:.0f} ms")
    # remotes
    if f.repo and not f.remotes:
        note("remote", "none: the vault lives on this machine only (`git remote add origin URL`, then "
                       f"{_cmd(f, 'sync')}, carries it to others)")
    for r in f.remotes:
        name = f"remote {r.name}"
        if r.error:
            problem(name, f"cannot be reached: {r.error}", "check the URL (`git -C VAULT remote -v`) and the network")
        elif r.behind:
            more = "commits" if r.behind < 0 else f"{r.behind} commit{'s' if r.behind != 1 else ''}"
            problem(name, f"{r.name}/{r.branch} has {more} this vault has not merged", _cmd(f, "sync"))
        elif r.ahead:
            note(name, f"{r.ahead} commit{'s' if r.ahead != 1 else ''} here not yet on {r.name}/{r.branch}: "
                       f"{_cmd(f, 'sync')} sends them")
        elif r.ahead == 0:
            ok(name, f"up to date with {r.name}/{r.branch}")
        else:
            note(name, f"{r.name}/{r.branch} does not exist yet: {_cmd(f, 'sync')} creates it")
    return Report(f.root, f.source, tuple(out))


# --- looking ------------------------------------------------------------------------------------

def gather(root: str | Path, *, source: str, agents: tuple[AgentWiring, ...] = (), today=None,
           hook: bool = True, remotes: bool = True) -> Facts:
    """What `diagnose` needs, read from the vault as it is (nothing is changed)."""
    from ..store import drivers, vault_format
    from ..store.paths import is_vault

    root = Path(root).absolute()
    facts: dict = {"root": str(root), "source": source, "agents": tuple(agents)}
    facts["exists"] = root.is_dir()
    facts["is_vault"] = facts["exists"] and is_vault(root)
    if not facts["is_vault"]:
        return Facts(**facts)
    facts["mode"] = stat.S_IMODE(root.stat().st_mode)
    facts["repo"] = gitrun.is_repo_root(root)
    if facts["repo"]:
        # Before anything reads the vault: that registers the driver, and doctor is to say whether it was.
        facts["drivers_registered"] = drivers.registered(root)
        gat = root / ".gitattributes"
        facts["attributes_missing"] = drivers.attributes_missing(gat.read_text(encoding="utf-8")
                                                                 if gat.exists() else None)
        what = drivers.unfinished(root)
        facts["unfinished"] = drivers.unfinished_message(root, what) if what else ""
        facts["commits"] = _commits(root)
    try:
        facts["format"] = vault_format.read(root)
    except EpimemError as e:
        facts["format_error"] = str(e)
        return Facts(**facts)
    if facts["format"] > kernel.VAULT_FORMAT or facts.get("unfinished"):
        return Facts(**facts)
    from . import validate
    from .service import open_service

    mem = open_service(root, today)
    mem.vault.on_rules_problems = None
    params, param_problems = mem.vault.params()
    facts["parameter_problems"] = tuple(str(p) for p in param_problems)
    try:
        problems = validate.validate(mem)
        facts["beliefs"] = len(mem.vault.load_beliefs()[0])
    except EpimemError as e:
        problems = []
        facts["file_problems"] = (str(e),)
    else:
        facts["file_problems"] = tuple(str(p) for p in problems if p.path != "epistemology.md")
    if facts["repo"]:
        from . import hand_edits

        try:
            changes, refused = hand_edits.preview(mem)
            facts["hand_edits"] = tuple(redact(c.sentence(), params.redact) for c in changes)
            facts["hand_edits_refused"] = tuple(redact(str(p), params.redact) for p in refused)
        except EpimemError as e:
            facts["hand_edits_refused"] = (str(e),)
    from ..store import refused_passes

    facts["refused_passes"] = tuple(dict(p, why=redact(str(p.get("why") or ""), params.redact))
                                    for p in refused_passes.read(root))
    facts.update(_index(root))
    if hook:
        facts["hook_ms"], facts["hook_error"] = _time_hook(root)
    if remotes and facts["repo"] and facts["commits"]:
        facts["remotes"] = tuple(_remotes(root))
    return Facts(**facts)


def run(root: str | Path, *, source: str, agents: tuple[AgentWiring, ...] = (), today=None,
        hook: bool = True, remotes: bool = True) -> Report:
    return diagnose(gather(root, source=source, agents=agents, today=today, hook=hook, remotes=remotes))


def _git(root: Path, *args: str, timeout: float = 30) -> gitrun.Done:
    return gitrun.call(root, *args, env={"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}, timeout=timeout)


def _commits(root: Path) -> int:
    p = _git(root, "rev-list", "--count", "HEAD")
    return int(p.stdout.strip()) if p.returncode == 0 and p.stdout.strip().isdigit() else 0


def _index(root: Path) -> dict:
    out: dict = {}
    try:
        from ..recall.config import read_config
        from ..recall.index import Index

        cfg = read_config(root)
        out["chroma_url"] = redact(cfg.chroma_url or "")
        out["index"] = Index(root, cfg).status().as_json()
    except Exception as e:  # a broken index is a finding, never the end of the doctor
        out["index_error"] = redact(str(e))
        return out
    if out["chroma_url"]:
        out["chroma_error"] = _chroma_answers(cfg.chroma_url)
    return out


def _chroma_answers(url: str) -> str:
    """"" when the Chroma server answers its heartbeat, else why not."""
    import httpx

    base = url if "://" in url else "http://" + url
    try:
        r = httpx.get(base.rstrip("/") + "/api/v2/heartbeat", timeout=CHROMA_TIMEOUT_S)
    except httpx.HTTPError as e:
        return redact(f"{type(e).__name__}: {e}" if str(e) else type(e).__name__)
    except ValueError as e:
        return f"not a URL like http://HOST:PORT ({e})"
    return "" if r.status_code == 200 else f"it answered HTTP {r.status_code} to a heartbeat"


def _time_hook(root: Path) -> tuple[float | None, str]:
    """The session-start hook run once as Claude Code runs it (a `resume`, so no session is
    counted), in a fresh process: (milliseconds, what went wrong or "")."""
    import json

    payload = json.dumps({"source": "resume", "session_id": "epimem-doctor", "cwd": str(root)})
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-m", "epimem", "--vault", str(root), "hook", "session-start"],
                           input=payload, capture_output=True, text=True, timeout=30, cwd=root)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    ms = (time.perf_counter() - t0) * 1000
    if p.returncode != 0:
        return ms, f"exit {p.returncode}: {(p.stderr or p.stdout).strip()[-300:]}"
    if p.stdout.strip():
        try:
            json.loads(p.stdout)["hookSpecificOutput"]["additionalContext"]
        except (ValueError, KeyError, TypeError):
            return ms, "its output is not the JSON Claude Code reads"
    return ms, ""


def _remotes(root: Path) -> list[Remote]:
    names = [n for n in _git(root, "remote").stdout.split() if n]
    branch = _git(root, "symbolic-ref", "--quiet", "--short", "HEAD").stdout.strip() or "main"
    head = _git(root, "rev-parse", "HEAD").stdout.strip()
    out = []
    for name in names:
        try:
            p = _git(root, "ls-remote", "--heads", name, branch, timeout=REMOTE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            out.append(Remote(name, branch, error=f"no answer in {REMOTE_TIMEOUT_S} s"))
            continue
        if p.returncode != 0:
            out.append(Remote(name, branch, error=redact((p.stderr.strip().splitlines() or ["git failed"])[-1])))
            continue
        sha = next((ln.split()[0] for ln in p.stdout.splitlines() if ln.endswith(f"refs/heads/{branch}")), "")
        if not sha:
            out.append(Remote(name, branch))  # the branch is not there yet
            continue
        if sha == head:
            out.append(Remote(name, branch, ahead=0, behind=0))
            continue
        if _git(root, "cat-file", "-e", f"{sha}^{{commit}}").returncode != 0:
            out.append(Remote(name, branch, behind=-1))  # commits this vault has never fetched
            continue
        ahead = _git(root, "rev-list", "--count", f"{sha}..HEAD").stdout.strip()
        behind = _git(root, "rev-list", "--count", f"HEAD..{sha}").stdout.strip()
        out.append(Remote(name, branch, ahead=int(ahead or 0), behind=int(behind or 0)))
    return out
