"""The mirror's modes (SPEC §5, §14), one dispatcher for every front end: `epimem mirror MODE`,
`/mirror` (`epimem skill mirror`), MCP's `mirror` tool and its `epimem://audit` resource.

`run` reads the vault as readers see it (`Memory.snapshot`: redacted, a refused hand edit shown
as last committed), calls the mode's pure analysis in `epimem.mirror`, renders its markdown,
and records what the caller asked to record (a review, an open gut-check, an audit's accepted
proposals). The markdown ends with one line per refused hand edit (SPEC rule 21); a recorded
review holds the analysis alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import InputError
from ..core.model import Refused, Snapshot

if TYPE_CHECKING:
    from .memory import Memory

MODES = ("portrait", "audit", "gut-check", "interview", "calibration")


@dataclass
class Mirrored:
    mode: str
    data: Any                 # the mode's analysis (frozen values of `epimem.mirror`)
    markdown: str             # what to show the user, refused edits named at the end
    recorded: dict[str, Any] | None = None
    refused: tuple[Refused, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)  # a portrait's `llm`, an audit's `applied`


def run(mem: Memory, mode: str, *, record: bool = False, apply: bool = False, apply_only: tuple[str, ...] = (),
        llm: bool = False, model: str | None = None, timeout: float = 60.0,
        snapshot: Snapshot | None = None) -> Mirrored:
    """One mode of the mirror. `record`: an audit, gut-check or interview as a review (one
    commit); `apply`/`apply_only`: an audit's proposals, all or those of these beliefs; `llm`: a
    portrait written by Claude (its offline version when that fails, said in `extra["llm"]`).
    `snapshot`: one already read with `mem.snapshot()`."""
    from ..mirror import render
    from ..mirror.gutcheck import write_review as record_review

    if mode not in MODES:
        raise InputError(f"'mode' must be one of {', '.join(MODES)}, not {mode!r}", field="mode")
    snap = snapshot if snapshot is not None else mem.snapshot()
    params, today = mem.params, mem.today
    recorded = None
    extra: dict[str, Any] = {}
    data: Any
    if mode == "portrait":
        data, md = _portrait(mem, snap, llm, model, timeout, extra)
    elif mode == "calibration":
        from ..mirror.calibration import calibration, markdown
        from .epistemology import calibrated_since

        data = calibration(snap, params, today, calibrated_since(mem))
        md = markdown(data)
    elif mode == "audit":
        from ..mirror.audit import audit
        from .epistemology import calibrated_since

        data = audit(snap, params, today, tuple(mem.merge_leftovers()), calibrated_since(mem))
        md = render.audit_markdown(data)
        if apply or apply_only:
            from ..mirror.apply import apply as apply_audit

            sha, planned = apply_audit(mem, data, tuple(apply_only))
            extra["applied"] = {"commit": sha, "changes": [{"belief": p.belief, "action": p.action,
                                                            "fields": p.fields, "why": p.why} for p in planned]}
        if record:
            # The recorded review is a file read later: titles whole, not cut to a screen's width.
            recorded = record_review(mem, "audit", render.audit_markdown(data, whole=True))
    elif mode == "gut-check":
        from ..mirror.gutcheck import close_gut_check, gut_check, open_gut_check

        data = gut_check(snap, params, today)
        md = render.gut_check_markdown(data)
        if data.beliefs:
            open_gut_check(mem, data.beliefs)
        if record:
            recorded = record_review(mem, "gut-check", md, beliefs=data.beliefs)
            close_gut_check(mem)
    else:
        from ..mirror.interview import interview

        data = interview(snap, params, today)
        md = render.interview_markdown(data)
        if record:
            asked = sorted({q.belief for q in data.questions if q.belief})
            recorded = record_review(mem, "interview", md, beliefs=asked)
    return Mirrored(mode, data, md + render.refused_lines(snap.refused), recorded, snap.refused, extra)


def _portrait(mem: Memory, snap: Snapshot, llm: bool, model: str | None, timeout: float,
              extra: dict[str, Any]) -> tuple[Any, str]:
    from ..mirror import render
    from ..mirror.portrait import portrait_brief

    params = mem.params
    brief = portrait_brief(snap, params, mem.today)
    info: dict[str, Any] = {"requested": llm, "used": False, "model": None, "error": None}
    extra["llm"] = info
    if llm:
        from ..mirror.llm import DEFAULT_MODEL, LLMError, LLMUnavailable, write_portrait

        info["model"] = model or _configured_model(mem) or DEFAULT_MODEL
        try:
            prose = write_portrait(brief, model=info["model"], timeout=timeout, patterns=params.redact)
            info["used"] = True
            return brief, render.llm_portrait_markdown(prose, info["model"], brief)
        except (LLMUnavailable, LLMError) as e:
            info["error"] = str(e)
    note = f"--llm: {info['error']}; this is the offline portrait." if info["error"] else ""
    return brief, render.portrait_markdown(brief, note=note)


def _configured_model(mem: Memory) -> str | None:
    try:
        v = mem.vault.settings().get("mirror_model")
    except (OSError, UnicodeDecodeError):
        return None
    return v.strip() if isinstance(v, str) and v.strip() else None
