"""Several machines sharing one vault: a real bare remote and real clones in a temp dir."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from vaults import new_vault

from epimem.api import sync as sync_api
from epimem.api.memory import Memory

IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **IDENTITY})
    if check and p.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {p.stderr}{p.stdout}")
    return p


def machines(tmp: Path, n: int, today: str = "2026-11-01", beliefs: tuple[tuple[str, float], ...] = ()
             ) -> tuple[Path, list[Memory]]:
    """A bare remote and `n` clones of one vault (the first made it, the others cloned it)."""
    remote = tmp / "remote.git"
    git(tmp, "init", "-q", "--bare", str(remote))
    first = new_vault(tmp / "m0", today=today)
    for bid, conf in beliefs:
        first.add_belief(title=f"Belief {bid}", statement=f"The statement of {bid}.", kind="preference",
                         basis="behavioral", permanence="durable", confidence=conf, belief_id=bid)
    git(first.root, "remote", "add", "origin", str(remote))
    sync_api.sync(first, index=False)
    out = [first]
    for i in range(1, n):
        rep = sync_api.clone(str(remote), tmp / f"m{i}", index=False)
        out.append(Memory(rep.root, today=today))
    return remote, out


def vault_files(root: Path) -> dict[str, bytes]:
    """Every tracked file's bytes: what a clone holds."""
    names = git(root, "ls-files", "-z").stdout.split("\0")
    return {n: (root / n).read_bytes() for n in names if n}
