"""What every agent's installer shares: the plan of file changes, backups, marker blocks, skills.

An install is computed first as a list of `Action`s (a file, what happens to
it, its new text) and only then carried out, so `--dry-run` prints exactly
what `apply` would do, and a file that cannot be parsed stops the plan before
anything is written.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import EpimemError
from ..store.files import atomic_write

TEMPLATES = Path(__file__).parent.parent / "templates" / "agents"
BEGIN, END = "<!-- epimem:begin -->", "<!-- epimem:end -->"
# The version of the files epimem writes into an agent's folders (instructions, skills).
# `install --list` shows it, so a user sees which agents still have older files.
FILES_VERSION = "1"
SKILLS = ("observe", "mirror")


class InstallError(EpimemError):
    """Something the user must fix first; nothing has been changed."""


@dataclass
class Action:
    path: Path
    what: str          # "create", "update", "remove", "unchanged", "refused"
    detail: str
    new: str | None = None   # the file's new text (None: delete it)
    backup: bool = True      # Claude Code's settings files: copy the old text aside first (on install)

    def line(self) -> str:
        return f"{self.what:<9} {self.path} — {self.detail}"


def read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise InstallError(f"cannot read {path}: {e}") from None


def change(path: Path, old: str | None, new: str | None, detail: str, *, same: str) -> Action:
    """The action that turns `old` (None: no file) into `new` (None: no file)."""
    if new == old:
        return Action(path, "unchanged", same)
    if new is None:
        return Action(path, "remove", detail)
    return Action(path, "create" if old is None else "update", detail, new)


BACKUP = ".epimem-backup-"


def backup(path: Path) -> Path:
    """A copy beside the file, named for the moment (`settings.json.epimem-backup-20261201-1200`);
    copy2 keeps the mode, so a backup of a 0600 file is 0600. Every installer backs up this way."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    dst = path.with_name(f"{path.name}{BACKUP}{stamp}")
    n = 1
    while dst.exists():
        n += 1
        dst = path.with_name(f"{path.name}{BACKUP}{stamp}-{n}")
    shutil.copy2(path, dst)
    return dst


def apply(actions: list[Action]) -> list[str]:
    """Carry out a plan. Every existing file is backed up before it changes. Returns notes."""
    notes = []
    for a in actions:
        if a.what in ("unchanged", "refused"):
            continue
        if a.path.exists() and not _wholly_ours(a.path):
            notes.append(f"backup of {a.path} in {backup(a.path)}")
        if a.new is None:
            a.path.unlink(missing_ok=True)
            _prune(a.path.parent)
            continue
        atomic_write(a.path, a.new)
    return notes


def _wholly_ours(path: Path) -> bool:
    # Skills and Cursor's rule are whole files of ours (refused when they are not): nothing of the
    # user's to keep, and a backup beside them would keep their folder from going on uninstall.
    return path.name in ("SKILL.md", "epimem.mdc")


def _prune(folder: Path) -> None:
    """Remove the folders epimem's files leave empty (a skill's folder, `skills/`, `rules/`)."""
    for d in (folder, folder.parent):
        if d.name not in (*SKILLS, "skills", "rules"):
            break
        try:
            d.rmdir()
        except OSError:
            break


# --- the command an agent runs -------------------------------------------------------------

def epimem_command() -> list[str]:
    """How an agent starts this epimem: the running `epimem` script by absolute path.

    Agents start MCP servers and hooks with their own PATH (a desktop app's is
    not the shell's), so a bare `epimem` is not enough; `python -m epimem`
    (when epimem was not started through its script) is the fallback.
    """
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "epimem" and argv0.is_file():
        return [str(argv0.absolute())]
    found = shutil.which("epimem")
    if found:
        return [str(Path(found).absolute())]
    return [sys.executable, "-m", "epimem"]


# --- blocks between markers in an always-on file -------------------------------------------

def add_block(text: str, block: str) -> str:
    """The block replaced between its markers, or appended after a blank line."""
    if BEGIN in text and END in text:
        start, end = text.index(BEGIN), text.index(END) + len(END)
        return text[:start] + block + text[end:]
    if not text:
        return block + "\n"
    return (text if text.endswith("\n") else text + "\n") + "\n" + block + "\n"


def remove_block(text: str) -> str:
    if BEGIN not in text or END not in text:
        return text
    start, end = text.index(BEGIN), text.index(END) + len(END)
    before, after = text[:start], text[end:]
    if after.startswith("\n"):
        after = after[1:]
    if not after and before.endswith("\n\n"):
        before = before[:-1]
    return before + after


def block_version(text: str | None) -> str | None:
    """The files version written in a block (or a whole file) of ours, None when there is none."""
    if not text or BEGIN not in text:
        return None
    m = re.search(r"epimem:files-version ([^;\s]+)", text)
    return m.group(1) if m else "?"


def template(name: str, **values: str) -> str:
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text


# --- skills ------------------------------------------------------------------------------

def skill_text(name: str, *, agent: str, cli: str) -> str:
    return template(f"skills/{name}/SKILL.md", agent=agent, cli=cli, version=FILES_VERSION)


def _skill_metadata(text: str) -> dict:
    """A skill's `metadata:` block (SKILL.md frontmatter), {} when it has none or does not parse."""
    from ..core.notes import parse_note

    note = parse_note(text, lenient=True)
    md = note.meta.get("metadata") if note is not None else None
    return md if isinstance(md, dict) else {}


def skill_is_ours(text: str) -> bool:
    return _skill_metadata(text).get("package") == "epimem"


def skill_version(text: str | None) -> str | None:
    if not text or not skill_is_ours(text):
        return None
    v = _skill_metadata(text).get("version")
    return str(v) if v not in (None, "") else "?"


def skill_actions(folder: Path, *, agent: str, cli: str, uninstall: bool) -> list[Action]:
    out = []
    for name in SKILLS:
        dst = folder / name / "SKILL.md"
        cur = read(dst)
        if uninstall:
            if cur is None:
                continue
            if skill_is_ours(cur):
                out.append(Action(dst, "remove", f"the {name} skill"))
            else:
                out.append(Action(dst, "unchanged", f"not epimem's {name} skill; left alone"))
            continue
        src = skill_text(name, agent=agent, cli=cli)
        if cur is not None and not skill_is_ours(cur):
            out.append(Action(dst, "refused", f"a {name} skill that is not epimem's is already there; "
                                              "move it away to install epimem's"))
            continue
        out.append(change(dst, cur, src, f"the {name} skill", same=f"{name} skill up to date"))
    return out


def home() -> Path:
    return Path(os.path.expanduser("~"))
