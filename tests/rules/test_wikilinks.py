import pytest

"""SPEC §1: every reference between notes is a wikilink Obsidian's graph follows
(a tension's belief, a review's beliefs, `supersedes`); ids are read from either form."""


def test_api_tension_supersedes_and_review_are_wikilinks(vault):
    vault.add_belief(title="Likes tabs", statement="Indents with tabs.", kind="preference",
                     basis="behavioral", permanence="durable")
    t = vault.open_tension("likes-tabs", "spaces in Go")
    assert 'belief: "[[likes-tabs]]"' in (vault.root / t.path).read_text()
    assert vault.tensions()[0].belief == "likes-tabs"
    vault.add_belief(title="Indents by language", statement="Tabs in Go only.", kind="preference",
                     basis="behavioral", permanence="durable", supersedes=["likes-tabs"])
    text = (vault.root / "beliefs" / "indents-by-language.md").read_text()
    assert 'supersedes: ["[[likes-tabs]]"]' in text
    assert vault.belief("indents-by-language").supersedes == ("likes-tabs",)
    vault.record_review("gut-check", "# Gut-check · 2026-11-30\n\nAll fine.", beliefs=["indents-by-language"])
    review = (vault.root / "reviews" / "2026-11-30.md").read_text()
    assert 'beliefs: ["[[indents-by-language]]"]' in review
    assert review.count("\n# ") == 1  # one heading, not the file's and the review's
    assert vault.validate() == []


def test_cli_reads_a_hand_typed_wikilink(cli, vault):
    vault.add_belief(title="Likes tabs", statement="Indents with tabs.", kind="preference",
                     basis="behavioral", permanence="durable")
    (vault.root / "tensions" / "2026-11-30-mine.md").write_text(
        "---\ndate: 2026-11-30\nbelief: [[likes-tabs]]\nstatus: unresolved\n---\n# Mine\n")
    r = cli("--vault", vault.root, "tensions", "--json")
    assert r.code == 0 and r.json()["tensions"][0]["belief"] == "likes-tabs"
    assert cli("--vault", vault.root, "validate").code == 0


def _old_vault(vault):
    """Notes as an epimem before wikilinks wrote them, committed."""
    import subprocess

    vault.add_belief(title="Likes tabs", statement="Indents with tabs.", kind="preference",
                     basis="behavioral", permanence="durable")
    vault.add_belief(title="Indents by language", statement="Tabs in Go only.", kind="preference",
                     basis="behavioral", permanence="durable", supersedes=["likes-tabs"])
    t = vault.open_tension("indents-by-language", "spaces in YAML")
    vault.record_review("gut-check", "# Gut-check · 2026-11-30\n\nAll fine.", beliefs=["likes-tabs"])
    root = vault.root
    for rel, old, new in (("beliefs/indents-by-language.md", 'supersedes: ["[[likes-tabs]]"]',
                           "supersedes: [likes-tabs]"),
                          (t.path, 'belief: "[[indents-by-language]]"', "belief: indents-by-language"),
                          ("reviews/2026-11-30.md", 'beliefs: ["[[likes-tabs]]"]', "beliefs: [likes-tabs]")):
        p = root / rel
        assert old in p.read_text(), rel
        p.write_text(p.read_text().replace(old, new))
    subprocess.run(["git", "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qam", "by an older epimem"],
                   cwd=root, check=True)
    return [t.path, "beliefs/indents-by-language.md", "reviews/2026-11-30.md"]


def test_api_old_bare_ids_are_listed_and_upgraded_in_one_commit(vault):
    import subprocess

    paths = _old_vault(vault)
    assert sorted(vault.bare_links()) == sorted(paths)
    sha, fixed = vault.upgrade_links()
    assert sha and sorted(fixed) == sorted(paths)
    log = subprocess.run(["git", "log", "-1", "--format=%s%n%b", "--name-only"], cwd=vault.root,
                         capture_output=True, text=True).stdout
    assert log.startswith("upgrade: 3 notes name beliefs as [[wikilinks]]")
    assert 'supersedes: ["[[likes-tabs]]"]' in (vault.root / "beliefs/indents-by-language.md").read_text()
    assert 'belief: "[[indents-by-language]]"' in (vault.root / paths[0]).read_text()
    assert 'beliefs: ["[[likes-tabs]]"]' in (vault.root / "reviews/2026-11-30.md").read_text()
    assert vault.bare_links() == [] and vault.upgrade_links() == (None, [])
    assert vault.belief("indents-by-language").supersedes == ("likes-tabs",)
    assert vault.validate() == []


def test_cli_validate_says_so_and_fix_migrates(cli, vault):
    _old_vault(vault)
    r = cli("--vault", vault.root, "validate")
    assert r.code == 0 and "3 notes written before name beliefs by bare id" in r.out and "--fix" in r.out
    r = cli("--vault", vault.root, "validate", "--fix", "--json")
    assert r.code == 0 and len(r.json()["fixed"]) == 3 and r.json()["commit"]
    r = cli("--vault", vault.root, "validate")
    assert r.code == 0 and "bare id" not in r.out


@pytest.mark.seed_rules
def test_fix_does_not_sweep_a_rule_breaking_hand_edit_along(vault):
    import pytest

    from epimem.core.errors import Conflict

    _old_vault(vault)
    p = vault.root / "beliefs/indents-by-language.md"
    p.write_text(p.read_text().replace("confidence: 0.3", "confidence: 0.99"))
    with pytest.raises(Conflict, match="beliefs/indents-by-language.md"):
        vault.upgrade_links()
    assert "confidence: 0.99" in p.read_text() and "supersedes: [likes-tabs]" in p.read_text()
