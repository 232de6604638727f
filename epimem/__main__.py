"""The `epimem` console script.

Four paths, cheapest first:
- `epimem --version` prints the version and imports nothing else;
- `epimem [--vault PATH] [--today DATE] hook ...` runs before every Claude Code
  session, so it is dispatched here without importing Typer, GitPython or
  Chroma (the global options are recognised here too: a hook installed as
  `epimem --vault X hook session-start` must be as fast as one installed as
  `epimem hook session-start --vault X`);
- `epimem merge-driver %O %A %B %P`, which git runs for each file both sides of a
  merge changed, goes straight to `epimem.api.sync.merge_driver`;
- `epimem [--vault PATH] [--today DATE] recall ...`, which an assistant may run
  at every turn, and `index sync` go to `epimem.cli.recall_query` without Typer
  (0.3–0.5 s of a fresh process); what it does not parse (`--help`, a bad value)
  goes to Typer;
- everything else goes to the Typer CLI. This is the only module that imports
  `epimem.cli`.
"""

from __future__ import annotations

import sys

GLOBAL_OPTIONS = ("--vault", "--today")  # the Typer app's global options (epimem.cli._global)


def split_global_options(args: list[str]) -> tuple[list[str], list[str]] | None:
    """(the leading global options as `--name value` pairs, the rest); None when one lacks its value."""
    opts: list[str] = []
    i = 0
    while i < len(args):
        name, eq, value = args[i].partition("=")
        if name not in GLOBAL_OPTIONS:
            break
        if not eq:
            if i + 1 >= len(args):
                return None
            i += 1
            value = args[i]
        opts += [name, value]
        i += 1
    return opts, args[i:]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from . import __version__

        sys.stdout.write(f"epimem {__version__}\n")
        return 0
    split = split_global_options(args)
    if split is not None:
        opts, rest = split
        if rest[:1] == ["hook"] and not any(a in ("--help", "-h") for a in rest):
            from .claude import hook

            # The hook's own `--vault` (after the event) wins over the global one, as a
            # later option does.
            return hook.main([*rest[1:2], *opts, *rest[2:]])
        if rest[:1] == ["merge-driver"] and len(rest) == 5:
            # git runs this once per file both sides changed: a merge of many beliefs must
            # not pay for Typer each time.
            from .api.sync import merge_driver

            return merge_driver(*rest[1:5])
        for command in (("recall",), ("index", "sync")):
            if tuple(rest[:len(command)]) == command:
                from .cli.recall_query import fast_main

                code = fast_main(opts, rest[len(command):], command)
                if code is not None:
                    return code
    from .cli.main import run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
