"""The observe pipeline: 0–N observations become one commit.

Input is checked first (a misspelt key refuses the batch), each observation
gets its stable id and a repeat is set aside (a retried hook records nothing
twice), rule 9's limit per session is counted from the log itself, then the
rules of `epimem.core.rules` decide each connected belief's new state and any
tension a contradiction opens. Every file is read once, changed in memory and
handed to the one write path as a compare-and-swap write.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import date
from typing import TYPE_CHECKING, Any

from ..core import kernel, rules
from ..core.errors import Conflict, InputError, NotFound, VaultError
from ..core.forget import forgotten_on
from ..core.ids import IdError, check_id, slugify, text_key, unique_id
from ..core.model import BASES, PERMANENCES, STRENGTHS, Belief, Evidence, Observation
from ..core.notes import parse_observations, render_belief, render_observation, update_belief_text
from ..core.params import Params
from ..core.redact import redact
from ..store import transaction as tx
from ..store.files import read_text, stat_key
from . import common, hand_edits, tensions
from .results import ObservationResult, ObserveReport

if TYPE_CHECKING:
    from .service import Service

OBSERVATION_KEYS = frozenset({"connects", "strength", "evidence", "suggests", "therefore", "basis", "session",
                              "source", "date", "title", "kind", "permanence", "tags", "scope",
                              "new_despite_similar", "successor", "depends_on", "cited"})


def apply(mem: Service, items: list[dict[str, Any]], *, source: str, session: str | None,
          dry: list[tx.Write] | None = None, also: tuple[Callable[[], list[tx.Write]], str, str] | None = None,
          bounded: bool = True, own: str | None = None, by_model: bool = False) -> ObserveReport:
    """Apply the rules to a batch and commit it. `dry`: commit nothing, put the writes the
    change would make in that list instead (the inbox's preview: the same code, not a copy).
    `also`: (the other writes of the same commit, made in each pass; the op; a subject prefix)
    — an inbox accept removes its proposals in the commit that applies them. `bounded=False`:
    rule 9 is not counted again — the user accepting proposals it bounded when they were made
    (accepting dates them today: a week's proposals are not one session's of today). `own`: the
    session the front end itself gives this batch, which the model cannot choose (an MCP
    connection, the memory tool's conversation): rule 9 bounds it on its own, as a session
    (SPEC §9), where a name the model gives that the vault never counted shares its source's
    bound of the day; for rule 19 it stays uncounted (a client reconnects as often as it likes)."""
    params = mem.params
    today = mem.write_today  # rule 20: never after the machine's date
    parsed = [check_input(i + 1, item, source, session, today, params) for i, item in enumerate(items)]
    if not parsed:
        return ObserveReport((), None)
    mem.vault.require()
    if dry is not None:
        return _observe(mem, parsed, params, today, dry=dry, bounded=bounded, own=own)
    # A hand edit to a file this change rewrites is checked by rule 18 first (committed on its
    # own, or the change refused), never swept along; each pass checks again.
    settle = sorted({f"beliefs/{o.connects}.md" for o, _ in parsed if o.connects != "new"}
                    | {f"observations/{o.date:%Y-%m}.md" for o, _ in parsed}
                    | hand_edits.tensions_about(mem, {o.connects for o, _ in parsed
                                                      if o.strength == "contradicting" and o.connects != "new"}))
    # Prepared outside the vault lock and committed with compare-and-swap keys: another
    # writer's change that lands first sends the preparation round again (`common.attempts`),
    # except an append to the month's log, which follows it under the lock (`_log_rebase`).
    for attempt in common.attempts(mem):
        with attempt:
            hand_edits.settle(mem, settle, by_model=by_model)
            report = _observe(mem, parsed, params, today, also=also, bounded=bounded, own=own)
    return report


def _observe(mem: Service, parsed: list[tuple[Observation, dict]], params: Params, today: date, *,
             dry: list[tx.Write] | None = None,
             also: tuple[Callable[[], list[tx.Write]], str, str] | None = None, bounded: bool = True,
             own: str | None = None) -> ObserveReport:
    month_texts: dict[str, str] = {}
    month_keys: dict[str, Any] = {}
    month_base: dict[str, str] = {}

    def month(rel: str) -> str:
        if rel not in month_texts:
            p = mem.vault.path(rel)
            month_keys[rel] = stat_key(p)
            month_texts[rel] = read_text(p, rel) if p.exists() else ""
            month_base[rel] = month_texts[rel]
        return month_texts[rel]

    parsed_months: dict[str, list[Observation]] = {}

    def month_obs(rel: str) -> list[Observation]:
        if rel not in parsed_months:
            parsed_months[rel] = parse_observations(month(rel), rel)[0]
        return parsed_months[rel]

    fresh, dupes = without_duplicates(parsed, month_obs)
    # Rule 19: the sessions the vault counted (rule 9 bounds the others together, per source and day).
    counted = frozenset(kernel.known_sessions(dict(mem.vault.read_sessions().counted), today))
    bound_by = counted | {own} if own else counted  # rule 9's sessions: and the front end's own
    logs = _session_logs(today, fresh)
    if bounded:
        check_session_limit(fresh, today, month_obs, params, logs, bound_by)
    fresh = [(o, _successor_target(mem, o, x)) for o, x in fresh]
    held = held_back(mem, fresh)
    if held is not None:
        return ObserveReport(tuple(dupes + held), None)
    writes: list[tx.Write] = []
    beliefs: dict[str, tuple[str, Belief, Belief, Any, list[Evidence]]] = {}
    known: set[str] = set()
    if any(x.get("title") or x.get("successor_title") or x.get("depends_on") for _, x in fresh):
        known = {n[:-3] for n in os.listdir(mem.root / "beliefs") if n.endswith(".md")}  # a listdir of 10k costs
    results: list[ObservationResult] = []
    new_obs: list[Observation] = []
    open_tensions: dict[str, tuple[str, Any]] = {}
    # Rule 19: per belief the steps already taken.
    spent: dict[str, set[str]] = {}
    created: set[str] = set()

    def load(bid: str) -> None:
        if bid not in beliefs:
            if bid in created:
                raise Conflict(f"observation connects to {bid}, created in the same batch; "
                               "submit it in a later call")
            text, b, key = common.read(mem, bid)
            if forgotten_on(text) is not None:
                raise Conflict(f"{bid} was forgotten at the user's request on {forgotten_on(text)}: nothing is "
                               "recorded about it any more (if the user brings it up again, it is a new belief)",
                               path=b.path)
            beliefs[bid] = (text, b, replace(b, confirmed_session=last_confirmed_in(b, today, month_obs)), key, [])

    def step_on(cur: Belief, obs: Observation, evs: list[Evidence]) -> rules.Effect:
        # Rules 3, 4 and 19 for every move of a number in this batch, the successor's support included:
        # whose step it is (`counts_for`), the steps that already moved this belief, and its evidence
        # with this batch's lines so far (rule 4 counts challenges since the last confirmation: three
        # contradictions sent together are three, as they are one by one).
        if cur.id not in spent:
            spent[cur.id] = spent_steps(cur, today, month_obs, counted)
        step = rules.counts_for(obs, counted, today)
        eff = rules.apply_observation(replace(cur, evidence=cur.evidence + tuple(evs)), obs, params, step=step,
                                      spent=frozenset(spent[cur.id]))
        used = rules.spends(obs, step)
        if used is not None:
            spent[cur.id].add(used)
        return replace(eff, before=cur, after=replace(eff.after, evidence=cur.evidence))

    def depends(extra: dict, bid: str) -> tuple[str, ...]:
        for d in extra.get("depends_on", ()):
            if d == bid:
                raise InputError(f"{bid} cannot depend on itself", field="depends_on")
            if d not in known and d not in created:
                raise InputError(f"'depends_on' names unknown belief '{d}'", field="depends_on")
        return extra.get("depends_on", ())

    for obs, extra in fresh:
        _check_cited(mem, obs.cited)
        if obs.connects == "new" and extra.get("title"):
            bid = unique_id(slugify(extra["title"]), known | set(beliefs))
            b = rules.new_belief_from_observation(
                replace(obs, connects=bid), bid, title=extra["title"], kind=extra["kind"],
                basis=obs.basis, permanence=extra["permanence"], params=params,
                tags=extra.get("tags", ()), scope=extra.get("scope", "global"))
            b = replace(b, depends_on=depends(extra, bid))
            obs = replace(obs, connects=bid)
            known.add(bid)
            created.add(bid)
            writes.append(tx.create(b.path, render_belief(b)))
            new_obs.append(obs)
            results.append(ObservationResult(obs, bid, created=True, after=b.confidence,
                                             reason=f"new belief at {b.confidence:.2f} (rule 1)"))
            continue
        if obs.connects == "new":
            new_obs.append(obs)
            results.append(ObservationResult(obs, None, reason="recorded, not connected to a belief"))
            continue
        load(obs.connects)
        text, orig, cur, key, evs = beliefs[obs.connects]
        rules.check_held(cur)
        eff = step_on(cur, obs, evs)
        evs.append(_as_answer(eff.evidence, obs, cur, params))
        after = eff.after
        rests = tuple(d for d in depends(extra, obs.connects) if d not in after.depends_on)
        if rests:
            after = replace(after, depends_on=after.depends_on + rests)
            evs.append(Evidence(obs.date, "linked", rules.observation_link(obs),
                                f"rests on {', '.join(rests)} (proposed by an observation)"))
        beliefs[obs.connects] = (text, orig, after, key, evs)
        successor = _successor(mem, obs, extra, cur, params, load, step_on, beliefs, known, created, writes) \
            if eff.open_tension and (extra.get("successor_id") or extra.get("successor_title")) else None
        tid, opened = None, False
        if eff.open_tension:
            tid, ttext, tkey = tensions.for_contradiction(mem, obs, eff, open_tensions, successor=successor)
            opened = tkey is None and tid not in open_tensions
            open_tensions[tid] = (ttext, tkey)
        new_obs.append(obs)
        reason = eff.reason + (f"; proposed successor {successor}" if successor else "")
        results.append(ObservationResult(obs, obs.connects, before=eff.before.confidence,
                                         after=eff.after.confidence, reason=reason,
                                         tension=tid, tension_opened=opened, alert=eff.alert,
                                         successor=successor))
    for tid, (ttext, tkey) in open_tensions.items():
        # The first contradiction of a batch creates the file; later ones in the same batch extend it.
        rel = f"tensions/{tid}.md"
        writes.append(tx.create(rel, ttext) if tkey is None else tx.replace(rel, ttext, tkey))
    for bid, (text, orig, cur, key, evs) in beliefs.items():
        writes.append(tx.replace(f"beliefs/{bid}.md", update_belief_text(text, orig, cur, tuple(evs)), key))
    blocks: dict[str, list[str]] = {}
    for obs in new_obs:
        blocks.setdefault(obs.path, []).append(render_observation(obs))
    rebase = _log_rebase(fresh if bounded else [], today, params, month_base, month_obs, logs, bound_by,
                         ids={o.id for o, _ in fresh})
    for rel, bs in blocks.items():
        month_texts[rel] = append_entries(month(rel), rel, bs)
        writes.append(tx.replace(rel, month_texts[rel], month_keys[rel], rebase(rel, bs)))
    # The logs rule 9 counted from but this change does not write must not change meanwhile.
    reads = [(rel, key) for rel, key in month_keys.items() if rel not in blocks]
    sha = None
    if dry is not None:
        dry.extend(writes)
        return ObserveReport(tuple(dupes + results), None)
    op, prefix = "observe", ""
    if also is not None:
        more, op, prefix = also[0](), also[1], also[2]
        if writes or more:
            writes = [*writes, *more]
    if writes:
        subject, body = message(results)
        subject = prefix + subject
        sessions = sorted({o.session for o in new_obs if o.session})
        sha = common.commit(mem, writes, subject, op=op, body=body,
                            beliefs=[b for r in results for b in (r.belief, r.successor) if b],
                            session=", ".join(sessions) or None,
                            extra={"Epimem-Observations": ", ".join(o.id for o in new_obs)}, reads=reads)
    return ObserveReport(tuple(dupes + results), sha)


def _as_answer(ev: Evidence, obs: Observation, before: Belief, params: Params) -> Evidence:
    """An interview answer that confirms or denies a belief is the user's verdict on it
    (SPEC §14): its evidence line carries the confidence the belief had when asked."""
    from ..core import calibration

    if (obs.source not in calibration.INTERVIEW_SOURCES or obs.basis != "self-report"
            or obs.strength not in ("confirming", "contradicting")):
        return ev
    outcome = "true" if obs.strength == "confirming" else "false"
    return replace(ev, note=calibration.with_tag(ev.note, before, outcome, "interview", obs.date, params))


def _successor_target(mem: Service, obs: Observation, extra: dict) -> dict:
    """Resolve an observation's `successor` (SPEC §14): the id of an existing active belief
    (`successor_id`) — named by id, or the successor an open tension on the belief already
    proposed under the same title — or the title of a belief to create (`successor_title`)."""
    v = extra.get("successor")
    if not v:
        return extra
    out = {k: x for k, x in extra.items() if k != "successor"}
    try:
        sid = check_id(v)
    except IdError:
        sid = ""
    if sid and mem.vault.belief_path(sid).exists():
        if sid == obs.connects:
            raise InputError(f"a belief cannot succeed itself ({sid})", field="successor")
        out["successor_id"] = sid
        return out
    proposed = tensions.open_successor(mem, obs.connects)
    if proposed:
        try:
            b = mem.vault.read_belief(proposed)[1]
        except (OSError, InputError, Conflict, NotFound, VaultError):
            b = None
        if b is not None and b.status == "active" and text_key(b.title) == text_key(v):
            out["successor_id"] = proposed
            return out
    out["successor_title"] = v
    out["successor_exclude"] = tuple(x for x in (obs.connects, proposed) if x)
    return out


def _successor(mem: Service, obs: Observation, extra: dict, old: Belief, params: Params, load, step_on,
               beliefs: dict, known: set[str], created: set[str], writes: list[tx.Write]) -> str:
    """The successor a contradicting observation proposes: an existing belief, which the
    observation then supports as it contradicts the old one (what shows the old no longer
    holds shows the new one does), or a new belief, born of this observation at its basis's start.
    The support is a confirmation like any other (`step_on`): once per counted session (rule 3),
    one step a day for the sessions nobody counted (rule 19)."""
    sid = extra.get("successor_id")
    if sid:
        if sid in created:
            return sid
        load(sid)
        text, orig, cur, key, evs = beliefs[sid]
        if cur.status != "active":
            raise Conflict(f"the successor {sid} is {cur.status}; propose an active belief or a new title",
                           path=cur.path)
        eff = step_on(cur, replace(obs, connects=sid, strength="confirming"), evs)
        evs.append(eff.evidence)
        beliefs[sid] = (text, orig, eff.after, key, evs)
        return sid
    title = extra["successor_title"]
    sid = unique_id(slugify(title), known | set(beliefs))
    b = rules.new_belief_from_observation(
        replace(obs, connects=sid, strength="single"), sid, title=title,
        kind=extra.get("successor_kind") or old.kind, basis=obs.basis,
        permanence=extra.get("successor_permanence") or old.permanence, params=params,
        tags=old.tags, scope=old.scope)
    known.add(sid)
    created.add(sid)
    writes.append(tx.create(b.path, render_belief(b)))
    return sid


def append_entries(log: str, rel: str, blocks: list[str]) -> str:
    """A month's log with rendered observations appended (with its header when it is new)."""
    log = log or f"# Observations {rel[len('observations/'):-len('.md')]}\n"
    for b in blocks:
        log = log.rstrip("\n") + "\n\n" + b
    return log


def _log_rebase(fresh: list[tuple[Observation, dict]], today: date, params: Params, base: dict[str, str],
                month_obs, logs: tuple[str, ...], sessions: frozenset[str], *, ids: set[str]):
    """How an observe follows a month's log that another writer appended to since it was read.

    Under the lock, only what was appended is parsed. An entry with one of this batch's ids
    (the same observation, resubmitted while this one was prepared), or an observation of a
    session this batch counts that would take it past rule 9's limit, sends the change back to
    be prepared again (`Stale`): that preparation sets the repeat aside or refuses the batch
    exactly as one under the lock would. Any other entry is another writer's: ours go after
    it. A log changed other than by an append is prepared again too. `ids`: the batch's; `fresh`:
    the observations rule 9 counts (none when the batch is not bounded again: `apply(bounded=False)`)."""
    wanted: dict[str, int] = {}
    for o, _ in fresh:
        s = rules.bound_session(o, sessions)
        wanted[s] = wanted.get(s, 0) + 1
    counted = set(logs)
    had = {s: session_observation_count(s, today, month_obs, logs, sessions) for s in wanted}  # read, then appended

    def for_log(rel: str, blocks: list[str]):
        def rebase(now: str) -> str:
            old = base.get(rel, "")
            if not now.startswith(old):
                raise tx.Stale(f"{rel} was rewritten while epimem prepared an observation; nothing was "
                               "written — run the command again", path=rel)
            since, _ = parse_observations(now[len(old):], rel)
            if any(o.id in ids for o in since):
                raise tx.Stale(f"{rel}: the same observation was recorded meanwhile", path=rel)
            for o in since if rel in counted else ():
                s = rules.bound_session(o, sessions)
                if s in had:
                    had[s] += 1
                    if had[s] + wanted[s] > params.observations_per_session:
                        raise tx.Stale(f"{rel}: session {s} recorded observations meanwhile (rule 9)", path=rel)
            return append_entries(now, rel, blocks)
        return rebase
    return for_log


def _encodable(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def held_back(mem: Service, fresh: list[tuple[Observation, dict]]) -> list[ObservationResult] | None:
    """Rule 17: when a new belief would sit beside a similar active one, the whole
    batch is held back (nothing written) and each such observation lists them."""
    from . import similar

    found = {}
    earlier: list[tuple[str, str, str]] = []  # this batch's new beliefs so far (rule 17 checks them too)
    for i, (obs, extra) in enumerate(fresh):
        if obs.connects == "new" and extra.get("title"):
            said = obs.suggests or obs.evidence
            if not extra.get("new_despite_similar"):
                s = similar.similar(mem, extra["title"], said, batch=earlier)
                if s:
                    found[i] = s
            earlier.append((slugify(extra["title"]), extra["title"], said))
        elif extra.get("successor_title") and not extra.get("new_despite_similar"):
            # The belief it replaces is expected to look like it; any other is a question.
            s = similar.similar(mem, extra["successor_title"], obs.suggests,
                                exclude=frozenset(extra.get("successor_exclude", ())))
            if s:
                found[i] = s
    if not found:
        return None
    out = []
    for i, (obs, extra) in enumerate(fresh):
        if i in found:
            names = ", ".join(f"{s['id']} ({s['similarity']:.2f}" + (", earlier in this batch)" if s.get("in_batch")
                                                                    else ")") for s in found[i])
            how = ("name one of them as the 'successor'" if extra.get("successor_title")
                   else "connect the observation to one of them")
            out.append(ObservationResult(obs, None, similar=tuple(found[i]), reason=(
                f"not created: close to {names} (rule 17); {how}, "
                "or set 'new_despite_similar' to create it anyway")))
        else:
            out.append(ObservationResult(obs, None, reason="not recorded: the batch was held back (rule 17)"))
    return out


def check_input(n: int, item: dict, source: str, session: str | None,
                today: date, params: Params) -> tuple[Observation, dict]:
    if not isinstance(item, dict):
        raise InputError(f"observation {n}: expected an object, got {type(item).__name__}")
    # A misspelt key ("suggest") would silently drop its text: refuse the batch and say which.
    unknown = sorted(set(item) - OBSERVATION_KEYS)
    if unknown:
        raise InputError(f"observation {n}: unknown key{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(repr(k) for k in unknown)}; known keys: {', '.join(sorted(OBSERVATION_KEYS))}",
                         field=unknown[0])

    def text(key: str, required: bool = False) -> str:
        v = item.get(key)
        if v is None or v == "":
            if required:
                raise InputError(f"observation {n}: '{key}' is required", field=key)
            return ""
        if not isinstance(v, str):
            raise InputError(f"observation {n}: '{key}' must be text", field=key)
        if not _encodable(v):
            raise InputError(f"observation {n}: '{key}' holds a lone surrogate (\\ud800…), which is not text",
                             field=key)
        if key == "connects":
            return v.strip()  # an id, checked as a slug below: nothing to redact, and maybe 1 MB long
        v = " ".join(v.split())
        if len(v) > common.TEXT_MAX:
            raise InputError(f"observation {n}: '{key}' is {len(v):,} characters, over the {common.TEXT_MAX:,} an "
                             "observation may hold: say what was seen in a few sentences (split a long one "
                             "into observations of what each shows)", field=key)
        return redact(v, params.redact)

    strength = text("strength", True)
    if strength not in STRENGTHS:
        raise InputError(f"observation {n}: 'strength' must be one of {', '.join(STRENGTHS)}, not {strength!r}",
                         field="strength")
    basis = text("basis") or "behavioral"
    if basis not in BASES:
        raise InputError(f"observation {n}: 'basis' must be one of {', '.join(BASES)}, not {basis!r}", field="basis")
    try:
        rules.check_observation_basis(basis)
    except rules.RuleError as e:
        raise InputError(f"observation {n}: {e}", field="basis") from None
    connects = text("connects", True)
    if connects != "new":
        try:
            check_id(connects)
        except IdError as e:
            raise InputError(f"observation {n}: 'connects': {e}", field="connects") from None
    d = today
    if item.get("date"):
        try:
            d = date.fromisoformat(str(item["date"]))
        except ValueError:
            raise InputError(f"observation {n}: 'date' must be YYYY-MM-DD, not {item['date']!r}",
                             field="date") from None
        if d > today:
            raise InputError(f"observation {n}: " + rules.future_date_message("'date'", d, today), field="date")
    sess = text("session") or (session or "")
    if sess and not kernel.is_session_id(sess):
        raise InputError(f"observation {n}: 'session' must be a plain id (letters, digits, - _ . :)", field="session")
    too_old = rules.session_date_problem(sess, d, today)
    if too_old:
        raise InputError(f"observation {n}: {too_old}", field="date")
    extra: dict[str, Any] = {}
    if connects == "new" and item.get("title"):
        extra["title"] = text("title")
        extra["kind"] = text("kind") or "trait"
        if not re.fullmatch(r"[a-z][a-z0-9\-]*", extra["kind"]):
            raise InputError(f"observation {n}: invalid 'kind' {extra['kind']!r}", field="kind")
        extra["permanence"] = text("permanence") or "unknown"
        if extra["permanence"] not in PERMANENCES:
            raise InputError(f"observation {n}: 'permanence' must be one of {', '.join(PERMANENCES)}",
                             field="permanence")
        tags = item.get("tags") or []
        if not isinstance(tags, list) or not all(isinstance(t, str) and _encodable(t) for t in tags):
            raise InputError(f"observation {n}: 'tags' must be a list of text", field="tags")
        extra["tags"] = tuple(tags)
        extra["scope"] = text("scope") or "global"
        despite = item.get("new_despite_similar", False)
        if not isinstance(despite, bool):
            raise InputError(f"observation {n}: 'new_despite_similar' must be true or false",
                             field="new_despite_similar")
        extra["new_despite_similar"] = despite
    cited = item.get("cited") or []
    if isinstance(cited, str):
        cited = [cited]
    if not isinstance(cited, list) or not all(isinstance(c, str) for c in cited):
        raise InputError(f"observation {n}: 'cited' must be a list of belief ids", field="cited")
    for c in cited:
        try:
            check_id(c.strip())
        except IdError as e:
            raise InputError(f"observation {n}: 'cited': {e}", field="cited") from None
    deps = _depends_on(n, item, connects)
    if deps:
        extra["depends_on"] = deps
    successor = text("successor")
    if successor:
        if strength != "contradicting" or connects == "new":
            raise InputError(f"observation {n}: 'successor' goes with a contradicting observation that connects "
                             "the belief it replaces", field="successor")
        extra["successor"] = successor
        for key, allowed in (("kind", None), ("permanence", PERMANENCES)):
            v = text(key)
            if v and allowed is not None and v not in allowed:
                raise InputError(f"observation {n}: '{key}' must be one of {', '.join(allowed)}", field=key)
            if v and allowed is None and not re.fullmatch(r"[a-z][a-z0-9\-]*", v):
                raise InputError(f"observation {n}: invalid 'kind' {v!r}", field=key)
            if v:
                extra[f"successor_{key}"] = v
        despite = item.get("new_despite_similar", False)
        if not isinstance(despite, bool):
            raise InputError(f"observation {n}: 'new_despite_similar' must be true or false",
                             field="new_despite_similar")
        extra["new_despite_similar"] = despite
    evidence = text("evidence", True)
    from ..core import calibration

    forged = calibration.written_by_someone_else(evidence)
    if forged:
        raise InputError(f"observation {n}: 'evidence': {forged}", field="evidence")
    said = rules.words_as_behaviour(basis, text("source") or source, evidence)
    if said:
        raise InputError(f"observation {n}: 'basis': {said}", field="basis")
    obs = Observation(id="", date=d, evidence=evidence, strength=strength, basis=basis,
                      connects=connects, suggests=text("suggests"), therefore=text("therefore"),
                      source=text("source") or source, session=sess,
                      cited=tuple(dict.fromkeys(c.strip() for c in cited)))
    return obs, extra


def as_found(mem: Service, items: list[dict[str, Any]], session: str, source: str,
             notes: list[str]) -> tuple[list[dict[str, Any]], str]:
    """What a pass over a finished session (a transcript) hands `apply`, rather than have it refused
    whole: (items, session), with a note in `notes` for each change.

    - A session from before last month (the user running `epimem transcript` on an old file) is
      long over and no longer counted, and a session's entries are dated where rule 9 counts them
      (`rules.session_date_problem`): its items are recorded for their days, without the session.
    - An item that reports what the user said under basis behavioral (Claude's answer labelling
      it so) is recorded as what it is, self-report (rules 3 and 6, `rules.words_as_behaviour`)."""
    first = rules.session_start_bound(mem.write_today).isoformat()
    if session and any(isinstance(i.get("date"), str) and i["date"] < first for i in items):
        notes.append(f"session {session} is from before {first}: its observations are recorded for their days, "
                     "without the session (rule 9)")
        session = ""
        items = [{k: v for k, v in i.items() if k != "session"} for i in items]
    out = []
    for n, item in enumerate(items, 1):
        if rules.words_as_behaviour(item.get("basis") or "behavioral", item.get("source") or source,
                                    str(item.get("evidence") or "")):
            item = dict(item, basis="self-report")
            notes.append(f"observation {n} reports what the user said: recorded as self-report (rule 3)")
        out.append(item)
    return out, session


def _check_cited(mem: Service, cited: tuple[str, ...]) -> None:
    """An observation's `cited` names beliefs of this vault that the user has not forgotten
    (citing one would record something about it again); InputError naming the field if not."""
    missing = [c for c in cited if not mem.vault.path(f"beliefs/{c}.md").is_file()]
    if missing:
        raise InputError(f"'cited' names no belief of this vault: {', '.join(missing)} (cite an [id] "
                         "the session context or recall showed)", field="cited")
    for c in cited:
        try:
            day = forgotten_on(read_text(mem.vault.path(f"beliefs/{c}.md"), f"beliefs/{c}.md"))
        except (OSError, VaultError):
            continue  # a file that cannot be read is no tombstone; `validate` names it
        if day is not None:
            raise InputError(f"'cited' names {c}, forgotten at the user's request on {day}: nothing is recorded "
                             "about it any more (leave it out)", field="cited")


def _depends_on(n: int, item: dict, connects: str) -> tuple[str, ...]:
    """The `depends_on` of an observation: the ids (or [[wikilinks]]) of the beliefs the
    belief it connects (or creates) rests on (SPEC §14)."""
    from ..core.notes import link_target

    v = item.get("depends_on")
    if v is None or v == [] or v == "":
        return ()
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise InputError(f"observation {n}: 'depends_on' must be a list of belief ids", field="depends_on")
    if connects == "new" and not item.get("title"):
        raise InputError(f"observation {n}: 'depends_on' needs a belief: connect one, or give the new one a title",
                         field="depends_on")
    out = []
    for x in v:
        try:
            out.append(check_id(link_target(x)))
        except IdError as e:
            raise InputError(f"observation {n}: 'depends_on': {e}", field="depends_on") from None
    return tuple(dict.fromkeys(out))


def check_session_limit(fresh: list[tuple[Observation, dict]], today: date, month_obs, params: Params,
                        logs: tuple[str, ...] | None = None, counted: frozenset[str] = frozenset()) -> None:
    """Rule 9: at most N observations per session (`rules.bound_session`: the sessions the vault
    never counted share one per source and day), counted from the logs themselves (`logs`,
    `_session_logs`; by default this month's and last month's)."""
    per_session: dict[str, int] = {}
    names: dict[str, set[str]] = {}
    for obs, _ in fresh:
        s = rules.bound_session(obs, counted)
        per_session[s] = per_session.get(s, 0) + 1
        names.setdefault(s, set()).add(obs.session)
    for s, n in per_session.items():
        had = session_observation_count(s, today, month_obs, logs, counted)
        if had + n > params.observations_per_session:
            these = "this one was" if n == 1 else f"these {n} were"
            if s.startswith("uncounted:"):
                day = s.rsplit(":", 1)[1]
                given = sorted(x for x in names[s] if x)
                named = (", ".join(given[:3]) + (f" and {len(given) - 3} more" if len(given) > 3 else "")
                         if given else "(none given)")
                raise Conflict(
                    f"session {named}: the vault never counted it, and {had} observation{'s' if had != 1 else ''} "
                    f"dated {day} already name sessions it never counted; those share one session's bound of "
                    f"{params.observations_per_session} a day (rule 9; rule 19 counts them as one), so {these} not "
                    "recorded. A session the session-start hook counted has its own: pass its id. Zero is a good "
                    "answer: keep the strongest.")
            raise Conflict(
                f"session {s} already has {had} observation{'s' if had != 1 else ''}; "
                f"at most {params.observations_per_session} per session (rule 9), so "
                f"{these} not recorded. Zero is a good answer: keep the strongest.")


def _recent_logs(today: date) -> tuple[str, str]:
    # A session spans at most a few days: this month's and last month's logs hold it.
    prev = rules.session_start_bound(today)  # the first of last month
    return f"observations/{today:%Y-%m}.md", f"observations/{prev:%Y-%m}.md"


def _session_logs(today: date, fresh: list[tuple[Observation, dict]]) -> tuple[str, ...]:
    """The logs rule 9 counts a batch's sessions in: this month's and last month's (a session
    spans a few days: `check_input` refuses a session's entry dated before them), and the months
    the batch writes to, which hold every entry of a day's uncounted sessions (`rules.bound_session`)."""
    return tuple(dict.fromkeys((*_recent_logs(today), *(o.path for o, _ in fresh))))


def session_observation_count(session: str, today: date, month_obs, logs: tuple[str, ...] | None = None,
                              counted: frozenset[str] = frozenset()) -> int:
    """The observations on record for rule 9's `session` (`rules.bound_session`)."""
    n = 0
    for rel in logs if logs is not None else _recent_logs(today):
        for o in month_obs(rel):
            if rules.bound_session(o, counted) == session:
                n += 1
    return n


def last_confirmed_in(belief: Belief, today: date, month_obs) -> str:
    """Rule 3's "the session that last confirmed the belief": the session of the observation
    its last confirming evidence line links to, read from the logs rule 9 reads anyway, so
    that no frontmatter line has to change with every confirmation (`confirmed_session`,
    kept by files written before, is the answer when the log does not hold it: an older
    month's session cannot be this one)."""
    link = next((e.link for e in reversed(belief.evidence) if e.kind == "confirming" and e.link), "")
    rel, _, oid = link.partition("#")
    if oid and rel + ".md" in _recent_logs(today):
        for o in month_obs(rel + ".md"):
            if o.id == oid:
                return rules.pseudo_session(o)
    return belief.confirmed_session


def spent_steps(belief: Belief, today: date, month_obs, counted: frozenset[str]) -> set[str]:
    """Rule 19: the steps that already moved (or could have moved) a belief, from the logs rule 9
    reads anyway (a counted session is known for days, a source's step for one). An observation
    that connects another belief but confirmed this one (a contradiction naming it as the
    successor) is found by the belief's own confirming evidence lines."""
    confirmed_by = {e.link.partition("#")[2] for e in belief.evidence if e.kind == "confirming" and e.link}
    out = set()
    for rel in _recent_logs(today):
        for o in month_obs(rel):
            if o.connects == belief.id:
                used = rules.spends(o, rules.bound_session(o, counted))
            elif o.id in confirmed_by:
                used = rules.spends(replace(o, strength="confirming"), rules.bound_session(o, counted))
            else:
                continue
            if used is not None:
                out.add(used)
    return out


def without_duplicates(parsed: list[tuple[Observation, dict]], month_obs
                       ) -> tuple[list[tuple[Observation, dict]], list[ObservationResult]]:
    """Give each observation its stable id and set aside those already recorded:
    the same observation submitted twice (a retried hook) is one entry."""
    fresh: list[tuple[Observation, dict]] = []
    dupes: list[ObservationResult] = []
    seen_ids: set[str] = set()
    for obs, extra in parsed:
        rel = f"observations/{obs.date:%Y-%m}.md"
        existing = {o.id: o for o in month_obs(rel)}
        oid, dup = observation_id(obs, existing, seen_ids)
        if dup is not None:
            dupes.append(ObservationResult(dup, dup.connects if dup.connects != "new" else None,
                                           duplicate=True, reason="already recorded"))
            continue
        seen_ids.add(oid)
        fresh.append((replace(obs, id=oid, path=rel), extra))
    return fresh, dupes


def observation_id(obs: Observation, existing: dict[str, Observation],
                   pending: set[str]) -> tuple[str, Observation | None]:
    """A stable id from (session, evidence); a longer hash only on a collision."""
    norm = text_key
    digest = hashlib.sha1(f"{obs.session}\n{norm(obs.evidence)}".encode()).hexdigest()
    for n in (4, 6, 8, 12, 40):
        oid = f"obs-{obs.date:%Y%m%d}-{digest[:n]}"
        other = existing.get(oid)
        if other is not None and other.session == obs.session and norm(other.evidence) == norm(obs.evidence):
            return oid, other
        if other is None and oid not in pending:
            return oid, None
        if oid in pending and other is None:
            # the same observation twice in one batch
            return oid, replace(obs, id=oid)
    raise Conflict("could not allocate an observation id")


def message(results: list[ObservationResult]) -> tuple[str, str]:
    def phrase(r: ObservationResult) -> str:
        target = r.belief or "new"
        if r.created:
            return f"single → {target} (new, {r.after:.2f})"
        s = f"{r.observation.strength} → {target}"
        if r.before is not None and r.after is not None and r.before != r.after:
            s += f" ({r.before:.2f} → {r.after:.2f})"
        return s
    live = [r for r in results if not r.duplicate]
    if len(live) == 1:
        subject = "observe: " + phrase(live[0])
    else:
        subject = f"observe: {len(live)} observations — " + "; ".join(phrase(r) for r in live)
    body = "\n".join(f"- {r.observation.id}: {phrase(r)} — {r.reason}" for r in live)
    return subject, body
