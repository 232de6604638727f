"""The Python API on real vaults: rules applied end to end, one commit each."""

import json
import subprocess
from datetime import date

import pytest
from vaults import count_sessions

import epimem
from epimem.api.memory import EpimemError, Memory


def commits(mem) -> list[str]:
    out = subprocess.run(["git", "log", "--format=%s"], cwd=mem.root, capture_output=True, text=True)
    return out.stdout.splitlines()


def add(mem, title="Prefers small PRs", basis="behavioral", **kw):
    return mem.add_belief(title=title, statement=kw.pop("statement", f"{title}, as a habit."),
                          kind=kw.pop("kind", "preference"), basis=basis,
                          permanence=kw.pop("permanence", "durable"), **kw)


def ob(connects, strength="confirming", session="s1", evidence="did it", **kw):
    return {"connects": connects, "strength": strength, "session": session, "evidence": evidence, **kw}


def test_init_creates_a_vault_and_is_idempotent(tmp_path):
    mem, created = Memory.init(tmp_path / "v")
    assert created
    for rel in ("epistemology.md", ".gitignore", "state/sessions.json", "beliefs", "observations",
                "tensions", "reviews"):
        assert (mem.root / rel).exists(), rel
    assert ".epimem/" in (mem.root / ".gitignore").read_text()
    assert json.loads((mem.root / "state/sessions.json").read_text())["count"] == 0
    before = commits(mem)
    _, again = Memory.init(tmp_path / "v")
    assert not again and commits(mem) == before == ["init: new epimem vault"]


def test_open_uses_env_then_user_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("EPIMEM_VAULT", str(tmp_path / "env-vault"))
    assert epimem.open().root == tmp_path / "env-vault"
    monkeypatch.delenv("EPIMEM_VAULT")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert epimem.open().root == tmp_path / "xdg" / "epimem" / "vault"


@pytest.mark.seed_rules
def test_add_uses_start_values_and_refuses_above_cap(vault):
    assert add(vault, basis="behavioral").confidence == 0.30
    assert add(vault, "Is a backend engineer", basis="fact", kind="fact").confidence == 0.95
    assert add(vault, "Likes Rust", basis="self-report").confidence == 0.40
    assert add(vault, "Seeks mastery", basis="interpretive", kind="motivation").confidence == 0.20
    with pytest.raises(EpimemError, match="above the cap"):
        add(vault, "Overconfident", basis="interpretive", confidence=0.95)
    assert commits(vault)[0].startswith("belief: add seeks-mastery (0.20")


def test_add_refuses_exact_duplicate_statement(vault):
    add(vault, "Prefers small PRs", statement="Splits work into small PRs.")
    with pytest.raises(EpimemError, match="identical belief already exists: prefers-small-prs"):
        add(vault, "Small PRs again", statement="splits work into small PRs")


@pytest.mark.seed_rules
def test_observe_confirm_reinforce_challenge_sequence_one_commit_each(vault):
    add(vault)
    count_sessions(vault, "a", "b", "c", "d")
    n0 = len(commits(vault))
    r = vault.observe([ob("prefers-small-prs", session="a")])
    assert (r.results[0].before, r.results[0].after) == (0.30, 0.35)
    assert commits(vault)[0] == "observe: confirming → prefers-small-prs (0.30 → 0.35)"
    r = vault.observe([ob("prefers-small-prs", session="a", evidence="same session")])
    assert r.results[0].after == 0.35
    r = vault.observe([ob("prefers-small-prs", session="b", basis="self-report", evidence="said so")])
    assert r.results[0].after == 0.35 and "reinforcement" in r.results[0].reason
    r = vault.observe([ob("prefers-small-prs", "contradicting", session="c", evidence="big PR")])
    assert r.results[0].after == 0.35 and r.results[0].tension
    first_c = r.results[0]
    r = vault.observe([ob("prefers-small-prs", "contradicting", session="d", evidence="bigger PR")])
    assert r.results[0].after == 0.25 and r.results[0].tension == first_c.tension
    r = r.results[0]
    assert len(commits(vault)) == n0 + 5
    b = vault.belief("prefers-small-prs")
    assert b.confidence == 0.25 and b.confirmed == date(2026, 11, 30) and b.challenged == date(2026, 11, 30)
    assert [e.kind for e in b.evidence] == ["added", "confirming", "reinforcing", "reinforcing",
                                           "contradicting", "contradicting"]
    # one open question, one tension: the second contradiction joins the first
    [t] = vault.tensions("watching")
    assert t.evidence == tuple(f"observations/2026-11#{r.observation.id}" for r in (first_c, r))


