"""The session context: the text an assistant is given about the user when a session starts.

One rendering for every front end that gives it: Claude Code's session-start hook
(`claude/hook.py`), `/observe`'s data (`epimem skill observe`), MCP's `epimem://context`.
It renders `.epimem/context.json` (`store/context_cache`), which every write keeps current and
which already holds what readers are shown (SPEC rules 21 and 23: redacted, a refused hand
edit as last committed, with its line).

Imported by the session-start hook before every session: the standard library, the kernel of
the rules and the context cache only (`tests/architecture`).
"""

from __future__ import annotations

import os
from datetime import date

from ..core import kernel
from ..core import text as core_text
from ..store.context_cache import FALLBACK_PARAMS, effective, tier

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hook imports this module and must stay lean
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

# Budgets are given in tokens, like `recall --budget-tokens`, and converted to
# characters at recall's estimate for ASCII text (one token per 3 characters,
# deliberately high, so the real count stays below the budget).
CHARS_PER_TOKEN = 3
DEFAULT_BUDGET_TOKENS = 1300
DEFAULT_BUDGET = DEFAULT_BUDGET_TOKENS * CHARS_PER_TOKEN  # characters of additionalContext
MAX_CHARS = 9500            # Claude Code caps any hook output string at 10,000
MIN_EFFECTIVE = 0.30        # speculative beliefs are not put in front of the model
MAX_BELIEFS = 30
MAX_REFUSED = 3             # refused hand edits named one a line; the rest counted
MAX_WHY = 240               # a refused pass's reason, cut: the line is one of the context's facts


def project_root(cwd: str) -> str:
    """The enclosing git work tree of `cwd`, else `cwd` itself."""
    d = os.path.abspath(cwd)
    home = os.path.expanduser("~")
    for _ in range(40):
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d or d == home:
            break
        d = parent
    return os.path.abspath(cwd)


def scope_matches(scope: str, cwd: str, proj: str) -> bool:
    """Whether a scoped belief belongs in "For this project": `kernel.scope_matches` for the
    session's folder or its git work tree. Global beliefs have their own section."""
    return not kernel.is_global(scope) and (kernel.scope_matches(scope, cwd) or kernel.scope_matches(scope, proj))


def _words(text: str) -> set[str]:
    """The words a project name and a belief's title share, as recall's keyword ranker reads
    them (`core.text`: stems, no stopwords), words of three letters or more."""
    return {t for t in core_text.tokenize(text) if len(t) > 2}


def _rank(records: list[dict], today: date, prm: dict, project_words: set[str]) -> list[tuple[float, float, dict]]:
    out = []
    for rec in records:
        eff = effective(rec, today, prm)
        if eff < MIN_EFFECTIVE - 1e-9:
            continue
        # Relevance: a belief that names the project (tag or title) comes first
        # among equals; confidence still dominates.
        hits = len(project_words & (_words(rec["title"]) | _words(" ".join(rec.get("tags", ())))))
        out.append((eff + 0.05 * min(hits, 2), eff, rec))
    out.sort(key=lambda x: (-x[0], x[2]["id"]))
    return out


MAX_QUESTIONS = 5
QUESTIONS_TITLE = "Open questions — ask the user before relying on either side:"


def question_lines(cache: dict, cwd: str, proj: str,
                   limit: int = MAX_QUESTIONS) -> tuple[list[str], set[str], set[str]]:
    """(the lines of the open questions this session may ask, the beliefs they name, the
    beliefs in a question beyond `limit`).

    SPEC §14: while a tension is open, the context shows both sides as a question, never one
    of them as if current: a belief in a shown question is left out of the lists below it,
    and one in a question that did not fit is listed marked "in question"."""
    lines: list[str] = []
    named: set[str] = set()
    more: set[str] = set()
    for q in cache.get("questions") or ():
        scope = q.get("scope") or "global"
        if not kernel.is_global(scope) and not scope_matches(scope, cwd, proj):
            continue
        ids = {q["belief"]} | ({q["successor"]} if q.get("successor") else set())
        if len(lines) >= limit:
            more |= ids
            continue
        named |= ids
        title, bid = q["title"], q["belief"]
        if q.get("successor"):
            line = (f"- Has “{title}” [{bid}] given way to “{q['successor_title']}” [{q['successor']}]? "
                    f"Since {q['date']}: {q['what']}")
        elif q.get("rests_on"):
            line = f"- Does “{title}” [{bid}] still hold? It rests on [{q['rests_on']}]: {q['what']}"
        elif q.get("asked"):
            line = f"- {q['asked']} [{bid}] Asked on {q['date']}: {q['what']}"
        elif q.get("divergence"):
            line = f"- Said and did differ on “{title}” [{bid}] (since {q['date']}): {q['what']}"
        else:
            line = f"- Does “{title}” [{bid}] still hold? Contradicted on {q['date']}: {q['what']}"
        lines.append(line)
    return lines, named, more - named


