"""Every error a user can act on is an `EpimemError`.

Each carries where the problem is (`path`, `line`, `field`) when it is known,
and an `exit_code` that the CLI returns at its one boundary (docs/cli.md):
1 for anything to fix, 75 for "busy, try again" so that scripts and hooks
can tell a retry from a mistake.
Messages name fields and files, never command-line flags: the same error
reaches a CLI user, a Python caller and an MCP client.
A message is redacted when it is made: it quotes what the user gave (a Chroma
URL with its password, a value that failed to parse), and every front end
prints it, logs it or sends it to a client.
"""

from __future__ import annotations


class EpimemError(Exception):
    """Anything the user must act on; the message says what and where."""

    exit_code = 1

    def __init__(self, message: str = "", *, path: str | None = None, line: int | None = None,
                 field: str | None = None):
        from .redact import redact

        message = redact(message)
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.field = field

    def __str__(self) -> str:
        return self.message


def located(e: Exception) -> str:
    """The error's message, opening with the file it names when the message does not (a reader of
    last month's log raised "not valid UTF-8 at line 1" and the user had to guess which file)."""
    msg, path, line = str(e), getattr(e, "path", None), getattr(e, "line", None)
    if not path or path in msg or isinstance(e, InputError):  # an input's path is the caller's, said as given
        return msg
    return f"{path}:{line}: {msg}" if line else f"{path}: {msg}"


class InputError(EpimemError, ValueError):
    """A value the caller gave is not acceptable (`field` names it)."""


class NotFound(EpimemError, LookupError):
    """No such belief, tension or vault."""


class Conflict(EpimemError):
    """The change cannot be made as asked: it exists already, or the vault's
    state forbids it (an unfinished merge, staged changes)."""


class Busy(EpimemError):
    """Try again: another process holds the vault, or a file changed under us."""

    exit_code = 75  # EX_TEMPFAIL


class VaultError(EpimemError):
    """The vault or one of its files is not as epimem needs it (`path`, `line`)."""


class StorageError(EpimemError):
    """Writing or committing failed (disk, git); nothing was changed."""