def test_commit_carries_trailers(vault):
    add(vault)
    vault.observe([ob("prefers-small-prs", session="8f3a2c")])
    body = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=vault.root, capture_output=True,
                          text=True).stdout
    assert "Epimem-Op: observe" in body and "Epimem-Session: 8f3a2c" in body
    assert "Epimem-Beliefs: prefers-small-prs" in body and "Epimem-Observations: obs-20261130-" in body


def test_same_observation_twice_is_recorded_once(vault):
    add(vault)
    first = vault.observe([ob("prefers-small-prs", session="s", evidence="Split  the work.")])
    again = vault.observe([ob("prefers-small-prs", session="s", evidence="split the work")])
    assert again.results[0].duplicate and again.commit is None
    text = (vault.root / "observations/2026-11.md").read_text()
    assert text.count("## obs-") == 1
    assert again.results[0].observation.id == first.results[0].observation.id


def test_fourth_observation_of_a_session_is_refused_and_nothing_written(vault):
    from vaults import count_sessions

    add(vault)
    count_sessions(vault, "s", "t")  # sessions the vault never counted share one bound a day (rule 9)
    vault.observe([ob("prefers-small-prs", session="s", evidence=f"e{i}") for i in range(3)])
    before = (vault.root / "observations/2026-11.md").read_text()
    with pytest.raises(EpimemError, match="at most 3 per session"):
        vault.observe([ob("prefers-small-prs", session="s", evidence="e4")])
    with pytest.raises(EpimemError, match="at most 3"):
        vault.observe([ob("prefers-small-prs", session="t", evidence=f"x{i}") for i in range(4)])
    assert (vault.root / "observations/2026-11.md").read_text() == before
    assert vault.observe([ob("prefers-small-prs", session="t", evidence="ok")]).commit


@pytest.mark.seed_rules
def test_new_belief_from_observation_and_unconnected_observation(vault):
    r = vault.observe([
        {"connects": "new", "strength": "single", "evidence": "Asked for tests before code",
         "title": "Wants tests first", "kind": "workflow", "permanence": "durable", "session": "s"},
        {"connects": "new", "strength": "single", "evidence": "Mentioned a dog", "session": "s"},
    ])
    assert r.results[0].created and r.results[0].belief == "wants-tests-first"
    b = vault.belief("wants-tests-first")
    assert b.confidence == 0.30 and b.evidence[0].kind == "single"
    assert r.results[1].belief is None
    text = (vault.root / "observations/2026-11.md").read_text()
    assert "- connects: [[wants-tests-first]]" in text and "- connects: new" in text


def test_alert_when_a_strong_belief_is_contradicted(vault):
    add(vault, "Is a backend engineer", basis="fact", kind="fact", permanence="stable")
    r = vault.observe([ob("is-a-backend-engineer", "contradicting", evidence="Built a UI all week")])
    assert r.alerts and r.alerts[0].belief == "is-a-backend-engineer"


def test_secrets_are_redacted_before_writing(vault):
    add(vault, "Uses env files", statement="Keeps keys like sk-ant-api03-abcdefghijklmnopqrstuv in .env")
    vault.observe([ob("uses-env-files", evidence="pasted password: hunter22 and ghp_" + "a" * 36)])
    files = "".join(p.read_text() for p in vault.root.rglob("*.md"))
    assert "sk-ant-api03" not in files and "hunter22" not in files and "ghp_aaaa" not in files
    assert "[REDACTED:anthropic-key]" in files and "password: [REDACTED:password]" in files
    log = subprocess.run(["git", "log", "-p"], cwd=vault.root, capture_output=True, text=True).stdout
    assert "hunter22" not in log


@pytest.mark.parametrize("bad", ["../escape", "/etc/passwd", "a/b", "UPPER", "", "x..y", "a.md"])
def test_ids_that_could_escape_are_refused(vault, bad):
    with pytest.raises(EpimemError, match="invalid belief id"):
        vault.belief(bad)
    with pytest.raises(EpimemError, match="invalid|required"):
        vault.observe([ob(bad)])
    if bad:
        with pytest.raises(EpimemError):
            add(vault, belief_id=bad)
    assert not (vault.root.parent / "escape.md").exists()


