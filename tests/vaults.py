"""Vaults for tests, copied from templates made once per test session.

`git init` and the first commit cost a test about as much as the rest of it: a vault made by
`Memory.init` once per session (per replayed day) and copied with its `.git` is the same vault,
bytes and history, for a fraction of that. Tests of `init` itself still call `Memory.init`.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}

_base: Path | None = None
_templates: dict[str, Path] = {}


def _template_dir() -> Path:
    global _base
    if _base is None:
        _base = Path(tempfile.mkdtemp(prefix="epimem-test-templates-"))
        atexit.register(shutil.rmtree, _base, ignore_errors=True)
    return _base


def _without_git_samples(repo: Path) -> Path:
    # `git init` copies a dozen inert `*.sample` hooks into every repository: a sixth of a
    # template's files, copied by each of ~1,800 tests and deleted after it, for nothing.
    for sample in (repo / ".git" / "hooks").glob("*.sample"):
        sample.unlink()
    return repo


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


# SPEC §2's first numbers (behavioural start 0.30, confirmation step 0.05, challenge step 0.10),
# as the sample vault's epistemology.md pins them. A vault made before the defaults moved
# (issue 26) keeps them the same way: init writes every parameter into the vault's own file.
SEED_RULES = ROOT / "vault" / "epistemology.md"


def seed_params():
    """The parameters a vault pinning the seed's rules reads (what `SEED_RULES` says)."""
    from epimem.core.notes import parse_note
    from epimem.core.params import params_from_meta

    params, problems = params_from_meta(parse_note(SEED_RULES.read_text(encoding="utf-8")).meta)
    assert not problems, problems
    return params


def new_vault(path: Path, today: str):
    """A fresh vault at `path`, as `Memory.init(path, today=today)` makes it; returns its Memory.
    Made from the templates epimem has in effect, so a test marked `seed_rules` (whose autouse
    fixture points them at `seed_templates()`) gets a vault pinning the seed's numbers."""
    from epimem.api import setup
    from epimem.api.memory import Memory

    key = f"vault-{today}-{setup.TEMPLATES}"
    if key not in _templates:
        tpl = _template_dir() / f"vault-{today}-{len(_templates)}"
        Memory.init(tpl, today=today)
        _templates[key] = _without_git_samples(tpl)
    return Memory(_copy(_templates[key], Path(path)), today=today)


def seed_templates() -> Path:
    """epimem's templates folder as it was before the defaults moved: `SEED_RULES` as its
    epistemology.md, the rest as shipped."""
    key = "templates-seed"
    if key not in _templates:
        tpl = _copy(ROOT / "epimem" / "templates", _template_dir() / key)
        shutil.copy(SEED_RULES, tpl / "epistemology.md")
        _templates[key] = tpl
    return _templates[key]


def sample_repo(path: Path) -> Path:
    """The sample vault in `vault/` as its own git repository with one commit."""
    key = "sample"
    if key not in _templates:
        tpl = _template_dir() / key
        shutil.copytree(ROOT / "vault", tpl, ignore=shutil.ignore_patterns(".epimem"))
        if not (tpl / "epistemology.md").exists():
            shutil.copy(ROOT / "epimem" / "templates" / "epistemology.md", tpl / "epistemology.md")
        env = {**os.environ, **IDENTITY}
        subprocess.run(["git", "init", "-q"], cwd=tpl, check=True, env=env)
        subprocess.run(["git", "add", "-A"], cwd=tpl, check=True, env=env)
        subprocess.run(["git", "commit", "-qm", "sample vault"], cwd=tpl, check=True, env=env)
        _templates[key] = _without_git_samples(tpl)
    return _copy(_templates[key], Path(path))


def count_sessions(mem, *ids: str, today: str | None = None) -> None:
    """Count sessions as the session-start hook does, each with its id: rule 19 lets only the
    observations of a session the vault counted move a number more than a step a day."""
    from epimem.api.memory import Memory

    m = Memory(mem.root, today=today) if today else mem
    for sid in ids:
        m.session_start("startup", session=sid)
