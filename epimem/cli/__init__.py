"""The `epimem` command line. The Typer app and every command are built in
`cli.main`; importing this package costs nothing, because `epimem recall`
runs from `cli.recall_query` without them (`epimem/__main__.py`)."""

_MAIN = ("app", "run")


def __getattr__(name: str):
    # `from epimem.cli import app, run` still works: both live in cli.main.
    if name not in _MAIN:
        raise AttributeError(f"module 'epimem.cli' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.main"), name)
