"""Bad input in a vault file, as a user meets it on the command line: a clear error naming the file
and line, and nothing lost (found by the bad-input sweep; export and import are tests/sync's)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

TERSE = "beliefs/terse-answers.md"
IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@example.invalid")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *IDENTITY, *args], check=True, capture_output=True,
                          text=True).stdout


def state(root: Path) -> tuple[str, str, bytes]:
    return git(root, "rev-parse", "HEAD"), git(root, "status", "--porcelain"), (root / TERSE).read_bytes()


def test_a_frontmatter_key_given_twice_is_named_not_read_as_the_last_one(sample_vault, cli):
    # YAML keeps the last `confidence`, the surgical writer replaced the first: observe said
    # 0.40 → 0.45, wrote 0.45 on line 5, and the file still read 0.40 (line 6), validate silent.
    p = sample_vault / TERSE
    p.write_text(p.read_text().replace("confidence: 0.25\n", "confidence: 0.25\nconfidence: 0.40\n"))
    git(sample_vault, "commit", "-qam", "a merge by hand left both lines")  # committed, as a plain git merge would
    r = cli("--vault", sample_vault, "validate")
    assert r.code == 1 and f"{TERSE}:6: invalid YAML in frontmatter: 'confidence' is there twice (line 5 too)" in r.out
    before = state(sample_vault)
    r = cli("--vault", sample_vault, "observe", "--connects", "terse-answers", "--strength", "confirming",
            "--evidence", "Asked for just the diff.", "--session", "s1")
    assert r.code == 1 and r.err.startswith(f"epimem: error: {TERSE}:6: "), r.err
    assert "'confidence' is there twice" in r.err and state(sample_vault) == before
    r = cli("--vault", sample_vault, "belief", "show", "terse-answers")  # its last valid state, said so
    assert r.code == 0 and "confidence 0.25" in r.out and "is there twice" in r.err


def test_an_uncommitted_key_given_twice_is_left_out_of_epimem_commit(sample_vault, cli):
    p = sample_vault / TERSE
    p.write_text(p.read_text().replace("basis: behavioral\n", "basis: behavioral\nbasis: interpretive\n"))
    before = state(sample_vault)
    r = cli("--vault", sample_vault, "commit")
    assert r.code == 0 and f"skipped {TERSE}:5: invalid YAML in frontmatter: 'basis' is there twice" in r.err, r.err
    assert state(sample_vault) == before


MARKERS = "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> other\n"


def test_conflict_markers_in_a_beliefs_body_are_never_committed(sample_vault, cli):
    # validate named them, but observe, edit, pin and `epimem commit` wrote around them and
    # committed the unsettled merge as the vault's state.
    p = sample_vault / TERSE
    p.write_text(p.read_text().replace("## Evidence\n", MARKERS + "## Evidence\n"))
    before = state(sample_vault)
    msg = f"{TERSE}:18: git conflict markers"
    assert msg in cli("--vault", sample_vault, "validate").out
    for args in (("observe", "--connects", "terse-answers", "--strength", "confirming", "--evidence",
                  "Asked for just the diff.", "--session", "s1"),
                 ("belief", "pin", "terse-answers"),
                 ("belief", "edit", "terse-answers", "--confidence", "0.3")):
        r = cli("--vault", sample_vault, *args)
        assert r.code == 1 and r.err.startswith(f"epimem: error: {msg}"), (args, r.err)
    r = cli("--vault", sample_vault, "commit")
    assert r.code == 0 and f"skipped {msg}" in r.err, r.err
    assert state(sample_vault) == before
    r = cli("--vault", sample_vault, "belief", "show", "terse-answers")  # as last committed, said so
    assert r.code == 0 and "mine" not in r.out and "conflict markers" in r.err


def test_conflict_markers_in_the_frontmatter_are_named_on_their_own_line(sample_vault, cli):
    p = sample_vault / TERSE
    p.write_text(p.read_text().replace("confidence: 0.25\n", "<<<<<<< HEAD\nconfidence: 0.25\n=======\n"
                                       "confidence: 0.40\n>>>>>>> theirs\n"))
    r = cli("--vault", sample_vault, "validate")
    assert r.code == 1 and r.out.strip() == f"{TERSE}:5: git conflict markers (<<<<<<<, =======, >>>>>>>): " \
        "keep what is true and delete the marker lines", r.out


TENSION = "tensions/2026-07-15-writes-failing-test-first.md"


def test_a_tension_hand_edit_that_does_not_parse_is_left_out_of_epimem_commit(sample_vault, cli):
    # It was committed, and said as "tension 2026-07-15-… removed".
    p = sample_vault / TENSION
    p.write_text(p.read_text().replace("status: watching", "status: forgotten"))
    before = git(sample_vault, "rev-parse", "HEAD"), p.read_bytes()
    r = cli("--vault", sample_vault, "commit")
    assert r.code == 0 and "removed" not in r.out, r.out
    assert f"skipped {TENSION}:4: 'status' must be one of unresolved, watching, resolved, not 'forgotten' " \
           "(not committed)" in r.err, r.err
    assert (git(sample_vault, "rev-parse", "HEAD"), p.read_bytes()) == before
    assert git(sample_vault, "status", "--porcelain") == f" M {TENSION}\n"


LOG = "observations/2026-11.md"
ORPHAN = ("\n- date: 2026-11-29\n- evidence: Typed under the last entry, with no heading of its own.\n"
          "- strength: single\n")


def test_fields_typed_under_an_entry_without_a_heading_are_named_and_change_nothing(sample_vault, cli, tmp_path):
    # They were read as the last entry's own: its date, evidence and strength silently replaced,
    # and validate said the vault was valid.
    p = sample_vault / LOG
    p.write_text(p.read_text() + ORPHAN)
    r = cli("--vault", sample_vault, "validate")
    assert r.code == 1 and r.out.startswith(f"{LOG}:53: obs-20261124-d919: 'date', 'evidence', 'strength' given a "
                                            "second time from this line; an observation starts with its own"), r.out
    assert cli("--vault", sample_vault, "export", "--out", tmp_path / "x.jsonl").code == 0
    recs = map(json.loads, (tmp_path / "x.jsonl").read_text().splitlines())
    rec = next(r for r in recs if r.get("id") == "obs-20261124-d919")
    assert rec["date"] == "2026-11-24" and rec["strength"] == "confirming"
    assert rec["evidence"].startswith("Reused the idempotency-key table")


def test_a_malformed_hand_edit_of_a_log_is_never_committed(sample_vault, cli):
    # `epimem commit` recorded a log with conflict markers (or a bad entry) as the vault's state,
    # and observe appended to it and committed it whole; validate did not mention the markers.
    p = sample_vault / LOG
    p.write_text(p.read_text().replace("## obs-20261109-2ab5\n", "<<<<<<< HEAD\n## obs-20261109-2ab5\n=======\n"
                                       "## obs-20261109-ffff\n>>>>>>> theirs\n"))
    before = git(sample_vault, "rev-parse", "HEAD"), p.read_bytes()
    assert f"{LOG}:13: git conflict markers" in cli("--vault", sample_vault, "validate").out
    r = cli("--vault", sample_vault, "commit")
    assert r.code == 0 and f"skipped {LOG}:13: git conflict markers" in r.err, r.err
    r = cli("--vault", sample_vault, "observe", "--connects", "small-pull-requests", "--strength", "confirming",
            "--evidence", "Split a change into three PRs.", "--session", "s1")
    assert r.code == 1 and r.err.startswith(f"epimem: error: {LOG}:13: git conflict markers"), r.err
    assert "nothing was recorded" in r.err
    assert (git(sample_vault, "rev-parse", "HEAD"), p.read_bytes()) == before
    assert git(sample_vault, "status", "--porcelain") == f" M {LOG}\n"


def test_a_session_counter_edited_into_nonsense_is_left_out_of_epimem_commit(sample_vault, cli):
    # It was committed ("count 41 → many"), when `session start` and the hook refuse to count into it.
    p = sample_vault / "state" / "sessions.json"
    p.write_text('{"count": "many", "next_review_at": -1}')
    before = git(sample_vault, "rev-parse", "HEAD")
    r = cli("--vault", sample_vault, "commit")
    assert r.code == 0 and "skipped state/sessions.json:1: invalid session counter: 'count' must be a whole " \
        "number, not 'many' (not committed)" in r.err, r.err
    assert git(sample_vault, "rev-parse", "HEAD") == before and p.read_text().startswith('{"count": "many"')
    r = cli("--vault", sample_vault, "session", "start")
    assert r.code == 1 and "state/sessions.json:1:" in r.err


def test_a_tension_that_is_not_utf8_is_named_and_blocks_nothing_else(sample_vault, cli):
    # `tension resolve` said "not valid UTF-8 at line 5" without the file; `belief retire` of any
    # belief (it closes the open tensions on it) was a UnicodeDecodeError traceback.
    p = sample_vault / TENSION
    p.write_bytes(p.read_bytes().replace(b"status: watching", b"status: watching\nnote: caf\xe9"))
    for verb in (("resolve", "--note", "done"), ("watch",), ("reopen", "--note", "again")):
        r = cli("--vault", sample_vault, "tension", verb[0], "2026-07-15-writes-failing-test-first", *verb[1:])
        assert r.code == 1 and r.err.startswith(f"epimem: error: {TENSION}:5: not valid UTF-8"), (verb, r.err)
    r = cli("--vault", sample_vault, "belief", "retire", "small-pull-requests")
    assert r.code == 0 and "Traceback" not in r.err, r.err
    assert git(sample_vault, "status", "--porcelain") == f" M {TENSION}\n"


def _proposal(vault: Path) -> Path:
    from epimem.api import inbox
    from epimem.api.memory import Memory

    inbox.propose(Memory(vault), [{"connects": "terse-answers", "strength": "confirming",
                                   "evidence": "Asked for a one-line answer."}],
                  source="test", session="s-prop", origin="session-end")
    (p,) = (vault / "inbox").glob("prop-*.md")
    return p


def test_inbox_accept_of_a_hand_edited_proposal_names_its_file(sample_vault, cli):
    # "observation 1: 'strength' must be …" and "not valid UTF-8 at line 11" named no file.
    p = _proposal(sample_vault)
    rel = f"inbox/{p.name}"
    text = p.read_bytes()
    for old, new, says in ((b"  strength: confirming", b"  strength: enormous", f"{rel}: its observation: 'strength'"),
                           (b"one-line", b"one-l\xefne", f"{rel}:11: not valid UTF-8")):
        p.write_bytes(text.replace(old, new))
        before = git(sample_vault, "rev-parse", "HEAD"), p.read_bytes()
        r = cli("--vault", sample_vault, "inbox", "accept", p.stem)
        assert r.code == 1 and r.err.startswith(f"epimem: error: {says}"), r.err
        assert "nothing was changed" in r.err
        assert (git(sample_vault, "rev-parse", "HEAD"), p.read_bytes()) == before


def test_a_proposal_edited_into_one_the_inbox_cannot_read_is_left_out_of_epimem_commit(sample_vault, cli):
    # It was committed, described as "inbox/prop-….md:" and nothing else.
    p = _proposal(sample_vault)
    p.write_text(p.read_text().replace("status: pending", "status: weird"))
    before = git(sample_vault, "rev-parse", "HEAD")
    r = cli("--vault", sample_vault, "commit")
    assert r.code == 0 and f"skipped inbox/{p.name}:7: 'status' must be one of pending, rejected (not committed)" \
        in r.err, r.err
    assert git(sample_vault, "rev-parse", "HEAD") == before and "status: weird" in p.read_text()


def test_a_folder_in_place_of_a_months_log_is_named_not_a_traceback(sample_vault, cli, tmp_path):
    # IsADirectoryError tracebacks from observe, commit, sync, import, inbox and doctor.
    p = sample_vault / LOG
    p.unlink()
    p.mkdir()
    for args in (("observe", "--connects", "small-pull-requests", "--strength", "confirming", "--evidence",
                  "Split a change into three PRs.", "--session", "s1"), ("commit",)):
        r = cli("--vault", sample_vault, *args)
        assert r.code == 1 and "Traceback" not in r.err, (args, r.err)
        assert "observations/2026-11.md is a folder where the vault keeps a file" in r.err, (args, r.err)
    r = cli("--vault", sample_vault, "doctor")
    assert "Traceback" not in r.err + r.out
    # validate says so before any write trips on it (readers list files only, and passed it by)
    r = cli("--vault", sample_vault, "validate")
    assert r.code == 1 and f"{LOG}:1: {LOG} is a folder where the vault keeps a file" in r.out, r.out
    assert git(sample_vault, "status", "--porcelain") == f" D {LOG}\n"


def test_a_belief_saved_with_a_byte_order_mark_says_so(sample_vault, cli):
    # "no frontmatter: the file must start with a '---' line", of a file that shows as starting with one.
    p = sample_vault / TERSE
    p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
    r = cli("--vault", sample_vault, "validate")
    assert r.code == 1 and r.out.startswith(f"{TERSE}:1: the file starts with a byte-order mark (U+FEFF)"), r.out
    r = cli("--vault", sample_vault, "commit")
    assert f"skipped {TERSE}:1: the file starts with a byte-order mark" in r.err
    assert git(sample_vault, "status", "--porcelain") == f" M {TERSE}\n"
