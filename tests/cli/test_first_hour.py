"""What a newcomer meets in the first hour (issue 28): every mistake said plainly, never a traceback,
and the messages that say what happened say it right."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ADD = ("belief", "add", "--title", "Likes tea", "--statement", "Drinks green tea every morning.",
       "--kind", "preference", "--basis", "self-report", "--permanence", "durable")


def _epimem(*args: str, cwd: Path | None = None, stdout=subprocess.PIPE, stdin: str | None = None):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "epimem", *args], env=env, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, cwd=cwd, input=stdin, timeout=120)


# --- a vault that is not a repository -------------------------------------------------------------

def test_a_vault_inside_another_repository_says_how_to_make_it_one(tmp_path, cli):
    # The checkout's own sample vault: a folder of notes inside epimem's repository, not a repository.
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "vault", checkout / "vault", ignore=shutil.ignore_patterns(".epimem"))
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    r = cli("--vault", checkout / "vault", *ADD)
    assert r.code == 1
    assert "is not a git repository of its own" in r.err and f"epimem init {checkout / 'vault'}" in r.err
    assert "Traceback" not in r.err and "InvalidGitRepositoryError" not in r.err
    assert not (checkout / "vault" / "beliefs" / "likes-tea.md").exists()
    # What the message says to do works: the folder becomes a repository, its notes the first commit.
    assert cli("init", checkout / "vault").code == 0
    assert cli("--vault", checkout / "vault", *ADD).code == 0
    log = subprocess.run(["git", "-C", str(checkout / "vault"), "log", "--format=%s"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert log[-1] == "init: new epimem vault" and "likes-tea" in log[0]


def test_a_vault_copied_without_git_refuses_every_write_and_the_hook_does_not_count(tmp_path, cli):
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "vault", copy, ignore=shutil.ignore_patterns(".epimem"))
    before = (copy / "state" / "sessions.json").read_text()
    r = cli("--vault", copy, "mirror", "audit", "--record")
    assert r.code == 1 and "is not a git repository of its own" in r.err, r.err
    assert "epimem-pathspec" not in r.err and not (copy / "reviews" / "2026-11-30.md").exists()
    assert not list(copy.rglob(".git*pathspec*"))
    r = cli("--vault", copy, "session", "start")
    assert r.code == 1 and f"epimem init {copy}" in r.err
    hook = _epimem("--vault", str(copy), "hook", "session-start",
                   stdin=json.dumps({"source": "startup", "session_id": "s1", "cwd": str(tmp_path)}))
    assert hook.returncode == 0
    said = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "not a git repository" in said and "epimem init" in said
    assert (copy / "state" / "sessions.json").read_text() == before  # not counted where nothing is committed
    # Reading it still works: the files are the truth.
    assert cli("--vault", copy, "belief", "list").code == 0


# --- export --out ------------------------------------------------------------------------------------

def test_export_to_a_missing_folder_or_to_a_folder_is_an_error_and_leaves_nothing(vault, tmp_path, cli):
    vault.add_belief(title="Likes tea", statement="Drinks tea.", kind="preference", basis="self-report",
                     permanence="durable")
    r = cli("--vault", vault.root, "export", "--out", tmp_path / "missing" / "dir" / "x.jsonl")
    assert r.code == 1 and "--out" in r.err and "does not exist" in r.err and "Traceback" not in r.err
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    for target in (out_dir, Path(".")):
        before = sorted(p.name for p in tmp_path.iterdir()) + sorted(p.name for p in out_dir.iterdir())
        r = cli("--vault", vault.root, "export", "--out", target)
        assert r.code == 1 and "--out must be a file" in r.err, r.err
        assert sorted(p.name for p in tmp_path.iterdir()) + sorted(p.name for p in out_dir.iterdir()) == before
    assert not [p for p in tmp_path.rglob(".*epimem-tmp")]
    r = cli("--vault", vault.root, "export", "--out", out_dir / "x.jsonl")
    assert r.code == 0 and (out_dir / "x.jsonl").read_text().count("\n") > 3
    assert [p.name for p in out_dir.iterdir()] == ["x.jsonl"]


def test_a_failed_export_leaves_no_temporary_file(vault, tmp_path, monkeypatch):
    from epimem.api import portability
    from epimem.core.errors import VaultError

    def broken(mem):
        yield {"type": "header"}
        raise VaultError("cannot read the vault")

    monkeypatch.setattr(portability, "records", broken)
    with pytest.raises(VaultError):
        portability.export_file(vault, tmp_path / "x.jsonl")
    assert list(tmp_path.iterdir()) == [vault.root]


# --- a closed pipe -------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [("recall", "tea"), ("belief", "list"), ("export",)])
def test_a_reader_that_goes_away_is_no_traceback(vault, args):
    vault.add_belief(title="Likes tea", statement="Drinks tea.", kind="preference", basis="self-report",
                     permanence="durable")
    # `epimem recall tea | head -1`, made certain: the pipe is closed before epimem writes a byte.
    r, w = os.pipe()
    os.close(r)
    try:
        proc = _epimem("--vault", str(vault.root), *args, stdout=w)
    finally:
        os.close(w)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    assert "Exception ignored" not in proc.stderr


# --- messages that say what happened ---------------------------------------------------------------------

def test_a_second_contradiction_says_it_joined_the_open_tension(vault, cli):
    vault.add_belief(title="Decides fast", statement="Makes quick decisions.", kind="trait",
                     basis="self-report", permanence="durable", belief_id="decides-fast")
    first = cli("--vault", vault.root, "observe", "--connects", "decides-fast", "--strength", "contradicting",
                "--evidence", "Explored five options for an hour.", "--session", "s1")
    assert first.code == 0 and first.out.count("tension opened") == 1, first.out
    second = cli("--vault", vault.root, "observe", "--connects", "decides-fast", "--strength", "contradicting",
                 "--evidence", "Deliberated over a name for a day.", "--session", "s2")
    assert second.code == 0
    tensions = list((vault.root / "tensions").glob("*.md"))
    assert len(tensions) == 1
    assert "tension opened" not in second.out, second.out
    assert f"added to the open tension {tensions[0].stem}" in second.out


def test_diff_right_after_init_says_the_vault_was_made_not_every_parameter(tmp_path, cli):
    assert cli("init", tmp_path / "v").code == 0
    r = cli("--vault", tmp_path / "v", "diff", "--since", "2020-01-01")
    assert r.code == 0
    assert r.out.splitlines() == ["- file epistemology.md added", "- file state/sessions.json added",
                                  "- file state/vault.json added"], r.out
    assert "confirm_step" not in r.out


def test_index_status_is_not_up_to_date_while_chroma_lacks_items(vault, cli, clean_recall_env):
    from epimem.recall.config import read_config
    from epimem.recall.index import Index

    vault.add_belief(title="Likes tea", statement="Drinks tea.", kind="preference", basis="self-report",
                     permanence="durable")
    assert cli("--vault", vault.root, "recall", "tea").code == 0  # the sidecar table, Chroma later
    st = Index(vault.root, read_config(vault.root)).status()
    if not st.chroma_pending:
        pytest.skip("the recall wrote Chroma too: nothing lags")
    r = cli("--vault", vault.root, "index", "status")
    assert "Chroma lacks" in r.out and "Up to date." not in r.out, r.out


def test_import_jsonl_into_a_missing_vault_refuses_as_every_importer_does(vault, tmp_path, cli):
    vault.add_belief(title="Likes tea", statement="Drinks tea.", kind="preference", basis="self-report",
                     permanence="durable")
    assert cli("--vault", vault.root, "export", "--out", tmp_path / "a.jsonl").code == 0
    (tmp_path / "memory.json").write_text(json.dumps([{"id": "1", "memory": "Likes tea"}]))
    for args in (("jsonl", tmp_path / "a.jsonl"), ("mem0", tmp_path / "memory.json")):
        r = cli("--vault", tmp_path / "typo", "import", *args)
        assert r.code == 1 and "epimem init" in r.err, (args, r.err)
        assert not (tmp_path / "typo").exists(), args


# --- the vault is about a person ---------------------------------------------------------------------

def test_init_makes_the_vault_folder_the_owners_alone(tmp_path, cli):
    import stat

    old = os.umask(0o022)
    try:
        assert cli("init", tmp_path / "v").code == 0
        copy = tmp_path / "copy"
        shutil.copytree(ROOT / "vault", copy, ignore=shutil.ignore_patterns(".epimem"))
        assert cli("init", copy).code == 0
    finally:
        os.umask(old)
    for root in (tmp_path / "v", copy):
        assert stat.S_IMODE((root).stat().st_mode) == 0o700, oct((root).stat().st_mode)
    # A vault made before, loosened by its owner on purpose, is left as they set it by `init` again.
    os.chmod(tmp_path / "v", 0o750)
    assert cli("init", tmp_path / "v").code == 0
    assert stat.S_IMODE((tmp_path / "v").stat().st_mode) == 0o750


def test_clone_makes_the_second_machines_vault_the_owners_alone_too(vault, tmp_path, cli):
    import stat

    bare = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(vault.root), str(bare)], check=True)
    old = os.umask(0o022)
    try:
        r = cli("clone", bare, tmp_path / "second", "--no-index")
    finally:
        os.umask(old)
    assert r.code == 0, r.err
    assert stat.S_IMODE((tmp_path / "second").stat().st_mode) == 0o700


def _getting_started() -> list[tuple[list[str], str]]:
    """README's "Getting started" block: each command's words, and the output its comment shows."""
    import re
    import shlex

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^## Getting started\n+```sh\n(.*?)^```", text, re.S | re.M).group(1)
    out = []
    for line in block.replace("\\\n", " ").splitlines():
        code, _, said = line.partition("  # ")
        out.append((shlex.split(code), said.strip()))
    return out


def test_readme_getting_started_runs_as_written_and_shows_what_it_says(tmp_path):
    """The commands a new user types first, in a home of their own: each succeeds, `belief list`
    prints the line README shows, and `observe` says the move of the belief once."""
    steps = _getting_started()
    assert [w[:2] for w, _ in steps][:4] == [["epimem", "init"], ["epimem", "belief"], ["epimem", "observe"],
                                            ["epimem", "belief"]]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EPIMEM_", "XDG_"))}
    env.update(HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    for words, said in steps:
        r = subprocess.run([sys.executable, "-m", "epimem", *words[1:]], env=env, capture_output=True, text=True,
                           cwd=tmp_path, timeout=120)
        assert r.returncode == 0, (words, r.stderr)
        if words[1:3] == ["belief", "list"] and said:
            assert r.stdout.split() == said.split(), (r.stdout, said)
        if words[1] == "observe":
            assert r.stdout.count("→ 0.") == 1, r.stdout
