"""Shared fixtures: real vaults (real git repositories) in temporary directories."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Set at import, before xdist starts its workers, so they and their subprocesses inherit it:
#
# Some CI images set PYTHONDONTWRITEBYTECODE. Under it every `python -m epimem` a test starts
# compiles epimem from source again, and pytest rewrites every test module on every run. The
# cache goes where Python puts it, in gitignored __pycache__ folders.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def _temp_in_memory(root: str = "/dev/shm", need: int = 2 << 30) -> None:
    """The tests' temporary folders on tmpfs where the machine has room for them. A default run
    makes ~1,800 vaults, each a git repository (half a gigabyte, 60k files, written and deleted):
    on a virtual disk that is I/O the run waits for, on the CPU budget of two cores. Same
    file-system semantics that matter here (POSIX renames, locks, mtimes, inotify); a container's
    64 MB /dev/shm, or none (macOS), leaves the system's temp folder in charge. A developer's own
    PYTEST_DEBUG_TEMPROOT or TMPDIR wins."""
    if "PYTEST_DEBUG_TEMPROOT" in os.environ or "TMPDIR" in os.environ:
        return
    try:
        st = os.statvfs(root)
    except OSError:
        return
    if st.f_bavail * st.f_frsize < need or not os.access(root, os.W_OK | os.X_OK):
        return
    import tempfile

    os.environ["PYTEST_DEBUG_TEMPROOT"] = os.environ["TMPDIR"] = root
    tempfile.tempdir = None  # gettempdir() caches its first answer


_temp_in_memory()

ROOT = Path(__file__).resolve().parent.parent
TODAY = "2026-11-30"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path_factory):
    # No test may touch the developer's real vault, git identity or API key.
    monkeypatch.delenv("EPIMEM_VAULT", raising=False)
    for var in ("ANTHROPIC_API_KEY", "EPIMEM_CHROMA_URL", "EPIMEM_EMBEDDER", "OLLAMA_HOST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("EPIMEM_TODAY", TODAY)
    # The test-only switch of rule 20: a replayed day may date writes, even one after the
    # machine's date (tests of rule 20 itself remove it).
    monkeypatch.setenv("EPIMEM_TEST_CLOCK", "1")
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")


@pytest.fixture
def vault(tmp_path):
    """A fresh, initialised vault; returns its Memory (a copy of the session's template).
    Under `@pytest.mark.seed_rules` its epistemology.md pins the seed's numbers (tests/vaults.py)."""
    from vaults import new_vault

    return new_vault(tmp_path / "vault", today=TODAY)


@pytest.fixture(autouse=True)
def _seed_rules(request, monkeypatch):
    # A test that states the seed's numbers gets vaults made as an epimem whose template still
    # held them made its vaults: new_vault's, and those `init` makes in this process.
    if request.node.get_closest_marker("seed_rules"):
        import vaults

        from epimem.api import setup

        monkeypatch.setattr(setup, "TEMPLATES", vaults.seed_templates())


@pytest.fixture
def sample_vault(tmp_path):
    """A copy of the sample vault in `vault/`, made its own git repository."""
    from vaults import sample_repo

    return sample_repo(tmp_path / "sample")


class CLIResult:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    def json(self):
        import json

        return json.loads(self.out)


@pytest.fixture
def cli(capsys):
    """Run `epimem ARGS` in-process (the same `main` the console script calls)."""
    from epimem.__main__ import main

    def run(*args: str, stdin: str | None = None) -> CLIResult:
        import io
        import sys

        capsys.readouterr()
        old = sys.stdin
        if stdin is not None:
            sys.stdin = io.StringIO(stdin)
        try:
            code = main([str(a) for a in args])
        finally:
            sys.stdin = old
        cap = capsys.readouterr()
        return CLIResult(code or 0, cap.out, cap.err)

    return run


@pytest.fixture
def clean_recall_env(monkeypatch):
    """A developer's own recall settings must not leak into the tests."""
    for var in ("EPIMEM_CHROMA_URL", "EPIMEM_EMBEDDER", "OLLAMA_HOST"):
        monkeypatch.delenv(var, raising=False)
