"""The vault's format and the registry of migrations (core/formats.py, kernel's format): pure."""

from __future__ import annotations

import json

import pytest

from epimem.core import formats, kernel, merge
from epimem.store import drivers
from epimem.store import sessions as sessions_file

CODECS = formats.Codecs(sessions_file.loads, sessions_file.dump, drivers.with_attributes)
OLD_BELIEF = """---
title: Keeps pull requests small
kind: workflow
basis: behavioral
confidence: 0.45
permanence: durable
first: 2026-06-01
confirmed: 2026-07-07
challenged:
status: active
tags: [git]
scope: global
pinned: false
supersedes: []
confirmed_session: cb95da
aliases: [small PRs]
---
Splits work into small pull requests.

## Evidence
- 2026-06-01 · single — split a refactor
"""
OLD_COUNTER = json.dumps({"count": 3, "last_session": "2026-06-04", "last_review": None, "next_review_at": 10,
                          "created": "2026-06-01", "days": {"2026-06-01": 1, "2026-06-04": 2}}, indent=2) + "\n"


def test_the_registry_has_one_migration_per_format_in_order_ending_at_this_epimems():
    tos = [m.to for m in formats.MIGRATIONS]
    assert tos == list(range(2, kernel.VAULT_FORMAT + 1))
    for m in formats.MIGRATIONS:
        for c in m.changes:
            c.says.format(n=1, s="")  # every subject fragment can be said


def test_the_format_file_reads_one_number():
    assert kernel.vault_format(None) == 1
    assert kernel.vault_format(kernel.format_text(7)) == 7
    for bad in ("", "{", "[]", '{"format": "2"}', '{"format": 0}', '{"format": true}', '{"format": 2.5}'):
        with pytest.raises(ValueError):
            kernel.vault_format(bad)
    assert kernel.too_new(kernel.VAULT_FORMAT) is None and kernel.too_new(1) is None
    said = kernel.too_new(kernel.VAULT_FORMAT + 1)
    assert f"format {kernel.VAULT_FORMAT + 1}" in said and "newer epimem" in said


def test_format_1_to_2_drops_confirmed_session_and_rewrites_the_counter_touching_nothing_else():
    files = {"beliefs/small-prs.md": OLD_BELIEF,
             "beliefs/new.md": OLD_BELIEF.replace("confirmed_session: cb95da\n", ""),
             "state/sessions.json": OLD_COUNTER, ".gitattributes": None}
    plan = formats.plan(1, files, CODECS)
    assert plan.before == 1 and plan.after == kernel.VAULT_FORMAT
    assert set(plan.texts) == {"beliefs/small-prs.md", "state/sessions.json", ".gitattributes", kernel.FORMAT_FILE}
    assert plan.texts["beliefs/small-prs.md"] == OLD_BELIEF.replace("confirmed_session: cb95da\n", "")
    counter = json.loads(plan.texts["state/sessions.json"])
    assert "days" not in counter and counter["count_at_day_start"] == {"2026-06-04": 1, "2026-06-01": 0}
    assert sessions_file.loads(plan.texts["state/sessions.json"])["days"] == {"2026-06-01": 1, "2026-06-04": 2}
    assert not drivers.attributes_missing(plan.texts[".gitattributes"])
    assert kernel.vault_format(plan.texts[kernel.FORMAT_FILE]) == kernel.VAULT_FORMAT
    assert plan.subject == ("migrate: vault format 1 → 3 (confirmed_session dropped from 1 belief; the session "
                            "counter's days as count_at_day_start; .gitattributes names every merge driver; "
                            "sessions counted per machine and by id; forgotten beliefs kept as tombstones)")


def test_a_current_vault_plans_nothing_and_a_damaged_counter_is_left_alone():
    assert formats.plan(kernel.VAULT_FORMAT, {"beliefs/a.md": OLD_BELIEF}, CODECS) is None
    assert formats.pending(kernel.VAULT_FORMAT + 1) == ()
    plan = formats.plan(1, {"state/sessions.json": "{not json", ".gitattributes": drivers.ATTRIBUTES}, CODECS)
    assert set(plan.texts) == {kernel.FORMAT_FILE}
    assert plan.subject == ("migrate: vault format 1 → 3 (sessions counted per machine and by id; "
                            "forgotten beliefs kept as tombstones)")


def test_a_later_format_can_be_added_as_an_empty_step_and_the_plan_records_it(monkeypatch):
    # The hook left for the next format (the per-machine counter, whose writer converts old files
    # itself): a migration with no changes still records the new number.
    monkeypatch.setattr(kernel, "VAULT_FORMAT", kernel.VAULT_FORMAT + 1)
    monkeypatch.setattr(formats, "MIGRATIONS", formats.MIGRATIONS + (formats.Migration(kernel.VAULT_FORMAT, ()),))
    plan = formats.plan(kernel.VAULT_FORMAT - 1, {}, CODECS)
    assert plan.texts == {kernel.FORMAT_FILE: kernel.format_text(kernel.VAULT_FORMAT)}
    assert formats.plan(1, {"beliefs/a.md": OLD_BELIEF}, CODECS).after == kernel.VAULT_FORMAT


def test_two_machines_merge_to_the_newer_format():
    m = merge.merge_file(kernel.FORMAT_FILE, kernel.format_text(2), kernel.format_text(2), kernel.format_text(3))
    assert m is not None and kernel.vault_format(m.text) == 3
    assert merge.merge_file(kernel.FORMAT_FILE, "", "garbage", kernel.format_text(2)) is None
    assert "state/vault.json" in drivers.PATTERNS


def test_format_2_to_3_records_the_format_and_rewrites_nothing():
    # Format 3's writers convert the counter and write tombstones themselves; the migration only
    # records the format, so that an epimem of format 2 refuses the vault instead of dropping the
    # counter's `machines` map on its next write.
    plan = formats.plan(2, {"beliefs/a.md": OLD_BELIEF}, CODECS)
    assert plan.texts == {kernel.FORMAT_FILE: kernel.format_text(3)}
    assert plan.subject == ("migrate: vault format 2 → 3 (sessions counted per machine and by id; "
                            "forgotten beliefs kept as tombstones)")
    assert kernel.too_new(3) is None and "newer epimem" in kernel.too_new(4)
