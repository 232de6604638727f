"""Rule 18: hand edits obey the rules; a legitimate one is committed with an evidence line."""

import subprocess

import pytest


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _add(mem):
    mem.add_belief(title="Thinks out loud", statement="Talks through options before choosing.",
                   kind="trait", basis="interpretive", permanence="unknown")
    return mem.root / "beliefs" / "thinks-out-loud.md"


def test_api_an_edit_above_the_cap_is_left_out_and_reported(vault):
    p = _add(vault)
    p.write_text(p.read_text().replace("confidence: 0.2", "confidence: 0.99"))
    head = _git(vault.root, "rev-parse", "HEAD")
    sha, changes, problems = vault.commit_hand_edits()
    assert sha is None and changes == []
    [pr] = problems
    assert pr.path == "beliefs/thinks-out-loud.md" and pr.line == 5
    assert "above the cap" in pr.message and "not committed" in pr.message
    assert _git(vault.root, "rev-parse", "HEAD") == head
    assert "confidence: 0.99" in p.read_text()  # the user's text is never lost


def test_api_a_legitimate_edit_gets_an_evidence_line_and_a_named_commit(vault):
    p = _add(vault)
    p.write_text(p.read_text().replace("confidence: 0.2", "confidence: 0.45"))
    sha, changes, problems = vault.commit_hand_edits()
    assert sha and not problems
    b = vault.belief("thinks-out-loud")
    last = b.evidence[-1]
    assert last.kind == "edited" and last.note == "edited by hand: confidence 0.20 → 0.45"
    assert b.confirmed == vault.today  # rule 16
    assert _git(vault.root, "log", "-1", "--format=%s").strip() == \
        "edit: thinks-out-loud confidence 0.20 → 0.45"
    assert _git(vault.root, "status", "--porcelain").strip() == ""  # the evidence line is in the commit


def test_cli_commit_refuses_the_rule_breaker_and_commits_the_rest(cli, vault):
    p = _add(vault)
    vault.add_belief(title="Likes tabs", statement="Indents with tabs.", kind="preference",
                     basis="behavioral", permanence="durable")
    q = vault.root / "beliefs" / "likes-tabs.md"
    p.write_text(p.read_text().replace("confidence: 0.2", "confidence: 0.99"))
    q.write_text(q.read_text().replace("permanence: durable", "permanence: stable"))
    r = cli("--vault", vault.root, "commit", "--json")
    assert r.code == 0, r.err
    d = r.json()
    assert d["commit"] and [c["id"] for c in d["changes"]] == ["likes-tabs"]
    assert d["problems"][0]["path"] == "beliefs/thinks-out-loud.md"
    assert "above the cap" in r.err or "above the cap" in d["problems"][0]["message"]
    assert _git(vault.root, "status", "--porcelain").strip() == "M beliefs/thinks-out-loud.md"
    shown = cli("--vault", vault.root, "belief", "show", "likes-tabs", "--json").json()
    assert shown["evidence"][-1]["kind"] == "edited"
    assert "permanence durable → stable" in shown["evidence"][-1]["note"]
    # validate flags the same file with the same words
    v = cli("--vault", vault.root, "validate", "--json").json()
    assert v["problems"][0]["path"] == "beliefs/thinks-out-loud.md"


# --- at the write path's door: an uncommitted hand edit to a file an observation is about to
# rewrite is never swept into epimem's commit unchecked. A legitimate one is committed first,
# as `epimem commit` would; one that breaks a rule stays on disk and the observation is
# refused, so neither is lost.

OBS = {"connects": "thinks-out-loud", "strength": "complicating", "evidence": "Decided at once, no talk.",
       "session": "s1"}


def test_api_a_rule_breaking_hand_edit_refuses_the_observation_and_stays(vault):
    import pytest

    from epimem.core.errors import Conflict

    p = _add(vault)
    p.write_text(p.read_text().replace("confidence: 0.2", "confidence: 0.99"))
    head = _git(vault.root, "rev-parse", "HEAD")
    with pytest.raises(Conflict) as e:
        vault.observe([OBS])
    assert e.value.path == "beliefs/thinks-out-loud.md" and "above the cap" in e.value.message
    assert _git(vault.root, "rev-parse", "HEAD") == head  # nothing recorded
    assert "confidence: 0.99" in p.read_text()  # the user's text is kept as they left it
    # once fixed, the observation goes through, and the user's edit is its own commit
    p.write_text(p.read_text().replace("confidence: 0.99", "confidence: 0.25"))
    rep = vault.observe([OBS])
    assert rep.commit
    log = _git(vault.root, "log", "-2", "--format=%s").splitlines()
    assert log == ["observe: complicating → thinks-out-loud", "edit: thinks-out-loud confidence 0.20 → 0.25"]
    shown = _git(vault.root, "show", "HEAD", "--format=", "--", "beliefs/thinks-out-loud.md")
    assert "\n+confidence" not in shown  # the observe commit carries only what the observation changed


def test_api_a_legitimate_hand_edit_gets_its_own_commit_and_edited_line(vault):
    p = _add(vault)
    p.write_text(p.read_text().replace("permanence: unknown", "permanence: durable"))
    rep = vault.observe([OBS])
    kinds = [e.kind for e in vault.belief("thinks-out-loud").evidence]
    assert kinds[-2:] == ["edited", "complicating"]
    edit = _git(vault.root, "log", "-1", "--format=%s", f"{rep.commit}^")
    assert edit.strip() == "edit: thinks-out-loud permanence unknown → durable"
    assert _git(vault.root, "status", "--porcelain").strip() == ""


def test_cli_observe_refuses_over_a_rule_breaking_hand_edit(cli, vault):
    p = _add(vault)
    p.write_text(p.read_text().replace("confidence: 0.2", "confidence: 0.99"))
    r = cli("--vault", vault.root, "observe", "--connects", "thinks-out-loud", "--strength", "complicating",
            "--evidence", "Decided at once.", "--session", "s1")
    assert r.code != 0
    assert "beliefs/thinks-out-loud.md" in r.err and "nothing was recorded" in r.err
    assert _git(vault.root, "status", "--porcelain").strip() == "M beliefs/thinks-out-loud.md"
    assert "obs-" not in "".join(f.read_text() for f in (vault.root / "observations").glob("*.md"))


@pytest.mark.seed_rules
def test_a_hand_edit_to_another_belief_is_left_alone(vault):
    _add(vault)
    vault.add_belief(title="Likes tabs", statement="Indents with tabs.", kind="preference",
                     basis="behavioral", permanence="durable")
    q = vault.root / "beliefs" / "likes-tabs.md"
    q.write_text(q.read_text().replace("confidence: 0.3", "confidence: 0.99"))
    assert vault.observe([OBS]).commit
    assert _git(vault.root, "status", "--porcelain").strip() == "M beliefs/likes-tabs.md"
