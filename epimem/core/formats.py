"""How a newer epimem brings an older vault up to its format (SPEC §1.4). Pure.

A vault records its format in `state/vault.json` (`kernel.VAULT_FORMAT`, `kernel.FORMAT_FILE`);
a vault without that file is format 1, as every vault made before formats were recorded. Each
`Migration` here takes a vault from the format before it to `to`, as a list of `Change`s: which
files a change rewrites (a pattern) and how (a pure function of the file's text). `plan` runs
every pending migration over the texts the caller read and returns the files to write and the
words for the one commit that writes them (`api.upgrade` applies it through the one write path).

An older epimem never migrates down: a vault whose format is newer than `kernel.VAULT_FORMAT`
is refused (`kernel.too_new`) by every reader, so it is never misread.

Adding a format (the per-machine session counter of SPEC §1.4, say): append a `Migration` whose
`to` is the new number, with the changes that rewrite what the old format wrote, and raise
`kernel.VAULT_FORMAT` to it. A change whose writer converts old files itself on their next write
needs no `Change` (the counter's `store.sessions.dump` does); the migration may then be empty,
`Migration(3, ())`: it still records the new format, so that an older epimem refuses the vault
rather than write the old shape into it. `tests/core/test_formats.py` holds the registry to
this: one migration per format, in order, ending at `kernel.VAULT_FORMAT`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from . import kernel
from .notes import drop_frontmatter_keys


@dataclass(frozen=True)
class Codecs:
    """What a change needs from the store to rewrite a file the core does not write itself
    (handed in, as `core.merge` is given the counter's reader and writer)."""

    load_sessions: Callable[[str], dict]
    dump_sessions: Callable[[dict], str]
    with_attributes: Callable[[str | None], str]   # `.gitattributes` with epimem's lines


# A rewrite: (vault-relative path, its text or None when absent, codecs) -> the new text, or None
# when the file is fine as it is.
Rewrite = Callable[[str, "str | None", Codecs], "str | None"]


@dataclass(frozen=True)
class Change:
    pattern: str       # the files it rewrites: a vault-relative path, or a pattern (`beliefs/*.md`)
    rewrite: Rewrite
    says: str          # what it did, for the commit subject: `{n}` files, `{s}` a plural's "s"


@dataclass(frozen=True)
class Migration:
    to: int
    changes: tuple[Change, ...]
    says: str = ""     # what the format itself changed, for the commit subject (always said)


@dataclass(frozen=True)
class Plan:
    before: int
    after: int
    texts: dict[str, str]        # path -> its new text (the format file included)
    says: tuple[str, ...]

    @property
    def subject(self) -> str:
        what = "; ".join(self.says) or "the format recorded"
        return f"migrate: vault format {self.before} → {self.after} ({what})"


# --- format 2 --------------------------------------------------------------------------------

def _without_confirmed_session(path: str, text: str | None, codecs: Codecs) -> str | None:
    # The session that last confirmed a belief is read from its last confirming evidence line's
    # observation (api/observe.last_confirmed_in); the frontmatter line went stale with each one.
    if text is None:
        return None
    new = drop_frontmatter_keys(text, ("confirmed_session",))
    return None if new == text else new


def _counter_rewritten(path: str, text: str | None, codecs: Codecs) -> str | None:
    # The counter as its writer writes it now (the per-day `days` map became `count_at_day_start`);
    # a counter that does not parse is left for `validate` to name, never guessed at.
    if text is None:
        return None
    try:
        new = codecs.dump_sessions(codecs.load_sessions(text))
    except (ValueError, TypeError):
        return None
    return None if new == text else new


def _attributes(path: str, text: str | None, codecs: Codecs) -> str | None:
    new = codecs.with_attributes(text)
    return None if new == text else new


MIGRATIONS: tuple[Migration, ...] = (
    Migration(2, (
        Change("beliefs/*.md", _without_confirmed_session, "confirmed_session dropped from {n} belief{s}"),
        Change("state/sessions.json", _counter_rewritten, "the session counter's days as count_at_day_start"),
        Change(".gitattributes", _attributes, ".gitattributes names every merge driver"),
    )),
    # Format 3 adds what an older epimem would drop or misread on its next write: the counter's
    # per-machine `machines` map and the `counted` session ids (SPEC §1.4, rule 19), and the
    # tombstones of forgotten beliefs (SPEC §15). Their writers convert old files on their next
    # write, so nothing is rewritten: the format is recorded so that an older epimem refuses.
    Migration(3, (), says="sessions counted per machine and by id; forgotten beliefs kept as tombstones"),
)


# --- planning ----------------------------------------------------------------------------------

def pending(recorded: int) -> tuple[Migration, ...]:
    """The migrations a vault in format `recorded` needs, oldest first (none for a newer vault:
    `kernel.too_new` refuses it)."""
    return tuple(m for m in MIGRATIONS if m.to > recorded)


def patterns(recorded: int) -> tuple[str, ...]:
    """The files the caller must read for `plan`: paths and patterns, each once."""
    return tuple(dict.fromkeys(c.pattern for m in pending(recorded) for c in m.changes))


def is_pattern(pattern: str) -> bool:
    return any(ch in pattern for ch in "*?[")


def plan(recorded: int, files: Mapping[str, str | None], codecs: Codecs) -> Plan | None:
    """What brings a vault in format `recorded` up to `kernel.VAULT_FORMAT`, or None when it is there.

    `files`: the text of every file `patterns` names (None for a named file that is absent).
    A file the caller left out (one with an edit not yet committed) is not rewritten: its old
    form stays readable, and it is written in the new form when it is next changed."""
    steps = pending(recorded)
    if recorded >= kernel.VAULT_FORMAT or not steps:
        return None
    texts: dict[str, str | None] = dict(files)
    changed: set[str] = set()
    says: list[str] = []
    for m in steps:
        if m.says:
            says.append(m.says)
        for c in m.changes:
            hits = sorted(p for p in texts if (fnmatchcase(p, c.pattern) if is_pattern(c.pattern) else p == c.pattern))
            n = 0
            for path in hits:
                new = c.rewrite(path, texts[path], codecs)
                if new is not None:
                    texts[path] = new
                    changed.add(path)
                    n += 1
            if n:
                says.append(c.says.format(n=n, s="" if n == 1 else "s"))
    out = {p: t for p in sorted(changed) if (t := texts[p]) is not None}
    out[kernel.FORMAT_FILE] = kernel.format_text(kernel.VAULT_FORMAT)
    return Plan(recorded, kernel.VAULT_FORMAT, out, tuple(says))
