"""A remote that pushes what no epimem writes: `epimem sync` brings it in, and nothing follows it.

The remote is a bare repository on a shared server, or another of the user's machines that is
compromised or just buggy; machine `b` plays it here, pushing to a real bare repository that
machine `a` syncs with through the real `epimem sync` command.
"""

from __future__ import annotations

import json
import os

from machines import git, machines

from epimem.mcp.http import read_or_create_token


def _push(m, message: str) -> None:
    git(m.root, "add", "-A")
    git(m.root, "commit", "-qm", message)
    git(m.root, "push", "-q", "origin", "HEAD:main")


def _link(m, rel: str, target: str) -> None:
    p = m.root / rel
    if p.exists() or p.is_symlink():
        p.unlink()
    os.symlink(target, p)


def test_links_into_git_and_epimem_folders_are_not_notes(tmp_path, cli, clean_recall_env):
    """`beliefs/x.md -> ../.git/config` stays inside the vault's folder, so a check for "outside
    the vault" let it through: export printed the MCP bearer token of `.epimem/mcp-token`, and
    the next observation of the month was written into git's config."""
    _, (a, b) = machines(tmp_path, 2, beliefs=(("b1", 0.40),))
    token = read_or_create_token(a.root)
    _link(b, "beliefs/tok.md", "../.epimem/mcp-token")
    _link(b, "observations/2026-11.md", "../.git/config")
    _link(b, "tensions/gitdir", "../.git")
    _push(b, "links into the private folders")
    config = (a.root / ".git" / "config").read_bytes()

    r = cli("--vault", a.root, "sync")
    assert r.code == 0, r.err
    assert (a.root / "beliefs" / "tok.md").is_symlink()  # git brought it in: nothing may follow it

    outs = [cli("--vault", a.root, *args) for args in (
        ("export",), ("belief", "list", "--json"), ("belief", "show", "tok"), ("recall", token[:12], "--json"),
        ("mirror", "portrait"), ("tensions",), ("commit",))]
    outs.append(cli("hook", "session-start", "--vault", a.root, stdin=json.dumps({"source": "startup"})))
    for o in outs:
        assert token not in o.out + o.err
        assert "repositoryformatversion" not in o.out + o.err
    assert "tok" not in {b_["id"] for b_ in outs[1].json()["beliefs"]}

    obs = cli("--vault", a.root, "observe", "--connects", "b1", "--strength", "confirming",
              "--evidence", "Used tabs again.", "--session", "s9")
    assert obs.code != 0 and "outside the vault" in obs.err
    assert (a.root / ".git" / "config").read_bytes() == config

    problems = {p["path"]: p["message"] for p in cli("--vault", a.root, "validate", "--json").json()["problems"]}
    assert "into .epimem/" in problems["beliefs/tok.md"]
    assert "into .git/" in problems["observations/2026-11.md"] and "into .git/" in problems["tensions/gitdir"]


OSC_TITLE = "\x1b]0;owned\x07\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[8m"  # window title, clipboard (OSC 52), hidden text


def test_escape_sequences_a_remote_pushes_are_shown_not_run(tmp_path, cli, clean_recall_env):
    """A title or a file name is whatever the remote committed; printed as it is, an ESC in it is
    a command to the user's terminal, and a newline in a name split the one line of a problem."""
    _, (a, b) = machines(tmp_path, 2, beliefs=(("b1", 0.40),))
    p = b.root / "beliefs" / "b1.md"
    p.write_text(p.read_text().replace("title: Belief b1", f"title: {json.dumps('Belief b1 ' + OSC_TITLE)}"))
    (b.root / "beliefs" / "line\nbreak.md").write_text(p.read_text())
    (b.root / "beliefs" / "esc\x1b[2J.md").write_text(p.read_text())
    _push(b, "control characters")
    assert cli("--vault", a.root, "sync").code == 0
    assert "\x1b" in a.belief("b1").title  # kept in the file: only what reaches a terminal is changed

    for args in (("belief", "list"), ("belief", "show", "b1"), ("validate",),
                 ("recall", "belief", "--budget-tokens", "300"), ("mirror", "portrait"), ("sync",)):
        r = cli("--vault", a.root, *args)
        for text in (r.out, r.err):
            assert "\x1b" not in text and "\x07" not in text, (args, text)
    shown = cli("--vault", a.root, "belief", "show", "b1").out
    assert "\\x1b]0;owned\\x07" in shown  # said, visibly
    lines = cli("--vault", a.root, "validate").out.splitlines()
    assert any(ln.startswith("beliefs/line\\nbreak.md:1: ") for ln in lines)
    assert not any(ln.startswith("break.md") for ln in lines)


