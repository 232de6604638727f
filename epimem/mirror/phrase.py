"""Saying a belief to the person it is about, with its certainty in words.

Belief titles are written in the third person without a subject ("Thinks
out loud before deciding"); the mirror speaks to the person ("Clearly, you
think out loud before deciding"). Titles that are not verb phrases ("Python
developer", "Mornings are for deep work") are quoted whole instead of
conjugated, so nothing is ever garbled into wrong grammar. Pure and
deterministic: the offline portrait must read the same on every machine.
"""

from __future__ import annotations

import re

# Certainty in words, from the highest tier to the lowest. A vault with a
# different number of tiers is mapped onto these by rank (views.certainty_words).
CERTAINTY_WORDS = ("certainly", "clearly", "it seems", "I've seen hints", "I'm guessing")

_IRREGULAR = {"is": "are", "has": "have", "does": "do", "goes": "go", "was": "were"}
# Words ending in "s" that start a noun phrase, not a verb.
_NOT_VERBS = frozenset("""
always sometimes perhaps thus this his its bus gas lens news physics mathematics
series species class process focus status analysis basis canvas bonus campus virus
""".split())
_CLAUSE_WORDS = frozenset("is are was were has have had".split())
_COPULAS = frozenset("is are was were".split())
_DETERMINERS = frozenset("""
a an the my your his her their our its this that these those one no some any every each
""".split())


def _base(verb: str) -> str:
    """3rd person singular → the form that goes with "you"."""
    v = verb.lower()
    if v in _IRREGULAR:
        return _IRREGULAR[v]
    if v.endswith("ies") and len(v) > 4:
        return v[:-3] + "y"
    if v.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return v[:-2]
    return v[:-1]


def verb_phrase(title: str) -> str | None:
    """The title as a verb phrase for "you", or None when it is not one."""
    words = title.strip().rstrip(".").split()
    if not words:
        return None
    first = words[0]
    low = first.lower()
    if not re.fullmatch(r"[A-Za-z][a-z]+", first) or low in _DETERMINERS:
        return None
    if low in _IRREGULAR:
        pass
    elif not (low.endswith("s") and not low.endswith(("ss", "us", "is")) and len(low) > 2):
        return None
    if low in _NOT_VERBS:
        return None
    # "Retries without a key are a bug": the first word is the subject of its
    # own clause, not a verb, so the title is quoted rather than conjugated.
    if low not in _IRREGULAR and (any(w.lower() in _COPULAS for w in words[1:])
                                  or any(w.lower() in _CLAUSE_WORDS for w in words[1:3])):
        return None
    rest = " ".join(words[1:])
    return (_base(low) + (" " + rest if rest else "")).strip()


# Per certainty level: ways to say a verb phrase ("you {vp}") and a quoted
# title ("{t}"). Variants keep a paragraph from repeating one formula.
_VERBAL = (
    ("You {vp}.",),
    ("Clearly, you {vp}.", "It's clear you {vp}.", "Without much doubt, you {vp}."),
    ("It seems you {vp}.", "From what I've seen, you {vp}.", "By all appearances, you {vp}."),
    ("I've seen hints that you {vp}.", "There are signs you {vp}.",
     "Now and then it looks as if you {vp}."),
    ("I'm guessing you {vp}.", "Perhaps you {vp}.", "My guess is that you {vp}."),
)
_NOMINAL = (
    ("{t}.",),
    ("{t}: that much is clear.", "Clearly: {t}.", "Well established: {t}."),
    ("{t}, it seems.", "From what I've seen: {t}.", "It looks that way: {t}."),
    ("I've seen hints of this: {t}.", "There are signs of this: {t}.", "A glimpse: {t}."),
    ("A guess: {t}.", "Possibly: {t}.", "Unconfirmed, but: {t}."),
)
_PREPS = frozenset("by about with to in of for at on".split())


def _state_phrase(words: list[str]) -> str | None:
    """ "Working toward X" → "are working toward X"; "Energised by X" → "are energised by X"."""
    first = words[0].lower()
    if not re.fullmatch(r"[A-Za-z][a-z]+", words[0]):
        return None
    if first.endswith("ing") and len(first) > 4:
        return "are " + " ".join([first] + words[1:])
    if first.endswith("ed") and len(words) > 1 and words[1].lower() in _PREPS:
        return "are " + " ".join([first] + words[1:])
    return None


def say(title: str, certainty: str, variant: int = 0) -> str:
    """One sentence about the person, its confidence said in words."""
    level = CERTAINTY_WORDS.index(certainty) if certainty in CERTAINTY_WORDS else 2
    t = title.strip().rstrip(".")
    vp = None
    if not t.endswith(("?", "!")):
        vp = verb_phrase(t) or _state_phrase(t.split())
    forms = (_VERBAL if vp is not None else _NOMINAL)[level]
    return forms[variant % len(forms)].format(vp=vp, t=t)


def sentence(text: str) -> str:
    """`text` ending in exactly one mark of punctuation."""
    t = " ".join((text or "").split()).rstrip()
    if not t:
        return ""
    return t if t[-1] in ".?!…" else t + "."
