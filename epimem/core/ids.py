"""Ids are slugs. Anything that becomes a path goes through here, so no input
can name a file outside the vault ("../x", "/etc/passwd", "a/b")."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

from .errors import InputError

SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?$")
TENSION_ID = re.compile(r"^\d{4}-\d{2}-\d{2}-[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?$")


class IdError(InputError):
    """An id that is not a slug (it could name a path outside the vault)."""


def slugify(text: str, max_len: int = 60) -> str:
    # "Don't" → "dont", not "don-t": an apostrophe joins a word, it does not split it.
    text = re.sub(r"(\w)['’](\w)", r"\1\2", text)
    norm = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    s = re.sub(r"[^a-z0-9]+", "-", norm.lower()).strip("-")
    if len(s) > max_len:
        # Cut at a word boundary: "…-we-run-a-rea" reads as a typo in every link to it.
        cut = s[:max_len + 1]
        s = cut.rsplit("-", 1)[0] if "-" in cut else s[:max_len]
    s = s.rstrip("-")
    return s or "belief"


def unique_id(base: str, taken: Collection[str]) -> str:
    """`base`, else `base-2`, `base-3`… whichever `taken` does not hold. A base
    is cut to 70 characters first, so the id and its suffix still fit a slug's 80."""
    base = base[:70].rstrip("-")
    bid, n = base, 2
    while bid in taken:
        bid = f"{base}-{n}"
        n += 1
    return bid


def text_key(text: str) -> str:
    """What two texts share when they say the same thing, case, punctuation and
    spacing aside. Observation ids hash it, and every "is it already there?"
    check (a belief's statement, an imported title, a transcript's statement)
    compares it, so the same sentence is the same wherever it comes from."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _shown(value: object) -> str:
    # A refusal quotes what it refused, but not a megabyte of it back to the caller.
    text = repr(value)
    return text if len(text) <= 100 else text[:100] + "…"


def check_id(value: str, what: str = "belief id", *, field: str | None = None) -> str:
    """`value` when it is a slug; else IdError, naming the API `field` it came in when given."""
    if not isinstance(value, str) or not SLUG.match(value):
        raise IdError(
            f"invalid {what} {_shown(value)}: use lowercase letters, digits and hyphens "
            "(no paths, no dots, no slashes)", field=field)
    return value


def check_tension_id(value: str, *, field: str | None = None) -> str:
    if not isinstance(value, str) or not TENSION_ID.match(value):
        raise IdError(f"invalid tension id {_shown(value)}: expected YYYY-MM-DD-slug", field=field)
    return value
