"""Rule 18: hand edits obey the rules; a legitimate one is committed with an evidence line."""

import subprocess


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
