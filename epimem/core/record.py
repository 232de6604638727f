"""A belief's serialised form: one name and one encoding per field.

The names are the JSON vocabulary (`confidence`, `effective_confidence`,
`tier`, …) and every stored shape of a belief is a projection of this one:

- the vault's parse cache (`store.vault`): `to_row`/`from_row`, every field,
  exact, in `FIELDS` order;
- the session-start context (`store.context_cache`): `encoder` of the fields
  the hook needs, `public` (confidence as a person reads it);
- recall's table rows (`recall.items`): `encoder` over an `Item`, whose
  attributes carry the same names (plus an observation's);
- `belief show/list --json` and the API's JSON (`view`): the public fields
  plus the derived `effective_confidence` and `tier`.

A new field is added to `FIELDS` (and to `core.model.Belief`, in the same
place; a test holds the two in the same order) and, when the JSON should
show it, to `JSON_FIELDS`.

Standard library only and no dataclasses: the session-start hook imports the
context cache, which imports this.
"""

from __future__ import annotations

from datetime import date
from operator import attrgetter

from . import kernel
from . import vocabulary as vocab

# `core.model.Belief`'s fields, in its order (so a row is `Belief(*row)`).
FIELDS = ("id", "title", "kind", "basis", "confidence", "permanence", "first", "confirmed", "challenged",
          "status", "tags", "scope", "pinned", "supersedes", "depends_on", "statement", "evidence",
          "confirmed_session", "path")
# How the non-JSON-native fields are encoded (by name, whatever the object).
DATES = frozenset({"first", "confirmed", "challenged", "date"})   # ISO text or None
LISTS = frozenset({"tags", "supersedes", "depends_on"})              # tuples become lists
EVIDENCE_FIELDS = ("date", "kind", "link", "note")                   # one row per evidence line
# Derived from the stored fields on a date; never stored.
DERIVED = ("effective_confidence", "tier")
# What `--json` shows, in its order; `statement` and `evidence` only in full.
JSON_FIELDS = ("id", "title", "kind", "basis", "confidence", "effective_confidence", "tier", "permanence",
               "first", "confirmed", "challenged", "status", "tags", "scope", "pinned", "supersedes", "depends_on",
               "path")
FULL_JSON_FIELDS = JSON_FIELDS + ("statement", "evidence")
_iso = vocab.iso


def encoder(names: tuple[str, ...], *, public: bool = False):
    """A function from a belief (or anything with these attributes) to the list of its encoded fields.

    `public` rounds the confidence as the JSON vocabulary does (`core.vocabulary`);
    the parse cache keeps it exact.
    """
    get = attrgetter(*names)
    single = len(names) == 1
    dates = tuple(i for i, n in enumerate(names) if n in DATES)
    lists = tuple(i for i, n in enumerate(names) if n in LISTS)
    evidence = names.index("evidence") if "evidence" in names else -1
    conf = names.index("confidence") if public and "confidence" in names else -1

    def encode(obj) -> list:
        row: list = [get(obj)] if single else list(get(obj))
        for i in dates:
            v = row[i]
            if v is not None:
                row[i] = v.isoformat()
        for i in lists:
            row[i] = list(row[i])
        if evidence >= 0:
            row[evidence] = [[_iso(e.date), e.kind, e.link, e.note] for e in row[evidence]]
        if conf >= 0:
            row[conf] = vocab.confidence(row[conf])
        return row

    return encode


def decode(names: tuple[str, ...], row: list) -> dict:
    """The values of an encoded row by name: dates and tuples back (evidence stays rows)."""
    iso = date.fromisoformat
    out = dict(zip(names, row))
    for n in DATES.intersection(out):
        v = out[n]
        out[n] = iso(v) if v else None
    for n in LISTS.intersection(out):
        out[n] = tuple(out[n])
    return out


to_row = encoder(FIELDS)
_I = {n: i for i, n in enumerate(FIELDS)}
_DATE_AT = tuple(_I[n] for n in ("first", "confirmed", "challenged"))
_LIST_AT = tuple(_I[n] for n in LISTS)
_EVIDENCE_AT = _I["evidence"]


def from_row(row: list):
    """The `Belief` of a `to_row` row."""
    from .model import Belief, Evidence

    iso = date.fromisoformat
    r = list(row)
    for i in _DATE_AT:
        if r[i]:
            r[i] = iso(r[i])
    for i in _LIST_AT:
        r[i] = tuple(r[i])
    r[_EVIDENCE_AT] = tuple([Evidence(e[0] and iso(e[0]), e[1], e[2], e[3]) for e in r[_EVIDENCE_AT]])
    return Belief(*r)


def _json_encoder(names: tuple[str, ...]):
    # The stored fields in JSON order; the derived ones are inserted at their places.
    stored = tuple(n for n in names if n not in DERIVED)
    return names, encoder(stored, public=True), names.index("effective_confidence"), names.index("tier")


# A listing shows thousands of beliefs: its encoder skips the statement and the evidence.
_JSON = {True: _json_encoder(FULL_JSON_FIELDS), False: _json_encoder(JSON_FIELDS)}
_JSON_EVIDENCE = FULL_JSON_FIELDS.index("evidence")


def view(b, today: date, params, full: bool = True) -> dict:
    """The JSON of a belief on `today`: its public fields and effective confidence and tier
    under `params` (a `core.params.Params`)."""
    eff = kernel.effective_at(b.confidence, b.permanence, kernel.anchor(b.first, b.confirmed), b.pinned, today,
                              params.decay, params.decay_floor)
    names, encode, at_eff, at_tier = _JSON[full]
    row = encode(b)
    row.insert(at_eff, vocab.effective_confidence(eff))
    row.insert(at_tier, kernel.tier(eff, params.tiers, b.basis))
    if full:
        row[_JSON_EVIDENCE] = [dict(zip(EVIDENCE_FIELDS, e)) for e in row[_JSON_EVIDENCE]]
    return dict(zip(names, row))
