"""Rule 16: the user's word resets the decay clock."""

import subprocess
import sys


def _old_belief(mem):
    # first seen long ago, never confirmed: it has decayed far
    mem.add_belief(title="Likes tabs", statement="Indents with tabs.", kind="preference",
                   basis="behavioral", permanence="unknown")
    p = mem.root / "beliefs" / "likes-tabs.md"
    p.write_text(p.read_text().replace("first: 2026-11-30", "first: 2026-01-01"))
    mem.commit_hand_edits()


def test_api_setting_a_confidence_counts_decay_from_today(vault):
    _old_belief(vault)
    b = vault.edit_belief("likes-tabs", note="I have always used tabs", confidence=0.80)
    assert b.confirmed.isoformat() == "2026-11-30"
    assert vault.effective(vault.belief("likes-tabs")) == 0.80
    assert "I have always used tabs" in b.evidence[-1].note
    # a retitle is not the user's word on whether it holds: the clock stays
    vault.edit_belief("likes-tabs", title="Prefers tabs", note="wording")
    assert vault.belief("likes-tabs").confirmed.isoformat() == "2026-11-30"


def test_api_retitle_alone_does_not_move_the_clock(vault):
    _old_belief(vault)
    vault.edit_belief("likes-tabs", title="Prefers tabs")
    assert vault.belief("likes-tabs").confirmed is None


def test_gut_check_true_resets_the_clock(vault):
    from epimem.mirror import gutcheck

    _old_belief(vault)
    before = vault.effective(vault.belief("likes-tabs"))
    a = gutcheck.answer(vault, "likes-tabs", "true", note="yes, still")
    b = vault.belief("likes-tabs")
    assert a.confidence_after == a.confidence_before and b.confirmed.isoformat() == "2026-11-30"
    assert vault.effective(b) == b.confidence > before


def test_cli_edit_shows_the_users_number_at_once(cli, tmp_path, vault):
    _old_belief(vault)
    r = cli("--vault", vault.root, "belief", "edit", "likes-tabs", "--confidence", "0.80",
            "--note", "I have always used tabs", "--json")
    assert r.code == 0, r.err
    assert r.json()["effective_confidence"] == 0.80 and r.json()["confirmed"] == "2026-11-30"


def test_sample_vault_small_prs_is_not_decayed_after_the_users_edit(sample_vault):
    out = subprocess.run([sys.executable, "-m", "epimem", "--vault", str(sample_vault), "--today", "2026-11-01",
                          "belief", "show", "small-pull-requests", "--json"], capture_output=True, text=True)
    import json
    d = json.loads(out.stdout)
    assert d["confirmed"] == "2026-10-30" and d["effective_confidence"] >= 0.74
