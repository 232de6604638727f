"""The `epimem` console script.

`epimem --version` is answered here, importing nothing else; every other command line goes
to `epimem.cli.dispatch`, which imports the parser and the one module that declares the
command given (the hook, `recall`, `mcp` and `merge-driver` cost their own work, not the
rest of the CLI's). This is the only module that imports `epimem.cli`.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader went away (`epimem recall tea | head -1`): what it read was whole. Nothing more
        # is said, and the exit flush must not meet the closed pipe again either (Click's way, exit 1).
        _quiet_stdout()
        return 1


def _quiet_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _main(argv: list[str] | None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from . import __version__

        sys.stdout.write(f"epimem {__version__}\n")
        return 0
    from .cli.dispatch import main as run

    return run(list(args))


if __name__ == "__main__":
    sys.exit(main())
