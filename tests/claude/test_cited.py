"""Say what it used (issue 25 item 5): the session context tells the model to cite a belief's
[id]; the observe skill's `--cited` and the transcript pass record which beliefs the assistant
cited, on the session's observations; the mirror audit shows beliefs used but never
confirmed. A citation changes no number, and one that names no belief is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "transcript.jsonl"
SESSION = "5b0c2a8e-1d1f-4a53-9a43-0c8b1f2e7d11"


def _beliefs(vault):
    vault.add_belief(title="Small pull requests", statement="Splits changes into small pull requests.",
                     kind="workflow", basis="behavioral", permanence="durable", confidence=0.6)
    vault.add_belief(title="Tests against real systems", statement="Prefers tests that hit real services.",
                     kind="preference", basis="behavioral", permanence="durable", confidence=0.6)
    return vault


def test_observe_records_what_the_assistant_cited_and_the_audit_shows_it(cli, vault):
    _beliefs(vault)
    root = str(vault.root)
    before = (vault.root / "beliefs" / "small-pull-requests.md").read_text()
    r = cli("--vault", root, "observe", "--session", "s-1", "--source", "claude-code", "--json",
            "--connects", "tests-against-real-systems", "--strength", "confirming", "--basis", "behavioral",
            "--evidence", "Asked for the mocked repository test to run against Postgres.",
            "--cited", "small-pull-requests", "--cited", "small-pull-requests")
    assert r.code == 0, r.err
    log = "".join(p.read_text() for p in (vault.root / "observations").glob("*.md"))
    assert "- cited: [[small-pull-requests]]\n" in log                   # once, as a wikilink
    # Citing is not confirming: the cited belief's file is untouched.
    assert (vault.root / "beliefs" / "small-pull-requests.md").read_text() == before
    a = cli("--vault", root, "mirror", "audit", "--json")
    assert a.code == 0, a.err
    used = json.loads(a.out)
    flat = json.dumps(used)
    assert "used_unconfirmed" in flat and "small-pull-requests" in flat
    md = cli("--vault", root, "mirror", "audit").out
    assert "Used, never confirmed" in md and "`small-pull-requests`" in md


def test_a_citation_of_no_belief_is_refused_and_nothing_is_written(cli, vault):
    _beliefs(vault)
    r = cli("--vault", str(vault.root), "observe", "--session", "s-2", "--json",
            "--connects", "tests-against-real-systems", "--strength", "confirming",
            "--evidence", "Ran the integration suite before merging.", "--cited", "made-up-belief")
    assert r.code != 0 and "cited" in r.err and "made-up-belief" in r.err
    assert not any(p.read_text().strip() for p in (vault.root / "observations").glob("*.md")
                   if "Ran the integration suite" in p.read_text())
    r = cli("--vault", str(vault.root), "observe", "--session", "s-2", "--json",
            "--connects", "tests-against-real-systems", "--strength", "confirming",
            "--evidence", "Ran the integration suite before merging.", "--cited", "../etc/passwd")
    assert r.code != 0 and "cited" in r.err


def test_the_transcript_pass_records_the_ids_the_assistant_cited(vault, tmp_path):
    from epimem.api.transcripts import record_from_transcript
    from epimem.claude.transcript import read_transcript

    _beliefs(vault)
    t = tmp_path / "session.jsonl"
    shutil.copy(FIXTURE, t)
    reply = {"type": "assistant", "uuid": "u-900", "parentUuid": "u-006", "sessionId": SESSION,
             "timestamp": "2026-11-30T10:30:00.000Z", "cwd": "/home/ada/code/webshop",
             "message": {"id": "msg_90", "type": "message", "role": "assistant", "model": "m",
                         "content": [{"type": "text", "text": "Keeping this one small, as [small-pull-requests] "
                                      "says; [not-a-belief] is no id of the vault."}]}}
    with t.open("a", encoding="utf-8") as f:
        f.write(json.dumps(reply) + "\n")
    report, notes = record_from_transcript(vault, read_transcript(t))
    assert report is not None and report.results, notes
    assert all(r.observation.cited == ("small-pull-requests",) for r in report.results)
    obs = [o for o in vault.vault.load_observations()[0] if o.session == SESSION]
    assert obs and all(o.cited == ("small-pull-requests",) for o in obs)


def test_the_session_context_names_beliefs_by_id_and_tells_the_model_to_cite(vault, tmp_path):
    import subprocess
    import sys

    _beliefs(vault)
    epimem = str(Path(sys.executable).parent / "epimem")
    payload = {"session_id": "s-9", "transcript_path": "", "cwd": str(tmp_path), "hook_event_name": "SessionStart",
               "source": "startup"}
    r = subprocess.run([epimem, "hook", "session-start", "--vault", str(vault.root)], input=json.dumps(payload),
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "[small-pull-requests]" in text and "cite the [id] of a belief you rely on" in text


def test_cited_survives_export_and_import(vault, tmp_path):
    from epimem.core.model import Observation
    from epimem.core.notes import parse_observations, render_observation

    o = Observation(id="obs-20261130-abcd", date=vault.today, evidence="x", strength="single", basis="behavioral",
                    connects="new", cited=("small-pull-requests", "tests-against-real-systems"))
    back = parse_observations(render_observation(o))[0][0]
    assert back.cited == o.cited
    assert "cited" not in render_observation(Observation(id="obs-1", date=vault.today, evidence="x",
                                                         strength="single", basis="behavioral", connects="new"))


def _turn(role: str, uuid: str, parent: str, text: str) -> dict:
    rec = {"type": role, "uuid": uuid, "parentUuid": parent, "sessionId": SESSION,
           "timestamp": "2026-11-30T10:30:00.000Z", "cwd": "/home/ada/code/webshop"}
    if role == "user":
        rec["message"] = {"role": "user", "content": text}
    else:
        rec["message"] = {"id": f"msg_{uuid}", "type": "message", "role": "assistant", "model": "m",
                          "content": [{"type": "text", "text": text}]}
    return rec


def test_the_transcript_pass_counts_only_what_the_assistant_cited_of_beliefs_still_kept(cli, vault, tmp_path):
    """A user quoting an [id] is not the assistant relying on it; a belief the user had forgotten
    is cited of nothing: citing it would record something about it again."""
    from epimem.api.transcripts import record_from_transcript
    from epimem.claude.transcript import read_transcript

    _beliefs(vault)
    vault.add_belief(title="Likes dark mode", statement="Works in dark themes.", kind="preference",
                     basis="behavioral", permanence="durable", confidence=0.6)
    assert cli("--vault", str(vault.root), "forget", "likes-dark-mode", "--yes").code == 0
    t = tmp_path / "session.jsonl"
    shutil.copy(FIXTURE, t)
    with t.open("a", encoding="utf-8") as f:
        for rec in (_turn("user", "u-900", "u-006", "The session context says [tests-against-real-systems]; "
                                                   "is that right?"),
                    _turn("assistant", "u-901", "u-900", "As [small-pull-requests] and [likes-dark-mode] say, "
                                                         "I kept the change small.")):
            f.write(json.dumps(rec) + "\n")
    report, notes = record_from_transcript(vault, read_transcript(t))
    assert report is not None and report.results, notes
    assert all(r.observation.cited == ("small-pull-requests",) for r in report.results)


def test_citing_a_forgotten_belief_is_refused_and_nothing_is_written(cli, vault):
    _beliefs(vault)
    root = str(vault.root)
    assert cli("--vault", root, "forget", "small-pull-requests", "--yes").code == 0
    r = cli("--vault", root, "observe", "--session", "s-3", "--connects", "tests-against-real-systems",
            "--strength", "confirming", "--evidence", "Ran the suite against Postgres.", "--cited",
            "small-pull-requests")
    assert r.code != 0 and "--cited" in r.err and "small-pull-requests" in r.err and "forgotten" in r.err
    assert "Ran the suite against Postgres" not in "".join(
        p.read_text() for p in (vault.root / "observations").glob("*.md"))


def test_used_never_confirmed_counts_sessions_and_lists_only_beliefs_still_held(cli, vault, tmp_path):
    """The audit's list: a session that cites a belief counts once however many observations it
    recorded; a belief retired or superseded since, or confirmed, is not waiting to be confirmed."""
    from epimem.api.transcripts import record_from_transcript
    from epimem.claude.transcript import read_transcript

    _beliefs(vault)
    for title in ("Old editor habit", "Confirmed habit"):
        vault.add_belief(title=title, statement=f"{title}.", kind="workflow", basis="behavioral",
                         permanence="durable", confidence=0.6)
    root = str(vault.root)
    t = tmp_path / "session.jsonl"
    shutil.copy(FIXTURE, t)
    with t.open("a", encoding="utf-8") as f:
        f.write(json.dumps(_turn("assistant", "u-901", "u-006", "Per [small-pull-requests], [old-editor-habit] "
                                                               "and [confirmed-habit], kept it small.")) + "\n")
    report, notes = record_from_transcript(vault, read_transcript(t))
    assert report is not None and len(report.results) >= 2, notes  # one session, several observations
    vault.session_start("startup", session="s-2")  # a session of its own (rule 9: names nobody counted share one)
    assert cli("--vault", root, "observe", "--session", "s-2", "--connects", "confirmed-habit", "--strength",
               "confirming", "--evidence", "Kept to the habit again in review.", "--cited", "small-pull-requests",
               "--cited", "old-editor-habit").code == 0
    assert cli("--vault", root, "belief", "retire", "old-editor-habit", "--note", "no longer").code == 0
    used = cli("--vault", root, "mirror", "audit", "--json").json()["used_unconfirmed"]
    assert [(u["id"], u["cited"]) for u in used] == [("small-pull-requests", 2)], used
