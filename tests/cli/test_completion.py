"""Tab completion: what the declarations offer at a TAB, and the real shells running the scripts
epimem generates and installs (bash always; zsh and fish when installed, as .ci/setup.d/shells.sh
does on CI)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from epimem.cli.completion import complete, script

BIN = str(Path(sys.executable).parent)


def values(words):
    return [v for k, v, _ in complete(list(words)) if k == "plain"]


def test_commands_options_choices_and_ids_are_offered(vault):
    vault.add_belief(title="Prefers small PRs", statement="Splits work.", kind="workflow", basis="behavioral",
                     permanence="durable")
    assert values(["bel"]) == ["belief"]
    assert {"add", "show", "list", "supersede"} <= set(values(["belief", ""]))
    assert values(["belief", "list", "--status", ""]) == ["active", "superseded", "retired", "all"]
    assert values(["belief", "list", "--st"]) == ["--status"]
    assert "--title" in values(["belief", "add", "--"]) and "--help" in values(["belief", "add", "--"])
    assert values(["--vault", str(vault.root), "belief", "show", ""]) == ["prefers-small-prs"]
    assert values(["--vault", str(vault.root), "belief", "show", "x"]) == []
    assert complete(["export", "--out", ""]) == [("file", "", "")]
    assert complete(["export", "--out", "=", ""]) == [("file", "", "")]  # bash splits --out=x at the =
    assert complete(["--vault", ""]) == [("dir", "", "")]
    assert {"claude-code", "codex", "gemini"} <= set(values(["install", ""]))
    assert values(["install", "codex", "--scope", "p"]) == ["project"]
    assert "--budget" not in values(["recall", "--"])  # hidden: deprecated
    assert "merge-driver" not in values([""])           # hidden: git runs it


def _bash(lines: str, env=None) -> str:
    r = subprocess.run(["bash", "-c", lines], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", **(env or {})})
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_bash_completes_with_the_generated_script(tmp_path, vault, monkeypatch):
    vault.add_belief(title="Prefers small PRs", statement="Splits work.", kind="workflow", basis="behavioral",
                     permanence="durable")
    f = tmp_path / "epimem.bash"
    f.write_text(script("bash"))
    (tmp_path / "notes.txt").write_text("x")

    def comp(*words):
        quoted = " ".join(f"'{w}'" for w in words)
        return _bash(f"source {f}; COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; _epimem_completion; "
                     "printf '%s\\n' \"${COMPREPLY[@]}\"", env={"EPIMEM_VAULT": str(vault.root)}).split()

    assert comp("epimem", "bel") == ["belief"]
    assert comp("epimem", "belief", "show", "") == ["prefers-small-prs"]
    assert comp("epimem", "tensions", "--status", "w") == ["watching"]
    monkeypatch.chdir(tmp_path)  # os.chdir left every later test of the worker in a deleted folder
    assert comp("epimem", "export", "--out", "no") == ["notes.txt"]
    assert "complete -o nosort -F _epimem_completion epimem" in _bash(f"source {f}; complete -p epimem")


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (.ci/setup.d/shells.sh installs it)")
def test_zsh_completes_with_the_generated_script(tmp_path):
    f = tmp_path / "_epimem"
    f.write_text(script("zsh"))
    # The completion system's two functions the script calls, replaced by ones that print.
    probe = (f"_describe() {{ print -l -- ${{(P)${{@[-1]}}}} }}; _files() {{ print FILES $@ }}; "
             f"compdef() {{ : }}; source {f}; words=(epimem belief li); CURRENT=3; _epimem; "
             "words=(epimem export --out ''); CURRENT=4; _epimem")
    r = subprocess.run(["zsh", "-f", "-c", probe], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("list:List beliefs") and lines[-1] == "FILES"


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed (.ci/setup.d/shells.sh installs it)")
def test_fish_completes_with_the_generated_script(tmp_path):
    f = tmp_path / "epimem.fish"
    f.write_text(script("fish"))
    r = subprocess.run(["fish", "--no-config", "-c", f"source {f}; complete -C 'epimem belief li'"],
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("list\tList beliefs"), r.stdout


def _home_env(tmp_path) -> dict:
    home = tmp_path / "home"
    home.mkdir()
    return {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CONFIG_HOME": str(home / ".config"), "PATH": f"{BIN}:{os.environ['PATH']}"}


def _epimem(env, *args):
    return subprocess.run([sys.executable, "-m", "epimem", *args], capture_output=True, text=True, env=env,
                          timeout=60)


def test_install_completion_makes_a_new_bash_complete(tmp_path):
    env = _home_env(tmp_path)
    r = _epimem({**env, "SHELL": "/bin/bash"}, "--install-completion")
    assert r.returncode == 0, r.stderr
    assert _epimem({**env, "SHELL": "/bin/bash"}, "--install-completion").returncode == 0  # twice: one line
    rc = Path(env["HOME"]) / ".bashrc"
    assert rc.read_text().count("epimem --install-completion") == 1
    out = subprocess.run(["bash", "-i", "-c", "complete -p epimem"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert "_epimem_completion" in out.stdout, out.stderr


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (.ci/setup.d/shells.sh installs it)")
def test_install_completion_makes_a_new_zsh_complete(tmp_path):
    env = _home_env(tmp_path)
    assert _epimem(env, "completion", "zsh", "--install").returncode == 0
    out = subprocess.run(["zsh", "-i", "-c", "print ${_comps[epimem]}"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.stdout.strip() == "_epimem", out.stderr


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed (.ci/setup.d/shells.sh installs it)")
def test_install_completion_makes_a_new_fish_complete(tmp_path):
    env = _home_env(tmp_path)
    assert _epimem(env, "completion", "fish", "--install").returncode == 0
    out = subprocess.run(["fish", "-c", "complete -C 'epimem mirror au'"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.stdout.startswith("audit\t"), (out.stdout, out.stderr)


def test_a_shell_it_does_not_know_is_a_usage_error(tmp_path):
    r = _epimem({**_home_env(tmp_path), "SHELL": "/bin/tcsh"}, "--install-completion")
    assert r.returncode == 2 and "give the shell: one of bash, zsh, fish" in r.stderr
