"""The CLI of the vault core, in-process through the console script's `main`."""

import json
import subprocess
import sys

import pytest


@pytest.fixture
def v(tmp_path, cli):
    root = tmp_path / "v"
    assert cli("init", root).code == 0
    return root


def add(cli, v, title="Prefers small PRs", *extra):
    return cli("--vault", v, "belief", "add", "--title", title, "--statement", f"{title} statement.",
               "--kind", "preference", "--basis", "behavioral", "--permanence", "durable", *extra)


def test_init_twice(cli, tmp_path):
    assert "Created" in cli("init", tmp_path / "x").out
    r = cli("init", tmp_path / "x", "--json")
    assert r.json() == {"vault": str(tmp_path / "x"), "created": False}


@pytest.mark.seed_rules
def test_belief_add_show_list_json_fields(cli, v):
    assert add(cli, v, "Prefers small PRs", "--tag", "review", "--scope", "billing").code == 0
    d = cli("--vault", v, "belief", "show", "prefers-small-prs", "--json").json()
    for key in ("id", "title", "kind", "basis", "confidence", "effective_confidence", "permanence", "first",
                "confirmed", "challenged", "status", "tags", "scope", "pinned", "statement", "evidence"):
        assert key in d, key
    assert d["confidence"] == 0.30 and d["tags"] == ["review"] and d["scope"] == "billing"
    listed = cli("--vault", v, "belief", "list", "--json").json()["beliefs"]
    assert [b["id"] for b in listed] == ["prefers-small-prs"]
    assert cli("--vault", v, "belief", "list", "--json", "--scope", "other").json()["beliefs"] == []
    assert cli("--vault", v, "belief", "list", "--json", "--tag", "nope").json()["beliefs"] == []
    assert len(cli("--vault", v, "belief", "list", "--json", "--scope", "billing").json()["beliefs"]) == 1
    text = cli("--vault", v, "belief", "list").out
    assert "0.30 → 0.30" in text and "prefers-small-prs" in text


def test_list_filters_on_effective_confidence(cli, v):
    add(cli, v, "Old habit", "--confidence", "0.60")
    assert cli("--vault", v, "belief", "list", "--json", "--min-confidence", "0.55").json()["beliefs"]
    later = cli("--vault", v, "--today", "2027-06-01", "belief", "list", "--json", "--min-confidence", "0.55")
    assert later.json()["beliefs"] == []
    b = cli("--vault", v, "--today", "2027-06-01", "belief", "show", "old-habit", "--json").json()
    assert b["confidence"] == 0.60 and b["effective_confidence"] < 0.3


def test_cap_refused_with_clear_message(cli, v):
    r = add(cli, v, "Too sure", "--confidence", "0.95")
    assert r.code == 1 and "above the cap for basis 'behavioral' (0.90)" in r.err


@pytest.mark.seed_rules
def test_observe_flags_and_batch(cli, v):
    add(cli, v)
    r = cli("--vault", v, "observe", "--connects", "prefers-small-prs", "--strength", "confirming",
            "--evidence", "Split a refactor in three", "--session", "s1")
    assert r.code == 0 and "(0.30 → 0.35)" in r.out
    batch = [{"connects": "prefers-small-prs", "strength": "contradicting", "evidence": "One giant PR",
              "session": "s2", "basis": "behavioral"},
             {"connects": "new", "strength": "single", "evidence": "Asked for a test plan first",
              "title": "Plans tests first", "kind": "workflow", "basis": "behavioral",
              "permanence": "durable", "session": "s2"}]
    r = cli("--vault", v, "observe", "--input", "-", "--json", stdin=json.dumps(batch))
    out = r.json()
    assert r.code == 0 and out["commit"] and len(out["observations"]) == 2
    assert out["observations"][0]["tension"] and out["observations"][1]["created"]
    again = cli("--vault", v, "observe", "--input", "-", "--json", stdin=json.dumps(batch)).json()
    assert all(o["duplicate"] for o in again["observations"]) and again["commit"] is None


def test_observe_bad_json_names_line(cli, v, tmp_path):
    f = tmp_path / "obs.json"
    f.write_text('[\n {"connects": "x",\n  "strength": }\n]')
    r = cli("--vault", v, "observe", "--input", f)
    assert r.code == 1 and f"{f}:3: invalid JSON" in r.err


