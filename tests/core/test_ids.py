"""`core.ids`: the one rule for a free id and the one rule for "the same text"."""

from epimem.core.ids import SLUG, check_id, text_key, unique_id


def test_unique_id_takes_the_first_free_suffix_without_claiming_it():
    taken = {"prefers-tea", "prefers-tea-2"}
    assert unique_id("prefers-tea", taken) == "prefers-tea-3"
    assert unique_id("prefers-coffee", taken) == "prefers-coffee"
    assert taken == {"prefers-tea", "prefers-tea-2"}  # the caller decides when the id is taken


def test_unique_id_of_a_long_base_is_still_a_slug():
    base = "a" * 79 + "b"
    check_id(base)
    bid = unique_id(base, {base[:70]})
    assert SLUG.match(bid) and bid.endswith("-2")


def test_text_key_ignores_case_punctuation_and_spacing():
    assert text_key("Prefers  small PRs!") == text_key("prefers small prs") == "prefers small prs"
    assert text_key("Don't mock the DB.") != text_key("Do mock the DB.")


def test_an_id_error_names_the_field_it_came_in():
    import pytest

    from epimem.core.errors import InputError
    from epimem.core.ids import check_tension_id

    with pytest.raises(InputError) as e:
        check_id("../etc", field="supersedes")
    assert e.value.field == "supersedes" and "invalid belief id '../etc'" in str(e.value)
    with pytest.raises(InputError) as e:
        check_tension_id("nope", field="tension_id")
    assert e.value.field == "tension_id"


def test_an_id_with_a_trailing_newline_is_not_a_slug():
    # Python's `$` also matches just before a final "\n": `^[a-z0-9]…$` took "abc\n", and an
    # import or an MCP call then named the file `beliefs/abc\n.md`.
    import pytest

    from epimem.core.errors import InputError
    from epimem.core.ids import TENSION_ID, check_tension_id

    for bad in ("abc\n", "abc\r\n", "\nabc"):
        with pytest.raises(InputError):
            check_id(bad)
        assert not SLUG.match(bad)
    with pytest.raises(InputError):
        check_tension_id("2026-11-20-abc\n")
    assert not TENSION_ID.match("2026-11-20-abc\n")
    assert check_id("abc") == "abc" and check_tension_id("2026-11-20-abc") == "2026-11-20-abc"
