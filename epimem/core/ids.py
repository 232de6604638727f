"""Ids are slugs. Anything that becomes a path goes through here, so no input
can name a file outside the vault ("../x", "/etc/passwd", "a/b")."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

from .errors import InputError

# `\Z`, not `$`: Python's `$` also matches just before a final "\n", so `^…$` took "abc\n" as a
# slug and a crafted export or tool call named the file `beliefs/abc\n.md`. Every `.match` of
# these patterns (check_id, validate, the context cache, links) is whole-string with `\Z`.
SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?\Z")
TENSION_ID = re.compile(r"^\d{4}-\d{2}-\d{2}-[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?\Z")


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


def plain(text: str) -> str:
    """The text as it reads: compatibility forms folded (NFKC: full-width "Ｐｒｅｆｅｒｓ" is
    "Prefers", a ligature its letters) and the characters that show nothing dropped (format
    characters: zero-width spaces and joiners, soft hyphens, direction marks), so that two texts
    a person cannot tell apart are one text to every comparison (rule 17)."""
    if text.isascii():
        # ASCII is its own NFKC form and holds no format character; rule 17 keys every active
        # belief's title and statement for each new one, and the per-character walk below was a
        # fifth of that at 10,000 beliefs.
        return text
    text = unicodedata.normalize("NFKC", text)
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def text_key(text: str) -> str:
    """What two texts share when they say the same thing, case, punctuation and
    spacing aside (and what does not show: `plain`). Observation ids hash it, and every
    "is it already there?" check (a belief's statement, an imported title, a
    transcript's statement) compares it, so the same sentence is the same wherever it
    comes from."""
    return " ".join(re.sub(r"[^\w\s]", " ", plain(text).lower()).split())


# Rule 17: the abbreviations a developer writes for the same thing. Each is a whole word,
# written out before two claims are compared, so "Keeps PRs small" and "Keeps pull requests
# small" are one claim. Plural forms follow from the singular (see `_singular`).
ABBREVIATIONS = {
    "pr": "pull request", "mr": "merge request", "repo": "repository", "db": "database",
    "config": "configuration", "cfg": "configuration", "docs": "documentation", "doc": "documentation",
    "env": "environment", "deps": "dependency", "dep": "dependency", "ci": "continuous integration",
    "k8s": "kubernetes", "js": "javascript", "ts": "typescript", "py": "python", "api": "api",
    "ui": "user interface", "ux": "user experience", "tdd": "test driven development",
    "fn": "function", "func": "function", "impl": "implementation", "dir": "directory",
    "msg": "message", "auth": "authentication", "infra": "infrastructure", "prod": "production",
    "dev": "development", "w/": "with", "w/o": "without", "vs": "versus", "e2e": "end to end",
}
# Words that say nothing about which claim it is.
_FILLER = frozenset({"a", "an", "the", "and", "of", "to", "in", "on", "for", "is", "are", "it", "its"})


def _singular(word: str) -> str:
    """English plurals and third persons, enough for titles: "prefers" → "prefer", "queries" →
    "query", "reviews" → "review"; short words and -ss/-us/-is endings are left alone."""
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def claim_key(text: str) -> str:
    """What two statements share when they make the same claim in different words: `text_key`,
    then abbreviations written out, plurals and third persons made singular, filler dropped
    (rule 17's "same normalised text", and what its similarity test compares)."""
    out = []
    text = re.sub(r"(\w)['’]s\b", r"\1", text.replace("w/o ", "without ").replace("w/ ", "with "))  # possessives
    for w in text_key(text).split():
        base = _singular(w)
        full = ABBREVIATIONS.get(w) or ABBREVIATIONS.get(base) or (
            ABBREVIATIONS.get(w[:-1]) if w.endswith("s") else None)  # "PRs", "MRs", "DBs"
        for part in (full or base).split():
            if part not in _FILLER:
                out.append(_singular(part))
    return " ".join(out)


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