def _belief_line(eff: float, rec: dict, prm: dict, gist: bool = True, asked: bool = False) -> str:
    words = tier(eff, rec.get("basis", ""), prm)
    if rec.get("pinned"):
        words += ", pinned"
    if asked:
        words += ", in question"
    line = f"- ({words}) {rec['title']}"
    g = rec.get("gist") or ""
    if gist and g and g.rstrip(".").lower() != rec["title"].rstrip(".").lower():
        line += f" — {g}"
    return line + f" [{rec['id']}]"


def render_context(cache: dict | None, info: dict | None, *, cwd: str, today: date,
                   budget: int = DEFAULT_BUDGET, vault_label: str = "", waiting: int = 0,
                   current: Callable[[str], bool] | None = None, refused: Sequence[dict] = ()) -> str:
    """The additionalContext text: facts about the vault, then the beliefs that fit the budget.
    `waiting`: the proposals in the review inbox (SPEC §15), said in one line. `refused`: the
    session-end passes the vault refused (`store.refused_passes`), said in one line. `current(id)`:
    whether a belief the cache lists may still be shown as current, for a cache read as it is
    (`store.context_cache.still_current`); a belief it refuses is left out."""
    budget = max(0, min(int(budget), MAX_CHARS))
    prm = (cache or {}).get("params") or FALLBACK_PARAMS
    head: list[str] = []
    where = f" ({vault_label})" if vault_label else ""
    if info is not None:
        if info["counted"]:
            head.append(f"epimem: this is session {info['count']} recorded in the user's epimem vault{where}.")
        else:
            head.append(f"epimem: a continued session; {info['count']} sessions recorded in the user's "
                        f"epimem vault{where}.")
        if info["dormant"] is not None:
            head.append(f"Returning from dormancy: the previous session was {info['dormant']} days ago, "
                        "so every confidence below is the decayed (effective) one.")
        if info["due"]:
            head.append(f"A periodic review of what epimem believes about the user is due ({info['due']}); "
                        "/mirror audit or /mirror gut-check records one.")
    else:
        head.append(f"epimem: the user's epimem vault{where}.")
    if waiting:
        head.append(f"{waiting} proposal{'s' if waiting != 1 else ''} of what to remember "
                    f"wait{'s' if waiting == 1 else ''} for the user's review: they decide with `epimem inbox` "
                    "(or the mirror page); mention it once if it fits, never accept or reject for them.")
    if refused:
        head.append(refused_line(refused))
    out = "\n".join(head)
    if cache is None:
        return out[:budget]
    proj = project_root(cwd)
    pwords = _words(os.path.basename(proj))
    local: list[dict] = []
    for scope, recs in (cache.get("scopes") or {}).items():
        if scope_matches(scope, cwd, proj):
            local.extend(recs)
    asked, named, marked = question_lines(cache, cwd, proj)
    sections = [(f"For this project ({os.path.basename(proj) or proj}):",
                 [r for r in _rank(local, today, prm, pwords) if r[2]["id"] not in named]),
                ("In general:", [r for r in _rank(cache.get("global") or [], today, prm, pwords)
                                 if r[2]["id"] not in named])]
    intro = ("\nWhat epimem believes about the user: hypotheses, each with its confidence in words "
             "(tentative ones are guesses to check); [id] names a belief in epimem commands: cite the "
             "[id] of a belief you rely on.")
    body: list[str] = []
    size = len(out) + len(intro)
    if asked and size + len(QUESTIONS_TITLE) + sum(len(x) + 1 for x in asked) + 1 <= budget:
        body.append(QUESTIONS_TITLE)
        body.extend(asked)
        size += len(QUESTIONS_TITLE) + 1 + sum(len(x) + 1 for x in asked)
    shown = 0
    for title, ranked in sections:
        if not ranked or shown >= MAX_BELIEFS:
            continue
        lines: list[str] = []
        used = size + len(title) + 1
        for _, eff, rec in ranked:
            if shown >= MAX_BELIEFS:
                break
            if current is not None and not current(rec["id"]):
                continue
            line = _belief_line(eff, rec, prm, asked=rec["id"] in marked)
            if used + len(line) + 1 > budget:
                line = _belief_line(eff, rec, prm, gist=False, asked=rec["id"] in marked)  # the title alone
                if used + len(line) + 1 > budget:
                    break
            lines.append(line)
            used += len(line) + 1
            shown += 1
        if lines:
            body.append(title)
            body.extend(lines)
            size += len(title) + 1 + sum(len(x) + 1 for x in lines)
    if body:
        out += intro + "\n" + "\n".join(body)
    refused = list((cache.get("refused") or {}).values())
    notes = [f"\n{line}" for line in refused[:MAX_REFUSED]]
    if len(refused) > MAX_REFUSED:
        notes.append(f"\n… and {len(refused) - MAX_REFUSED} more hand edits refused; `epimem validate` names them.")
    problems = (cache.get("counts") or {}).get("problems") or 0
    if problems:
        notes.append(f"\n{problems} belief file(s) could not be read; `epimem validate` names them.")
    for tail in notes:
        if len(out) + len(tail) <= budget:
            out += tail
    return out[:budget]


