"""Rule 22 (issue 24, item 4): the model asks, the user decides. A skill's `allowed-tools` allows
exactly the commands the skill runs, as narrow prefixes matched the way Claude Code matches them;
every decision that is the user's stays outside them, so it reaches the permission prompt. Every
agent's installed instructions say the same, and MCP marks those tools destructive.
(tests/e2e/test_rule22_claude_code.py holds it with the real Claude Code binary.)"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ROOT / "epimem" / "templates" / "claude" / "plugin" / "skills"

# What the model may run by itself: recording observations and reading.
MODEL = {"observe": {"skill observe", "observe --origin skill", "skill recall", "belief list", "belief show"},
         "mirror": {"skill mirror", "mirror calibration", "observe --origin skill", "skill recall", "belief show"}}
# The user's decisions (SPEC rule 22), each as a command a careless model would run.
USER = ["belief add --title T --statement S --kind trait --basis fact --permanence stable",
        "belief edit ID --confidence 0.90", "belief retire ID", "belief reject ID --note n",
        "belief supersede OLD --by NEW", "belief merge A B", "belief pin ID", "mirror answer ID --verdict true",
        "mirror audit --record", "mirror interview --record", "undo", "redo", "tension resolve T --note n",
        "commit", "import jsonl f.jsonl", "sync", "install claude-code", "forget ID",
        "transcript ~/.claude/projects/p/s.jsonl --llm",
        "--today 2030-01-01 observe --connects x --strength confirming --evidence e"]


def allowed(name: str) -> list[str]:
    text = (SKILLS / name / "SKILL.md").read_text()
    meta = yaml.safe_load(re.match(r"^---\n(.*?)\n---\n", text, re.S).group(1))
    return re.findall(r"Bash\(([^)]*)\)", meta["allowed-tools"])


def permits(rule: str, command: str) -> bool:
    """Claude Code's prefix rule: `PREFIX *` runs PREFIX alone or PREFIX followed by a space."""
    if rule.endswith(" *"):
        prefix = rule[:-2]
        return command == prefix or command.startswith(prefix + " ")
    return command == rule


def runs(name: str) -> list[str]:
    """Every command the skill itself runs or teaches the model: `!` lines, code lines, inline."""
    body = (SKILLS / name / "SKILL.md").read_text().split("---", 2)[2]
    out = re.findall(r"^!`([^`]+)`$", body, re.M)
    out += [ln.strip() for ln in body.splitlines() if re.match(r"\s*epimem \w", ln)]
    out += re.findall(r"`(epimem [^`]+)`", body)
    return [c.replace("${CLAUDE_SESSION_ID}", "S").replace("$ARGUMENTS", "audit").strip() for c in out]


@pytest.mark.parametrize("name", ["observe", "mirror"])
def test_allowed_tools_are_exactly_the_model_commands(name):
    rules = allowed(name)
    assert rules, "allowed-tools names Bash prefixes"
    assert "epimem *" not in rules
    heads = {r[len("epimem "):].removesuffix(" *") for r in rules}
    assert heads == MODEL[name], heads


@pytest.mark.parametrize("name", ["observe", "mirror"])
def test_no_user_decision_passes_the_skills_allowed_tools(name):
    for cmd in USER:
        full = f"epimem {cmd}"
        assert not any(permits(r, full) for r in allowed(name)), (name, full)
        # nor hidden behind a model command by the shell: Claude Code checks each part of a list
        for part in re.split(r"&&|\|\||;", f"epimem observe --connects x && {full}"):
            if part.strip() == full:
                assert not any(permits(r, part.strip()) for r in allowed(name))


@pytest.mark.parametrize("name", ["observe", "mirror"])
def test_what_the_skill_runs_is_either_allowed_or_the_users(name):
    """Nothing the skill teaches falls between: a command is the model's (and allowed) or the
    user's (and refused by allowed-tools, so Claude Code asks)."""
    user = {tuple(w for w in shlex.split(c)[:2] if not w.startswith("-")) for c in USER}
    taught = runs(name)
    assert taught
    for cmd in taught:
        words = [w for w in shlex.split(cmd.replace("'\\''", ""))[1:]]
        head = tuple(words[:2]) if len(words) > 1 and not words[1].startswith("-") else tuple(words[:1])
        if any(permits(r, cmd) for r in allowed(name)):
            assert head not in user, cmd
        else:
            assert head in user or tuple(words[:1]) in user, f"{name} teaches {cmd!r}, which allowed-tools refuse"


