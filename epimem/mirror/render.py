"""Markdown for the four mirror modes. Pure: values in, text out.

Written for a person at a terminal: each mode aims to fit one screen
(`SCREEN_LINES`); long lists are cut with "and N more" (the JSON has them
all), and an output that still runs longer says why at its end.
"""

from __future__ import annotations

import re
import textwrap
from datetime import date
from typing import TYPE_CHECKING

from . import text as tx
from .phrase import CERTAINTY_WORDS, say, sentence

if TYPE_CHECKING:  # annotations only
    from .audit import Audit
    from .gutcheck import GutCheck
    from .interview import Interview
    from .portrait import PortraitBrief
    from .views import BeliefView, TensionView

SCREEN_LINES = 50   # a terminal screen, after wrapping at WIDTH
WIDTH = 100
LIST_MAX = 4

# How a theme's overall certainty reads as a heading suffix.
_THEME_WORDS = dict(zip(CERTAINTY_WORDS, (
    "well established", "clearly seen", "fairly clear", "glimpsed", "mostly guesswork")))
_SECTION = {"warm-up": "Warm-up", "blind-spot": "Blind spot", "stale": "Stale",
            "probe": "Probe", "tension": "Tension", "open": "Open space", "closing": "Closing"}


# --- helpers --------------------------------------------------------------------

def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def _ago(days: int | None) -> str:
    if days is None:
        return "never"
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    return f"{days} days ago"


def _when(d: date | None) -> str:
    return d.isoformat() if d else "never"


def _more(items: list[str], total: int, sep: str = ", ") -> str:
    s = sep.join(items)
    if total > len(items):
        s += f"{sep}and {total - len(items)} more"
    return s


def _problems(problems) -> list[str]:
    if not problems:
        return []
    out = ["", f"**Skipped files** ({len(problems)}; fix them and run again):"]
    out += [f"- {p}" for p in problems[:10]]  # Problem prints as path:line: message
    if len(problems) > 10:
        out.append(f"- and {len(problems) - 10} more (`epimem validate` lists them all)")
    return out


def refused_lines(refused) -> str:
    """The end of a mode's markdown when hand edits were refused (SPEC rule 21): one line each,
    the line every front end says. "" when there are none."""
    if not refused:
        return ""
    return "\n" + "\n".join(f"> {r}" for r in refused) + "\n"


_ITEM = re.compile(r"^(\s*(?:[-*] |\d+\. |> )?)")


def wrap(lines: list[str], width: int = WIDTH) -> list[str]:
    """Hard-wrap prose and list items for a terminal; tables and headings stay
    whole. Continuation lines are indented under the item's text, which
    markdown reads as the same paragraph."""
    out: list[str] = []
    for line in lines:
        if len(line) <= width or line.startswith(("|", "#", "```")):
            out.append(line)
            continue
        lead = _ITEM.match(line).group(1)  # type: ignore[union-attr]  # every part optional: it always matches
        rest = " " * len(lead) if not lead.startswith(">") else "> "
        out += textwrap.wrap(line, width, initial_indent="", subsequent_indent=rest,
                             break_long_words=False, break_on_hyphens=False) or [line]
    return out


def _fit(lines: list[str], why: list[str]) -> str:
    """Wrap, and when the text is longer than a screen say so and why."""
    lines = wrap(lines)
    if len(lines) > SCREEN_LINES:
        reason = "; ".join(why) if why else "the vault has a lot to report"
        lines = lines + [""] + wrap([f"_This runs past one screen ({len(lines)} lines) because "
                                     f"{reason}. `--json` has every list in full._"])
    return "\n".join(lines).rstrip() + "\n"


def _cell(s: str, width: int | None = 44) -> str:
    """A table cell: one line, cut to `width` for a screen; whole (`None`) for a recorded review,
    which is a file the user reads later, where a cut title is a title lost."""
    return (tx.one_line(s, width) if width else " ".join((s or "").split())).replace("|", "/")


# --- audit ------------------------------------------------------------------------

def _belief_table(views: tuple[BeliefView, ...], whole: bool = False) -> list[str]:
    rows = ["| belief | stored → eff. | permanence | confirmed | why |",
            "|---|---|---|---|---|"]
    width = None if whole else 34
    for v in views:
        # Pinned shows in `why`; on a screen the row stays under ~110 columns.
        rows.append(f"| {_cell(v.title, width)} | {v.confidence:.2f} → {v.effective_confidence:.2f} | "
                    f"{v.permanence} | {_when(v.confirmed)} | {_cell(v.why, width)} |")
    return rows


