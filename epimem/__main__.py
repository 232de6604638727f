"""The `epimem` console script.

Seven paths, cheapest first:
- `epimem --version` prints the version and imports nothing else;
- `epimem [--vault PATH] [--today DATE] hook ...` runs before every Claude Code
  session, so it is dispatched here without importing Typer, GitPython or
  Chroma (the global options are recognised here too: a hook installed as
  `epimem --vault X hook session-start` must be as fast as one installed as
  `epimem hook session-start --vault X`);
- `epimem merge-driver %O %A %B %P`, which git runs for each file both sides of a
  merge changed, goes straight to `epimem.api.sync.merge_driver`;
- `epimem [--vault PATH] [--today DATE] mcp` (stdio) goes straight to `epimem.mcp.stdio`;
- `epimem mirror page [--out FILE] [--top N]` on a vault unchanged since the page was
  last built writes the cached page (`epimem.mirror.page_cache`) without Typer, Jinja2
  or the snapshot; anything else about it (a changed vault, another option) goes on to
  the CLI, which builds the page;
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


def _cached_page(opts: list[str], args: list[str]) -> bool:
    """Write the cached page when it is still the vault's page; False (nothing done) otherwise."""
    options = {"--out": "", "--top": ""}
    i = 0
    while i < len(args):
        name, eq, value = args[i].partition("=")
        if name not in options:
            return False  # --open, --help, a typo: the CLI's to handle
        if not eq:
            if i + 1 >= len(args):
                return False
            i += 1
            value = args[i]
        if value.startswith("-"):
            return False
        options[name] = value
        i += 1
    from .mirror import page_cache
    from .store.clock import ClockError, today
    from .store.paths import resolve_root

    given = dict(zip(opts[::2], opts[1::2]))
    try:
        top = int(options["--top"] or page_cache.TOP)
        day = today(given.get("--today"))
    except (ValueError, ClockError):
        return False  # the CLI says what is wrong with it
    if top < 1:
        return False
    cache = page_cache.cached_file(resolve_root(given.get("--vault")), day, top)
    if cache is None:
        return False
    import shutil
    from pathlib import Path

    path = Path(options["--out"]) if options["--out"] else page_cache.default_out(day)
    try:
        shutil.copyfile(cache, path)  # the page's bytes as they are: nothing to decode
        size = path.stat().st_size
    except OSError:
        return False  # the CLI builds it again and reports what is wrong
    sys.stdout.write(page_cache.wrote(path, size, True) + "\n")
    return True


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
        if rest == ["mcp"]:
            # A client waits for a server's handshake at its own start-up: no Typer on that path
            # (epimem.mcp.stdio answers discovery before the SDK has even loaded).
            from .mcp import stdio

            named = dict(zip(opts[::2], opts[1::2]))
            return stdio.main(named.get("--vault"), named.get("--today"))
        if rest[:2] == ["mirror", "page"] and _cached_page(opts, rest[2:]):
            return 0
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
