"""`python -m epimem.recall.follow VAULT [--chroma-url URL]`: bring Chroma up to
date with the sidecar (`Index.update_chroma`), detached from the command that
wrote the sidecar; errors go to `.epimem/recall/chroma.log`."""

from __future__ import annotations

import sys
import time


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    url = None
    if "--chroma-url" in args:
        i = args.index("--chroma-url")
        url = args[i + 1] if i + 1 < len(args) else None
        del args[i:i + 2]
    if len(args) != 1:
        sys.stderr.write("usage: python -m epimem.recall.follow VAULT [--chroma-url URL]\n")
        return 2
    from ..core.errors import EpimemError
    from .config import read_config
    from .index import Index

    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    try:
        root = args[0]
        ix = Index(root, read_config(root, chroma_url=url), progress=lambda m: sys.stderr.write(f"{stamp} {m}\n"))
        ix.update_chroma()
    except (EpimemError, OSError) as e:
        sys.stderr.write(f"{stamp} epimem: Chroma was not updated: {e}\n")
        try:
            ix.chroma_failed(str(e))
        except (EpimemError, OSError, NameError):
            pass  # no index to note it in; the log has it
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