def _id_line(label: str, items, width: int = WIDTH) -> str:
    """One line: label, count, and as many ids as fit; the JSON has them all."""
    if not items:
        return ""
    head = f"- {label} ({len(items)}): "
    ids: list[str] = []
    for it in items:
        more = f", and {len(items) - len(ids) - 1} more" if len(ids) + 1 < len(items) else ""
        if ids and len(head) + len(", ".join(ids + [f"`{it.id}`"])) + len(more) > width:
            break
        ids.append(f"`{it.id}`")
    rest = len(items) - len(ids)
    return head + ", ".join(ids) + (f", and {rest} more" if rest else "")


def _leftovers(leftovers) -> list[str]:
    if not leftovers:
        return []
    out = ["", f"**Kept in both versions by a merge** ({len(leftovers)}; two machines changed the same "
               "text: edit each to keep what is true):"]
    out += [f"- {p}" for p in leftovers[:10]]
    if len(leftovers) > 10:
        out.append(f"- and {len(leftovers) - 10} more (`epimem validate` lists them all)")
    return out


def audit_markdown(a: Audit, whole: bool = False) -> str:
    s = a.sessions
    t = a.totals
    out = [f"# Audit · {a.today.isoformat()}", ""]
    if a.empty:
        out += ["Nothing known yet: the vault has no beliefs and no observations.",
                "Beliefs appear as the assistant observes you (`/observe`, `epimem observe`) "
                "or as you add them (`epimem belief add`).", ""]
    head = [f"**{_n(t.beliefs, 'active belief')}**"]
    if t.retired or t.superseded:
        head[0] += f" ({t.retired} retired, {t.superseded} superseded)"
    head += [_n(t.observations, "observation"), _n(t.tensions, "tension")]
    out.append(" · ".join(head))
    since_init = (f"started {_ago(s.days_since_init)}" if s.days_since_init is not None
                  else "start date not recorded")
    review = (f"last review {_ago(s.days_since_last_review)}, "
              f"{_n(s.sessions_since_last_review, 'session')} since"
              if s.last_review else "no review yet")
    out.append(f"{_n(s.count, 'session')} · {since_init} · {review} · "
               f"next at session {s.next_review_at}")
    if s.review_due:
        out.append(f"**A review is due**: {s.review_reason}.")
    if s.dormant_days is not None:
        out.append(f"Returning from dormancy: the last session was {s.dormant_days} days ago.")
    out += _leftovers(a.merge_leftovers)
    if a.empty:
        out += _problems(a.problems)
        return _fit(out, [])
    out.append("")
    out.append("Permanence: " + " · ".join(f"{k} {v}" for k, v in a.by_permanence.items()))
    out.append("Tier (effective): " + " · ".join(f"{k} {v}" for k, v in a.by_tier.items()))

    if a.top:
        out += ["", "## Strongest", *_belief_table(a.top, whole)]
    if a.bottom:
        out += ["", "## Weakest", *_belief_table(a.bottom, whole)]

    d, dr = a.dormancy, a.drift
    attention = [
        _id_line("**Faded** below stored", d.decayed),
        _id_line("**Never confirmed**", d.never_confirmed),
        _id_line("**Used, never confirmed** (cited in sessions)", a.used_unconfirmed),
        _id_line("**Permanence unknown** 30+ days", d.unknown_too_long),
        _id_line("**Situational**, unconfirmed 6+ weeks", d.situational_unconfirmed),
        _id_line("**Challenged**, never lowered", dr.challenged_not_lowered),
        _id_line("**Stale** for their class", dr.stale),
    ]
    attention = [x for x in attention if x]
    out += ["", "## Needs attention"] + (attention or ["Nothing has faded, drifted or gone unchecked."])

    tv = a.tensions
    c = a.coherence
    if c.too_neat:
        coherent = (f"**too neat**: no open tension after {_n(c.sessions, 'session')}; real people "
                    "contradict themselves, so the profile may be smoothing things over.")
    elif c.open_tensions:
        coherent = "the profile holds contradictions, as a real one should."
    else:
        coherent = (f"no open tension yet, too early to call it too neat ({_n(c.sessions, 'session')}; "
                    f"the check starts at {c.threshold}).")
    out += ["", "## Tensions and coherence",
            " · ".join(f"{v} {k}" for k, v in tv.by_status.items()) + f": {coherent}"]
    flags = [x for x in tv.open if x.rests_on]
    asked = [x for x in tv.open if x.successor and not x.rests_on]
    for x in asked[:LIST_MAX]:
        out.append(f"- **may have changed**: `{x.belief}` → `{x.successor}` (proposed, open {x.days_open} days); "
                   f"the user's answer settles it")
    if flags:
        out.append("- **Rests on a belief that changed**: " + _more(
            [f"`{x.belief}` (on `{x.rests_on}`)" for x in flags[:LIST_MAX]], len(flags), "; "))
    plain = [x for x in tv.unresolved if not x.rests_on and not x.successor]
    for x in plain[:LIST_MAX]:
        out.append(f"- unresolved: {_tension_line(x)}")
    if len(plain) > LIST_MAX:
        out.append(f"- and {len(plain) - LIST_MAX} more unresolved")

    props = []
    perm = [p for p in a.permanence if p.suggested]
    if perm:
        props.append("- **Permanence**: " + _more(
            [f"`{p.id}` {p.current} → {p.suggested} ({p.reason})" for p in perm[:LIST_MAX]],
            len(perm), "; "))
    for action, label in (("soften", "Soften"), ("raise", "Raise")):
        ps = [p for p in a.proposals if p.action == action]
        if ps:
            props.append(f"- **{label}**: " + _more(
                [f"`{p.id}` ({p.reason})" for p in ps[:LIST_MAX]], len(ps), "; "))
    cal = a.calibration
    if cal is not None and cal.proposals:
        from .calibration import proposal_lines

        props += ["- **Parameters** (from your verdicts):", *("  " + x for x in proposal_lines(cal))]
    if props:
        out += ["", "## Proposals", *props]
    if cal is not None and (cal.verdicts or cal.unsure):
        from .calibration import band_lines, summary

        out += ["", "## Calibration", summary(cal), "", *band_lines(cal)]

    if a.unconnected:
        grouped = {o for cand in a.candidates for o in cand.observations}
        loose = [o for o in a.unconnected if o.id not in grouped]
        out += ["", "## Loose observations",
                _id_line("Not connected to any belief", list(reversed(loose)))[2:]
                if loose else f"{_n(len(a.unconnected), 'observation')} not connected to any belief."]
        for cand in a.candidates[:3]:
            out.append(f"- Seen {_n(len(cand.observations), 'time')}, a candidate belief: "
                       f"“{tx.one_line(cand.example, 60)}” ({', '.join(cand.observations[:2])}"
                       f"{', …' if len(cand.observations) > 2 else ''})")
    out += _problems(a.problems)
    why = []
    if len(a.top) + len(a.bottom) >= 8:
        why.append("it lists the five strongest and five weakest beliefs")
    if len(attention) + len(props) >= 6:
        why.append("many beliefs are flagged for dormancy, drift or proposals")
    if a.problems:
        why.append("some files were skipped")
    if a.merge_leftovers:
        why.append("a merge left versions to settle")
    return _fit(out, why)


