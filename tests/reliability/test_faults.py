"""Faults a user's machine has (SPEC §8, docs/reliability.md): a full disk, a read-only vault, a
file that cannot be replaced, no git, a vault reached through a symlink.

Each is real: a 2 MB tmpfs, a read-only bind mount, an immutable file (`chattr +i`), a PATH
without git. Mounting needs root (CI runs as root); elsewhere those tests say why they skip.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from epimem.api.memory import Memory


def epimem(root: Path, *args: str, stdin: str | None = None, env: dict | None = None):
    return subprocess.run([sys.executable, "-m", "epimem", "--vault", str(root), *args], input=stdin,
                          capture_output=True, text=True, timeout=120, env=env or os.environ.copy())


def fingerprint(root: Path) -> dict[str, str]:
    """Every file of the vault outside .git and .epimem, by content."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith((".git/", ".epimem/")):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def make_vault(root: Path) -> Memory:
    mem, _ = Memory.init(root, today="2026-11-01")
    mem.add_belief(title="Prefers tabs", statement="Indents with tabs.", kind="preference",
                   basis="behavioral", permanence="durable")
    return mem


# Three observations near the longest an observation may be: a write larger than the last block.
BATCH = json.dumps([{"connects": "prefers-tabs", "strength": "confirming", "evidence": c * 3900, "session": "fault-1"}
                    for c in "xyz"])


def assert_unharmed(root: Path, before: dict[str, str]) -> None:
    assert fingerprint(root) == before
    assert not [p for p in root.rglob("*.tmp") if ".git" not in p.parts], "a temp file was left"
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    assert status.strip() == ""


def _mount(*args: str) -> None:
    p = subprocess.run(["mount", *args], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount here ({p.stderr.strip() or 'mount failed'}); this test needs root")


@pytest.fixture
def mountpoint(tmp_path):
    mp = tmp_path / "mnt"
    mp.mkdir()
    yield mp
    subprocess.run(["umount", "-l", str(mp)], capture_output=True)


def test_a_full_disk_is_a_clear_error_and_changes_nothing(tmp_path, mountpoint):
    _mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mountpoint))
    root = mountpoint / "v"
    make_vault(root)
    before = fingerprint(root)
    filler = mountpoint / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:  # fill the disk to the last block
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    p = epimem(root, "observe", "--input", "-", stdin=BATCH)
    assert p.returncode == 1
    assert "No space left on device" in p.stderr and "Traceback" not in p.stderr
    filler.unlink()
    assert_unharmed(root, before)
    # With room again, the same batch lands whole, and git's store is sound.
    p = epimem(root, "observe", "--input", "-", stdin=BATCH)
    assert p.returncode == 0, p.stderr
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=root, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr
    assert epimem(root, "validate").returncode == 0


def test_a_read_only_vault_is_read_and_refuses_writes_plainly(tmp_path, mountpoint):
    src = tmp_path / "v"
    make_vault(src)
    _mount("--bind", str(src), str(mountpoint))
    _mount("-o", "remount,ro,bind", str(mountpoint))
    before = fingerprint(src)
    listed = epimem(mountpoint, "belief", "list")
    assert listed.returncode == 0 and "prefers-tabs" in listed.stdout
    assert epimem(mountpoint, "validate").returncode == 0
    p = epimem(mountpoint, "observe", "--input", "-", stdin=BATCH)
    assert p.returncode == 1
    assert "Read-only file system" in p.stderr and "Traceback" not in p.stderr
    hook = epimem(mountpoint, "hook", "session-start", stdin=json.dumps({"session_id": "s", "source": "startup"}))
    # The hook never fails a session: it answers (from its cache when there is one) and says why not.
    assert hook.returncode == 0 and json.loads(hook.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert_unharmed(src, before)


def test_a_file_that_cannot_be_replaced_rolls_the_whole_change_back(tmp_path):
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed")
    root = tmp_path / "v"
    mem = make_vault(root)
    mem.observe([{"connects": "prefers-tabs", "strength": "confirming", "evidence": "tabs", "session": "a"}])
    before = fingerprint(root)
    belief = root / "beliefs" / "prefers-tabs.md"
    if subprocess.run(["chattr", "+i", str(belief)], capture_output=True).returncode != 0:
        pytest.skip("this file system has no immutable flag (chattr +i)")
    try:
        # The observation log is written first; the belief cannot be replaced; both stay as they were.
        p = epimem(root, "observe", "--input", "-", stdin=json.dumps(
            [{"connects": "prefers-tabs", "strength": "confirming", "evidence": "more tabs", "session": "b"}]))
        assert p.returncode == 1 and "Traceback" not in p.stderr
        assert "not permitted" in p.stderr or "Permission denied" in p.stderr
    finally:
        subprocess.run(["chattr", "-i", str(belief)], check=True)
    assert_unharmed(root, before)


def test_no_git_on_path_is_a_clear_error_and_changes_nothing(tmp_path):
    root = tmp_path / "v"
    make_vault(root)
    before = fingerprint(root)
    env = {**os.environ, "PATH": str(tmp_path / "empty-bin")}
    env.pop("GIT_PYTHON_GIT_EXECUTABLE", None)
    p = epimem(root, "observe", "--input", "-", stdin=BATCH, env=env)
    assert p.returncode == 1
    assert "git is not installed or not on PATH" in p.stderr and "Traceback" not in p.stderr
    assert_unharmed(root, before)
    p = subprocess.run([sys.executable, "-m", "epimem", "init", str(tmp_path / "new")], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 1 and "git is not installed" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.seed_rules
def test_a_vault_reached_through_a_symlink_works_the_same(tmp_path):
    root = tmp_path / "real" / "v"
    make_vault(root)
    link = tmp_path / "link"
    link.symlink_to(root, target_is_directory=True)
    p = epimem(link, "observe", "--input", "-", stdin=BATCH)
    assert p.returncode == 0, p.stderr
    assert Memory(root).belief("prefers-tabs").confidence == pytest.approx(0.35)
    assert epimem(link, "validate").returncode == 0
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    assert status.strip() == ""