def test_observe_fourth_refused(cli, v):
    add(cli, v)
    assert cli("--vault", v, "session", "start", "--session", "s").code == 0  # a session the vault counted
    items = [{"connects": "prefers-small-prs", "strength": "complicating", "evidence": f"e{i}", "session": "s"}
             for i in range(3)]
    assert cli("--vault", v, "observe", "--input", "-", stdin=json.dumps(items)).code == 0
    r = cli("--vault", v, "observe", "--connects", "prefers-small-prs", "--strength", "complicating",
            "--evidence", "e4", "--session", "s")
    assert r.code == 1 and "at most 3 per session" in r.err
    assert "so this one was not recorded" in r.err


def test_contradicting_strong_belief_alerts(cli, v):
    cli("--vault", v, "belief", "add", "--title", "Works in Go", "--statement", "Writes Go at work.",
        "--kind", "fact", "--basis", "fact", "--permanence", "stable")
    r = cli("--vault", v, "observe", "--connects", "works-in-go", "--strength", "contradicting",
            "--evidence", "Only Python this month", "--json")
    assert r.json()["alerts"][0]["belief"] == "works-in-go"


def test_edit_retire_reject_supersede_pin(cli, v):
    add(cli, v)
    add(cli, v, "Newer view")
    r = cli("--vault", v, "belief", "edit", "prefers-small-prs", "--confidence", "0.6", "--note", "I know this")
    assert r.code == 0
    assert cli("--vault", v, "belief", "show", "prefers-small-prs", "--json").json()["confidence"] == 0.6
    assert cli("--vault", v, "belief", "reject", "prefers-small-prs", "--json").json()["confidence"] == 0.4
    assert cli("--vault", v, "belief", "pin", "newer-view", "--json").json()["pinned"] is True
    assert cli("--vault", v, "belief", "unpin", "newer-view", "--json").json()["pinned"] is False
    assert cli("--vault", v, "belief", "supersede", "prefers-small-prs", "--by", "newer-view").code == 0
    assert cli("--vault", v, "belief", "show", "prefers-small-prs", "--json").json()["status"] == "superseded"
    assert cli("--vault", v, "belief", "retire", "newer-view").code == 0
    assert cli("--vault", v, "belief", "list", "--json").json()["beliefs"] == []
    assert len(cli("--vault", v, "belief", "list", "--status", "all", "--json").json()["beliefs"]) == 2


def test_tensions_and_resolve(cli, v):
    add(cli, v)
    cli("--vault", v, "observe", "--connects", "prefers-small-prs", "--strength", "contradicting",
        "--evidence", "big PR")
    ts = cli("--vault", v, "tensions", "--json").json()["tensions"]
    assert ts[0]["status"] == "watching"
    assert cli("--vault", v, "tension", "resolve", ts[0]["id"], "--note", "context").code == 0
    assert cli("--vault", v, "tensions", "--status", "resolved", "--json").json()["tensions"]
    assert cli("--vault", v, "tension", "resolve", "../x", "--note", "n").code == 1


def test_session_start(cli, v):
    r = cli("--vault", v, "session", "start", "--source", "startup", "--json").json()
    assert r["counted"] and r["count"] == 1
    r = cli("--vault", v, "session", "start", "--source", "compact", "--json").json()
    assert not r["counted"] and r["count"] == 1
    r = cli("--vault", v, "--today", "2027-01-15", "session", "start", "--json").json()
    assert r["dormant"] and r["dormant_days"] == 46 and r["review_due"]
    assert cli("--vault", v, "session", "start", "--source", "wake").code == 2  # not one of the sources


@pytest.mark.seed_rules
def test_history_diff_undo_commit_validate(cli, v):
    add(cli, v)
    cli("--vault", v, "observe", "--connects", "prefers-small-prs", "--strength", "confirming",
        "--evidence", "e", "--session", "s")
    h = cli("--vault", v, "history", "prefers-small-prs", "--json").json()["history"]
    assert [p["confidence"] for p in h] == [0.30, 0.35]
    d = cli("--vault", v, "diff", "--since", "HEAD~1", "--json").json()["changes"]
    assert d[0]["text"].startswith("prefers-small-prs: confidence 0.30 → 0.35")
    assert "Undid: observe" in cli("--vault", v, "undo").out
    p = v / "beliefs" / "prefers-small-prs.md"
    p.write_text(p.read_text().replace("confidence: 0.30", "confidence: 0.55"))
    assert "prefers-small-prs: confidence 0.30 → 0.55" in cli("--vault", v, "commit").out
    assert cli("--vault", v, "validate").code == 0
    p.write_text(p.read_text().replace("permanence: durable", "permanence: forever"))
    r = cli("--vault", v, "validate")
    assert r.code == 1 and r.out.startswith("beliefs/prefers-small-prs.md:6: 'permanence' must be one of")
    r = cli("--vault", v, "belief", "list")
    # Rule 21: readers show the file as last committed, and say why the edit is not shown.
    assert ("beliefs/prefers-small-prs.md: an edit was refused, so it is shown as last committed: "
            "line 6: 'permanence' must be one of") in r.err
    assert "0.55 → " in r.out and "durable" in r.out


