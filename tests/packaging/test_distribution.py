"""What a user installs: the wheel and the sdist, each built the way pip, pipx and `uv tool` build
them (PEP 517, in an isolated build environment), installed with their dependencies into a fresh
venv, then used the way the README uses them, with no network but the package index
(the recall runs offline: no model is fetched at run time, SPEC §6)."""

from __future__ import annotations

import json
import os
import pwd
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import epimem

ROOT = Path(__file__).resolve().parents[2]
DIST = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]



def _env(home: Path, **extra: str) -> dict[str, str]:
    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EPIMEM_", "VIRTUAL_ENV"))}
    # The user's pip cache, not the test's empty HOME's: the dependencies come from the index once.
    env.setdefault("PIP_CACHE_DIR", str(real_home / ".cache" / "pip"))
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / ".local" / "share"), **extra)
    return env


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    # `python -m build` makes the sdist, then the wheel from the sdist: a file the sdist forgot
    # is missing from the wheel too.
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=600,
                          env=_env(tmp_path_factory.mktemp("build-home")))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheel = next(out.glob("*.whl"))
    sdist = next(out.glob("*.tar.gz"))
    return {"wheel": wheel, "sdist": sdist}


def test_the_distribution_is_not_the_name_someone_else_owns():
    # `epimem` on the package index is an unrelated project (SPEC §15): ours has its own name,
    # and the command stays `epimem`.
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert meta["name"] != "epimem"
    assert meta["scripts"] == {"epimem": "epimem.__main__:main"}


def test_every_install_line_in_the_docs_installs_this_project():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
            *sorted((ROOT / "epimem").rglob("*.md")), *sorted((ROOT / "epimem").rglob("*.py")),
            ROOT / "epimem" / "templates" / "claude" / "plugin" / "bin" / "epimem"]
    bad = []
    # `pip install epimem`, `pipx install 'epimem[minilm]'`, `uv tool install epimem`: the other project.
    pattern = re.compile(r"\b(?:pip|pipx|uv tool|uv pip) install\s+(?:-[\w-]+\s+)*['\"]?epimem(?![\w-])")
    for path in docs:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line) and "never" not in line:
                bad.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert bad == []


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_an_artifact_installs_into_a_fresh_venv_and_works_offline(kind, artifacts, tmp_path):
    artifact = artifacts[kind]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    home = tmp_path / "home"
    home.mkdir()
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(artifact)],
                         capture_output=True, text=True, timeout=900, env=_env(home))
    assert pip.returncode == 0, pip.stderr[-3000:]
    exe = venv / "bin" / "epimem"
    # No network from here on: a dead proxy for anything that tries, and the hub libraries told so.
    offline = _env(home, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1",
                   HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9",
                   http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9", NO_PROXY="", no_proxy="",
                   ANONYMIZED_TELEMETRY="False", GIT_CONFIG_NOSYSTEM="1",
                   GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
                   GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")

    def run(*args: str) -> subprocess.CompletedProcess:
        # Run from an empty folder: the checkout must not be importable (no editable install leaks in).
        return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=300, env=offline,
                              cwd=tmp_path)

    v = run("--version")
    assert v.returncode == 0 and v.stdout.strip() == f"epimem {epimem.__version__}", v.stderr
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import epimem; print(epimem.__file__)"],
                           capture_output=True, text=True, env=offline, cwd=tmp_path)
    assert str(venv) in where.stdout, where.stdout + where.stderr

    init = run("init", "--json")
    assert init.returncode == 0, init.stderr
    vault = Path(json.loads(init.stdout)["vault"])
    assert vault == home / ".local" / "share" / "epimem" / "vault"
    assert (vault / "epistemology.md").is_file() and (vault / ".git").is_dir()

    add = run("belief", "add", "--title", "Drinks green tea while reviewing code",
              "--statement", "Makes a pot of green tea before a long review.", "--kind", "preference",
              "--basis", "self-report", "--permanence", "durable")
    assert add.returncode == 0, add.stderr
    run("belief", "add", "--title", "Prefers small pull requests", "--statement", "Splits work into small PRs.",
        "--kind", "workflow", "--basis", "behavioral", "--permanence", "durable")
    recall = run("recall", "tea", "--json")
    assert recall.returncode == 0, recall.stderr
    hits = json.loads(recall.stdout)["results"]
    assert hits and hits[0]["id"] == "drinks-green-tea-while-reviewing-code"
    assert "Traceback" not in recall.stderr


@pytest.mark.slow
def test_the_wheel_carries_what_a_vault_and_the_installers_need(artifacts):
    names = set(zipfile.ZipFile(artifacts["wheel"]).namelist())
    for needed in ("epimem/templates/epistemology.md", "epimem/templates/gitignore",
                   "epimem/templates/claude/plugin/.mcp.json", "epimem/templates/claude/plugin/hooks/hooks.json",
                   "epimem/templates/claude/plugin/skills/observe/SKILL.md",
                   "epimem/templates/agents/skills/mirror/SKILL.md", "epimem/recall/data/minilm-tokenizer.json",
                   "epimem/templates/page/page.html.j2"):
        assert needed in names, needed
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(artifacts["wheel"]).read(meta).decode()
    assert f"Name: {DIST}" in text
