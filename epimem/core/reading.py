"""What a reader is shown of the vault's notes: the one place that decides it (SPEC rules 21, 23).

Every reader — `belief show/list`, recall and its index, the mirror's modes, the session
context, MCP, the page, export — shows what this module makes of a file:

- **Redacted, whatever the file's state** (rule 23). The write path redacts what it writes, but
  a file typed into by hand and not yet committed (or committed with plain git, or written
  before a pattern was added to `epistemology.md`) holds what it holds: every text a reader
  returns passes through `belief`, `observation`, `tension` or `text` first.
- **Valid** (rule 21). A belief file whose hand edit breaks a rule (`rules.rule_problems`, the
  rules `epimem commit` refuses an edit for) or does not parse is read as its last valid state,
  the committed one, with one line that says the edit was refused and why (`Refused`, the same
  line in every front end). A file with no valid committed state (never committed, or committed
  broken) is not shown: it is a problem, as a malformed file always was.

Pure. The shell that reads the files and fetches the committed texts is
`store/vault.Vault.reader`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING

from .model import Belief, Evidence, Observation, Problem, Refused, Tension
from .notes import NoteError, parse_belief
from .redact import anchored, holds_secret, redact

if TYPE_CHECKING:
    from .inbox import Proposal
    from .params import Params

Patterns = tuple[tuple[str, str], ...]
__all__ = ["Refused", "Seen", "belief", "breaks", "last_valid", "observation", "proposal", "tension", "text",
           "why_not"]


@dataclass(frozen=True)
class Seen:
    """What readers are shown of one belief file: the belief (None: nothing), and why not as it is."""

    belief: Belief | None
    refused: Refused | None = None
    problem: Problem | None = None


# --- rule 21: what is shown is what is valid --------------------------------------------------

def breaks(b: Belief, params: Params, today: date | None = None, *, real: date | None = None) -> str:
    """Why no reader may show this state of a belief ("" when one may): the rules that a
    well-formed file can still break, as `validate` and `epimem commit` judge them (rule 18).

    Rule 20's future dates are judged against `real`, the machine's day (None: not judged), never
    against `today`, which may be a test's or a replay's `--today`. A reader passes it for the
    file as it is (a hand edit dated after the machine's day is refused like any other: it would
    freeze decay and rank the belief as the newest of its subject), not for the committed state
    it falls back on, which epimem wrote (a date ahead of this machine's is another machine's
    clock; decay counts from min(date, today))."""
    from . import rules  # imported by the first reader that judges a belief: recall's query path never does

    return "; ".join(msg for _, msg in rules.rule_problems(b, params, today=real))


def why_not(now: Belief | Problem, params: Params, today: date | None = None, *, real: date | None = None) -> str:
    """"" when readers may show `now`, a belief file as parsed (or the problem parsing it), else why not."""
    if isinstance(now, Problem):
        return f"line {now.line}: {now.message}"
    return breaks(now, params, today, real=real)


def last_valid(path: str, belief_id: str, why: str, committed: str | None, params: Params,
               today: date | None = None, *, problem: Problem | None = None, now: Belief | None = None) -> Seen:
    """A belief file readers may not show as it is (`why`), shown as `committed` (its text at HEAD,
    None when it has none), redacted, if that is valid; else not shown, with `problem` (how the
    file's own parse failed) or one saying why. When the committed state is the file as it is
    (`now`, as parsed: no hand edit, only a date ahead of this machine's day), it is shown as it
    is, with no line about an edit."""
    old = None
    if committed is not None:
        try:
            old = parse_belief(committed, belief_id, path)
        except NoteError:
            old = None
    if old is not None and not breaks(old, params, today):
        shown = belief(old, params.redact)
        # Compared before redaction: a belief holding a secret is still the file as it is.
        if now is not None and replace(old, path="") == replace(now, path=""):
            return Seen(shown)
        return Seen(shown, Refused(path, why))
    return Seen(None, problem=problem or Problem(path, 1, f"{why}; not shown until the file is fixed"))


# --- rule 23: redacted, whatever the file's state --------------------------------------------

def _clean(texts: list[str], patterns: Patterns) -> bool:
    """True when no text holds a secret: one pass over them all (joined, unless a vault pattern
    anchors at a text's ends, when each is looked at alone)."""
    if anchored(patterns):
        return not any(holds_secret(t, patterns) for t in texts)
    return not holds_secret("\n".join(texts), patterns)


def belief(b: Belief, patterns: Patterns = ()) -> Belief:
    """`b` with every text redacted (itself when there is nothing to redact: the common case)."""
    texts = [b.title, b.kind, b.statement, b.scope, b.confirmed_session, *b.tags, *b.supersedes, *b.depends_on]
    for e in b.evidence:
        texts += (e.kind, e.link, e.note)
    if _clean(texts, patterns):
        return b

    def r(s: str) -> str:
        return redact(s, patterns)

    return replace(b, title=r(b.title), kind=r(b.kind), statement=r(b.statement), scope=r(b.scope),
                   confirmed_session=r(b.confirmed_session), tags=tuple(r(t) for t in b.tags),
                   supersedes=tuple(r(s) for s in b.supersedes), depends_on=tuple(r(d) for d in b.depends_on),
                   evidence=tuple(Evidence(e.date, r(e.kind), r(e.link), r(e.note)) for e in b.evidence))


def observation(o: Observation, patterns: Patterns = ()) -> Observation:
    texts = [o.evidence, o.suggests, o.therefore, o.source, o.session, o.connects]
    if _clean(texts, patterns):
        return o
    r = lambda s: redact(s, patterns)  # noqa: E731
    return replace(o, evidence=r(o.evidence), suggests=r(o.suggests), therefore=r(o.therefore),
                   source=r(o.source), session=r(o.session), connects=r(o.connects))


def tension(t: Tension, patterns: Patterns = ()) -> Tension:
    texts = [t.title, t.what_happened, t.suggests, t.resolution, t.belief, t.successor, t.rests_on, *t.evidence]
    if _clean(texts, patterns):
        return t
    r = lambda s: redact(s, patterns)  # noqa: E731
    return replace(t, title=r(t.title), what_happened=r(t.what_happened), suggests=r(t.suggests),
                   resolution=r(t.resolution), belief=r(t.belief), successor=r(t.successor),
                   rests_on=r(t.rests_on), evidence=tuple(r(e) for e in t.evidence))


def proposal(p: Proposal, patterns: Patterns = ()) -> Proposal:
    """A review inbox proposal as the listing, the MCP tool and the page show it. Its file is a
    vault file like any other: typed into by hand, pushed by a remote, or written before a
    pattern was added, its evidence holds what it holds, and the listing printed it while only
    the diff beside it was redacted. An import's records are not shown (their paths are, and
    the import's own write redacts what accepting writes)."""
    def walk(v):
        if isinstance(v, str):
            return redact(v, patterns)
        if isinstance(v, (list, tuple)):
            return type(v)(walk(x) for x in v)
        return v

    values = [x for v in p.observation.values() for x in (v if isinstance(v, (list, tuple)) else [v])]
    texts = [p.source, p.session, p.note, *(x for x in values if isinstance(x, str))]
    if _clean(texts, patterns):
        return p
    return replace(p, source=walk(p.source), session=walk(p.session), note=walk(p.note),
                   observation={k: walk(v) for k, v in p.observation.items()})


def text(path: str, content: str, patterns: Patterns = ()) -> str:
    """A file's text as a reader returns it whole (export, MCP's `epimem://belief/…`): redacted
    without breaking its structure (`core/scrub`, the write path's own)."""
    from .scrub import scrub

    return scrub(path, content, patterns)
