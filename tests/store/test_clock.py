"""`store.clock`: the one place that says what today is."""

from datetime import date

import pytest

from epimem.store.clock import ClockError, lenient_today, today


def test_a_date_passed_in_is_today(monkeypatch):
    monkeypatch.setenv("EPIMEM_TODAY", "2026-01-01")
    assert today(date(2026, 11, 30)) == date(2026, 11, 30)
    assert today("2026-11-29") == date(2026, 11, 29)
    assert today() == date(2026, 1, 1)


def test_a_bad_override_fails_a_command_but_not_the_hook(monkeypatch):
    monkeypatch.setenv("EPIMEM_TODAY", "someday")
    with pytest.raises(ClockError, match="EPIMEM_TODAY must be a date"):
        today()
    told = []
    assert lenient_today(warn=told.append) == date.today()
    assert [str(e) for e in told] == ["EPIMEM_TODAY must be a date YYYY-MM-DD, not 'someday'"]


def test_a_bad_override_names_the_field_not_a_flag():
    import pytest

    from epimem.store.clock import ClockError, today

    with pytest.raises(ClockError) as e:
        today("2026-13-01")
    assert e.value.field == "today" and str(e.value).startswith("'today' must be a date")
