"""Where the vault is: `--vault`, else `$EPIMEM_VAULT`, else the user data dir.

One place for the hook, the vault and the CLI. platformdirs is imported only
when neither the option nor the variable names the vault.
"""

from __future__ import annotations

import os
from pathlib import Path


def default_root() -> Path:
    from platformdirs import user_data_dir  # a small pure-Python package, off the common path

    return Path(user_data_dir("epimem", appauthor=False)) / "vault"


def resolve_root(explicit: str | os.PathLike | None = None) -> Path:
    """`--vault`, else `$EPIMEM_VAULT`, else the user data dir; absolute, `~` expanded."""
    value = explicit or os.environ.get("EPIMEM_VAULT")
    root = Path(value).expanduser() if value else default_root()
    return root.absolute()


def is_vault(root: str | os.PathLike) -> bool:
    """What makes a folder a vault, for every command and the hook alike: its rules
    file or its beliefs folder (a vault without `epistemology.md` runs on the defaults)."""
    return os.path.isfile(os.path.join(root, "epistemology.md")) or os.path.isdir(os.path.join(root, "beliefs"))


def is_note(name: str) -> bool:
    """A file epimem reads as a note: `*.md`, not hidden (`.x.md.epimem-….tmp` is
    epimem's own write in flight, `.x.md.swp` an editor's, `.gitkeep` a placeholder)."""
    return name.endswith(".md") and not name.startswith(".")


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


# Inside the vault's folder but not the vault's notes: git's own files (its config, which git
# obeys as commands: `core.hooksPath`, `core.fsmonitor`; the remote's URL, often with a token)
# and epimem's (the MCP bearer token, logs, caches). A remote can commit a symlink
# `beliefs/x.md -> ../.git/config` that a check for "outside the vault" lets through: it is a
# link out of the notes as much as one to /etc is.
PRIVATE_DIRS = (".git", ".epimem")


def private_dir(real: str, real_root: str) -> str | None:
    """`.git` or `.epimem` when a resolved path is that folder of the vault or under it."""
    return next((d for d in PRIVATE_DIRS if _inside(real, os.path.join(real_root, d))), None)


def in_notes(real: str, real_root: str) -> bool:
    """Whether a resolved path is the vault's own (inside the vault, not under `.git/` or `.epimem/`)."""
    return _inside(real, real_root) and private_dir(real, real_root) is None


def leaves(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> bool:
    """Whether `path` (in the vault) resolves outside the vault's notes: a symlink out (or under
    one), or into `.git/` or `.epimem/`."""
    return not in_notes(os.path.realpath(path), os.path.realpath(root))


def note_entries(folder: str | os.PathLike[str]) -> list[os.DirEntry[str]]:
    """The notes of one vault folder (`beliefs/`, `observations/`, `tensions/`), unordered;
    [] when the folder is missing. One listing for the vault's caches, the context cache and recall.

    A symlink that leaves the vault (the folder itself, or one note) is not a
    note: an outside file is never read, listed, indexed or sent
    (`escaping_links` reports it)."""
    folder = os.fspath(folder)
    root = os.path.dirname(os.path.abspath(folder))
    try:
        if os.path.islink(folder) and leaves(root, folder):
            return []
        with os.scandir(folder) as it:
            return [e for e in it if is_note(e.name) and (not e.is_symlink() or not leaves(root, e.path))
                    and e.is_file()]
    except (FileNotFoundError, NotADirectoryError):
        return []


NOTE_FOLDERS = ("beliefs", "observations", "tensions", "reviews", "inbox")


def folders_named_as_notes(root: str | os.PathLike[str]) -> list[str]:
    """Vault-relative names of folders named like a note (`observations/2026-11.md/`), for
    `validate`: `note_entries` lists files only, so a reader passes them by, while a writer of
    that name is refused (`files.NotAFile`); said once, before a write trips on it."""
    out = []
    for folder in NOTE_FOLDERS:
        try:
            with os.scandir(os.path.join(root, folder)) as it:
                out += [f"{folder}/{e.name}" for e in it
                        if is_note(e.name) and e.is_dir(follow_symlinks=False)]
        except (FileNotFoundError, NotADirectoryError):
            continue
    return sorted(out)


def escaping_links(root: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(vault-relative path, target) of every symlink in the vault that resolves
    outside it or into `.git/` or `.epimem/` (those folders themselves aside), for `validate`."""
    root = os.path.abspath(root)
    real_root = os.path.realpath(root)
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath == root:
            dirnames[:] = [d for d in dirnames if d not in (".git", ".epimem")]
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            if os.path.islink(p) and not in_notes(os.path.realpath(p), real_root):
                out.append((os.path.relpath(p, root), os.readlink(p)))
    return sorted(out)


# What belongs in a vault's history (SPEC §1). The vault's own folders and rules do;
# Obsidian's per-device state (`workspace*.json`, its caches, its trash) and loose files at
# the root (a note Obsidian created there, an editor's scratch file) never do, whether
# the vault was made here or copied in.
ROOT_FILES = frozenset({"epistemology.md", ".gitignore", ".gitattributes"})


def committable(rel: str) -> bool:
    """Whether a vault-relative path belongs in the vault's git history."""
    from fnmatch import fnmatch

    rel = rel.replace(os.sep, "/").strip("/")
    if "/" not in rel:
        return rel in ROOT_FILES
    top = rel.split("/", 1)[0]
    if top in (".epimem", ".git", ".trash"):
        return False
    if top == ".obsidian":
        name = rel.rsplit("/", 1)[-1]
        return not (fnmatch(name, "workspace*.json") or "/cache" in rel or name == "cache")
    return True


def committable_files(root: str | os.PathLike) -> list[str]:
    """Every file under `root` that belongs in its history (a copied vault's first commit)."""
    out = []
    base = Path(root)
    for dirpath, dirnames, filenames in os.walk(base):
        rel_dir = Path(dirpath).relative_to(base).as_posix()
        dirnames[:] = [d for d in dirnames if d not in (".git", ".epimem")]
        for f in filenames:
            rel = f if rel_dir == "." else f"{rel_dir}/{f}"
            if committable(rel):
                out.append(rel)
    return sorted(out)


def inbox_waiting(root: str | os.PathLike[str]) -> int:
    """How many proposals wait in the review inbox (`inbox/*.md`; a rejected one is under
    `inbox/rejected/`): one listing, for the session-start hook (SPEC §15)."""
    return len(note_entries(os.path.join(os.fspath(root), "inbox")))
