"""What git says about HEAD and the working tree, without GitPython.

Its own module, apart from `store.git`, so that what asks only "which commit is
this, and what differs from it?" (the commit path under the vault lock, the
page's cache key before a cached page is written) imports neither the note
parser nor GitPython: HEAD is read from `.git` as git does, the status is one
`git status` process.
"""

from __future__ import annotations

import os
from pathlib import Path

# Paths are names, not patterns: a belief file called `[draft].md` must not match `d.md`.
LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}


def is_repo_root(root: Path) -> bool:
    return (root / ".git").exists()


def head_sha(root: Path) -> str | None:
    """HEAD's commit, or None (no repository, no commit yet), read from `.git` as git does (one
    file or two) without a process: the commit path runs it under the vault lock, and the
    page's cache key on every build."""
    git_dir = root / ".git"
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref: "):
            if len(head) == 40:
                return head  # detached
        else:
            ref = head[5:]
            loose = git_dir / ref
            if loose.is_file():
                sha = loose.read_text(encoding="utf-8").strip()
                if len(sha) == 40:
                    return sha
            packed = git_dir / "packed-refs"
            if packed.is_file():
                for line in packed.read_text(encoding="utf-8").splitlines():
                    if line.endswith(" " + ref) and len(line.split(" ")[0]) == 40:
                        return line.split(" ")[0]
            if not loose.exists():
                return None  # an unborn branch: no commit yet
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        pass  # a worktree (.git is a file), a ref storage git knows and we do not: ask git
    import subprocess

    if not is_repo_root(root):
        return None
    proc = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "HEAD"], cwd=root, check=False,
                          capture_output=True, text=True)
    return proc.stdout.strip() or None


def worktree_status(root: Path, paths: tuple[str, ...]) -> list[str] | None:
    """`git status` under `paths`: one "XY path" item per file that differs from HEAD (untracked
    and ignored files included), or None when git cannot say (no repository, no git).

    With git's optional lock, as every `git status`: when the index's stat data is stale (a
    vault copied or restored), git hashes every file once and refreshes the index, instead
    of hashing them all again on every call; a commit that meets the lock waits for it
    (`store.git.run`)."""
    import subprocess

    if not is_repo_root(root):
        return None
    try:
        proc = subprocess.run(["git", "status", "--porcelain=v1", "-z", "--no-renames",
                               "--untracked-files=all", "--ignored", "--", *paths],
                              cwd=root, capture_output=True, check=False,
                              env={**os.environ, **LITERAL})
    except OSError:
        return None
    if proc.returncode != 0:
        return None
    return [item for item in os.fsdecode(proc.stdout).split("\0") if len(item) > 3]
