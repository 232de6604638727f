"""An `epimem` on PATH that runs this checkout, a temporary HOME, and a vault in it."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


class Env:
    def __init__(self, home: Path, bin_dir: Path, vault: Path, project: Path):
        self.home, self.bin, self.vault, self.project = home, bin_dir, vault, project
        self.epimem = bin_dir / "epimem"

    def environ(self, **extra: str) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "GEMINI_", "XDG_CONFIG"))}
        env.update(HOME=str(self.home), PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
                   NO_COLOR="1", **extra)
        return env

    def run(self, *args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run([str(self.epimem), "--vault", str(self.vault), *args], cwd=cwd or self.project,
                              env=self.environ(), capture_output=True, text=True, timeout=120)
        if check and proc.returncode != 0:
            raise AssertionError(f"epimem {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return proc


@pytest.fixture
def agent_env(tmp_path) -> Env:
    home = tmp_path / "home"
    project = home / "project"
    project.mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # The agents start `epimem` by the absolute path the installer found on PATH: this script,
    # so that the server and the hook they start run this checkout.
    script = bin_dir / "epimem"
    script.write_text("#!/bin/sh\n"
                      f"PYTHONPATH={shlex.quote(str(ROOT))} exec {shlex.quote(sys.executable)} -m epimem \"$@\"\n")
    script.chmod(0o755)
    (home / ".gitconfig").write_text("[user]\n\tname = t\n\temail = t@example.invalid\n")
    env = Env(home, bin_dir, home / "vault", project)
    env.run("init")
    return env