def test_errors_are_messages_not_tracebacks(cli, tmp_path):
    r = cli("--vault", tmp_path / "none", "belief", "list")
    assert r.code == 1 and "no vault at" in r.err and "Traceback" not in r.err
    r = cli("--today", "someday", "--vault", tmp_path / "none", "belief", "list")
    assert r.code == 2 and "--today must be a date" in r.err


def test_console_script_help_is_fast_and_light():
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "epimem", "--help"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "belief" in out.stdout
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines()}
    assert not {"chromadb", "anthropic", "git", "wordllama"} & imported
    # the help is rendered without Rich, and no rule is loaded to list the commands
    assert not {"rich", "markdown_it", "epimem.core.rules", "epimem.core.model", "yaml"} & imported


def test_version_is_printed_without_typer():
    import epimem

    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "epimem", "--version"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == f"epimem {epimem.__version__}\n"
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines()}
    assert "typer" not in imported and "epimem.cli" not in imported


def test_version_after_global_options(cli, tmp_path):
    import epimem

    r = cli("--vault", tmp_path / "none", "--version")
    assert r.code == 0 and r.out.strip() == f"epimem {epimem.__version__}"


def test_belief_list_scope_follows_the_one_scope_rule(cli, v, tmp_path):
    # A belief scoped by the project's path is the project's, as recall and the hook say.
    proj = str(tmp_path / "code" / "billing")
    add(cli, v, "Prefers small PRs", "--scope", proj)
    for asked in ("billing", proj, proj + "/src"):
        assert len(cli("--vault", v, "belief", "list", "--json", "--scope", asked).json()["beliefs"]) == 1, asked
    assert cli("--vault", v, "belief", "list", "--json", "--scope", "ledger").json()["beliefs"] == []


def test_closed_filters_refuse_a_typo(cli, v):
    add(cli, v)
    for args in (("belief", "list", "--status", "activ"), ("belief", "list", "--permanence", "forever"),
                 ("tensions", "--status", "open")):
        r = cli("--vault", v, *args)
        assert r.code == 2 and "must be one of" in r.err and not r.out, args  # a usage mistake (docs/cli.md)
    assert cli("--vault", v, "belief", "list", "--status", "all", "--json").json()["beliefs"]


def test_a_mistyped_vault_path_is_left_alone(cli, tmp_path):
    # Taking the vault lock creates .epimem/: a change at a path that is no vault must not.
    none = tmp_path / "none"
    for args in (("belief", "edit", "x", "--title", "y"), ("belief", "retire", "x"), ("belief", "show", "x"),
                 ("belief", "add", "--title", "a", "--statement", "b", "--kind", "trait", "--basis", "fact",
                  "--permanence", "stable"),
                 ("tension", "resolve", "2026-01-01-x", "--note", "n")):
        r = cli("--vault", none, *args)
        assert r.code == 1 and "no vault at" in r.err, args
        assert not none.exists(), args


def _transcript(path, session, *user_turns):
    lines = [json.dumps({"type": "user", "sessionId": session, "uuid": str(i),
                         "message": {"role": "user", "content": t}}) for i, t in enumerate(user_turns)]
    path.write_text("\n".join(lines + ["not json"]) + "\n", encoding="utf-8")
    return path


def test_observe_from_transcript(cli, v, tmp_path):
    t = _transcript(tmp_path / "t.jsonl", "from-file", "I prefer table-driven tests in Go.")
    for missing in (tmp_path / "nope.jsonl", tmp_path):
        r = cli("--vault", v, "transcript", missing)
        assert r.code == 1 and "cannot read" in r.err and "Traceback" not in r.err
    # --session names the session (over the transcript's own id); what the pass
    # could not do is said on stderr, not dropped.
    r = cli("--vault", v, "transcript", t, "--session", "s1", "--llm", "--json")
    assert r.code == 0 and "no ANTHROPIC_API_KEY" in r.err and "malformed 1" in r.err
    obs = r.json()["observations"]
    assert len(obs) == 1 and obs[0]["belief"] == "prefers-table-driven-tests-in-go"
    assert "· session s1" in (v / "observations" / "2026-11.md").read_text()
    # Once per session, as at session end: a session that has observations gets none.
    t2 = _transcript(tmp_path / "t2.jsonl", "s1", "I prefer tabs over spaces in every file.")
    r = cli("--vault", v, "transcript", t2)
    assert r.code == 0 and "Nothing recorded." in r.out and "already has 1 observation" in r.err


