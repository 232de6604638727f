"""Text as a terminal may be given it: control characters written out, not obeyed.

A title, a statement or a file name is whatever its author committed, a remote included, and
the command line prints it for a person. Stdlib only and tiny: the command line's fast paths
(the mirror page's cached answer, the hook's errors) print through it without importing the
core's dataclasses.
"""

from __future__ import annotations

import re

_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")


def visible(text: str, keep: str = "") -> str:
    """`text` with its control characters (C0, DEL, C1) written out as `\\n`, `\\x1b`, except those
    in `keep`. A file name comes from whoever committed it, a remote included: `beliefs/a\\nb.md`
    split the one line a problem is said in, and an ESC in a name or a title is a terminal escape
    sequence (set the window title, write the clipboard with OSC 52, hide the rest of a line)
    when printed as it is. git quotes such names for the same reason (`core.quotePath`)."""
    if not _CONTROLS.search(text):
        return text
    return _CONTROLS.sub(lambda m: m.group() if m.group() in keep else repr(m.group())[1:-1], text)