def test_every_agents_instructions_split_the_same_way():
    for rel in ("agents/instructions.md", "claude/CLAUDE.md.example", "agents/skills/observe/SKILL.md",
                "claude/plugin/skills/observe/SKILL.md", "claude/plugin/skills/mirror/SKILL.md"):
        rel = f"epimem/templates/{rel}"
        text = " ".join((ROOT / rel).read_text().split())
        assert "permission prompt" in text or "asks them" in text, rel
        for word in ("retir", "supersed", "undo", "import", "sync", "--today"):
            assert word in text, (rel, word)


def test_mcp_marks_every_decision_of_the_user_destructive():
    import anyio
    from mcp import Client

    from epimem.api.memory import Memory
    from epimem.mcp.server import build

    async def main(root):
        async with Client(build(root)) as c:
            tools = {t.name: t.annotations for t in (await c.list_tools()).tools}
        decisions = {"answer", "supersede", "retire", "resolve_tension", "record_review"}
        assert decisions <= set(tools)
        for name, a in tools.items():
            assert a.destructive_hint is (name in decisions), name

    import tempfile

    with tempfile.TemporaryDirectory() as d:
        Memory.init(Path(d) / "v")
        anyio.run(main, Path(d) / "v")


def test_the_transcript_pass_is_not_reachable_through_observe(tmp_path):
    """`epimem observe --origin skill *` is the skills' own prefix and a prefix cannot exclude a flag: were the
    transcript pass still `observe --from-transcript FILE --llm`, a model could send a whole
    transcript to the Anthropic API with the user's key under the skill's permission. It is
    refused there (exit 2, nothing recorded) and lives in `epimem transcript`, outside both skills."""
    import subprocess
    import sys

    from epimem.api.memory import Memory

    root = tmp_path / "v"
    Memory.init(root)
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    t = tmp_path / "t.jsonl"
    t.write_text('{"type": "user", "sessionId": "s", "uuid": "1", "message": {"role": "user", '
                 '"content": "I prefer tabs over spaces in every file."}}\n', encoding="utf-8")
    for extra in (["--from-transcript", str(t), "--llm"], ["--from-transcript", str(t)], ["--llm", "--connects", "x",
                  "--strength", "confirming", "--evidence", "e"]):
        cmd = ["observe", "--origin", "skill", *extra]
        for name in ("observe", "mirror"):
            assert any(permits(r, "epimem " + " ".join(cmd)) for r in allowed(name))  # the prefix admits it …
        p = subprocess.run([sys.executable, "-m", "epimem", "--vault", str(root), *cmd],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and "epimem transcript FILE" in p.stderr, p.stderr  # … epimem does not
    after = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert after == head and not list((root / "observations").glob("*.md"))


# What `recall` lets its user choose and a model must not: a file read and printed back as queries,
# and where the vault's text is sent (a Chroma server, an embedder).
BEYOND_A_QUERY = [("--queries", "{secret}"), ("--chroma-url", "http://198.51.100.7:8000"),
                  ("--embedder", "ollama:nomic-embed-text")]


@pytest.mark.parametrize("name", ["observe", "mirror"])
@pytest.mark.parametrize("flag,value", BEYOND_A_QUERY, ids=[f for f, _ in BEYOND_A_QUERY])
def test_what_a_skill_may_recall_reads_no_file_and_sends_nothing_away(name, flag, value, cli, tmp_path):
    """A red-team finding: `Bash(epimem recall *)` let a model run `epimem recall --queries
    ~/.ssh/id_ed25519` (each line printed back as a query) or `--chroma-url` a server of its
    choosing. The skills grant `skill recall`, which takes a query and the filters only."""
    from epimem.api.memory import Memory

    root = tmp_path / "v"
    Memory.init(root)
    secret = tmp_path / "private.txt"
    secret.write_text("the line no model should read\n")
    value = value.format(secret=secret)
    rule = next(r for r in allowed(name) if "recall" in r)
    for cmd in (f"epimem recall x {flag} {value}", f"epimem recall {flag} {value}"):
        assert not any(permits(r, cmd) for r in allowed(name)), cmd  # the user's command: the prompt asks
    # the grant's prefix takes it, so the command itself must refuse
    assert permits(rule, f"epimem skill recall x {flag} {value}")
    r = cli("--vault", root, "skill", "recall", "x", flag, value)
    assert r.code == 2 and f"no option {flag}" in r.err, r.err
    assert "no model should read" not in r.out + r.err
    ok = cli("--vault", root, "skill", "recall", "small pull requests", "-n", "3", "--json")
    assert ok.code == 0 and ok.json()["results"] == []
