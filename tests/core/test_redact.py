"""Redaction: every format of docs/security.md's table, linear time on hostile text, vault patterns."""

from __future__ import annotations

import time

import pytest

from epimem.core.params import params_from_meta
from epimem.core.redact import BUILTIN, redact

# (text, what must disappear) for every format the built-ins catch: the table in docs/security.md.
CAUGHT = [
    ("key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123", "abcdefghijklmnopqrstuvwxyz0123"),
    ("OPENAI_API_KEY sk-proj-abcdefghijklmnopqrstuvwx1234", "abcdefghijklmnopqrstuvwx1234"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    ("restricted rk_test_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    ("id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ('"aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"', "wJalrXUtnFEMI"),
    ("ghp_" + "a" * 36, "a" * 36),
    ("github_pat_" + "B" * 40, "B" * 40),
    ("glpat-" + "x1" * 10, "x1" * 10),
    ("xoxb-1234567890-abcdefghij", "1234567890-abcdefghij"),
    ("AIza" + "C" * 35, "C" * 35),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "dozjgNryP4J3jVmNHl0w5N"),
    ("Authorization: Bearer abcdefghijklmnopqrstuv", "abcdefghijklmnopqrstuv"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA"),
    ("password=notepw1", "notepw1"),
    ("my passphrase is correct-horse-battery", "correct-horse-battery"),
    ("https://bob:hunter2pw@example.com/x", "hunter2pw"),
    ("redis://:hunter2pw@cache:6379/0", "hunter2pw"),
    ("API key: abcd1234efgh5678", "abcd1234efgh5678"),
    ("my api key is ABCDEF123456", "ABCDEF123456"),
    ("token: abcdefgh12345", "abcdefgh12345"),
    ("client_secret=9f8e7d6c5b4a", "9f8e7d6c5b4a"),
]

# Prose that looks like a secret to a careless pattern, and must be left as it is.
NOT_SECRETS = [
    "Her secret is patience.",
    "The token is expired, so she logs in again.",
    "Prefers small pull requests because reviewers read them.",
    "Reads https://example.com/docs before guessing.",
    "Uses the skeleton key metaphor a lot.",
]


@pytest.mark.parametrize("text,secret", CAUGHT, ids=[c[0][:24] for c in CAUGHT])
def test_each_format_is_caught(text, secret):
    out = redact(text)
    assert secret not in out
    assert "[REDACTED:" in out


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_prose_is_left_alone(text):
    assert redact(text) == text


def test_text_around_the_secret_is_kept():
    assert redact("see https://bob:pw12345@example.com now") == \
        "see https://bob:[REDACTED:url-credentials]@example.com now"
    assert redact("password: pw123456, then") == "password: [REDACTED:password], then"


def test_a_lone_surrogate_becomes_a_replacement_character_not_a_crash():
    assert redact("a \ud800 b password=x1234567") == "a \ufffd b password=[REDACTED:password]"


def _hostile(n: int) -> list[str]:
    """Inputs that make a backtracking engine quadratic on one pattern or another."""
    return ["a" * n, "a:" * (n // 2), "a://" * (n // 4), "x@" * (n // 2), "://:" * (n // 4),
            "password " * (n // 9), "Bearer " * (n // 7), "eyJa" * (n // 4),
            "-----BEGIN PRIVATE KEY-----" + "A" * n, "api key " * (n // 8), "sk-" * (n // 3)]


def _best(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def test_one_megabyte_is_redacted_in_linear_time():
    # Against a plain scan of the same text in the same loop, so a loaded machine slows both.
    # The old URL pattern took 33 s on 100 kB; a quadratic pattern on 1 MB takes minutes.
    n = 1_000_000
    for text in _hostile(n):
        scan = _best(lambda t=text: t.encode("utf-8").count(b"\n"))
        took = _best(lambda t=text: redact(t), repeat=1)
        assert took < max(1.0, 400 * scan), (text[:12], took, scan)


def test_time_grows_linearly_with_the_text():
    for small, big in zip(_hostile(100_000), _hostile(1_000_000)):
        # Best of five each, and a margin for a busy machine: quadratic is 100× here, and seconds.
        t_small = _best(lambda t=small: redact(t), repeat=5)
        t_big = _best(lambda t=big: redact(t), repeat=5)
        assert t_big < 40 * t_small + 0.25, (small[:12], t_small, t_big)


def test_vault_patterns_add_to_the_built_ins_and_cannot_remove_them():
    meta = {"redact": [{"name": "employee-id", "pattern": r"\bEMP-\d{6}\b"},
                       {"name": "password", "pattern": "never-matches-anything"}]}
    params, problems = params_from_meta(meta)
    assert not problems
    assert params.redact == (("employee-id", r"\bEMP-\d{6}\b"),)
    out = redact("EMP-123456 password=pw1234567", params.redact)
    assert out == "[REDACTED:employee-id] password=[REDACTED:password]"


def test_a_pattern_that_cannot_run_in_linear_time_is_reported_with_its_line_and_skipped():
    meta = {"redact": [{"name": "mine", "pattern": r"(a+)\1"}, {"name": "ok", "pattern": "zz-[0-9]{4}"},
                       {"name": "ahead", "pattern": r"x(?=y)"}, "not a mapping"]}
    params, problems = params_from_meta(meta, "epistemology.md", {"redact": 7})
    assert params.redact == (("ok", "zz-[0-9]{4}"),)
    assert [p.line for p in problems] == [7, 7, 7]
    text = " / ".join(p.message for p in problems)
    assert "entry 1 (mine)" in text and "entry 3 (ahead)" in text and "entry 4" in text
    assert "linear time" in text


def test_old_vaults_listing_the_built_ins_get_the_new_ones():
    # Vaults made before the patterns moved to RE2 list the old built-ins, lookahead and all.
    meta = {"redact": [{"name": "url-credentials", "pattern": r"(?P<keep>x://[^@]+:)[^@]+(?=@)"}]}
    params, problems = params_from_meta(meta)
    assert not problems and params.redact == ()
    assert "pw" not in redact("redis://:pw123@h", params.redact)


def test_every_built_in_compiles_and_has_a_unique_name():
    names = [n for n, _ in BUILTIN]
    assert len(names) == len(set(names))
    assert redact("nothing here") == "nothing here"


def test_a_secret_known_by_its_context_is_redacted_where_it_stands_again_alone():
    from epimem.core.redact import redacted

    text, n = redacted("# Uses tmux password: hunter2hunter2\nhunter2hunter2\n")
    assert "hunter2hunter2" not in text and n == 2
    # A short value is not hunted for elsewhere: it could be any word.
    text, _ = redacted("password: abc123\nabc123 is also a tag")
    assert "abc123 is also a tag" in text
