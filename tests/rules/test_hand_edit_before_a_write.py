"""Rule 18 at the write path's door (issue 9): an uncommitted hand edit to a file an
observation is about to rewrite is never swept into epimem's commit unchecked. A legitimate
one is committed first, as `epimem commit` would; one that breaks a rule stays on disk and
the observation is refused, so neither is lost."""

import subprocess


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _add(mem):
    mem.add_belief(title="Thinks out loud", statement="Talks through options before choosing.",
                   kind="trait", basis="interpretive", permanence="unknown")
    return mem.root / "beliefs" / "thinks-out-loud.md"


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


def test_a_hand_edit_to_another_belief_is_left_alone(vault):
    _add(vault)
    vault.add_belief(title="Likes tabs", statement="Indents with tabs.", kind="preference",
                     basis="behavioral", permanence="durable")
    q = vault.root / "beliefs" / "likes-tabs.md"
    q.write_text(q.read_text().replace("confidence: 0.3", "confidence: 0.99"))
    assert vault.observe([OBS]).commit
    assert _git(vault.root, "status", "--porcelain").strip() == "M beliefs/likes-tabs.md"
