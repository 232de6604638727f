"""Creating a vault: folders, rules, counter, .gitignore, git, the first commit."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import kernel
from ..core.errors import Conflict, StorageError
from ..core.model import Sessions
from ..store import drivers, git
from ..store import sessions as sessions_file
from ..store import transaction as tx
from ..store.files import make_dirs, stat_key
from ..store.paths import committable_files
from . import common, upgrade

if TYPE_CHECKING:
    from .service import Service

TEMPLATES = Path(__file__).parent.parent / "templates"
FOLDERS = ("beliefs", "observations", "tensions", "reviews", "state")
# The vault is about a person: its folder is the owner's alone, as `~/.ssh` is (the files inside keep
# the umask's modes; no one else can reach them through a folder they cannot enter).
PRIVATE = 0o700


def make_private(root: Path) -> None:
    try:
        os.chmod(root, PRIVATE)
    except OSError as e:
        raise StorageError(f"cannot make {root} private (mode 0700): {e.strerror or e}", path=str(root)) from None


def init(mem: Service) -> bool:
    """Create the vault (idempotent); True when anything was created."""
    r = mem.root
    # `epimem init ~/Documents` by mistake must not turn a folder of unrelated
    # files into a repository and commit them all.
    if r.is_dir() and not mem.vault.exists() and not git.is_repo_root(r) \
            and any(not p.name.startswith(".") for p in r.iterdir()):
        raise Conflict(f"{r} is not empty and is not an epimem vault (no epistemology.md, no beliefs/); "
                       "choose an empty or new folder", path=str(r))
    existed = mem.vault.exists()  # a folder of notes already: its format is what its files say (1 if none)
    try:
        make_dirs(r)
    except OSError as e:
        raise StorageError(f"cannot create a vault at {r}: {e.strerror or e}", path=str(r)) from None
    created_repo = git.init(r)
    if created_repo:  # a new vault, or a folder of notes made one; a vault re-initialised keeps its mode
        make_private(r)
    drivers.ensure_registered(r)
    with mem.vault.lock():
        writes = [tx.create(f"{d}/.gitkeep", "") for d in FOLDERS
                  if (not (r / d).is_dir() or not any((r / d).iterdir())) and not (r / d / ".gitkeep").exists()]
        files = {
            "epistemology.md": (TEMPLATES / "epistemology.md").read_text(encoding="utf-8"),
            ".gitignore": (TEMPLATES / "gitignore").read_text(encoding="utf-8"),
            ".gitattributes": drivers.ATTRIBUTES,
            sessions_file.PATH: sessions_file.to_json(Sessions(created=mem.write_today)),
        }
        if not existed:
            files[kernel.FORMAT_FILE] = kernel.format_text(kernel.VAULT_FORMAT)
        writes += [tx.create(rel, text) for rel, text in files.items() if not (r / rel).exists()]
        attrs = r / ".gitattributes"
        if attrs.exists() and drivers.attributes_missing(attrs.read_text(encoding="utf-8")):
            # a vault from before merges by meaning: its clones learn the driver from this file
            writes.append(tx.replace(".gitattributes", drivers.with_attributes(attrs.read_text(encoding="utf-8")),
                                     stat_key(attrs)))
        gi = r / ".gitignore"
        if gi.exists() and not any(w.path == ".gitignore" for w in writes):
            # A copied vault keeps its own .gitignore, with epimem's lines added when missing.
            have = gi.read_text(encoding="utf-8")
            missing = [ln for ln in files[".gitignore"].splitlines()
                       if ln and not ln.startswith("#") and ln not in have.splitlines()]
            if missing:
                text = have.rstrip("\n") + "\n# added by epimem\n" + "\n".join(missing) + "\n"
                writes.append(tx.replace(".gitignore", text, stat_key(gi)))
        for d in FOLDERS:
            make_dirs(r / d)  # a folder that has files already keeps no .gitkeep
        if writes or created_repo:
            # A folder of existing notes (a copied vault) becomes the first commit whole.
            also = tuple(p for p in committable_files(r) if p not in {w.path for w in writes}) \
                if created_repo else ()
            commit = tx.Commit("init: new epimem vault", "init", also=also, when=mem.replayed)
            tx.apply(r, writes, commit, lock=mem.vault.lock(), caches=common.caches(mem))
    # A vault an older epimem made (or a copy of one) is brought up to this format, in a commit of its own.
    migrated = upgrade.upgrade(mem) if existed else None
    return bool(writes) or created_repo or migrated is not None
