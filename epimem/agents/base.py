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
from collections.abc import Callable
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
    backup: bool = True      # copy an existing file aside before it changes (not for files wholly ours)
    # Uninstall: the file's text with epimem's parts taken out. A backup it turns into what the
    # uninstall leaves holds nothing more of the user's, and goes with the install it backed up.
    strip: Callable[[str], str | None] | None = None
    stop: Path | None = None   # empty folders the removal leaves are removed up to this one
    mode: int | None = None    # a file created private (`~/.claude.json` holds the account)

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


def is_empty(text: str | None) -> bool:
    return text is None or text.strip() in ("", "{}")


def emptied(text: str | None, path: Path, strip: Callable[[str], str | None]) -> str | None:
    """None (remove the file) when an uninstall leaves only the empty document epimem started it
    as; the text when the user had the file so before epimem (a backup with nothing of ours in it)."""
    if not is_empty(text):
        return text
    for b in backups(path):
        try:
            before = b.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if strip(before) == before:
            return text
    return None


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


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + BACKUP + "*"))


def apply(actions: list[Action], *, uninstall: bool = False) -> list[str]:
    """Carry out a plan; the notes to show. An install backs up every existing file it changes
    (not one wholly ours); an uninstall removes the backups it makes redundant, and the folders
    it leaves empty."""
    notes = []
    for a in actions:
        if a.what in ("unchanged", "refused"):
            continue
        if a.path.exists() and a.backup and not uninstall:
            notes.append(f"backup of {a.path} in {backup(a.path)}")
        if a.new is None:
            a.path.unlink(missing_ok=True)
            prune(a.path.parent, a.stop)
        else:
            created = not a.path.exists()
            atomic_write(a.path, a.new)
            if created and a.mode is not None:
                os.chmod(a.path, a.mode)
        if uninstall:
            notes += _drop_backups(a)
    return notes


def _drop_backups(a: Action) -> list[str]:
    """The backups of `a.path` that hold nothing the uninstalled file does not: what it is now,
    or that plus epimem's parts."""
    notes = []
    for b in backups(a.path):
        try:
            text = b.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        after = a.strip(text) if a.strip is not None else text
        if text == a.new or after == a.new or (a.new is None and is_empty(after)):
            b.unlink()
            notes.append(f"removed {b} (the install's backup: nothing in it is lost)")
    if a.new is None and a.path.parent.exists():
        prune(a.path.parent, a.stop)
    return notes


def prune(folder: Path, stop: Path | None) -> None:
    """Remove `folder` and its parents while they are empty, up to (not including) `stop`."""
    if stop is None:
        return
    stop = stop.absolute()
    folder = folder.absolute()
    while folder != stop and stop in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


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


def skill_actions(folder: Path, texts: dict[str, str], *, uninstall: bool, stop: Path | None,
                  label: str = "{name}") -> list[Action]:
    """Each skill's SKILL.md under `folder` made `texts[name]` (or removed): a skill that is not
    epimem's is never overwritten nor removed. `label` names one in the plan ("/{name}")."""
    out = []
    for name, src in texts.items():
        what = label.format(name=name)
        dst = folder / name / "SKILL.md"
        cur = read(dst)
        if uninstall:
            if cur is None:
                continue
            if skill_is_ours(cur):
                out.append(Action(dst, "remove", f"the {what} skill", backup=False, stop=stop))
            else:
                out.append(Action(dst, "unchanged", f"not epimem's {what} skill; left alone"))
            continue
        if cur is not None and not skill_is_ours(cur):
            out.append(Action(dst, "refused", f"a {what} skill that is not epimem's is already there; "
                                              "move it away to install epimem's"))
            continue
        a = change(dst, cur, src, f"the {what} skill", same=f"{what} skill up to date")
        a.backup = False  # a whole file of ours: nothing of the user's to keep
        out.append(a)
    return out


def home() -> Path:
    return Path(os.path.expanduser("~"))