def test_a_remotes_gitattributes_cannot_change_the_bytes_or_run_a_filter(tmp_path, cli):
    """`.gitattributes` is a vault file: a remote's `working-tree-encoding=UTF-16` had every belief
    checked out as UTF-16 (refused by every reader, every write failing in `git add`), and its
    `filter=` ran the filter of that name the user's global git config defines (git-lfs's, here
    one that leaves a mark)."""
    _, (a, b) = machines(tmp_path, 2, beliefs=(("b1", 0.40),))
    mark = tmp_path / "filter-ran"
    git(tmp_path, "config", "--global", "filter.evil.smudge", f"sh -c 'touch {mark}; cat'")
    (b.root / ".git" / "info" / "attributes").write_text("* -working-tree-encoding -filter\n")  # b's own business
    attrs = b.root / ".gitattributes"
    attrs.write_text(attrs.read_text() + "beliefs/*.md working-tree-encoding=UTF-16 filter=evil\n"
                     "beliefs/*.md -merge\n")
    _push(b, "attributes")
    p = b.root / "beliefs" / "b1.md"
    p.write_text(p.read_text().replace("The statement of b1.", "The statement of b1, changed there."))
    _push(b, "a belief changed under them")

    r = cli("--vault", a.root, "sync")
    assert r.code == 0, r.err
    assert not mark.exists()
    data = (a.root / "beliefs" / "b1.md").read_bytes()
    assert data.decode("utf-8").startswith("---\n") and b"changed there" in data
    assert "changed there" in cli("--vault", a.root, "belief", "show", "b1").out
    assert cli("--vault", a.root, "validate", "--json").json()["problems"] == []
    add = cli("--vault", a.root, "belief", "add", "--title", "New one", "--statement", "S.", "--kind", "preference",
              "--basis", "self-report", "--permanence", "stable")
    assert add.code == 0, add.err
    assert git(a.root, "status", "--porcelain").stdout == ""


def test_invalid_files_a_remote_pushes_never_fail_sync_and_stay_redacted(tmp_path, cli, clean_recall_env):
    """Broken YAML, conflict markers, a confidence of 5.0, a 2 MB statement and a secret in plain
    text, committed there by plain git: the sync lands, each bad file is one line of `validate`,
    and the secret is redacted by every reader."""
    _, (a, b) = machines(tmp_path, 2, beliefs=(("b1", 0.40),))
    good = (b.root / "beliefs" / "b1.md").read_text()
    files = {"broken": good.replace("title: Belief b1", "title: [unclosed"),
             "markers": f"<<<<<<< HEAD\n{good}=======\n{good}>>>>>>> theirs\n",
             "too-sure": good.replace("confidence: 0.4", "confidence: 5.0"),
             "long": good.replace("The statement of b1.", "word " * 400_000),
             "leak": good.replace("The statement of b1.", "The password=hunter2hunter2 opens it.")}
    for name, text in files.items():
        (b.root / "beliefs" / f"{name}.md").write_text(text)
    assert "confidence: 5.0" in files["too-sure"]
    _push(b, "files no epimem writes")

    r = cli("--vault", a.root, "sync")
    assert r.code == 0 and "Traceback" not in r.err, r.err
    flagged = {p["path"] for p in cli("--vault", a.root, "validate", "--json").json()["problems"]}
    assert {"beliefs/broken.md", "beliefs/markers.md", "beliefs/too-sure.md"} <= flagged
    assert {b_["id"] for b_ in cli("--vault", a.root, "belief", "list", "--json").json()["beliefs"]} == \
        {"b1", "long", "leak"}
    for args in (("belief", "show", "leak"), ("export",), ("recall", "opens", "--budget-tokens", "300")):
        out = cli("--vault", a.root, *args)
        assert out.code == 0 and "hunter2hunter2" not in out.out + out.err, args
    assert "[REDACTED:password]" in cli("--vault", a.root, "belief", "show", "leak").out