def _tension_line(x: TensionView) -> str:
    on = f" on `{x.belief}`" if x.belief else ""
    return f"“{tx.one_line(x.title, 60)}”{on}, open {x.days_open} days"


# --- gut-check ---------------------------------------------------------------------

def gut_check_markdown(g: GutCheck) -> str:
    out = [f"# Gut-check · {g.today.isoformat()}", ""]
    if not g.high and not g.low:
        out.append("Nothing to check yet: there are no beliefs about you to hold up to the light.")
        out += _problems(g.problems)
        return _fit(out, [])
    n = len(g.high) + len(g.low) + len(g.calibrate)
    pool = ("the beliefs I hold most and least firmly about who you are"
            if g.pool == "interpretive" else
            "the beliefs I hold most and least firmly (few are interpretations yet, so I "
            "included what I inferred from behaviour)")
    out.append(f"{_n(n, 'thing')} I believe about you: {pool}. For each, tell me: true, false, "
               "or unsure.")
    i = 0
    for title, items in (("Still true?", g.high), ("Still uncertain?", g.low),
                         ("Still true? (from the middle, where your answers are few)", g.calibrate)):
        if not items:
            continue
        out += ["", f"## {title}"]
        for it in items:
            i += 1
            out.append(f"{i}. {it.text}  `{it.belief.id}`")
            out.append(f"   _{it.belief.why}_")
    out += ["", "Record each answer: `epimem mirror answer ID --verdict true|false|unsure "
                "[--note \"...\"]`.",
            "True is kept as your word (it changes no number), false lowers the belief "
            "(or `--retire` it), unsure is noted. Answering all of them counts as a review."]
    out += _problems(g.problems)
    return _fit(out, [])


# --- interview ---------------------------------------------------------------------

