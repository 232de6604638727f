"""A git that can make a reftable repository (git >= 2.45), for the tests that need one.

Debian 12's git is 2.39; `.ci/setup.d/git-reftable.sh` builds git 2.47 from Debian 13's source
package (Debian's registry is the only network it uses) into the tests' cache. A test that needs
it is skipped, saying why, on a machine where the script has not run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from npm_tools import cache_dir

WANT = (2, 45)
BUILT = "2.47.3"


def _version(exe: str) -> tuple[int, ...]:
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False).stdout
    m = re.search(r"(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def reftable_git() -> Path:
    """The folder of a git binary >= 2.45 (to put first on PATH), or the test is skipped."""
    system = shutil.which("git")
    if system and _version(system) >= WANT:
        return Path(system).parent
    built = cache_dir() / f"git-{BUILT}" / "bin" / "git"
    if built.exists() and os.access(built, os.X_OK) and _version(str(built)) >= WANT:
        return built.parent
    have = ".".join(map(str, _version(system))) if system else "none"
    pytest.skip(f"a reftable repository needs git >= {'.'.join(map(str, WANT))} and this machine has {have}; "
                f"`bash .ci/setup.d/git-reftable.sh` builds git {BUILT} from Debian's source package "
                f"into {built.parent.parent}")
