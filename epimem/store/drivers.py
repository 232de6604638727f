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


def ensure_registered(root: Path) -> bool:
    """Register the driver when it is missing; True when it was registered now. Never
    fails a command: a repository git cannot configure merges line by line, as before."""
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
