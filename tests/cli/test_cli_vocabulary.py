"""One JSON vocabulary: the same concept has the same name and type in every command's --json,
budgets are tokens and say so in the flag, and no input flag is called --json (docs/cli.md)."""

from __future__ import annotations

import json
import re
from datetime import date

import pytest

from epimem.core import vocabulary as vocab

ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# The fields a belief has wherever it is shown, with their type.
BELIEF_FIELDS = {"id": str, "title": str, "kind": str, "permanence": str, "tier": str,
                 "confidence": float, "effective_confidence": float}


def _typed(d: dict, fields=BELIEF_FIELDS) -> None:
    for name, t in fields.items():
        assert isinstance(d[name], t), (name, d[name])


@pytest.mark.usefixtures("clean_recall_env")
def test_belief_show_list_recall_and_mirror_agree_on_names_and_values(cli, sample_vault):
    v = sample_vault
    recalled = cli("--vault", v, "recall", "small pull requests", "--json", "--limit", "3").json()["results"]
    listed = {b["id"]: b for b in cli("--vault", v, "belief", "list", "--json").json()["beliefs"]}
    audit = cli("--vault", v, "mirror", "audit", "--json").json()
    assert recalled and audit["top"]
    for hit in recalled:
        shown = cli("--vault", v, "belief", "show", hit["id"], "--json").json()
        for d in (shown, listed[hit["id"]], hit):
            _typed(d)
        for name in BELIEF_FIELDS:
            assert shown[name] == listed[hit["id"]][name] == hit[name], name
    for view in audit["top"] + audit["bottom"]:
        shown = cli("--vault", v, "belief", "show", view["id"], "--json").json()
        # What the mirror already shares with the CLI (its stored/effective are renamed by the lead:
        # docs/mirror.md, "Names").
        for name in ("id", "title", "kind", "basis", "permanence", "tier", "first", "confirmed", "challenged",
                     "pinned", "tags"):
            assert view[name] == shown[name], name
        for name in ("first", "confirmed", "challenged"):
            assert shown[name] is None or ISO_DATE.match(shown[name])


def test_review_due_is_a_bool_with_its_reason_beside_it(cli, sample_vault):
    r = cli("--vault", sample_vault, "session", "start", "--json").json()
    assert isinstance(r["review_due"], bool) and isinstance(r["dormant"], bool)
    assert (r["review_reason"] is not None) == r["review_due"]
    assert (r["dormant_days"] is not None) == r["dormant"]
    assert vocab.review(None) == {"review_due": False, "review_reason": None}
    assert vocab.review("32 days since the last review")["review_due"] is True


def test_confidence_changes_and_ids_are_spelled_once(cli, sample_vault):
    v = sample_vault
    bid = cli("--vault", v, "belief", "list", "--json").json()["beliefs"][0]["id"]
    obs = [{"connects": bid, "strength": "complicating", "evidence": "Did it the other way this once.",
            "session": "vocab-1"}]
    r = cli("--vault", v, "observe", "--input", "-", "--json", stdin=json.dumps(obs)).json()
    o = r["observations"][0]
    assert {"confidence_before", "confidence_after", "id", "belief"} <= set(o)
    a = cli("--vault", v, "mirror", "answer", bid, "--verdict", "unsure", "--json").json()
    assert {"confidence_before", "confidence_after", "belief"} <= set(a)
    assert a["confidence_before"] == a["confidence_after"] == cli("--vault", v, "belief", "show", bid,
                                                                  "--json").json()["confidence"]
    # diff and commit say a change with the same object
    diff = cli("--vault", v, "diff", "--since", "HEAD~1", "--json").json()["changes"]
    assert diff and set(diff[0]) == {"what", "id", "action", "details", "text"}
    (v / "beliefs" / f"{bid}.md").write_text((v / "beliefs" / f"{bid}.md").read_text().replace(
        "\n---\n", "\n---\nA hand-written line.\n", 1))
    committed = cli("--vault", v, "commit", "--json").json()
    assert committed["changes"] and set(committed["changes"][0]) == set(diff[0])
    h = cli("--vault", v, "history", bid, "--json").json()["history"]
    assert all(isinstance(p["commit"], str) and date.fromisoformat(p["date"][:10]) for p in h)
    tension = cli("--vault", v, "tensions", "--json").json()["tensions"][0]
    assert ISO_DATE.match(tension["date"]) and isinstance(tension["belief"], str)


