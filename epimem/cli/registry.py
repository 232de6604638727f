"""Where each command is declared, and the options before any command: the table the parser,
the help and the completion read, so none of them needs another to know what exists.

Only the module that declares the command given is imported (`AREAS`), so `epimem hook
session-start`, `epimem recall` and `epimem mcp` cost their own work and the parser.
"""

from __future__ import annotations

from .spec import Command, Opt

# The first word of a command line → the module of epimem.cli declaring its commands. The order
# is the order of `epimem --help`.
AREAS = {
    "init": "main", "belief": "main", "observe": "main", "transcript": "main", "tensions": "main",
    "tension": "main", "session": "main", "history": "main", "diff": "main", "undo": "main", "redo": "main",
    "commit": "main", "validate": "main", "doctor": "main", "forget": "forget", "inbox": "inbox",
    "recall": "recall", "index": "recall", "watch": "recall",
    "mirror": "mirror",
    "install": "install", "hook": "hook", "skill": "claude", "mcp": "mcp",
    "sync": "portability", "clone": "portability", "export": "portability", "import": "portability",
    "merge-driver": "portability",
    "completion": "completion", "__complete": "completion",
}

HELP = ("A personal epistemic memory: what the assistant believes about you, as markdown files in a "
        "Git-versioned vault.")


def today_value(value: str) -> str:
    from ..store.clock import ClockError, today

    try:
        today(value)
    except ClockError:
        raise ValueError(f"must be a date YYYY-MM-DD, not {value!r}") from None
    return value


GLOBAL = (
    Opt("--vault", metavar="PATH", envvar="EPIMEM_VAULT", complete="dir",
        help="Vault directory (default: $EPIMEM_VAULT, else the user data dir)."),
    Opt("--today", metavar="YYYY-MM-DD", help="Pretend today is YYYY-MM-DD (also EPIMEM_TODAY)."),
    Opt("--version", type=bool, help="Print the version and exit."),
    Opt("--install-completion", type=bool, help="Install tab completion for your shell ($SHELL: bash, zsh "
                                                "or fish); `epimem completion --help` says more."),
    Opt("--show-completion", type=bool, help="Print the completion script for your shell."),
)
TOP = Command((), GLOBAL, None, HELP)


def load(word: str) -> None:
    """Import the module that declares the commands under `word` (they register themselves)."""
    import importlib

    importlib.import_module(f"{__package__}.{AREAS[word]}")


def load_all() -> None:
    for module in dict.fromkeys(AREAS.values()):
        load(next(w for w, m in AREAS.items() if m == module))
