"""The `epimem` console script.

`epimem hook ...` runs before every Claude Code session, so it is dispatched
here without importing Typer, GitPython or Chroma; everything else goes to
the Typer CLI. This is the only module that imports `epimem.cli`.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["hook"] and not any(a in ("--help", "-h") for a in args):
        try:
            from .claude import hook
        except ImportError:  # not built yet in this checkout
            pass
        else:
            return hook.main(args[1:])
    from .cli import run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
