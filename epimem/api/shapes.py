"""The JSON shapes of the API's results, shared by every front end.

The CLI's `--json` and the MCP server's structured output are the same
objects: one function per shape, the field names and types from
`core.vocabulary` (the table is in docs/cli.md).
"""

from __future__ import annotations

from ..core import vocabulary as vocab

TYPE_CHECKING = False  # the CLI's help imports this module: no typing at run time
if TYPE_CHECKING:
    from typing import Any


def belief_json(b, refused, today, params) -> dict[str, Any]:
    """`belief show` and MCP `get`: the belief (`core.record.view`) and the hand edit refused on it."""
    from ..core.record import view

    out = view(b, today, params, True)
    out["refused"] = vocab.refused([refused] if refused is not None else [])
    return out


def listing_json(listing, today, params) -> dict[str, Any]:
    """`belief list` and MCP `list`: the beliefs without statement and evidence, the files not
    shown and the edits refused."""
    from ..core.record import view

    return {"beliefs": [view(b, today, params, False) for _, b in listing.rows],
            "problems": vocab.problems(listing.problems), "refused": vocab.refused(listing.refused)}


def tension_json(t) -> dict[str, Any]:
    return {"id": t.id, "date": vocab.iso(t.date), "belief": t.belief, "status": t.status, "title": t.title,
            "what_happened": t.what_happened, "evidence": list(t.evidence), "suggests": t.suggests,
            "resolution": t.resolution, "successor": t.successor or None, "rests_on": t.rests_on or None}


def observe_json(report) -> dict[str, Any]:
    """`observe`'s report; `ObservationResult.before/after` are `confidence_before/after` here."""
    return {
        "commit": report.commit,
        "observations": [{
            "id": r.observation.id, "belief": r.belief, "strength": r.observation.strength,
            "duplicate": r.duplicate, "created": r.created, **vocab.confidence_change(r.before, r.after),
            "reason": r.reason, "tension": r.tension, "alert": r.alert,
            "similar": [dict(x) for x in r.similar], "successor": r.successor,
        } for r in report.results],
        "held": report.held,
        "proposed": list(report.proposed),
        "alerts": [{"belief": r.belief, "observation": r.observation.id,
                    "message": f"a belief held at {r.before:.2f} was contradicted"} for r in report.alerts],
    }


def inbox_json(pv) -> dict[str, Any]:
    """A proposal of the review inbox (`api.inbox.Preview`) with what accepting it would change."""
    p = pv.proposal
    return {
        "id": p.id, "proposed": p.proposed.isoformat(), "origin": p.origin, "source": p.source,
        "session": p.session or None, "observation": p.observation, "refused": pv.refused or None,
        "effects": [{"belief": r.belief, "created": r.created, **vocab.confidence_change(r.before, r.after),
                     "reason": r.reason, "tension": r.tension, "tension_opened": r.tension_opened,
                     "successor": r.successor, "duplicate": r.duplicate} for r in pv.results],
        "changes": [{"path": c.path, "action": c.action, "diff": c.diff} for c in pv.changes],
        "kind": p.kind,
        **({"importer": p.importer, "files": [r.path for r in p.records], "notes": list(pv.notes),
            "beliefs": [{"id": b.id, "title": b.title, "basis": b.basis, "confidence": vocab.confidence(b.confidence),
                         "kind": b.kind, "scope": b.scope} for b in pv.beliefs]} if p.kind == "import" else {}),
    }


def inbox_listing_json(review: str, previews, problems) -> dict[str, Any]:
    """The review inbox as `epimem inbox --json` and MCP's `inbox` give it."""
    return {"review": review, "proposals": [inbox_json(pv) for pv in previews], "problems": vocab.problems(problems)}


NOTHING_OBSERVED: dict[str, Any] = {"commit": None, "observations": [], "held": False, "proposed": [], "alerts": []}


def session_json(r) -> dict[str, Any]:
    """`SessionReport.review_due` holds the reason; the JSON splits it into a bool and `review_reason`."""
    return {"counted": r.counted, "count": r.count, **vocab.dormancy(r.dormant_days),
            **vocab.review(r.review_due), "commit": r.commit, "lines": r.lines()}


def history_json(belief_id: str, points) -> dict[str, Any]:
    """`HistoryPoint.sha/when` are `commit/date` here."""
    return {"id": belief_id, "history": [{"commit": p.sha, "date": vocab.iso(p.when), "op": p.op,
                                          "subject": p.subject, "confidence": vocab.confidence(p.confidence),
                                          "status": p.status, **({"refused": p.refused} if p.refused else {})}
                                         for p in points]}


def change_json(c) -> dict[str, Any]:
    """One change in words (`diff`, `commit`); `Change.ident` is `id` here."""
    return {"what": c.what, "id": c.ident, "action": c.action, "details": list(c.details), "text": c.sentence()}


def answer_json(a) -> dict[str, Any]:
    """A gut-check answer (`mirror answer`)."""
    return {"belief": a.belief, "verdict": a.verdict, "note": a.note,
            **vocab.confidence_change(a.confidence_before, a.confidence_after),
            "status": a.status, "successor": a.successor or None, "gut_check": a.progress}