def refused_line(refused: Sequence[dict]) -> str:
    """What the session is told of the passes the vault refused: the newest reason, and how the
    user gets what they found recorded (the evidence waits in the transcripts, not in the vault)."""
    import shlex  # off the hook's common path: only when a pass was refused

    last = refused[-1]
    why = " ".join(str(last.get("why") or "no reason kept").split())
    why = why if len(why) <= MAX_WHY else why[:MAX_WHY - 1] + "…"
    if len(refused) == 1:
        return (f"The session-end pass of {last.get('day') or 'an earlier session'} recorded nothing: the vault "
                f"refused it ({why}). Tell the user once: when that is fixed, `epimem transcript "
                f"{shlex.quote(str(last['transcript']))}` records that session.")
    return (f"{len(refused)} session-end passes recorded nothing: the vault refused them (the newest, "
            f"{last.get('day') or '?'}: {why}). Tell the user once: `epimem doctor` lists them, each with the "
            "command that records it once the cause is fixed.")


def session_context(root: str, cwd: str, today: date, *, info: dict | None = None,
                    budget: int = DEFAULT_BUDGET, cache: dict | None = None) -> str:
    """The context for a session working in `cwd`, from the cache brought up to date first
    (incremental: only files whose size or mtime changed are read). `cache`: that cache, when the
    caller has just brought it up to date (for the session's counter, `info`, read with its rules)."""
    from ..store import refused_passes
    from ..store.context_cache import refresh_context
    from ..store.paths import inbox_waiting

    if cache is None:
        cache = refresh_context(root, today)
    return render_context(cache, info, cwd=cwd, today=today, budget=budget, vault_label=vault_label(str(root)),
                          waiting=inbox_waiting(root), refused=refused_passes.read(root))


def vault_label(root: str) -> str:
    """The vault's folder as the context names it: `~/…` under the home directory."""
    home = os.path.expanduser("~")
    return "~" + root[len(home):] if root.startswith(home + os.sep) else root


def chars_for_tokens(tokens: int) -> int:
    """A budget in tokens (`--budget-tokens`) as characters of context."""
    return max(0, min(int(tokens) * CHARS_PER_TOKEN, MAX_CHARS))
