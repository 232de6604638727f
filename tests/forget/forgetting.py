"""A vault that knows something to forget, and the checks that nothing of it is left anywhere."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from epimem.api.memory import Memory

SECRET = "zq9-hunter2-Secret"      # in the belief's statement, an observation, a tension, a title edit
TYPED = "pw-7Xk2-typed-by-hand"    # typed into another belief by hand (a --purge-text case)
IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def git(root: Path, *args: str, check: bool = True, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    p = subprocess.run(["git", *args], cwd=root, capture_output=True, input=stdin, env={**os.environ, **IDENTITY})
    if check and p.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {p.stderr.decode()}{p.stdout.decode()}")
    return p


def rich_vault(mem: Memory) -> Memory:
    """prefers-tabs (its statement, an observation, a contradicting one and its tension, a title edit in a
    commit message, an audit that names it, another belief it superseded) and short-prs, kept."""
    mem.add_belief(title="Old editor habit", statement="Used whatever the editor did.", kind="preference",
                   basis="self-report", permanence="durable", confidence=None, tags=[], scope="global",
                   supersedes=[], pinned=False, belief_id="old-editor")
    mem.add_belief(title="Prefers tabs", statement=f"Indents with tabs; mentioned {SECRET} once.",
                   kind="preference", basis="self-report", permanence="durable", confidence=None, tags=["editor"],
                   scope="global", supersedes=["old-editor"], pinned=False, belief_id="prefers-tabs")
    mem.add_belief(title="Short pull requests", statement="Keeps pull requests small.", kind="workflow",
                   basis="behavioral", permanence="durable", confidence=None, tags=[], scope="global",
                   supersedes=[], pinned=False, belief_id="short-prs")
    for s in ("s1", "s2", "s3"):  # sessions the hook counted (those it never counted share one bound: rule 9)
        mem.session_start("startup", session=s)
    mem.observe([{"connects": "prefers-tabs", "strength": "confirming", "basis": "behavioral", "session": "s1",
                  "evidence": f"Reformatted a file with tabs while pasting {SECRET}."}])
    mem.observe([{"connects": "prefers-tabs", "strength": "contradicting", "basis": "behavioral", "session": "s2",
                  "evidence": "Switched a project to spaces without a word."}])
    mem.observe([{"connects": "short-prs", "strength": "confirming", "basis": "behavioral", "session": "s3",
                  "evidence": "Split a refactor into three pull requests."}])
    mem.edit_belief("prefers-tabs", note="the user's words", title=f"Prefers tabs ({SECRET})")
    mem.record_review("audit", f"# Audit\n\n| belief | stored |\n|---|---|\n| Prefers tabs ({SECRET}) | 0.45 |\n"
                      "| Short pull requests | 0.35 |\n\n- **Drift**: `prefers-tabs`\n- **Never confirmed**: "
                      "`short-prs`\n", beliefs=["prefers-tabs", "short-prs"])
    return mem


def all_objects(root: Path) -> bytes:
    return git(root, "cat-file", "--batch-all-objects", "--batch").stdout


def files_holding(root: Path, needle: bytes) -> list[str]:
    """Every file under `root` (the git directory, `.epimem/`, Chroma's store included) whose raw bytes hold it."""
    hits = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = Path(dirpath) / n
            try:
                if needle in p.read_bytes():
                    hits.append(str(p.relative_to(root)))
            except OSError:
                continue
    return hits


def assert_no_trace(root: Path, *needles: str, old_commits: set[str] = frozenset()) -> None:
    """Nothing under the vault holds any of `needles`: no git object (reachable or not, loose or packed),
    no object's path, no file (caches, the index's table, Chroma's store, the git directory), and of
    `old_commits` (what the vault held before) those that held them are gone, from the reflogs too."""
    blob = all_objects(root)
    names = git(root, "rev-list", "--all", "--objects").stdout
    for n in needles:
        b = n.encode()
        assert b not in blob, f"a git object holds {n!r}"
        assert b not in names, f"an object's path holds {n!r}"
        assert files_holding(root, b) == [], (n, files_holding(root, b))
    still = {c for c in old_commits if git(root, "cat-file", "-e", c, check=False).returncode == 0}
    for c in still:  # an old commit that is still there (one before what was forgotten) holds none of it
        assert not any(n.encode() in git(root, "cat-file", "-p", c).stdout for n in needles), c
    reflog = set(git(root, "log", "-g", "--all", "--format=%H", check=False).stdout.decode().split())
    assert reflog <= set(git(root, "rev-list", "--all").stdout.decode().split()), "a reflog names a lost commit"
    count = dict(line.split(": ") for line in git(root, "count-objects", "-v").stdout.decode().splitlines())
    assert count["garbage"] == "0", count


def export_text(mem: Memory) -> str:
    import io

    from epimem.api import portability

    out = io.StringIO()
    portability.export(mem, out)
    return out.getvalue()
