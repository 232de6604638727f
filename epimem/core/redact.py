"""Secrets never reach the vault or a model: every text written or sent passes through `redact`.

The built-in patterns always apply; `redact:` in `epistemology.md` can only add patterns, never
weaken these (an edit that dropped one would let a key through without a word).

Patterns run on RE2 (`google-re2`), not Python's backtracking `re`: with `re`, the old URL
pattern took 33 s on 100 kB of one letter and would take half an hour on 1 MB, and any pattern a
user adds could do the same. RE2 runs every pattern in time linear in the text, and refuses the
constructs that cannot (lookaround, backreferences) when the pattern is read, so a slow pattern
is reported, not run. Because there is no lookahead, a pattern keeps text around the secret with
two named groups: `keep` (before it) and `tail` (after it).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

Pattern = tuple[str, str]  # (name, RE2 pattern)

BUILTIN: tuple[Pattern, ...] = (
    ("private-key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"),
    ("anthropic-key", r"sk-ant-[A-Za-z0-9_\-]{16,}"),
    ("openai-key", r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}"),
    ("stripe-key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("aws-secret-key", r"(?i)(?P<keep>\b(?:aws_?)?secret_?access_?key\b[\"']?\s*[:=]\s*)"
                       r"[\"']?[A-Za-z0-9/+=]{16,}[\"']?"),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    ("gitlab-token", r"\bgl(?:pat|ptt|dt|rt|cbt|oas)-[A-Za-z0-9_\-]{20,}"),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("bearer", r"(?i)(?P<keep>\bbearer\s+)[A-Za-z0-9_\-\.=]{16,}"),
    # `redis://:password@host` has no user name, so the user part may be empty.
    ("url-credentials", r"(?i)(?P<keep>\b[a-z][a-z0-9+.\-]*://[^\s:/@]*:)[^\s@/]+(?P<tail>@)"),
    ("password", r"(?i)(?P<keep>\b(?:password|passwd|pwd|passphrase)\b\s*(?:is|[:=])\s*)[^\s,;]+"),
    # "API key: …" and "my access key is …" in prose; `secret`/`token` only before `:` or `=`,
    # because "her secret is patience" is not a credential.
    ("api-key", r"(?i)(?P<keep>\b(?:api|access)[ _\-]?key\b\s*(?:is\s+|[:=]\s*))[\"']?[A-Za-z0-9_\-\./+=]{8,}[\"']?"),
    ("secret", r"(?i)(?P<keep>\b(?:secret|token|client[_\-]?secret|auth[_\-]?token)\b\s*[:=]\s*)"
               r"[\"']?[A-Za-z0-9_\-\./+=]{8,}[\"']?"),
)
BUILTIN_NAMES = frozenset(name for name, _ in BUILTIN)


_SURROGATE = re.compile("[\ud800-\udfff]")
_GROUP_NAME = re.compile(r"\(\?P<\w+>")


class PatternError(ValueError):
    """A pattern RE2 cannot run (or cannot run in linear time)."""


def _options():
    import re2  # google-re2; imported on first use so paths that never redact skip its load

    opts = re2.Options()
    opts.log_errors = False  # RE2 would print parse errors on stderr; we report them ourselves
    return opts


def compile_pattern(pattern: str):
    import re2

    try:
        return re2.compile(pattern, _options())
    except re2.error as e:
        msg = e.args[0].decode() if e.args and isinstance(e.args[0], bytes) else str(e)
        raise PatternError(f"{msg} (patterns must run in linear time: no lookaround or backreferences)") from None


def patterns_for(extra: tuple[Pattern, ...] = ()) -> tuple[Pattern, ...]:
    """The built-ins, then the vault's own patterns; a vault entry named like a built-in is the
    built-in's old text (vaults made before 0.2 listed them) and gives way to it."""
    return BUILTIN + tuple(p for p in extra if p[0] not in BUILTIN_NAMES)


