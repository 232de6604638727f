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


# What `new_vault` makes when not told: "seed" for the length of a test marked `seed_rules`
# (conftest's autouse fixture sets it), so a test that builds its vaults itself pins them too.
RULES = "default"


def new_vault(path: Path, today: str, rules: str | None = None):
    """A fresh vault at `path`, as `Memory.init(path, today=today)` makes it; returns its Memory.

    `rules="seed"`: the same vault made when the template still held the seed's numbers — its
    first commit has `SEED_RULES` as its epistemology.md (for tests that state those numbers)."""
    from epimem.api.memory import Memory

    rules = rules or RULES
    if rules not in ("default", "seed"):
        raise ValueError(f"unknown rules {rules!r}")
    key = f"vault-{today}-{rules}"
    if key not in _templates:
        tpl = _template_dir() / key
        Memory.init(tpl, today=today)
        if rules == "seed":
            pin_seed_rules(tpl)
        _templates[key] = tpl
    return Memory(_copy(_templates[key], Path(path)), today=today)


def pin_seed_rules(root: Path) -> None:
    """Make a vault just initialised (one commit) one made when the template held the seed's
    numbers: its epistemology.md becomes `SEED_RULES`, in the same first commit."""
    shutil.copy(SEED_RULES, Path(root) / "epistemology.md")
    env = {**os.environ, **IDENTITY}
    subprocess.run(["git", "commit", "-qa", "--amend", "--no-edit"], cwd=root, check=True, env=env)


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
        _templates[key] = tpl
    return _copy(_templates[key], Path(path))


def count_sessions(mem, *ids: str, today: str | None = None) -> None:
    """Count sessions as the session-start hook does, each with its id: rule 19 lets only the
    observations of a session the vault counted move a number more than a step a day."""
    from epimem.api.memory import Memory

    m = Memory(mem.root, today=today) if today else mem
    for sid in ids:
        m.session_start("startup", session=sid)