def test_bad_observation_input_names_item_and_field(vault):
    with pytest.raises(EpimemError, match="observation 2: 'strength' must be one of"):
        vault.observe([ob("x", "single"), ob("x", "sure")])
    with pytest.raises(EpimemError, match="observation 1: 'evidence' is required"):
        vault.observe([{"connects": "x", "strength": "single"}])
    with pytest.raises(EpimemError, match="no belief 'nope'"):
        vault.observe([ob("nope")])
    with pytest.raises(EpimemError, match="observation 1: unknown key 'suggest'; known keys: "):
        vault.observe([ob("x", suggest="typo")])


def test_an_observation_holds_a_few_sentences_not_a_document(vault):
    """One call could otherwise put a whole document into the log, every Evidence section and the
    index: rule 9's three a session would bound nothing."""
    import subprocess

    from epimem.api.common import TEXT_MAX

    def head():
        return subprocess.run(["git", "-C", str(vault.root), "rev-parse", "HEAD"], capture_output=True,
                              text=True).stdout

    add(vault)
    before = head()
    for key in ("evidence", "suggests", "therefore"):
        with pytest.raises(EpimemError, match=f"observation 2: '{key}' is 4,001 characters, over the 4,000") as e:
            vault.observe([ob("prefers-small-prs"), ob("prefers-small-prs", **{key: "y" * (TEXT_MAX + 1)})])
        assert e.value.field == key
    assert head() == before and not list((vault.root / "observations").glob("*.md"))
    # Whitespace is collapsed first: what is measured is what would be written.
    vault.observe([ob("prefers-small-prs", evidence=("y " * (TEXT_MAX // 2)) + "     " * 1000)])


@pytest.mark.seed_rules
def test_hand_edits_and_unknown_keys_survive_an_observation(vault):
    add(vault)
    p = vault.root / "beliefs/prefers-small-prs.md"
    text = p.read_text().replace("scope: global\n", "scope: global\ncolour: blue\n").replace(
        "## Evidence", "A line I wrote myself.\n\n## Evidence")
    p.write_text(text)
    vault.observe([ob("prefers-small-prs", session="z")])
    new = p.read_text()
    assert "colour: blue\n" in new and "A line I wrote myself." in new
    assert new.replace("confidence: 0.35", "confidence: 0.30").replace("confirmed: 2026-11-30", "confirmed:") \
        .replace("\nconfirmed_session: z", "").startswith(text.split("## Evidence")[0].rstrip()[:200])


@pytest.mark.seed_rules
def test_malformed_belief_is_skipped_reported_and_never_rewritten(vault):
    add(vault)
    add(vault, "Other belief")
    p = vault.root / "beliefs/other-belief.md"
    broken = p.read_text().replace("confidence: 0.30", "confidence: 1.7")
    p.write_text(broken)
    # Rule 21: readers show the file as last committed, and say the edit was refused.
    listed = vault.beliefs()
    assert [(b.id, b.confidence) for b in listed] == [("other-belief", 0.30), ("prefers-small-prs", 0.30)]
    assert [str(r) for r in vault.listing().refused] == [
        "beliefs/other-belief.md: an edit was refused, so it is shown as last committed: "
        "line 5: 'confidence' must be between 0.00 and 1.00, not 1.7"]
    _, problems = vault.vault.load_beliefs()
    assert str(problems[0]).startswith("beliefs/other-belief.md:5:")
    with pytest.raises(EpimemError, match=r"beliefs/other-belief.md:5:"):
        vault.observe([ob("other-belief")])
    assert p.read_text() == broken
    assert any(str(x).startswith("beliefs/other-belief.md:5:") for x in vault.validate())


def test_reject_retire_supersede_pin(vault):
    add(vault, "Old view", confidence=0.60)
    b = vault.reject("old-view", note="not any more")
    assert b.confidence == 0.40 and vault.belief("old-view").evidence[-1].kind == "rejected"
    vault.retire("old-view")
    assert vault.belief("old-view").status == "retired"
    assert [x.id for x in vault.beliefs()] == []
    add(vault, "First take")
    add(vault, "Better take", supersedes=["first-take"])
    assert vault.belief("first-take").status == "superseded"
    assert vault.belief("better-take").supersedes == ("first-take",)
    vault.set_pinned("better-take", True)
    assert vault.belief("better-take").pinned
    assert commits(vault)[0] == "pin: better-take"


def test_tension_resolved_only_with_a_note(vault):
    add(vault)
    r = vault.observe([ob("prefers-small-prs", "contradicting")])
    tid = r.results[0].tension
    with pytest.raises(EpimemError, match="note"):
        vault.resolve_tension(tid, "")
    vault.resolve_tension(tid, "It was a release week")
    [t] = vault.tensions()
    assert t.status == "resolved" and "release week" in t.resolution
    with pytest.raises(EpimemError, match="already resolved"):
        vault.resolve_tension(tid, "again")
    # a contradiction after the resolution opens a new tension; history is not rewritten
    r2 = vault.observe([ob("prefers-small-prs", "contradicting", session="s2", evidence="again")])
    assert r2.results[0].tension != tid and len(vault.tensions()) == 2


def test_session_start_counts_startup_reports_review_and_dormancy(tmp_path):
    mem, _ = Memory.init(tmp_path / "v", today="2026-10-01")
    for _ in range(9):
        assert Memory(mem.root, today="2026-10-01").session_start("startup").review_due is None
    r = Memory(mem.root, today="2026-10-02").session_start("startup")
    assert r.count == 10 and r.review_due
    assert not Memory(mem.root, today="2026-10-02").session_start("resume").counted
    r = Memory(mem.root, today="2026-11-30").session_start("startup")
    assert r.dormant_days == 59 and any("dormancy" in line for line in r.lines())
    s = json.loads((mem.root / "state/sessions.json").read_text())
    assert s["count"] == 11 and s["last_session"] == "2026-11-30"
    assert s["count_at_day_start"] == {"2026-10-01": 0, "2026-10-02": 9, "2026-11-30": 10}


def test_record_review_resets_counter(vault):
    for _ in range(3):
        vault.session_start()
    vault.record_review("audit", "All fine.")
    s = json.loads((vault.root / "state/sessions.json").read_text())
    assert s["last_review"] == "2026-11-30" and s["next_review_at"] == 13
    assert (vault.root / "reviews/2026-11-30.md").read_text().startswith("---\ndate: 2026-11-30\nkind: audit")


@pytest.mark.seed_rules
def test_epistemology_parameters_are_read_on_every_run(vault):
    p = vault.root / "epistemology.md"
    p.write_text(p.read_text().replace("confirm_step: 0.05", "confirm_step: 0.1"))
    add(vault)
    r = vault.observe([ob("prefers-small-prs")])
    assert r.results[0].after == 0.40
    p.write_text(p.read_text().replace("confirm_step: 0.1", "confirm_step: lots"))
    _, problems = vault.vault.params()
    assert problems and str(problems[0]).startswith("epistemology.md:") and "confirm_step" in str(problems[0])


def test_write_failure_restores_files(vault, monkeypatch):
    add(vault)
    p = vault.root / "beliefs/prefers-small-prs.md"
    before = p.read_text()
    from epimem.store import git as history

    def boom(*a, **k):
        raise history.HistoryError("git commit failed: disk full")
    monkeypatch.setattr(history, "commit", boom)
    with pytest.raises(EpimemError, match="nothing was written"):
        vault.observe([ob("prefers-small-prs")])
    assert p.read_text() == before
    assert not (vault.root / "observations/2026-11.md").exists()


@pytest.mark.seed_rules
def test_python_api_roundtrip(tmp_path):
    mem = epimem.init(tmp_path / "api")
    mem.add_belief(title="Reads docs first", statement="Reads the docs before asking.", kind="workflow",
                   basis="behavioral", permanence="durable")
    mem.observe([ob("reads-docs-first", session="x")])
    assert [b.id for b in mem.beliefs(min_confidence=0.3)] == ["reads-docs-first"]
    assert [p.confidence for p in mem.history("reads-docs-first")] == [0.30, 0.35]


@pytest.mark.seed_rules
def test_writes_keep_the_session_context_cache_current(vault):
    from epimem.store import context_cache as context

    add(vault)
    add(vault, "Scoped habit", scope="billing")
    cache = context.read_context_cache(vault.root)
    assert cache["signature"] == context.signature(vault.root)
    vault.observe([ob("prefers-small-prs", session="k")])
    cache = context.read_context_cache(vault.root)
    assert cache["signature"] == context.signature(vault.root)
    [rec] = [r for r in cache["global"] if r["id"] == "prefers-small-prs"]
    assert rec["confidence"] == 0.35 and rec["confirmed"] == "2026-11-30"
    assert [r["id"] for r in cache["scopes"]["billing"]] == ["scoped-habit"]
    vault.retire("scoped-habit")
    assert context.read_context_cache(vault.root)["scopes"]["billing"] == []
    # a hand edit since the last build makes the next write rebuild in full
    p = vault.root / "beliefs/prefers-small-prs.md"
    p.write_text(p.read_text().replace("title: Prefers small PRs", "title: Small PRs, always"))
    (vault.root / "beliefs").touch()
    add(vault, "Third")
    titles = {r["id"]: r["title"] for r in context.read_context_cache(vault.root)["global"]}
    assert titles["prefers-small-prs"] == "Small PRs, always" and "third" in titles


def test_malformed_session_counter_is_reported_never_overwritten(vault):
    p = vault.root / "state/sessions.json"
    p.write_text('{"count": 3,\n "last_session": }\n')
    with pytest.raises(EpimemError, match=r"state/sessions.json:2: invalid JSON"):
        vault.session_start("startup")
    with pytest.raises(EpimemError, match=r"state/sessions.json:2"):
        vault.record_review("audit", "x")
    assert p.read_text() == '{"count": 3,\n "last_session": }\n'
    assert any(str(x).startswith("state/sessions.json:2:") for x in vault.validate())


def test_init_refuses_a_folder_of_unrelated_files(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "taxes.pdf").write_text("private")
    with pytest.raises(EpimemError, match="is not empty and is not an epimem vault"):
        Memory.init(tmp_path / "docs")
    assert not (tmp_path / "docs" / ".git").exists()


def test_reading_raises_only_epimem_errors_that_say_where(tmp_path):
    from epimem.core.errors import InputError, NotFound, VaultError

    missing = Memory(tmp_path / "none")
    for call in (missing.beliefs, missing.snapshot, lambda: missing.history("x"), lambda: missing.diff("HEAD")):
        with pytest.raises(VaultError, match="no vault at"):
            call()
    plain = tmp_path / "plain"  # a vault's files, but not a git repository of its own
    (plain / "beliefs").mkdir(parents=True)
    (plain / "epistemology.md").write_text("Rules.\n")
    mem = Memory(plain)
    assert mem.beliefs() == [] and mem.snapshot().beliefs == ()
    for call in (lambda: mem.history("x"), lambda: mem.diff("2026-11-01")):
        with pytest.raises(VaultError, match="not a git repository") as e:
            call()
        assert e.value.path == str(mem.root)
    with pytest.raises(InputError) as e:
        mem.beliefs(colour="blue")
    assert e.value.field == "colour"
    v, _ = Memory.init(tmp_path / "v")
    with pytest.raises(InputError, match="'since' 'last tuesday' is neither") as e:
        v.diff("last tuesday")
    assert e.value.field == "since"
    with pytest.raises(NotFound) as e:
        v.history("nope")
    assert e.value.path == "beliefs/nope.md"


def test_api_messages_name_fields_not_flags(vault):
    from epimem.core.errors import InputError

    cases = [(lambda: vault.add_belief(title=" ", statement="s", kind="trait", basis="fact", permanence="stable"),
              "title", "'title' is required"),
             (lambda: vault.add_belief(title="t", statement="s", kind="trait", basis="hunch", permanence="stable"),
              "basis", "'basis' must be one of"),
             (lambda: vault.session_start("reboot"), "source", "'source' must be one of"),
             (lambda: vault.resolve_tension("2026-11-30-x", " "), "note", "'note' is required")]
    for call, field, message in cases:
        with pytest.raises(InputError) as e:
            call()
        assert e.value.field == field and str(e.value).startswith(message) and "--" not in str(e.value)


def test_a_bad_since_is_an_input_error_naming_the_field(vault):
    import pytest

    from epimem.core.errors import InputError

    with pytest.raises(InputError) as e:
        vault.diff("not-a-date-or-rev")
    assert e.value.field == "since" and "--" not in str(e.value)
