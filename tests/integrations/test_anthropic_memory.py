"""The Claude API's memory tool over a vault (SPEC §15, issue 29 item 1), driven by the real
anthropic SDK's tool runner against a mock Messages API on loopback.

Every command's happy path, and each way a careless or sycophantic model could try to get
around the rules through the six commands it has: set a confidence, mint a fact, pump a belief
with repeated writes, delete or rename a belief, date evidence, or leave /memories."""

from __future__ import annotations

import json
import subprocess

import pytest
from memtool_support import NUMBER, converse, head, tree_bytes

from epimem.core.params import DEFAULTS
from epimem.integrations.anthropic_memory import EpimemMemoryTool

TODAY = "2026-11-30"  # the tests' replayed day (tests/conftest.py)
TABS = "/memories/beliefs/prefers-tabs.md"
# A behavioural belief starts and climbs by the rules' parameters (a fresh vault's defaults).
START, STEP = DEFAULTS.start["behavioral"], DEFAULTS.confirm_step
TIER = DEFAULTS.tier(START, "behavioral")


def after(steps: int) -> float:
    return round(START + steps * STEP, 2)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    from vaults import new_vault

    m = new_vault(tmp_path_factory.mktemp("memtool") / "vault", today=TODAY)
    m.add_belief(title="Prefers tabs", statement="Indents with tabs, not spaces.", kind="preference",
                 basis="behavioral", permanence="durable", belief_id="prefers-tabs")
    m.add_belief(title="Prefers small pull requests", statement="Splits work into small reviewable PRs.",
                 kind="workflow", basis="behavioral", permanence="durable", confidence=0.75,
                 belief_id="prefers-small-prs")
    return m.root


@pytest.fixture
def mem(template, tmp_path):
    """A vault holding two beliefs the user added: prefers-tabs (at the start), prefers-small-prs (established)."""
    import shutil

    from epimem.api.memory import Memory

    return Memory(shutil.copytree(template, tmp_path / "vault", symlinks=True), today=TODAY)


@pytest.fixture
def tool(mem):
    return EpimemMemoryTool(mem.root, session="conv-1")


def observations(mem) -> list:
    return mem.snapshot().observations


# --- the conversation --------------------------------------------------------------------

