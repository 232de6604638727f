"""The vault's rules changed by evidence (SPEC §2.13, §14): parameter changes that the
user's verdicts support, accepted by the user (`epimem mirror audit --apply`) and
committed to `epistemology.md` with the numbers behind them.

Only the keys that change are rewritten (a flow mapping such as `decay: {…}` keeps its
other entries and its place), the result must read back without a problem, and the
commit's message cites each proposal's verdicts and Brier scores.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import TYPE_CHECKING

from ..core import calibration as cal
from ..core.errors import Conflict, InputError, VaultError
from ..core.notes import NoteError, Raw, edit_frontmatter, parse_note
from ..core.params import params_from_meta
from ..store import transaction as tx
from ..store.files import read_text, stat_key
from . import common

if TYPE_CHECKING:
    from .service import Service

PATH = "epistemology.md"


def _number(v: float) -> str:
    # Plain decimals (YAML 1.1 reads `1e-05` as text): as many places as the value needs.
    return f"{v:.6f}".rstrip("0").rstrip(".") or "0"


def _flow(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"cannot write {value!r} as a parameter", field="proposals")
    return _number(float(value))


SUBJECT = "epistemology: {keys} changed by the user's verdicts"


def calibrated_since(mem: Service) -> dict[str, date]:
    """Parameter key → the day an accepted calibration proposal last changed it, from the
    history of `epistemology.md` (its commits name the keys). {} outside git."""
    from ..store import git

    if not git.is_repo_root(mem.root) or not git.has_commits(mem.root):
        return {}
    out: dict[str, date] = {}
    log = git.run(mem.root, "log", "--format=%ad%x09%s", "--date=short", "--", PATH)
    head, _, tail = SUBJECT.partition("{keys}")
    for line in log.splitlines():
        day, _, subject = line.partition("\t")
        if subject.startswith(head) and subject.endswith(tail):
            for key in subject[len(head):len(subject) - len(tail)].split(", "):
                try:
                    out.setdefault(key.strip(), date.fromisoformat(day))
                except ValueError:
                    continue
    return out


def apply_calibration(mem: Service, proposals: Iterable[cal.Proposal]) -> str:
    """Commit `proposals` to `epistemology.md`: one commit citing each one's numbers."""
    proposals = list(proposals)
    if not proposals:
        raise InputError("nothing to apply: the verdicts propose no parameter change", field="proposals")
    common.require_repo(mem)
    for attempt in common.attempts(mem):
        with attempt:
            p = mem.vault.path(PATH)
            if not p.exists():
                raise VaultError(f"{PATH} is missing: `epimem init` writes it", path=PATH)
            key = stat_key(p)
            text = read_text(p, PATH)
            try:
                meta = parse_note(text).meta
            except NoteError as e:
                raise VaultError(f"{PATH}:{e.line}: {e.message}", path=PATH, line=e.line) from None
            changes = cal.apply_to_meta(meta, proposals)
            new = text
            for k, v in changes.items():
                # `edit_frontmatter` writes a scalar; a mapping is written in flow style here.
                new = edit_frontmatter(new, {k: Raw(_flow(v))})
            _, problems = params_from_meta(parse_note(new).meta, PATH)
            if problems:
                raise Conflict(f"the proposal would make {PATH} invalid: {problems[0]}", path=PATH)
            body = "\n".join(f"- {x.key}: {x.current:g} → {x.proposed:g} — {x.reason}; Brier "
                             f"{x.brier_before:.4f} → {x.brier_after:.4f} over {x.verdicts} verdicts"
                             for x in proposals)
            keys = ", ".join(x.key for x in proposals)
            return common.commit(mem, [tx.replace(PATH, new, key)], SUBJECT.format(keys=keys), op="epistemology",
                                 body="Accepted from the calibration of the audit (SPEC §14):\n" + body)
    raise AssertionError("unreachable")
