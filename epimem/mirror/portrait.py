"""The portrait: a character study in words, not numbers (SPEC §5).

Its brief (themes, blind spots, contradictions, the one question whose answer
would teach most) is what both the offline portrait and the LLM's are written
from. Blind spots also open the interview.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import date

from ..core import rules
from ..core.model import Problem, Snapshot
from ..core.params import DEFAULTS, Params
from . import text as tx
from .phrase import sentence
from .views import BeliefView, TensionView, active, active_views, certainty_words, detailed, strongest, tension_views

THEMES_MAX = 6


# What each kind of belief is *about*, in words a person would use.
AREAS = {
    "identity": "who you are and what you do", "trait": "your temperament", "value": "what you value",
    "motivation": "what moves you", "preference": "what you like and dislike",
    "convention": "the conventions you keep", "workflow": "how you work day to day",
    "fact": "the facts of your situation", "decision": "the decisions you've made",
    "antipattern": "what you've learned to avoid", "solution": "the fixes that work for you",
}
# The order in which gaps matter for a character study: motives before facts.
BLIND_PRIORITY = ("value", "motivation", "identity", "trait", "workflow", "preference",
                  "convention", "decision", "antipattern", "solution", "fact")
CORE_KINDS = ("value", "motivation", "identity", "trait")

BLIND_QUESTIONS = {
    "identity": "How would you describe what you do, and who you are at work, to someone you respect?",
    "trait": "What would a close colleague say is most characteristic of how you go about things?",
    "value": "What do you care about in your work that you rarely say out loud?",
    "motivation": "What makes a piece of work feel worth doing to you, and what drains you?",
    "preference": "What do you want more of, and less of, from an assistant like me?",
    "convention": "Which conventions do you hold to even when nobody checks?",
    "workflow": "Walk me through how a typical piece of work goes for you, from first idea to done.",
    "fact": "What facts about your situation (role, team, tools, constraints) should I simply know?",
    "decision": "What is a recent decision you would make the same way again, and why?",
    "antipattern": "What have you learned, the hard way, to stop doing?",
    "solution": "What approach or fix do you keep reusing because it works?",
}

KIND_GROUPS = (
    ("character", "Character", ("identity", "trait")),
    ("drive", "What drives you", ("value", "motivation")),
    ("work", "How you work", ("workflow", "convention", "preference")),
    ("lessons", "Choices and lessons", ("decision", "solution", "antipattern")),
    ("facts", "The facts of your situation", ("fact",)),
)


@dataclass(frozen=True)
class Theme:
    key: str                 # "tag:x", "word:x" or "kind:<group>"
    label: str
    source: str              # tag | words | kind
    certainty: str
    size: int
    beliefs: tuple[BeliefView, ...]   # strongest first, at most 5
    members: tuple[str, ...]          # every belief id in the theme


@dataclass(frozen=True)
class BlindSpot:
    kind: str
    area: str
    reason: str              # "none" | "guesses only"
    beliefs: int


@dataclass(frozen=True)
class Hunger:
    question: str
    why: str
    belief: str = ""
    kind: str = ""
    tension: str = ""


@dataclass(frozen=True)
class PortraitBrief:
    today: date
    empty: bool
    person: tuple[BeliefView, ...]
    themes: tuple[Theme, ...]
    blind_spots: tuple[BlindSpot, ...]
    contradictions: tuple[TensionView, ...]
    hungriest: Hunger
    beliefs: int
    observations: int
    certainty_words: dict[str, str]   # tier -> words
    problems: tuple[Problem, ...]  # JSON: [{path, line, message}], as every command


def blind_spots(views: list[BeliefView], params: Params = DEFAULTS) -> tuple[BlindSpot, ...]:
    """Kinds with no active belief, or only speculative ones."""
    lowest = params.tiers[-1][0]
    by_kind: dict[str, list[BeliefView]] = defaultdict(list)
    for v in views:
        by_kind[v.kind].append(v)
        if v.basis == "fact" and v.kind != "fact":
            # A verified fact of any kind (the role, the team) is a fact of the situation:
            # the portrait must not call the role clear and then the situation unseen.
            by_kind["fact"].append(v)
    order = [k for k in BLIND_PRIORITY if k in params.kinds] + \
            [k for k in params.kinds if k not in BLIND_PRIORITY]
    out = []
    for k in order:
        vs = by_kind.get(k, [])
        if not vs:
            out.append(BlindSpot(k, AREAS.get(k, f"your {k}"), "none", 0))
        elif all(v.tier == lowest for v in vs):
            out.append(BlindSpot(k, AREAS.get(k, f"your {k}"), "guesses only", len(vs)))
    return tuple(out)


def blind_question(kind: str) -> str:
    return BLIND_QUESTIONS.get(kind, f"I know almost nothing about your {kind}s. What should I know?")


def _kind_group(kind: str) -> tuple[str, str]:
    for key, label, kinds in KIND_GROUPS:
        if kind in kinds:
            return key, label
    return "other", "Other things I've noticed"


def _humanize(tag: str) -> str:
    s = " ".join(tag.replace("_", " ").replace("-", " ").replace("/", " / ").split())
    return s[:1].upper() + s[1:]


def themes(views: list[BeliefView], params: Params = DEFAULTS) -> tuple[Theme, ...]:
    """4–6 themes by greedy cover: tags first, then shared words, then kinds.

    Each round picks the candidate whose not-yet-covered beliefs weigh most
    (effective confidence, scaled by how telling the source is: a tag beats a
    word shared by three or more titles, and both beat a bare kind group,
    which must cover over three times as much to win, since "How you work"
    says less than "Testing"). A theme needs two new beliefs, except kind
    themes when the vault is small."""
    if not views:
        return ()
    words = certainty_words(params)
    cands: dict[str, tuple[str, str, float, list[str]]] = {}

    tag_members: dict[str, list[str]] = defaultdict(list)
    for v in views:
        for t in dict.fromkeys(t.strip().lower() for t in v.tags if t.strip()):
            tag_members[t].append(v.id)
    for t, ids in tag_members.items():
        if len(ids) >= 2:
            cands[f"tag:{t}"] = (_humanize(t), "tag", 1.0, ids)

    # Shared words come from titles only: a word repeated across titles names
    # a theme; one repeated across long statements is usually filler.
    toks = {v.id: tx.tokens(v.title) for v in views}
    df: dict[str, list[str]] = defaultdict(list)
    for v in views:
        for w in toks[v.id]:
            df[w].append(v.id)
    labels = tx.surfaces([v.title for v in views])
    tag_stems = {tx.stem(t) for t in tag_members}
    limit = max(3, len(views) // 2)
    for w, ids in df.items():
        if 3 <= len(ids) <= limit and w not in tag_stems:
            cands[f"word:{w}"] = (_humanize(labels.get(w, w)), "words", 0.8, ids)

    groups: dict[str, list[str]] = defaultdict(list)
    glabel: dict[str, str] = {}
    for v in views:
        key, label = _kind_group(v.kind)
        groups[key].append(v.id)
        glabel[key] = label
    for key, ids in groups.items():
        cands[f"kind:{key}"] = (glabel[key], "kind", 0.3, ids)

    weight = {v.id: max(v.effective_confidence, 0.01) for v in views}
    by_id = {v.id: v for v in views}
    covered: set[str] = set()
    chosen: list[tuple[str, str, str, list[str]]] = []
    small = len(views) < 12
    while len(chosen) < THEMES_MAX:
        best, best_score, best_new = None, 0.0, []
        for key in sorted(cands):
            label, source, bonus, ids = cands[key]
            new = [i for i in ids if i not in covered]
            need = 1 if (source == "kind" and small) else 2
            if len(new) < need:
                continue
            score = bonus * sum(weight[i] for i in new)
            if score > best_score + 1e-12:
                best, best_score, best_new = key, score, new
        if best is None:
            break
        chosen.append((best, cands[best][0], cands[best][1], best_new))
        covered.update(best_new)
        del cands[best]

    out = []
    for key, label, source, ids in chosen:
        members = strongest([by_id[i] for i in ids])
        top3 = members[:3]
        mean = sum(v.effective_confidence for v in top3) / len(top3)
        out.append(Theme(key=key, label=label, source=source,
                         certainty=words.get(rules.tier(round(mean, 3), _basis_of(top3), params), ""),
                         size=len(members), beliefs=tuple(members[:5]),
                         members=tuple(v.id for v in members)))
    return tuple(out)


def _basis_of(views: list[BeliefView]) -> str:
    """A theme is "factual" only when what it rests on is all fact (SPEC §2)."""
    return "fact" if all(v.basis == "fact" for v in views) else ""


def _person(views: list[BeliefView]) -> tuple[BeliefView, ...]:
    """Up to three beliefs for the opening paragraph: the strongest about who
    the person is and what drives them (one per kind), topped up to two from
    the strongest of any kind, so the paragraph is a sketch, not a list."""
    ranked = strongest(views)
    picked: list[BeliefView] = []
    for v in ranked:
        if len(picked) == 3:
            break
        if v.kind in CORE_KINDS and v.kind not in {p.kind for p in picked}:
            picked.append(v)
    for v in ranked:
        if len(picked) >= 2:
            break
        if v not in picked:
            picked.append(v)
    return tuple(picked)


def hungriest(views: list[BeliefView], spots: tuple[BlindSpot, ...],
              open_tensions: tuple[TensionView, ...], params: Params = DEFAULTS) -> Hunger:
    """The one question whose answer would teach the model most."""
    by_id = {v.id: v for v in views}
    strong_tiers = {n for n, _ in params.tiers[:2]}
    for t in sorted(open_tensions, key=lambda t: (-(by_id[t.belief].effective_confidence
                                                     if t.belief in by_id else 0), t.id)):
        if t.belief in by_id and by_id[t.belief].tier in strong_tiers:
            return Hunger(f"I hold “{by_id[t.belief].title}” firmly, yet: "
                          f"{sentence(t.title)} Which one is really you?",
                          "a strong belief is contradicted by what happened",
                          belief=t.belief, tension=t.id)
    if views:
        for s in spots:
            if s.kind in CORE_KINDS and s.reason == "none":
                return Hunger(blind_question(s.kind), f"I see nothing of {s.area}", kind=s.kind)
    if open_tensions:
        t = open_tensions[0]
        return Hunger(f"{sentence(t.title)} How do you see it?", "an open contradiction",
                      belief=t.belief, tension=t.id)
    unsure = [v for v in views if v.tier in {n for n, _ in params.tiers[-2:]}]
    if unsure:
        v = sorted(unsure, key=lambda v: (-(v.confirmations + v.challenges), -v.effective_confidence, v.id))[0]
        return Hunger(f"I keep half-seeing this: “{v.title}”. Is it you?",
                      "a belief I hold only as a hint or a guess", belief=v.id)
    if spots and views:
        s = spots[0]
        return Hunger(blind_question(s.kind), f"I see nothing of {s.area}", kind=s.kind)
    if not views:
        return Hunger("What would you most want an assistant to understand about you?",
                      "nothing is known yet")
    return Hunger("What is true about you that nothing here would lead me to guess?",
                  "the profile has no obvious gap, which is itself suspicious")


def portrait_brief(snapshot: Snapshot, params: Params = DEFAULTS,
                   today: date | None = None, views: list[BeliefView] | None = None) -> PortraitBrief:
    """`views`: the snapshot's `active_views` on `today`, when the caller has them already."""
    today = today or snapshot.today or date.today()
    vs = active_views(snapshot, today, params) if views is None else views
    spots = blind_spots(vs, params)
    tv = tension_views(snapshot, today)
    bmap = {b.id: b for b in active(snapshot)}
    return PortraitBrief(
        today=today, empty=not vs, person=detailed(_person(vs), bmap),
        themes=tuple(replace(t, beliefs=detailed(t.beliefs, bmap)) for t in themes(vs, params)),
        blind_spots=spots, contradictions=tv.open, hungriest=hungriest(vs, spots, tv.open, params),
        beliefs=len(vs), observations=len(snapshot.observations),
        certainty_words=certainty_words(params),
        problems=snapshot.problems)
