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
