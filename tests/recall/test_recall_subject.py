"""The subject a query names: project scopes and names, as pure functions."""

from epimem.recall.subject import SCOPE_BOOST, SUBJECT_DEMOTE, factors, name_tokens, named_scopes, scope_name

SCOPES = ["global", "billing-service", "/home/me/code/ledger-sync", "atlas-web", "go"]


def test_a_query_names_a_scope_by_its_name_with_dashes_or_spaces():
    assert named_scopes("How are deploys done in ledger-sync?", SCOPES) == {"/home/me/code/ledger-sync"}
    assert named_scopes("how does the ledger sync job deploy", SCOPES) == {"/home/me/code/ledger-sync"}
    assert named_scopes("billing-service or atlas-web: which one logs JSON?", SCOPES) == {
        "billing-service", "atlas-web"}
    # Part of a word is not a name, nor is a name shorter than three letters, nor "global".
    assert named_scopes("re-billing-services everywhere, go global", SCOPES) == set()
    assert scope_name("/home/me/code/ledger-sync/") == "ledger-sync"


def test_names_are_capitalised_words_that_do_not_start_a_sentence():
    assert name_tokens("What pet does Marcus have?") == ["marcus"]
    assert name_tokens("What is Marcus's favourite language? Lena's too.") == ["marcus"]
    assert name_tokens("Marcus said so") == []            # first word: maybe just a capital
    assert name_tokens("how do we version the API and CI?") == []   # acronyms are topics
    assert name_tokens("Ask Priya and GoLand users") == ["priya", "goland"]


def test_factors_boost_the_named_scope_and_demote_the_wrong_subject():
    cands = {"a": ("billing-service", ["marcus"]), "b": ("atlas-web", ["marcus"]), "c": ("global", []),
             "d": ("billing-service", [])}
    f = factors(cands, scopes={"billing-service"}, names=["marcus"])
    assert f == {"a": SCOPE_BOOST, "b": SUBJECT_DEMOTE, "c": SUBJECT_DEMOTE, "d": SCOPE_BOOST * SUBJECT_DEMOTE}
    # A name no candidate contains changes nothing; no subject, no factors.
    assert factors({"c": ("global", [])}, scopes=set(), names=["zed"]) == {}
    assert factors(cands, scopes=set(), names=[]) == {}
