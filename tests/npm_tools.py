"""Real agents' CLIs from npm, installed once into a cache every test run shares.

The end-to-end tests run the binaries users run (Claude Code, Codex, Gemini CLI, opencode), never a
stand-in. Each pinned package is installed with `npm install --prefix` into its own folder under
the cache (`EPIMEM_TEST_CACHE`, default `~/.cache/epimem-tests`), under a file lock so parallel
test processes install it once. When npm is missing or the registry refuses, the test is skipped
with npm's own words; nothing is installed by hand.
"""

from __future__ import annotations

import fcntl
import os
import pwd
import shutil
import subprocess
from pathlib import Path

import pytest


def cache_dir() -> Path:
    # The user's real home, not $HOME: tests/conftest.py gives every test a temporary HOME, and a
    # cache there would download Claude Code's 380 MB again for every test.
    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    root = Path(os.environ.get("EPIMEM_TEST_CACHE") or real_home / ".cache" / "epimem-tests")
    root.mkdir(parents=True, exist_ok=True)
    return root


def npm_tool(package: str, version: str, binary: str, *, timeout: float = 900) -> Path:
    """The path of `binary` from `package@version`, installing it on first use."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm is not installed, so {package}@{version} cannot be installed")
    prefix = cache_dir() / "npm" / f"{package.replace('/', '__')}@{version}"
    exe = prefix / "node_modules" / ".bin" / binary
    if exe.exists():
        return exe
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix.with_name(prefix.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if exe.exists():  # another process installed it while this one waited
            return exe
        proc = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error",
             f"{package}@{version}"],
            capture_output=True, text=True, timeout=timeout,
        )
        if proc.returncode != 0 or not exe.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
            pytest.skip(f"npm could not install {package}@{version}: " + " / ".join(tail))
    return exe