def test_a_remote_rewritten_by_force_loses_nothing_here(tmp_path, cli):
    """The other machine reset its branch and force-pushed: this machine's work since is merged
    with the rewritten history and sent, not dropped; a remote with no shared history is refused."""
    _, (a, b) = machines(tmp_path, 2, beliefs=(("b1", 0.40),))
    a.add_belief(title="Local only", statement="Made here.", kind="preference", basis="behavioral",
                 permanence="durable", belief_id="local-only")
    first = git(b.root, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    git(b.root, "reset", "-q", "--hard", first)
    (b.root / "beliefs" / "there.md").write_text((a.root / "beliefs" / "b1.md").read_text())
    git(b.root, "add", "-A")
    git(b.root, "commit", "-qm", "history rewritten there")
    git(b.root, "push", "-qf", "origin", "HEAD:main")

    r = cli("--vault", a.root, "sync")
    assert r.code == 0, r.err
    ids = {b_["id"] for b_ in cli("--vault", a.root, "belief", "list", "--json").json()["beliefs"]}
    assert {"b1", "local-only", "there"} <= ids
    assert git(a.root, "status", "--porcelain").stdout == ""


def test_a_gitmodules_a_remote_pushes_does_not_stop_the_next_sync(tmp_path, cli):
    """A `.gitmodules` whose `update = !command` git refuses made every `git status` and `git diff`
    fail after the sync that brought it in: nothing ran, but no sync could run again."""
    _, (a, b) = machines(tmp_path, 2, beliefs=(("b1", 0.40),))
    mark = tmp_path / "submodule-ran"
    (b.root / ".gitmodules").write_text(f'[submodule "x"]\n\tpath = beliefs/x\n\turl = {tmp_path / "none.git"}\n'
                                        f"\tupdate = !touch {mark}\n")
    head = git(b.root, "rev-parse", "HEAD").stdout.strip()
    git(b.root, "update-index", "--add", "--cacheinfo", f"160000,{head},beliefs/x")
    git(b.root, "add", ".gitmodules")
    git(b.root, "commit", "-qm", "a submodule")
    git(b.root, "push", "-q", "origin", "HEAD:main")

    first = cli("--vault", a.root, "sync")
    assert first.code == 0, first.err
    a2 = cli("--vault", a.root, "belief", "add", "--title", "After", "--statement", "S.", "--kind", "preference",
             "--basis", "self-report", "--permanence", "stable")
    assert a2.code == 0, a2.err
    again = cli("--vault", a.root, "sync")
    assert again.code == 0, again.err
    assert not mark.exists()


def test_a_rule_breaking_edit_a_remote_commits_is_shown_as_its_last_valid_state(tmp_path, cli, clean_recall_env):
    """Rule 21 across machines: `confidence: 5.0` committed there by plain git becomes HEAD here
    after the sync; the belief used to vanish from every reader with one "skipped" line."""
    _, (a, b) = machines(tmp_path, 2, beliefs=(("b1", 0.40),))
    p = b.root / "beliefs" / "b1.md"
    p.write_text(p.read_text().replace("confidence: 0.4", "confidence: 5.0"))
    _push(b, "too sure")

    r = cli("--vault", a.root, "sync")
    assert r.code == 0, r.err
    assert "confidence: 5.0" in (a.root / "beliefs" / "b1.md").read_text()  # the file is what the remote holds
    shown = cli("--vault", a.root, "belief", "show", "b1", "--json").json()
    assert shown["confidence"] == 0.40
    assert "so it is shown as committed in" in shown["refused"][0]["message"]
    assert [x["id"] for x in cli("--vault", a.root, "belief", "list", "--json").json()["beliefs"]] == ["b1"]
    assert cli("--vault", a.root, "validate").code == 1


def test_a_remote_that_removes_beliefs_is_said_so(tmp_path, cli):
    """A remote that deleted every belief (a wiped folder on the other machine) used to sync with
    one line, "Brought in 1 commit"; the user reads which beliefs went, and which came or changed."""
    _, (a, b) = machines(tmp_path, 2, beliefs=(("b1", 0.40), ("b2", 0.50), ("b3", 0.60)))
    (b.root / "beliefs" / "b1.md").unlink()
    (b.root / "beliefs" / "b2.md").unlink()
    p = b.root / "beliefs" / "b3.md"
    p.write_text(p.read_text().replace("The statement of b3.", "The statement of b3, reworded."))
    _push(b, "wiped")

    r = cli("--vault", a.root, "sync")
    assert r.code == 0, r.err
    assert "Beliefs: 1 changed, 2 removed; removed there: b1, b2 (`git log --diff-filter=D -- beliefs/`" in r.out
    (b.root / "beliefs" / "b4.md").write_text((b.root / "beliefs" / "b3.md").read_text())
    _push(b, "one more")
    d = cli("--vault", a.root, "sync", "--json").json()
    assert d["beliefs"] == {"new": ["b4"], "changed": [], "removed": []}
    assert cli("--vault", a.root, "sync", "--json").json()["beliefs"] == {"new": [], "changed": [], "removed": []}
