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