def test_init_where_no_folder_can_be_made(cli, tmp_path):
    (tmp_path / "afile").write_text("x")
    for where in (tmp_path / "afile", tmp_path / "afile" / "sub"):
        r = cli("init", where)
        assert r.code == 1 and "cannot create a vault at" in r.err and "Traceback" not in r.err


def test_an_empty_tag_clears_the_tags(cli, v):
    add(cli, v, "Prefers small PRs", "--tag", "review", "--tag", " ")
    assert cli("--vault", v, "belief", "show", "prefers-small-prs", "--json").json()["tags"] == ["review"]
    assert cli("--vault", v, "belief", "edit", "prefers-small-prs", "--tag", "").code == 0
    assert "tags: []" in (v / "beliefs" / "prefers-small-prs.md").read_text()
    for field in ("--title", "--statement"):
        r = cli("--vault", v, "belief", "edit", "prefers-small-prs", field, " ")
        assert r.code == 1 and "cannot be empty" in r.err


def test_the_cli_names_the_flag_where_the_api_names_the_field(cli, v):
    r = cli("--vault", v, "belief", "add", "--title", " ", "--statement", "s", "--kind", "trait",
            "--basis", "fact", "--permanence", "stable")
    assert r.code == 1 and "epimem: error: --title is required" in r.err
    r = cli("--vault", v, "belief", "add", "--title", "t", "--statement", "s", "--kind", "trait",
            "--basis", "hunch", "--permanence", "stable")
    assert r.code == 2 and "epimem: error: --basis must be one of" in r.err  # the parser knows the list
    r = cli("--vault", v, "diff", "--since", "last tuesday")
    assert r.code == 1 and "--since 'last tuesday' is neither a revision nor a date" in r.err


def test_exit_codes_tell_a_retry_from_a_mistake(cli, v, monkeypatch):
    from epimem.store import files

    add(cli, v)

    def busy(self):
        raise files.LockTimeout("the vault is locked by another epimem process; try again in a moment")
    monkeypatch.setattr(files.VaultLock, "_take", busy)
    r = cli("--vault", v, "belief", "retire", "prefers-small-prs")
    assert r.code == 75 and "locked by another epimem process" in r.err and "Traceback" not in r.err
    monkeypatch.undo()
    assert cli("--vault", v, "belief", "show", "nope").code == 1
    assert cli("--vault", v, "belief", "frobnicate").code == 2  # usage


def test_an_error_quoting_a_url_never_shows_its_password(tmp_path):
    # The message of every EpimemError is redacted when it is made, so no front end can print,
    # log or send the password of a `--chroma-url` it could not reach. A query does not need the
    # server (it reads the sidecar); the update of Chroma that fails records its error.
    vault = tmp_path / "v"
    url = "http://bob:s3cretpw@127.0.0.1:9"
    subprocess.run([sys.executable, "-m", "epimem", "init", str(vault)], check=True, capture_output=True)
    p = subprocess.run([sys.executable, "-m", "epimem", "--vault", str(vault), "recall", "--chroma-url", url, "tabs"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    # What the detached update runs, here in the foreground.
    f = subprocess.run([sys.executable, "-m", "epimem.recall.follow", str(vault), "--chroma-url", url],
                       capture_output=True, text=True, timeout=120)
    assert f.returncode == 1
    s = subprocess.run([sys.executable, "-m", "epimem", "--vault", str(vault), "index", "status", "--chroma-url", url],
                       capture_output=True, text=True, timeout=120)
    said = "cannot reach the Chroma server at http://bob:[REDACTED:url-credentials]@127.0.0.1:9"
    assert said in f.stderr and said in s.stdout
    log = (vault / ".epimem" / "recall" / "chroma.log").read_text(encoding="utf-8")
    assert "s3cretpw" not in p.stderr + p.stdout + f.stderr + s.stdout + log