def test_observe_reads_a_batch_with_input_and_prints_json_only_when_asked(cli, sample_vault, tmp_path):
    v = sample_vault
    bid = cli("--vault", v, "belief", "list", "--json").json()["beliefs"][0]["id"]
    batch = json.dumps([{"connects": bid, "strength": "single", "evidence": "Seen once, for the vocabulary.",
                         "session": "vocab-2"}])
    r = cli("--vault", v, "observe", "--input", "-", stdin=batch)
    assert r.code == 0 and r.out.startswith("obs-") and not r.out.startswith("{")
    f = tmp_path / "batch.json"
    f.write_text(batch)
    r = cli("--vault", v, "observe", "--input", f, "--json")
    assert r.code == 0 and r.json()["observations"][0]["duplicate"] is True
    # The old spelling, as skills installed by an older epimem still write it: it works, and says so.
    r = cli("--vault", v, "observe", "--json", "-", stdin=batch)
    assert r.code == 0 and r.json()["observations"][0]["duplicate"] is True
    assert "deprecated" in r.err and "--input" in r.err
    r = cli("--vault", v, "observe", "stray")
    assert r.code == 2 and "--input FILE|-" in r.err


def _options():
    """Every (command, option) of the CLI, from the one declaration."""
    from epimem.cli.registry import load_all
    from epimem.cli.spec import COMMANDS

    load_all()
    for path, cmd in COMMANDS.items():
        for o in cmd.options:
            if not o.positional:
                yield " ".join(path), o


def test_every_json_option_is_an_output_switch_and_budgets_name_their_unit():
    opts = list(_options())
    json_opts = [(c, p) for c, p in opts if "--json" in p.flags]
    assert len(json_opts) > 20
    for c, p in json_opts:
        assert p.is_flag, f"`{c} --json` takes a value"
    for c, p in opts:
        if any("budget" in o for o in p.flags) and not p.hidden:
            assert p.flags == ("--budget-tokens",), (c, p.flags)
        assert not {"--output-json", "--report-json"} & set(p.flags), c
    budgeted = {c for c, p in opts if "--budget-tokens" in p.flags}
    assert budgeted == {"recall", "skill recall", "hook session-start", "skill observe"}


@pytest.mark.usefixtures("clean_recall_env")
def test_recall_budget_tokens_and_its_old_spelling_agree(cli, sample_vault):
    new = cli("--vault", sample_vault, "recall", "how do they work", "--budget-tokens", "80")
    old = cli("--vault", sample_vault, "recall", "how do they work", "--budget", "80")
    assert new.code == old.code == 0 and new.out == old.out and new.out.strip()


def test_hook_budget_is_tokens_with_the_character_forms_deprecated(monkeypatch, tmp_path):
    from epimem.api import context
    from epimem.claude import hook

    monkeypatch.setattr(hook, "_log_root", str(tmp_path))
    monkeypatch.delenv("EPIMEM_HOOK_BUDGET", raising=False)
    monkeypatch.delenv("EPIMEM_HOOK_BUDGET_TOKENS", raising=False)
    assert hook._budget() == hook.DEFAULT_BUDGET == context.DEFAULT_BUDGET_TOKENS * context.CHARS_PER_TOKEN
    assert hook._budget(tokens="200") == 200 * hook.CHARS_PER_TOKEN
    assert hook._budget(tokens="100000") == hook.MAX_CHARS
    monkeypatch.setenv("EPIMEM_HOOK_BUDGET_TOKENS", "100")
    assert hook._budget() == 100 * hook.CHARS_PER_TOKEN
    assert hook._budget(tokens="50") == 50 * hook.CHARS_PER_TOKEN  # the flag wins
    monkeypatch.delenv("EPIMEM_HOOK_BUDGET_TOKENS")
    assert hook._budget(chars="600") == 600  # characters, as before
    monkeypatch.setenv("EPIMEM_HOOK_BUDGET", "700")
    assert hook._budget() == 700
    log = (tmp_path / ".epimem" / "hook.log").read_text()
    assert "--budget (characters) is deprecated" in log and "EPIMEM_HOOK_BUDGET (characters) is deprecated" in log
    assert hook._budget(tokens="lots") == hook.DEFAULT_BUDGET


def test_similar_beliefs_say_why_with_recalls_object():
    from epimem.recall.api import _similar_json
    from epimem.recall.rank import Hit

    h = Hit(id="small-prs", type="belief", title="Small PRs", score=0.03, effective_confidence=0.6,
            keyword_terms=("small",), keyword_rank=1, semantic_rank=2, semantic_similarity=0.61)
    assert _similar_json(h)["why"] == h.as_json()["why"]
    assert _similar_json(h)["similarity"] == 0.61


def test_vocabulary_rounds_and_dates_once():
    assert vocab.confidence(0.30000000004) == 0.3 and vocab.effective_confidence(0.123456) == 0.123
    assert vocab.confidence(None) is None and vocab.iso(None) is None
    assert vocab.iso(date(2026, 11, 30)) == "2026-11-30"
    assert vocab.dormancy(40) == {"dormant": True, "dormant_days": 40}
    assert vocab.confidence_change(0.3, 0.35) == {"confidence_before": 0.3, "confidence_after": 0.35}
