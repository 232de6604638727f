"""The words of a text: one tokenizer and one stemmer for everything that needs "the
same words" — recall's keyword ranker, its query rewriting, the mirror's themes, the
session context's project match. Pure, stdlib only.

Deliberately simple and predictable:
- NFKC, case-folded; accents are stripped from Latin words ("café" = "cafe");
- words are runs of letters/digits; snake_case and hyphenated words split;
- scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer,
  Myanmar) become overlapping character bigrams, the usual trick that makes
  BM25 work without a dictionary;
- English stopwords are dropped and a light suffix stripper folds
  "prefers/preferred/preferring" together. Other languages keep their words.
"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for from
further had has have having he her here hers herself him himself his how i if in into is it
its itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
user users user's s t don doesn isn aren wasn weren won shouldn wouldn couldn
should would could can might must shall may also any anything something etc let ok okay
""".split())


def _spaceless(ch: str) -> bool:
    """Scripts written without spaces between words."""
    o = ord(ch)
    return (0x3040 <= o <= 0x30FF          # Hiragana, Katakana
            or 0x3400 <= o <= 0x4DBF       # CJK extension A
            or 0x4E00 <= o <= 0x9FFF       # CJK unified ideographs
            or 0xF900 <= o <= 0xFAFF       # CJK compatibility ideographs
            or 0x20000 <= o <= 0x2FA1F     # CJK extensions B+
            or 0x0E00 <= o <= 0x0EFF       # Thai, Lao
            or 0x1780 <= o <= 0x17FF       # Khmer
            or 0x1000 <= o <= 0x109F       # Myanmar
            or 0xFF66 <= o <= 0xFF9F)      # half-width Katakana


def _fold_latin(word: str) -> str:
    if word.isascii():
        return word
    stripped = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    # Only Latin words lose their accents: for other scripts the combining
    # marks are vowels, and removing them would merge unrelated words.
    return stripped if stripped.isascii() else word


def stem(word: str) -> str:
    """A light English suffix stripper (ASCII words only)."""
    w = word
    if len(w) <= 3 or not w.isascii() or not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith(("ches", "shes", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ingly", "edly", "ing", "ed", "ly"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            base = w[:-len(suffix)]
            if not any(c in "aeiouy" for c in base):
                break
            w = base
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]  # "preferred" -> "prefer", "running" -> "run"
            break
    if w.endswith("e") and len(w) >= 4:
        w = w[:-1]  # "decide" and "decided" meet at "decid"
    return w


def tokenize(text: str) -> list[str]:
    """Index terms of a text, in order, with repeats."""
    return [t for t, _ in tokens_with_words(text)]


def tokens_with_words(text: str) -> list[tuple[str, str]]:
    """(term, the word it came from): "why it matched" shows words, not stems."""
    if not text:
        return []
    text = unicodedata.normalize("NFKC", text).casefold()
    out: list[tuple[str, str]] = []
    for m in _WORD.finditer(text):
        word = m.group(0)
        if word.isascii():
            _emit_word(word, out)
            continue
        # Split a mixed run ("用户prefers") into spaceless and spaced parts.
        start = 0
        run_spaceless = _spaceless(word[0])
        for i in range(1, len(word) + 1):
            if i == len(word) or _spaceless(word[i]) != run_spaceless:
                part = word[start:i]
                if run_spaceless:
                    if len(part) == 1:
                        out.append((part, part))
                    else:
                        out.extend((part[j:j + 2], part[j:j + 2]) for j in range(len(part) - 1))
                else:
                    _emit_word(_fold_latin(part), out)
                if i < len(word):
                    start, run_spaceless = i, _spaceless(word[i])
    return out


def _emit_word(word: str, out: list[tuple[str, str]]) -> None:
    if word in STOPWORDS:
        return
    if len(word) == 1 and word.isascii() and not word.isdigit():
        return
    out.append((stem(word) if word.isascii() else word, word))


def without(text: str, drop) -> str:
    """`text` less each word all of whose terms `drop(term)` is true for, punctuation and
    the other words left as they were; `text` itself when no term would be left."""
    out: list[str] = []
    kept = False
    last = 0
    for m in _WORD.finditer(text):
        terms = tokenize(m.group(0))
        if terms and all(drop(t) for t in terms):
            out.append(text[last:m.start()])
            last = m.end()
        elif terms:
            kept = True
    out.append(text[last:])
    return " ".join("".join(out).split()) if kept else text
