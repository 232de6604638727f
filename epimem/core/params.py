"""The parameters of the rules (SPEC §2), as read from `epistemology.md`.

`Params()` holds the defaults. `params_from_meta` reads the frontmatter of a
vault's `epistemology.md`; a missing key keeps its default, an invalid one is
reported as a Problem naming the file and key and also keeps its default, so a
typo in the rules never stops the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from . import kernel
from .model import Problem

DEFAULT_KINDS = (
    "identity", "trait", "value", "motivation", "preference", "convention",
    "workflow", "fact", "decision", "antipattern", "solution",
)

# (name, pattern). A match is replaced by "[REDACTED:name]". Patterns are
# Python regular expressions; a group named "keep" is kept (so that
# "password: hunter2" becomes "password: [REDACTED:password]").
@dataclass(frozen=True)
class Params:
    # Confidence tiers: the lower bound of each, highest first.
    tiers: tuple[tuple[str, float], ...] = kernel.TIERS
    # Rule 1: where a new belief starts, by basis.
    start: dict[str, float] = field(default_factory=lambda: {
        "fact": 0.95, "behavioral": 0.55, "self-report": 0.40, "interpretive": 0.20,
    })
    # Rule 2: the highest stored confidence per basis.
    caps: dict[str, float] = field(default_factory=lambda: {
        "fact": 1.00, "behavioral": 0.90, "self-report": 0.90, "interpretive": 0.90,
    })
    confirm_step: float = 0.08          # rule 3
    challenge_step: float = 0.15        # rule 4
    free_challenges: int = 1            # rule 4: challenges before confidence drops
    confidence_floor: float = 0.05      # rule 4
    rejection_step: float = 0.20        # rule 5
    # Rule 7: decay rate per day by permanence, and the floor of the view.
    decay: dict[str, float] = field(default_factory=lambda: dict(kernel.DECAY))
    decay_floor: float = kernel.DECAY_FLOOR
    dormancy_days: int = kernel.DORMANCY_DAYS  # rule 8
    observations_per_session: int = 3   # rule 9
    review_every_sessions: int = kernel.REVIEW_EVERY_SESSIONS  # rule 10
    review_every_days: int = kernel.REVIEW_EVERY_DAYS          # rule 10 (time fallback)
    soften_above: float = 0.70          # rule 10: soften beliefs above this...
    soften_after_sessions: int = 10     # ...not confirmed in this many sessions
    raise_below: float = 0.40           # rule 10: propose raising beliefs below this...
    raise_after_confirmations: int = 3  # ...confirmed this many times
    coherence_sessions: int = 10        # rule 10: "too coherent" after this many
    stable_challenges: int = 2          # rule 11: stable challenged this often -> durable
    situational_sessions: int = 10      # rule 11: situational unchanged -> durable
    unknown_days: int = 30              # rule 11: unknown this long -> flag
    # Mirror audit: "stale for its class", in days since last confirmation.
    stale_days: dict[str, int] = field(default_factory=lambda: {
        "stable": 182, "durable": 61, "situational": 21,
    })
    dormancy_drop: float = 0.10         # audit: effective fell this far below stored
    # Rule 17: a new belief this similar (cosine, recall's embedder) to an active one
    # is not created silently. Measured on paraphrases and contradictions: docs/recall.md.
    similar_threshold: float = 0.45
    kinds: tuple[str, ...] = DEFAULT_KINDS
    # Patterns of secrets added to the built-in ones of core/redact.py (which always apply).
    redact: tuple[tuple[str, str], ...] = ()
    # SPEC §15: "required" sends what unattended paths observe to the review inbox.
    review: str = "off"

    def tier(self, confidence: float, basis: str) -> str:
        return kernel.tier(confidence, self.tiers, basis)


DEFAULTS = Params()


def _number(v: Any, lo: float, hi: float) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if lo <= v <= hi else None


def rules_file_problems(text: str, path: str = "epistemology.md") -> list[Problem]:
    """What is wrong with a text of `epistemology.md` (each a parameter that would be defaulted):
    such a text is not committed, nor imported (rule 18)."""
    from .notes import NoteError, parse_note

    try:
        note = parse_note(text)
    except NoteError as e:
        return [Problem(path, e.line or 1, e.message)]
    return params_from_meta(note.meta, path, note.key_lines)[1]


def params_from_meta(meta: dict[str, Any], path: str = "epistemology.md",
                     lines: dict[str, int] | None = None) -> tuple[Params, list[Problem]]:
    """Read parameters from frontmatter; report and default what is invalid."""
    lines = lines or {}
    problems: list[Problem] = []
    changes: dict[str, Any] = {}
    defaults = {f.name: getattr(DEFAULTS, f.name) for f in fields(Params)}

    def bad(key: str, why: str) -> None:
        problems.append(Problem(path, lines.get(key.split(".")[0], 1), f"parameter '{key}' {why}; using the default"))

    for key, value in meta.items():
        if key not in defaults:
            continue  # prose-level keys (title, version...) are the user's business
        default = defaults[key]
        if key == "tiers":
            if not isinstance(value, dict) or not value:
                bad(key, "must be a mapping of tier name to lower bound")
                continue
            pairs = []
            for name, low in value.items():
                n = _number(low, 0.0, 1.0)
                if n is None:
                    bad(key, f"has an invalid bound for '{name}'")
                    break
                pairs.append((str(name), n))
            else:
                changes[key] = tuple(sorted(pairs, key=lambda kv: -kv[1]))
        elif key in ("start", "caps", "decay"):
            if not isinstance(value, dict):
                bad(key, "must be a mapping")
                continue
            merged = dict(default)
            hi = 1.0
            for k, v in value.items():
                n = _number(v, 0.0, hi)
                if n is None:
                    bad(f"{key}.{k}", f"must be a number between 0 and {hi}")
                else:
                    merged[str(k)] = n
            changes[key] = merged
        elif key == "stale_days":
            if not isinstance(value, dict):
                bad(key, "must be a mapping")
                continue
            merged = dict(default)
            for k, v in value.items():
                if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                    bad(f"{key}.{k}", "must be a whole number of days")
                else:
                    merged[str(k)] = v
            changes[key] = merged
        elif key == "kinds":
            if not isinstance(value, list) or not all(isinstance(k, str) and k for k in value):
                bad(key, "must be a list of names")
            else:
                changes[key] = tuple(value)
        elif key == "review":
            from .inbox import review_from_meta

            value_, why = review_from_meta(meta)
            if why:
                problems.append(Problem(path, lines.get(key, 1), why))
            changes[key] = value_
        elif key == "redact":
            parsed, whys = _redact_patterns(value)
            for why in whys:
                problems.append(Problem(path, lines.get(key, 1), f"parameter 'redact' {why}"))
            changes[key] = parsed
        elif isinstance(default, int) and not isinstance(default, bool):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                bad(key, "must be a whole number >= 0")
            else:
                changes[key] = value
        elif isinstance(default, float):
            n = _number(value, 0.0, 1.0)
            if n is None:
                bad(key, "must be a number between 0 and 1")
            else:
                changes[key] = n
    return replace(DEFAULTS, **changes), problems


def _redact_patterns(value: Any) -> tuple[tuple[tuple[str, str], ...], list[str]]:
    """The vault's own patterns that RE2 can run, and why each other entry was skipped."""
    from .redact import BUILTIN_NAMES, PatternError, compile_pattern

    if value is None:
        return (), []
    if not isinstance(value, list):
        return (), ["must be a list of {name, pattern}; only the built-in patterns apply"]
    out: list[tuple[str, str]] = []
    whys: list[str] = []
    for i, item in enumerate(value, 1):
        if not isinstance(item, dict) or not isinstance(item.get("pattern"), str):
            whys.append(f"entry {i} must be {{name, pattern}}; it is skipped")
            continue
        name = str(item.get("name") or "secret")
        if name in BUILTIN_NAMES:
            continue  # an old copy of a built-in: the built-in applies
        try:
            compile_pattern(item["pattern"])
        except PatternError as e:
            whys.append(f"entry {i} ({name}) cannot be used: {e}; it is skipped")
            continue
        out.append((name, item["pattern"]))
    return tuple(out), whys
