"""`state/vault.json`, the vault's format (SPEC §1.4): read here only.

Standard library only: the session-start hook checks it before it counts a session. What the
format means and how an older vault is brought up to it is `core.formats`; the number is
written by `init` and by a migration, through the one write path.
"""

from __future__ import annotations

from pathlib import Path

from ..core import kernel
from ..core.errors import VaultError

PATH = kernel.FORMAT_FILE


def read(root: str | Path) -> int:
    """The vault's format; 1 when it records none. VaultError for a file that says no format."""
    p = Path(root) / PATH
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return 1
    except (OSError, UnicodeDecodeError) as e:
        raise VaultError(f"{PATH}: cannot be read ({getattr(e, 'strerror', None) or e}); it says which format "
                         "the vault is in", path=PATH) from None
    try:
        return kernel.vault_format(text)
    except ValueError as e:
        raise VaultError(f"{PATH}: {e}; it says which format the vault is in, so nothing is read until it is "
                         f"fixed (`git checkout -- {PATH}` restores the committed one)", path=PATH, line=1) from None


def require_known(root: str | Path) -> int:
    """The vault's format, or VaultError when a newer epimem wrote it."""
    fmt = read(root)
    message = kernel.too_new(fmt)
    if message is not None:
        raise VaultError(message, path=PATH)
    return fmt