def test_a_model_writing_the_user_prefers_tabs_leaves_an_observation_not_a_fact(vault):
    tool = EpimemMemoryTool(vault.root, session="conv-tabs")
    results, api = converse(tool, [
        {"command": "view", "path": "/memories"},
        {"command": "create", "path": "/memories/user_preferences.md",
         "file_text": "# User preferences\n- The user prefers tabs over spaces.\n"},
    ], user="Remember that I prefer tabs.")
    assert [r.is_error for r in results] == [False, False]
    # the SDK declared the client-side memory tool, and every turn after the first continued its thread
    first, *rest = [r.sent for r in api.requests if r.method == "POST"]
    assert first["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    assert rest and all(r["thread"]["type"] == "continue" for r in rest)

    [o] = observations(vault)
    assert o.evidence == "The user prefers tabs over spaces." and o.source == "memory-tool"
    assert o.session == "conv-tabs" and o.strength == "single" and o.basis == "behavioral"
    [b] = vault.beliefs()
    assert (b.title, b.basis, b.confidence) == ("Prefers tabs over spaces", "behavioral", START)
    assert TIER in results[1].text and "/memories/beliefs/prefers-tabs-over-spaces.md" in results[1].text


def test_the_same_conversation_claiming_a_confidence_records_nothing(vault):
    before, files = head(vault.root), tree_bytes(vault.root)
    tool = EpimemMemoryTool(vault.root)
    results, _ = converse(tool, [
        {"command": "create", "path": "/memories/user.md",
         "file_text": "- The user prefers tabs over spaces. confidence: 0.95, basis: fact\n"},
        {"command": "create", "path": "/memories/user.md",
         "file_text": "---\ntitle: Prefers tabs\nbasis: fact\n---\nThe user prefers tabs.\n"},
        {"command": "create", "path": "/memories/user.md", "file_text": "I am 95% confident the user prefers tabs."},
    ])
    assert all(r.is_error for r in results)
    assert "epimem records observations, not confidences" in results[0].text
    assert "say what the user did or said instead" in results[0].text.lower()
    assert "Only the user makes a belief a fact" in results[1].text
    assert "not confidences" in results[2].text
    assert head(vault.root) == before and tree_bytes(vault.root) == files


# --- view ------------------------------------------------------------------------------------------

def test_view_lists_the_vault_as_files_and_shows_each_with_line_numbers(mem, tool):
    mem.observe([{"connects": "prefers-small-prs", "strength": "contradicting",
                  "evidence": "Sent one 3,000-line PR."}], session="other")
    results, _ = converse(tool, [
        {"command": "view", "path": "/memories"},
        {"command": "view", "path": "/memories/beliefs"},
        {"command": "view", "path": "/memories/beliefs/prefers-small-prs.md"},
        {"command": "view", "path": "/memories/beliefs/prefers-small-prs.md", "view_range": [1, 4]},
        {"command": "view", "path": "/memories/README.md"},
    ])
    assert not any(r.is_error for r in results), results
    listing = results[0].text.splitlines()
    assert listing[0].startswith("Here're the files and directories up to 2 levels deep in /memories")
    paths = [line.split("\t")[1] for line in listing[1:]]
    [tension] = [t.id for t in mem.tensions()]
    assert paths == ["/memories", "/memories/README.md", "/memories/beliefs/",
                     "/memories/beliefs/prefers-small-prs.md", "/memories/beliefs/prefers-tabs.md",
                     "/memories/context.md", "/memories/tensions/", f"/memories/tensions/{tension}.md"]
    assert [line.split("\t")[1] for line in results[1].text.splitlines()[1:]] == [
        "/memories/beliefs", "/memories/beliefs/prefers-small-prs.md", "/memories/beliefs/prefers-tabs.md"]
    shown = results[2].text
    assert shown.splitlines()[0] == "Here's the content of /memories/beliefs/prefers-small-prs.md with line numbers:"
    assert shown.splitlines()[1] == "     1\t# Prefers small pull requests"
    assert "- confidence: established — held firmly" in shown
    assert "contradicting — Sent one 3,000-line PR." in shown
    # confidence in words only: no figure the model could copy back as a setting
    assert not NUMBER.search(shown) and "0.75" not in shown
    assert results[3].text.splitlines()[1:] == [
        "     1\t# Prefers small pull requests", "     2\t", "     3\t- belief: prefers-small-prs",
        "     4\t- confidence: established — held firmly: behaviour has fitted it again and again"]
    assert "At most 3 observations" in results[4].text.replace("\n", " ")


def test_a_listing_names_the_strongest_and_counts_the_rest(mem, tool, monkeypatch):
    # A vault of 10,000 beliefs listed whole is 0.8 MB of tool result; the model gets the strongest.
    from epimem.integrations import anthropic_memory

    monkeypatch.setattr(anthropic_memory, "ROOT_LISTED", 1)
    monkeypatch.setattr(anthropic_memory, "FOLDER_LISTED", 1)
    results, _ = converse(tool, [{"command": "view", "path": "/memories"},
                                 {"command": "view", "path": "/memories/beliefs"},
                                 {"command": "view", "path": TABS}])
    root, folder = results[0].text.splitlines(), results[1].text.splitlines()
    assert any(line.endswith("\t/memories/beliefs/prefers-small-prs.md") for line in root)
    assert not any("prefers-tabs.md" in line for line in root + folder)  # the weaker one
    assert "(and 1 more in /memories/beliefs/: view it to list more)" in root
    assert folder[-1].startswith("(and 1 weaker belief, not listed: /memories/context.md names")
    assert not results[2].is_error  # a file not listed is there all the same


def test_context_md_is_what_a_session_starts_with(mem, tmp_path):
    from datetime import date

    from epimem.api.context import session_context

    mem.add_belief(title="Runs the billing tests first", statement="In billing, runs its tests before a change.",
                   kind="workflow", basis="behavioral", permanence="durable", scope="billing", confidence=0.6)
    project = tmp_path / "code" / "billing"
    project.mkdir(parents=True)
    results, _ = converse(EpimemMemoryTool(mem.root, project=str(project)), [
        {"command": "view", "path": "/memories/context.md"},
        {"command": "view", "path": "/memories/beliefs"}])
    shown = results[0].text
    expected = session_context(str(mem.root), str(project), date.fromisoformat(TODAY))
    assert shown.split("\n", 1)[1] == "\n".join(f"{n + 1:>6}\t{line}" for n, line in enumerate(
        (expected + "\n").split("\n")))  # a file ends with a newline
    assert "For this project (billing):" in shown and "(developing) Runs the billing tests first" in shown
    elsewhere, _ = converse(EpimemMemoryTool(mem.root, project="webshop"),
                            [{"command": "view", "path": "/memories/beliefs"}])
    assert "runs-the-billing-tests-first.md" in results[1].text
    assert "runs-the-billing-tests-first.md" not in elsewhere[0].text  # another project's belief


def test_view_of_a_tension_and_of_what_is_not_there(mem, tool):
    mem.observe([{"connects": "prefers-tabs", "strength": "contradicting", "evidence": "Used spaces in a new repo."}],
                session="other")
    [t] = mem.tensions()
    results, _ = converse(tool, [
        {"command": "view", "path": f"/memories/tensions/{t.id}.md"},
        {"command": "view", "path": "/memories/beliefs/no-such-belief.md"},
        {"command": "view", "path": "/memories/epistemology.md"},
        {"command": "view", "path": "/memories/beliefs/prefers-tabs.md", "view_range": [50, 60]},
    ])
    assert not results[0].is_error
    assert "about: /memories/beliefs/prefers-tabs.md (“Prefers tabs”)" in results[0].text
    assert "Used spaces in a new repo." in results[0].text
    assert all(r.is_error for r in results[1:])
    assert "does not exist" in results[1].text and "does not exist" in results[2].text
    assert "Invalid `view_range`" in results[3].text


ESCAPES = ["/memories/../epistemology.md", "/memories/beliefs/../../epistemology.md", "/memories/./README.md",
           "/etc/passwd", "memories/README.md", "/memoriesX/a.md", "/memories\\..\\epistemology.md",
           "/memories/beliefs/\x00.md", "", "../../etc/passwd", "/memories/beliefs/../prefers-tabs.md"]


def test_no_path_leaves_the_vault(mem):
    files = tree_bytes(mem.root)
    calls = []
    for path in ESCAPES:
        calls += [{"command": "view", "path": path},
                  {"command": "create", "path": path, "file_text": "- The user prefers spaces."},
                  {"command": "str_replace", "path": path, "old_str": "a", "new_str": "b"},
                  {"command": "delete", "path": path},
                  {"command": "rename", "old_path": TABS, "new_path": path},
                  {"command": "rename", "old_path": path, "new_path": TABS}]
    results, _ = converse(EpimemMemoryTool(mem.root), calls)
    for call, r in zip(calls, results):
        assert r.is_error, (call, r)
        assert "lambda" not in r.text and "decay" not in r.text, (call, r)  # nothing of epistemology.md
    assert sum("would escape /memories" in r.text for r in results) >= 4 * 6
    assert tree_bytes(mem.root) == files and len(mem.tensions()) == 0


# --- create, str_replace, insert: observations --------------------------------------------------

def test_create_proposes_new_beliefs_one_observation_each(vault):
    tool = EpimemMemoryTool(vault.root)
    results, _ = converse(tool, [
        {"command": "create", "path": "/memories/editor.md",
         "file_text": "# Editor\n- Uses vim keybindings everywhere.\n- kind: preference\n"
                      "- Said they never use a mouse for editing (said)\n"},
        {"command": "create", "path": "/memories/notes/testing.md",
         "file_text": "# Writes the test first\nOpened the test file before the code, both times.\n"},
    ])
    assert [r.is_error for r in results] == [False, False], results
    by_title = {b.title: b for b in vault.beliefs()}
    assert set(by_title) == {"Uses vim keybindings everywhere", "Said they never use a mouse for editing (said)",
                             "Writes the test first"}
    assert by_title["Uses vim keybindings everywhere"].kind == "preference"
    assert all(b.confidence == START and b.basis == "behavioral" for b in by_title.values())
    assert len(observations(vault)) == 3


def test_said_and_inferred_set_the_basis_of_what_is_added(mem, tool):
    results, _ = converse(tool, [
        {"command": "insert", "path": TABS, "insert_line": 0,
         "insert_text": "confirming (said): said tabs are the only sane choice"},
    ])
    assert not results[0].is_error, results
    [o] = observations(mem)
    assert (o.strength, o.basis, o.connects) == ("confirming", "self-report", "prefers-tabs")
    assert mem.belief("prefers-tabs").confidence == START  # what the user says restates, it does not confirm
    assert "no change" in results[0].text


def test_str_replace_and_insert_add_evidence_to_a_belief(mem, tool):
    results, _ = converse(tool, [
        {"command": "str_replace", "path": TABS, "old_str": "## Evidence",
         "new_str": "## Evidence\nconfirming: reformatted utils.py with tabs without being asked"},
        {"command": "insert", "path": TABS, "insert_line": 3,
         "insert_text": "complicating: keeps spaces in YAML files"},
    ])
    assert [r.is_error for r in results] == [False, False], results
    assert "moved up a step" in results[0].text and f"{DEFAULTS.tier(after(1), 'behavioral')} now" in results[0].text
    assert not NUMBER.search(results[0].text)
    obs = observations(mem)
    assert [(o.strength, o.connects) for o in obs] == [("confirming", "prefers-tabs"), ("complicating", "prefers-tabs")]
    assert mem.belief("prefers-tabs").confidence == after(1)


def test_a_new_belief_like_an_old_one_is_not_created(mem, tool):
    results, _ = converse(tool, [
        {"command": "create", "path": "/memories/style.md", "file_text": "- Prefers tabs."},
        {"command": "create", "path": "/memories/style.md", "file_text": "- Prefers tabs.\nnew despite similar: yes"},
    ])
    assert results[0].is_error is False  # a result, not an error: the model is told where to add it
    assert "Nothing was recorded" in results[0].text and TABS in results[0].text
    assert "new despite similar: yes" in results[0].text
    assert {b.id for b in mem.beliefs()} == {"prefers-tabs", "prefers-small-prs", "prefers-tabs-2"}


EDITS = [
    (f"- confidence: {TIER}", "- confidence: factual", "not confidences"),
    ("# Prefers tabs", "# Prefers tabs, always", "wording is the user's"),
    ("Indents with tabs, not spaces.", "Indents with tabs, never spaces.", "wording is the user's"),
    ("- basis: behavioral", "- basis: fact", "only the user makes a"),
    ("- last confirmed: never", "- last confirmed: 2026-11-29", "dates evidence the day it is recorded"),
    ("- first seen: 2026-11-30", "- first seen: 2020-01-01", "dates evidence the day it is recorded"),
    ("- permanence: durable", "- permanence: stable", "permanence is the user's"),
    ("- kind: preference", "- kind: fact", "kind is the user's"),
    ("- belief: prefers-tabs\n", "", "epimem's own view"),
    ("Only evidence moves its confidence", "Evidence and the model move it", "epimem's own view"),
]


def test_an_edit_of_what_the_file_says_is_refused_saying_why(mem, tool):
    before, files = head(mem.root), tree_bytes(mem.root)
    results, _ = converse(tool, [{"command": "str_replace", "path": TABS, "old_str": old, "new_str": new}
                                 for old, new, _ in EDITS])
    for (old, _, says), r in zip(EDITS, results):
        assert r.is_error and says in r.text.lower().replace("“", "").replace("”", ""), (old, r.text)
        assert "nothing was recorded" in r.text.lower(), (old, r.text)
    assert head(mem.root) == before and tree_bytes(mem.root) == files


def test_evidence_on_record_cannot_be_removed(mem, tool):
    mem.observe([{"connects": "prefers-tabs", "strength": "complicating", "evidence": "Used spaces once."}],
                session="other")
    files = tree_bytes(mem.root)
    results, _ = converse(tool, [
        {"command": "str_replace", "path": TABS, "old_str": "complicating — Used spaces once.\n", "new_str": ""},
    ])
    assert results[0].is_error and "Evidence stays on record" in results[0].text
    assert tree_bytes(mem.root) == files


def test_what_str_replace_and_insert_get_wrong_is_said_as_the_sdk_says_it(mem, tool):
    results, _ = converse(tool, [
        {"command": "str_replace", "path": TABS, "old_str": "not in the file", "new_str": "x"},
        {"command": "str_replace", "path": TABS, "old_str": "- ", "new_str": "* "},
        {"command": "insert", "path": TABS, "insert_line": 999, "insert_text": "confirming: x"},
        {"command": "insert", "path": "/memories/README.md", "insert_line": 0, "insert_text": "confirming: x"},
        {"command": "insert", "path": TABS, "insert_line": 0, "insert_text": "\n\n"},
        {"command": "create", "path": TABS, "file_text": "- The user prefers tabs."},
        {"command": "create", "path": "/memories/tensions/x.md", "file_text": "- The user prefers tabs."},
    ])
    assert all(r.is_error for r in results), results
    assert "did not appear verbatim" in results[0].text
    assert "Multiple occurrences" in results[1].text
    assert "Invalid `insert_line`" in results[2].text and "[0, " in results[2].text
    assert "epimem's own view" in results[3].text
    assert "holds no observation" in results[4].text
    assert "already exists" in results[5].text
    assert "contradicting: …" in results[6].text
    assert observations(mem) == ()


# --- delete and rename: proposals for the user ------------------------------------------------------

def test_delete_proposes_retiring_and_retires_nothing(mem, tool):
    text_before = (mem.root / "beliefs/prefers-tabs.md").read_bytes()
    results, _ = converse(tool, [{"command": "delete", "path": TABS}, {"command": "delete", "path": TABS}])
    assert [r.is_error for r in results] == [False, False]
    assert "Nothing was deleted" in results[0].text and "already proposed" in results[1].text
    [t] = mem.tensions()
    assert (t.belief, t.status) == ("prefers-tabs", "unresolved")
    assert "epimem belief retire prefers-tabs" in t.suggests
    assert (mem.root / "beliefs/prefers-tabs.md").read_bytes() == text_before
    assert mem.belief("prefers-tabs").status == "active"
    # the user's word settles it, as any open question
    from epimem.mirror.gutcheck import answer

    answer(mem, "prefers-tabs", "false", retire=True, note="not any more")
    assert mem.belief("prefers-tabs").status == "retired" and mem.tensions()[0].status == "resolved"


def test_rename_proposes_supersession_or_a_wording_and_renames_nothing(mem, tool):
    files = {p: b for p, b in tree_bytes(mem.root).items() if p.startswith("beliefs/")}
    results, _ = converse(tool, [
        {"command": "rename", "old_path": TABS, "new_path": "/memories/beliefs/prefers-small-prs.md"},
        {"command": "rename", "old_path": TABS, "new_path": "/memories/beliefs/prefers-tabs-except-in-yaml.md"},
        {"command": "rename", "old_path": TABS, "new_path": "/memories/archive/prefers-tabs.md"},
        {"command": "rename", "old_path": "/memories/README.md", "new_path": "/memories/beliefs/readme.md"},
    ])
    assert [r.is_error for r in results] == [False, False, True, True], results
    assert {p: b for p, b in tree_bytes(mem.root).items() if p.startswith("beliefs/")} == files
    asks = sorted(t.title for t in mem.tensions())
    assert asks == ["Has “Prefers tabs” become “Prefers small pull requests”?",
                    "Is “Prefers tabs” better worded “Prefers tabs except in yaml”?"]
    assert any("epimem belief supersede prefers-tabs --by prefers-small-prs" in t.suggests for t in mem.tensions())


def test_a_rename_onto_a_document_long_name_proposes_nothing(mem, tool):
    # The new name becomes the proposed wording: without a bound, one call wrote a tension whose
    # title (three times over: the question, what happened, the command) was a whole document.
    files = tree_bytes(mem.root)
    name = "the-user-said-many-things-" * 400  # 10,400 characters, over an observation's 4,000
    results, _ = converse(tool, [{"command": "rename", "old_path": TABS, "new_path": f"/memories/beliefs/{name}.md"}])
    assert results[0].is_error and "4,000" in results[0].text, results
    assert tree_bytes(mem.root) == files and mem.tensions() == []


def test_folders_and_views_are_not_deleted(mem, tool):
    files = tree_bytes(mem.root)
    paths = ["/memories", "/memories/", "/memories/beliefs", "/memories/README.md", "/memories/tensions"]
    results, _ = converse(tool, [{"command": "delete", "path": p} for p in paths])
    for p, r in zip(paths, results):
        assert r.is_error and ("Nothing was done" in r.text or "nothing to delete" in r.text), (p, r)
    assert tree_bytes(mem.root) == files


# --- a sycophantic model -------------------------------------------------------------------------

def test_repeated_writes_in_one_conversation_move_a_belief_one_step(mem, tool):
    calls = [{"command": "insert", "path": TABS, "insert_line": 0,
              "insert_text": f"confirming: used tabs in file {n}"} for n in range(5)]
    calls.append({"command": "create", "path": "/memories/more.md",
                  "file_text": "- Prefers tabs in Go.\n- Prefers tabs in C.\n- Prefers tabs in Make."})
    results, _ = converse(tool, calls)
    assert [r.is_error for r in results] == [False, False, False, True, True, True]
    assert "at most 3 per session (rule 9)" in results[3].text
    assert mem.belief("prefers-tabs").confidence == after(1)
    assert len(observations(mem)) == 3


def test_made_up_conversations_take_a_belief_one_step_a_day(mem):
    for n in range(5):
        results, _ = converse(EpimemMemoryTool(mem.root, session=f"made-up-{n}"), [
            {"command": "insert", "path": TABS, "insert_line": 0, "insert_text": f"confirming: used tabs ({n})"}])
        # each tool is a conversation the app names: a session of its own for rule 9 (SPEC §9)
        assert not results[0].is_error, results[0].text
    assert mem.belief("prefers-tabs").confidence == after(1)  # ...but one step a day (rule 19)
    assert len(observations(mem)) == 5  # recorded, all of it


def test_conversations_the_app_counts_move_it_once_each(mem):
    for n in range(3):
        tool = EpimemMemoryTool(mem.root, session=f"app-conversation-{n}")
        assert tool.start_session().counted
        converse(tool, [{"command": "insert", "path": TABS, "insert_line": 0,
                         "insert_text": f"confirming: indented with tabs again ({n})"}])
    assert mem.belief("prefers-tabs").confidence == after(3)
    assert mem.vault.read_sessions().count == 3


DATED = ["- 2026-11-01 · confirming — used tabs", "confirming: used tabs\ndate: 2026-10-01",
         "confirming: used tabs\ndate: 2027-01-01", "- 2099-01-01 confirming: used tabs",
         "confirming: used tabs\nlast confirmed: 2026-11-01", "---\nfirst: 2020-01-01\n---\nconfirming: used tabs"]


def test_evidence_is_never_backdated_or_dated_ahead(mem, tool):
    files = tree_bytes(mem.root)
    results, _ = converse(tool, [{"command": "insert", "path": TABS, "insert_line": 0, "insert_text": t}
                                 for t in DATED])
    for t, r in zip(DATED, results):
        assert r.is_error and "dates evidence the day it is recorded" in r.text, (t, r)
    assert tree_bytes(mem.root) == files


def test_what_is_recorded_is_dated_today_whatever_the_text_says(mem, tool):
    converse(tool, [{"command": "insert", "path": TABS, "insert_line": 0,
                     "insert_text": "confirming: on 2026-01-01 and again yesterday, used tabs"}])
    [o] = observations(mem)
    assert o.date.isoformat() == "2026-11-30"


SYCOPHANTIC = [
    "confirming: used tabs. confidence: 0.95",
    "confirming: used tabs (95% confidence)",
    "confirming: used tabs, confidence of 9/10",
    "confirming: used tabs\nconfidence: factual",
    "confirming: used tabs\n**Confidence:** high",
    "confirming: used tabs\nstatus: pinned",
    "confirming: used tabs\npinned: true",
    "confirming (fact): the user's editor config sets tabs",
    "confirming: used tabs\nbasis: verified",
    "confirming: used tabs\nsession: hook-counted-1",
    "confirming: used tabs\ntitle: Always uses tabs, a verified fact",
]


def test_a_sycophantic_line_sets_nothing(mem, tool):
    files = tree_bytes(mem.root)
    results, _ = converse(tool, [{"command": "insert", "path": TABS, "insert_line": 0, "insert_text": t}
                                 for t in SYCOPHANTIC])
    for t, r in zip(SYCOPHANTIC, results):
        assert r.is_error and "nothing was recorded" in r.text.lower(), (t, r.text)
    assert tree_bytes(mem.root) == files


# --- the app's settings ----------------------------------------------------------------------------

def test_review_required_sends_every_observation_to_the_inbox(mem, tool):
    """Issue 29 item 2: with `review: required` what the model writes through the memory tool is
    proposed, never applied (no belief, log or tension changes); the user accepts it later."""
    p = mem.root / "epistemology.md"
    p.write_text(p.read_text().replace("---\n", "---\nreview: required\n", 1))
    mem.commit_hand_edits()
    beliefs_before = {q.name: q.read_bytes() for q in (mem.root / "beliefs").glob("*.md")}
    logs_before = {q.name: q.read_bytes() for q in (mem.root / "observations").glob("*.md")}
    results, _ = converse(tool, [
        {"command": "view", "path": TABS},
        {"command": "insert", "path": TABS, "insert_line": 0, "insert_text": "confirming: used tabs"},
        {"command": "create", "path": "/memories/x.md", "file_text": "- Likes dark mode."},
        {"command": "view", "path": "/memories/README.md"},
    ])
    assert [r.is_error for r in results] == [False, False, False, False], [r.text for r in results]
    assert all("waits for the user's review" in r.text for r in results[1:3]), [r.text for r in results]
    assert "review inbox" in results[3].text.replace("\n", " ")
    assert {q.name: q.read_bytes() for q in (mem.root / "beliefs").glob("*.md")} == beliefs_before
    assert {q.name: q.read_bytes() for q in (mem.root / "observations").glob("*.md")} == logs_before
    previews, problems = mem.inbox()
    assert len(previews) == 2 and not problems
    assert {p.proposal.origin for p in previews} == {"memory-tool"}
    done = mem.inbox_accept([p.proposal.id for p in previews])
    assert done.commit and len(done.accepted) == 2


def test_clear_all_memory_and_unknown_commands_are_refused(mem, tool):
    from anthropic.lib.tools import ToolError

    with pytest.raises(ToolError, match="never clears"):
        tool.clear_all_memory()
    results, _ = converse(tool, [{"command": "wipe", "path": "/memories"},
                                 {"command": "view", "path": 7},
                                 {"command": "view"},
                                 {"command": "insert", "path": TABS, "insert_line": "top", "insert_text": "x"},
                                 {"command": "create", "path": "/memories/x.md", "file_text": ["- a list"]}])
    assert all(r.is_error for r in results), results
    assert "unknown command 'wipe'" in results[0].text
    assert "'path' must be a path" in results[1].text and "'path' must be a path" in results[2].text
    assert "Invalid `insert_line`" in results[3].text
    assert "'file_text' must be text" in results[4].text
    assert observations(mem) == ()


def test_a_refusal_quoting_a_secret_quotes_it_redacted(mem, tool):
    results, _ = converse(tool, [{"command": "str_replace", "path": TABS, "old_str": f"token {TOKEN}",
                                  "new_str": "x"}])
    assert results[0].is_error and "did not appear verbatim" in results[0].text
    assert TOKEN not in results[0].text and "[REDACTED" in results[0].text


def test_a_session_id_must_be_plain():
    with pytest.raises(ValueError, match="plain id"):
        EpimemMemoryTool(session="../../x")


def test_a_missing_vault_is_said_in_the_result(tmp_path):
    results, _ = converse(EpimemMemoryTool(tmp_path / "nowhere"), [
        {"command": "view", "path": "/memories"}, {"command": "view", "path": "/memories/context.md"},
        {"command": "create", "path": "/memories/x.md", "file_text": "- Likes tea."}])
    assert all(r.is_error and "epimem init" in r.text for r in results), results
    assert not (tmp_path / "nowhere").exists()  # nothing made at a mistyped path


def test_the_async_tool_runs_with_the_async_client(mem):
    import anyio
    from anthropic import AsyncAnthropic
    from mock_api import MODEL, MockAPI, text, tool_use

    from epimem.integrations.anthropic_memory import AsyncEpimemMemoryTool

    tool = AsyncEpimemMemoryTool(mem.root, session="async-1")
    script = [tool_use("memory", {"command": "insert", "path": TABS, "insert_line": 0,
                                  "insert_text": "confirming: used tabs"}), text("Done.")]

    async def main():
        with MockAPI(script, lifetime=60) as api:
            client = AsyncAnthropic(api_key="no-key-needed", base_url=api.url, max_retries=0)
            runner = client.beta.messages.tool_runner(model=MODEL, max_tokens=100, tools=[tool],
                                                      messages=[{"role": "user", "content": "hi"}])
            await runner.until_done()
            return api.tool_results()

    [block] = anyio.run(main)
    assert not block.get("is_error"), json.dumps(block)
    assert [o.session for o in observations(mem)] == ["async-1"]


# --- reads go through the readers' path (rules 21 and 23) ------------------------------------------

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_a_secret_typed_into_a_file_by_hand_is_never_shown(mem, tool):
    mem.observe([{"connects": "prefers-tabs", "strength": "contradicting",
                  "evidence": "Pasted spaces, password: hunter22"}], session="other")
    p = mem.root / "beliefs/prefers-tabs.md"  # typed by hand, not committed: no write path redacted it
    p.write_text(p.read_text().replace("Indents with tabs, not spaces.", f"Indents with tabs; token {TOKEN}"))
    assert TOKEN in p.read_text()
    results, _ = converse(tool, [{"command": "view", "path": "/memories"}, {"command": "view", "path": TABS},
                                 {"command": "view", "path": f"/memories/tensions/{mem.tensions()[0].id}.md"}])
    assert not any(r.is_error for r in results)
    assert all(TOKEN not in r.text and "hunter22" not in r.text for r in results)


def test_a_hand_edit_that_breaks_a_rule_is_shown_as_its_last_valid_state(mem, tool):
    p = mem.root / "beliefs/prefers-tabs.md"
    p.write_text(p.read_text().replace(f"confidence: {START}", "confidence: 0.99"))  # above the 0.90 cap
    results, _ = converse(tool, [{"command": "view", "path": TABS}])
    assert f"- confidence: {TIER}" in results[0].text
    assert "established" not in results[0].text and "factual" not in results[0].text


def test_a_forgotten_belief_is_gone_from_the_files(mem, tool):
    from epimem.api import forget

    p = forget.plan(mem, ["prefers-tabs"])
    forget.forget(mem, p, confirm=p.token)
    results, _ = converse(tool, [
        {"command": "view", "path": "/memories"}, {"command": "view", "path": TABS},
        {"command": "view", "path": "/memories/context.md"},
        {"command": "insert", "path": TABS, "insert_line": 0, "insert_text": "confirming: used tabs"},
        {"command": "delete", "path": TABS}])
    assert "prefers-tabs.md" not in results[0].text
    assert all("Indents with tabs" not in r.text for r in results)
    assert "no longer held" in results[1].text
    assert results[3].is_error and results[4].is_error
    assert observations(mem) == ()


# --- the example a developer starts from -------------------------------------------------------------

@pytest.mark.e2e  # a process of its own, as the developer runs it: a few seconds
def test_the_example_app_records_what_its_model_writes(vault):
    import os
    import subprocess
    import sys
    from pathlib import Path

    from mock_api import MockAPI, text, tool_use

    example = Path(__file__).resolve().parents[2] / "examples" / "anthropic_memory_tool.py"
    script = [tool_use("memory", {"command": "view", "path": "/memories"}),
              tool_use("memory", {"command": "create", "path": "/memories/style.md",
                                  "file_text": "- The user indents with tabs."}),
              text("Noted: tabs.")]
    with MockAPI(script, lifetime=120) as api:
        env = {**os.environ, "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "no-key-needed",
               "EPIMEM_VAULT": str(vault.root)}
        done = subprocess.run([sys.executable, str(example), "--conversation", "c-42", "--counted",
                               "By the way, I always indent with tabs."],
                              env=env, capture_output=True, text=True, timeout=120)
        sent = api.main_requests()
    assert done.returncode == 0, done.stderr
    assert "Noted: tabs." in done.stdout and "[memory] create /memories/style.md" in done.stderr
    assert "/memories/README.md" in sent[0]["system"]
    [o] = vault.snapshot().observations
    assert (o.session, o.source) == ("c-42", "memory-tool")
    assert vault.vault.read_sessions().count == 1


def test_a_secret_repeated_without_its_keyword_is_redacted_too(mem, tool):
    # `password: …` in the heading, the bare value on the line below (found by the rules' property
    # test): the pattern knows only the first, and the copy is the same secret.
    secret = "hunter2hunter2"
    converse(tool, [{"command": "create", "path": "/memories/editor.md",
                     "file_text": f"# Uses tmux password: {secret}\n{secret}\n"}])
    history = subprocess.run(["git", "log", "-p", "--all"], cwd=mem.root, capture_output=True, text=True).stdout
    assert secret not in history
    assert all(secret not in p.read_text(errors="replace") for p in mem.root.rglob("*.md") if ".git" not in p.parts)


def test_a_document_written_as_memory_is_refused_saying_how_long_an_observation_may_be(mem, tool):
    before = head(mem.root)
    results, _ = converse(tool, [
        {"command": "create", "path": "/memories/everything.md",
         "file_text": "# Everything about the user\n" + "They said a lot of things today. " * 200 + "\n"},
    ])
    assert results[0].is_error, results
    assert "4,000" in results[0].text and "few sentences" in results[0].text
    assert head(mem.root) == before and not observations(mem)