@lru_cache(maxsize=16)
def _compiled(extra: tuple[Pattern, ...]) -> tuple[Any, tuple[tuple[str, Any], ...]]:
    """(one alternation of every pattern, to tell at once that a text has no secret; each pattern)."""
    out = []
    for name, pattern in patterns_for(extra):
        try:
            out.append((name, compile_pattern(pattern), pattern))
        except PatternError:
            continue  # reported when epistemology.md was read; never fatal for a write
    # Group names repeat across patterns (`keep`, `tail`): the alternation needs none of them.
    anyone = "|".join(f"(?:{_GROUP_NAME.sub('(?:', p)})" for _, _, p in out)
    return compile_pattern(anyone), tuple((name, rx) for name, rx, _ in out)


def holds_secret(text: str, patterns: tuple[Pattern, ...] = ()) -> bool:
    """Whether `redact` could change `text`: one linear pass of every pattern at once."""
    if not text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True  # `redact` replaces the lone surrogate
    return bool(_compiled(tuple(patterns))[0].search(text))


def anchored(patterns: tuple[Pattern, ...]) -> bool:
    """Whether a vault pattern anchors at the start or end of the text (`^`, `$`, `\\A`, `\\z`): such a
    pattern finds in one text what it would not find in the same text joined to others."""
    for _, p in patterns:
        bare = _ESCAPED.sub("", _CLASS.sub("", p))  # `[^x]` and `\$` anchor nothing
        if any(a in bare for a in ("^", "$", "\\A", "\\z")):
            return True
    return False


_CLASS = re.compile(r"\[(?:\\.|[^\]\\])*\]")
_ESCAPED = re.compile(r"\\[^Az]")


def redact(text: str, patterns: tuple[Pattern, ...] = ()) -> str:
    """`text` with every secret replaced by `[REDACTED:name]`; `patterns` are the vault's own."""
    return redacted(text, patterns)[0]


def redacted(text: str, patterns: tuple[Pattern, ...] = ()) -> tuple[str, int]:
    """(`text` redacted, how many secrets the patterns found in it): a text can change without a
    secret in it (a lone surrogate), and only a secret is reported as one."""
    if not text:
        return text, 0
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (from a broken transcript or JSON "\ud800") cannot be written as
        # UTF-8 or handed to RE2; it becomes U+FFFD like any undecodable byte.
        text = _SURROGATE.sub("\ufffd", text)
    compiled = _compiled(tuple(patterns))
    if not compiled[0].search(text):
        return text, 0  # the common case: one linear pass finds nothing
    found = 0
    values: dict[str, str] = {}  # each secret found → its pattern's name
    for name, rx in compiled[1]:
        groups = rx.groupindex

        def sub(m, name=name, groups=groups) -> str:
            keep = (m.group("keep") or "") if "keep" in groups else ""
            tail = (m.group("tail") or "") if "tail" in groups else ""
            whole = m.group(0)
            values.setdefault(whole[len(keep):len(whole) - len(tail)], name)
            return f"{keep}[REDACTED:{name}]{tail}"

        text, n = rx.subn(sub, text)
        found += n
    # A secret a pattern knows only by its context (`password: …`) may stand again in the same
    # text without it — a title and the line below it, a value copied into a note: that copy is
    # the same secret. Values too short to be told from words are left alone.
    for value, name in values.items():
        if len(value) >= MIN_REPEATED and value in text:
            found += text.count(value)
            text = text.replace(value, f"[REDACTED:{name}]")
    return text, found


MIN_REPEATED = 8


_MARK = re.compile(r"\[REDACTED:[^\]]*\]")


def only_secrets(redacted: str) -> bool:
    """Whether a redacted text said nothing but its secrets (`- sk-ant-…` in a memory file): with
    the `[REDACTED:…]` marks taken out, not a letter or a digit is left. An importer makes no
    belief of it: a belief whose statement is a redaction mark says nothing about anyone."""
    return "[REDACTED:" in redacted and not any(ch.isalnum() for ch in _MARK.sub("", redacted))
