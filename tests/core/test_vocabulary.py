"""`core.vocabulary.date_of`: one reading of a day for frontmatter, the session counter and recall's filters."""

from datetime import date, datetime

import pytest

from epimem.core.vocabulary import date_of, iso


def test_date_of_reads_back_what_iso_writes():
    d = date(2026, 11, 30)
    assert date_of(iso(d), "first") == d
    assert date_of(" 2026-11-30 ", "first") == d
    assert date_of(datetime(2026, 11, 30, 9, 15), "first") == d  # YAML reads `2026-11-30 09:15` as an instant
    assert date_of(None, "first") is None and date_of("", "first") is None


def test_date_of_names_what_is_wrong():
    with pytest.raises(ValueError, match=r"^since must be a date YYYY-MM-DD, not 'yesterday'$"):
        date_of("yesterday", "since")
