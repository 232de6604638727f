"""The `epimem` command line: `cli.dispatch` runs it, `cli.spec` is how a command is declared,
and each area's module (`cli/main.py`, `cli/recall.py`, …) declares its commands beside the
functions that run them. Importing this package costs nothing."""
