"""epimem's merge driver in git: `.gitattributes` names it, `.git/config` defines it.

The attributes are a vault file (committed, so every clone has them); the driver's
command is per machine (git never clones config), so every epimem command checks
for it and registers it when it is missing — after that a plain `git pull` merges
the vault by meaning (`core.merge`), not line by line.

Standard library only and cheap: the check is one read of `.git/config`; git is
run only the first time, to write the two keys.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from . import gitrun

DRIVER = "epimem"
# One driver for every kind of file: it dispatches on the path git gives it (%P).
PATTERNS = ("observations/*.md", "beliefs/*.md", "tensions/*.md", "reviews/*.md", "state/sessions.json",
            "state/vault.json")
ATTRIBUTES = ("# epimem merges these files by meaning (SPEC §11); the driver is registered by every\n"
              "# epimem command in .git/config, so a plain `git pull` merges them the same way.\n"
              + "".join(f"{p} merge={DRIVER}\n" for p in PATTERNS))
_SECTION = f'[merge "{DRIVER}"]'


def git_dir(root: Path) -> Path | None:
    """The repository's git directory (`.git`, or where a `.git` file points), or None."""
    g = root / ".git"
    if g.is_dir():
        return g
    if g.is_file():
        try:
            line = g.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        if line.startswith("gitdir:"):
            p = Path(line[7:].strip())
            return p if p.is_absolute() else (root / p)
    return None


def command() -> str:
    """The driver's command line: this interpreter, so the epimem that registered it runs it."""
    return f'"{sys.executable}" -m epimem merge-driver %O %A %B %P'


def attributes_missing(text: str | None) -> bool:
    """Whether `.gitattributes` (its text, None when absent) lacks one of epimem's lines."""
    if text is None:
        return True
    have = {ln.split("#", 1)[0].strip() for ln in text.splitlines()}
    return any(f"{p} merge={DRIVER}" not in have for p in PATTERNS)


def with_attributes(text: str | None) -> str:
    """`.gitattributes` with epimem's lines added (the user's own lines kept as they are)."""
    if text is None or not text.strip():
        return ATTRIBUTES
    have = {ln.split("#", 1)[0].strip() for ln in text.splitlines()}
    missing = [f"{p} merge={DRIVER}\n" for p in PATTERNS if f"{p} merge={DRIVER}" not in have]
    return text.rstrip("\n") + "\n" + "".join(missing)


def registered(root: Path) -> bool:
    g = git_dir(root)
    if g is None:
        return True  # not a repository: nothing git could call
    try:
        text = (g / "config").read_text(encoding="utf-8")
    except OSError:
        return True
    at = text.find(_SECTION)
    if at < 0:
        return False
    # The interpreter it names must still be there (a venv rebuilt elsewhere).
    rest = text[at:]
    q = rest.find('driver = "')
    if q < 0:
        return True  # a driver the user wrote by hand: theirs to keep
    exe = rest[q + 10:rest.find('"', q + 10)]
    return os.path.exists(exe)


def register(root: Path) -> None:
    for key, value in (("name", "epimem: merge vault files by meaning"), ("driver", command())):
        gitrun.run(root, "config", f"merge.{DRIVER}.{key}", value, retries=1)


# `.gitattributes` is a vault file, so a remote can commit any: `beliefs/*.md
# working-tree-encoding=UTF-16` had git check every belief out as UTF-16 after a sync (every reader
# then refused it, and every write failed in `git add`: "BOM is required"); `filter=` runs
# whatever filter the user's global config defines for that name (git-lfs's fetches from the
# network); `beliefs/*.md -merge` or `merge=union` changes how a plain `git pull` merges. git
# reads `$GIT_DIR/info/attributes` after every `.gitattributes` and it wins, and it is never
# cloned or pushed: the vault's notes are kept byte for byte as they are in the repository.
GUARD_MARK = "# epimem: the vault's files are stored as they are"
# Only epimem's own files: the rest of the folder is the user's (an Obsidian vault's attachments
# kept in git-lfs need its filter).
GUARD = (f"{GUARD_MARK} (docs/security.md, \"What a remote pushes\"); this file\n"
         "# wins over any .gitattributes a remote commits.\n"
         + "".join(f"{p} -filter -working-tree-encoding -ident\n" for p in (*PATTERNS, "epistemology.md"))
         + "".join(f"{p} merge={DRIVER}\n" for p in PATTERNS))


def _common_dir(root: Path) -> Path | None:
    """Where git keeps `info/` (a linked worktree's git directory names it in `commondir`)."""
    g = git_dir(root)
    if g is None:
        return None
    try:
        common = (g / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return g
    c = Path(common)
    return c if c.is_absolute() else g / c


def ensure_guarded(root: Path) -> bool:
    """Write epimem's lines into `info/attributes` when they are missing (the user's own lines
    kept); True when they were written now. One read when they are there; never fails a command."""
    g = _common_dir(root)
    if g is None:
        return False
    p = g / "info" / "attributes"
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError):
        return False
    if GUARD_MARK in text:
        return False
    import fcntl

    try:
        p.parent.mkdir(mode=0o755, exist_ok=True)
        fd = os.open(p, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)  # never wider, whatever the umask
    except OSError:
        return False
    # Callers run outside the vault lock (a read may be the first command on a cloned vault), so
    # two first runs at once would both see the mark missing and both append: the file's own lock,
    # and a second read under it, make the check and the append one step.
    with open(fd, "r+", encoding="utf-8") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX)
            text = f.read()
            if GUARD_MARK in text:
                return False
            f.write(("\n" if text and not text.endswith("\n") else "") + GUARD)
        except (OSError, UnicodeDecodeError):
            return False
    return True


def ensure_registered(root: Path) -> bool:
    """Register the driver when it is missing (and guard the attributes, `ensure_guarded`);
    True when the driver was registered now. Never fails a command: a repository git cannot
    configure merges line by line, as before."""
    ensure_guarded(root)
    if registered(root):
        return False
    try:
        register(root)
    except (OSError, gitrun.HistoryError):
        return False
    return True


def unfinished(root: Path) -> str | None:
    """What git operation was left half done in the vault (a merge, a rebase), or None."""
    g = git_dir(root)
    if g is None:
        return None
    if (g / "rebase-merge").is_dir() or (g / "rebase-apply").is_dir():
        return "rebase"
    if (g / "MERGE_HEAD").exists():
        return "merge"
    if (g / "CHERRY_PICK_HEAD").exists():
        return "cherry-pick"
    return None


def unfinished_message(root: Path, what: str) -> str:
    how = {
        "merge": "finish it (`git -C {r} status` lists the files; edit them, `git add` them, then "
                 "`git -C {r} commit`) or give it up (`git -C {r} merge --abort`)",
        "rebase": "finish it (`git -C {r} status`; edit, `git add`, then `git -C {r} rebase --continue`) "
                  "or give it up (`git -C {r} rebase --abort`)",
        "cherry-pick": "finish it (`git -C {r} cherry-pick --continue`) or give it up "
                       "(`git -C {r} cherry-pick --abort`)",
    }[what].format(r=root)
    return (f"a git {what} is unfinished in the vault at {root}: until it is done the files are half "
            f"merged and epimem will not read or change them; {how}")
