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