def interview_markdown(iv: Interview) -> str:
    out = [f"# Interview plan · {iv.today.isoformat()}", "",
           f"{_n(len(iv.questions), 'question')}, asked one at a time. Record each answer with "
           "`epimem observe --basis self-report --strength single|confirming|complicating|"
           "contradicting --connects ID|new --evidence \"...\"`.", ""]
    for q in iv.questions:
        target = f" → `{q.connects}`" if q.connects != "new" else ""
        out.append(f"{q.n}. **{_SECTION.get(q.section, q.section)}.** {q.text}")
        out.append(f"   _{q.prompted_by}_{target}")
    out += _problems(iv.problems)
    return _fit(out, [])


# --- portrait ----------------------------------------------------------------------

def _join_words(items: list[str], last: str = "or") -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {last} " + items[-1]


def _sayings(views) -> list[str]:
    """Sentences for several beliefs, varying the formula when a certainty repeats."""
    seen: dict[str, int] = {}
    out = []
    for v in views:
        n = seen.get(v.certainty, 0)
        seen[v.certainty] = n + 1
        out.append(say(v.title, v.certainty, n))
    return out


def person_paragraph(b: PortraitBrief) -> str:
    if b.empty:
        return ("I don't know you yet. Nothing is recorded: no belief, no observation worth "
                "building on. What follows is an empty mirror, and that is honest: I would "
                "rather say nothing than invent someone.")
    low = {CERTAINTY_WORDS[-1], CERTAINTY_WORDS[-2]}
    parts = ["Here is how I see you, so far."]
    parts += _sayings(b.person)
    shaky = sum(1 for v in b.person if v.certainty in low)
    if b.person and shaky * 2 >= len(b.person):
        parts.append("Much of this is still a sketch: I haven't watched you for long enough to "
                     "be sure.")
    elif b.person:
        parts.append("Take it as a reading, not a verdict: you know better.")
    return " ".join(parts)


def portrait_markdown(b: PortraitBrief, note: str = "") -> str:
    out = ["# Portrait", ""]
    if note:
        out += [f"_{note}_", ""]
    out.append(person_paragraph(b))
    said = {v.id for v in b.person}
    if b.themes:
        out += ["", "## Themes"]
        covered = []
        for th in b.themes:
            fresh = [v for v in th.beliefs if v.id not in said][:3]
            if not fresh:
                covered.append(th.label[:1].lower() + th.label[1:])
                continue
            heading = f"**{th.label}**, {_THEME_WORDS.get(th.certainty, 'seen')}."
            out.append(f"- {heading} " + " ".join(_sayings(fresh)))
            said.update(v.id for v in fresh)
        if covered:
            out.append(f"- The sketch above already covers {_join_words(covered, 'and')}.")
    spots = [s for s in b.blind_spots if s.reason == "none"]
    guesses = [s for s in b.blind_spots if s.reason != "none"]
    out += ["", "## What I don't see"]
    if b.empty:
        out.append("Everything, for now.")
    else:
        lines = []
        if spots:
            names = [s.area for s in spots[:4]]
            if len(spots) > 4:
                lines.append(f"I see nothing yet of {', '.join(names)}, among other things.")
            else:
                lines.append(f"I see nothing yet of {_join_words(names)}.")
        if guesses:
            lines.append(f"About {_join_words([s.area for s in guesses[:3]])} I have only guesses.")
        out.append(" ".join(lines) or "No area is blank, which makes me suspect I am missing "
                                      "what I don't know to look for.")
    out += ["", "## Contradictions worth holding"]
    if b.contradictions:
        for x in b.contradictions[:3]:
            # What it suggests, not the dated play-by-play: a portrait has no numbers.
            detail = sentence(tx.first_sentence(x.suggests or x.what_happened, 240))
            out.append(f"- **{sentence(tx.one_line(x.title, 100))}** {detail}".rstrip())
        if len(b.contradictions) > 3:
            out.append("- and others I am still watching.")
    elif b.empty:
        out.append("None yet.")
    else:
        out.append("None on record. Either you are unusually consistent, or I haven't been "
                   "looking closely enough.")
    out += ["", "## Where I'm hungriest", f"> {b.hungriest.question}", "",
            f"_{b.hungriest.why[:1].upper()}{b.hungriest.why[1:]}._"]
    if b.problems:
        out += ["", "---"] + _problems(b.problems)[1:]
    return _fit(out, ["some files were skipped"] if b.problems else [])


def llm_portrait_markdown(prose: str, model: str, brief: PortraitBrief) -> str:
    """The LLM's prose, framed like the offline portrait."""
    body = prose.strip()
    if not body.startswith("#"):
        body = "# Portrait\n\n" + body
    out = [body, "", f"_Written by {model} from the mirror's brief; "
                     "`epimem mirror portrait` without `--llm` gives the offline version._"]
    if brief.problems:
        out += ["", "---"] + _problems(brief.problems)[1:]
    return "\n".join(out).rstrip() + "\n"
