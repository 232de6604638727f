"""The Python API: one `Memory` per vault, every operation one commit.

This is the thin shell around the core: it reads files through `Vault`,
decides with the pure functions of `epimem.core.rules`, writes the files
back surgically and commits them with `epimem.store.git`. The CLI, the hook,
the skills, the benchmarks and the mirror all go through here.

    import epimem
    mem = epimem.open("~/notes/epimem")
    mem.observe([{"connects": "prefers-small-prs", "strength": "confirming",
                  "evidence": "Split the refactor into three PRs unprompted.",
                  "basis": "behavioral", "session": "8f3a2c"}])
    for b in mem.beliefs(min_confidence=0.5):
        print(b.id, b.confidence, mem.effective(b))
"""

from __future__ import annotations

from ..core.errors import EpimemError

import hashlib
import os
import re
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any, Iterable

from ..store import clock
from ..store import git as history
from ..store import transaction
from ..core import rules
from ..core.changes import Change, belief_change, headline, tension_change
from ..core.ids import IdError, check_id, check_tension_id, slugify
from ..core.model import (BASES, PERMANENCES, STATUSES, STRENGTHS, Belief, Evidence,
                         Observation, Problem, Sessions, Snapshot, Tension)
from ..core.notes import (NoteError, append_evidence, parse_belief, parse_observations, render_belief, render_observation,
                         render_tension, resolve_tension_text, update_belief_text)
from ..core.params import Params
from ..core.redact import redact
from ..store.git import HistoryError
from ..store.vault import ConcurrentEdit, Vault, VaultError, resolve_root, sessions_to_json, stat_key

TEMPLATES = Path(__file__).parent.parent / "templates"


OBSERVATION_KEYS = frozenset({"connects", "strength", "evidence", "suggests", "therefore", "basis", "session",
                              "source", "date", "title", "kind", "permanence", "tags", "scope"})


# --- results ------------------------------------------------------------------------

@dataclass(frozen=True)
class ObservationResult:
    observation: Observation
    belief: str | None
    duplicate: bool = False
    created: bool = False
    before: float | None = None
    after: float | None = None
    reason: str = ""
    tension: str | None = None
    alert: bool = False


@dataclass(frozen=True)
class ObserveReport:
    results: tuple[ObservationResult, ...]
    commit: str | None

    @property
    def alerts(self) -> list[ObservationResult]:
        return [r for r in self.results if r.alert]


@dataclass(frozen=True)
class SessionReport:
    counted: bool
    count: int
    dormant_days: int | None
    review_due: str | None
    commit: str | None = None

    def lines(self) -> list[str]:
        out = [f"Session {self.count} with this vault." if self.counted
               else f"Continuing a session (not counted); {self.count} sessions so far."]
        if self.dormant_days is not None:
            out.append(f"Returning from dormancy: the last session was {self.dormant_days} days ago; "
                       "confidences shown are decayed.")
        if self.review_due:
            out.append(f"A review is due ({self.review_due}): run `epimem mirror audit`.")
        return out


@dataclass(frozen=True)
class Filters:
    kind: str | None = None
    permanence: str | None = None
    status: str | None = "active"  # None: every status
    tag: str | None = None
    scope: str | None = None       # a project: its beliefs plus global ones
    min_confidence: float | None = None  # on effective confidence

    def match(self, b: Belief, effective: float) -> bool:
        return ((self.kind is None or b.kind == self.kind)
                and (self.permanence is None or b.permanence == self.permanence)
                and (self.status is None or b.status == self.status)
                and (self.tag is None or self.tag in b.tags)
                and rules.scope_matches(b.scope, self.scope)
                and (self.min_confidence is None or effective >= self.min_confidence - 1e-9))


# --- the API --------------------------------------------------------------------------

def open(path: str | Path | None = None, today: str | date | None = None) -> "Memory":  # noqa: A001
    """Open the vault at `path` (else $EPIMEM_VAULT, else the user data dir)."""
    return Memory(resolve_root(path), today=today)


class Memory:
    def __init__(self, root: str | Path, today: str | date | None = None):
        self.vault = Vault(root)
        self.root = self.vault.root
        self._today = today

    # -- basics ------------------------------------------------------------------
    @property
    def today(self) -> date:
        if isinstance(self._today, date):
            return self._today
        return clock.today(self._today)

    @property
    def params(self) -> Params:
        return self.vault.params()[0]

    def effective(self, b: Belief) -> float:
        return rules.effective_confidence(b, self.today, self.params)

    def snapshot(self, observations: bool = True) -> Snapshot:
        self.vault.require()
        return self.vault.snapshot(self.today, observations=observations)

    # -- init ----------------------------------------------------------------------
    @classmethod
    def init(cls, root: str | Path | None = None, today: str | date | None = None) -> tuple["Memory", bool]:
        """Create a vault (idempotent): folders, rules, counter, .gitignore, git, first commit."""
        mem = cls(resolve_root(root), today=today)
        r = mem.root
        # `epimem init ~/Documents` by mistake must not turn a folder of unrelated
        # files into a repository and commit them all.
        if r.is_dir() and not mem.vault.exists() and not history.is_repo_root(r) \
                and any(not p.name.startswith(".") for p in r.iterdir()):
            raise EpimemError(f"{r} is not empty and is not an epimem vault (no epistemology.md, no beliefs/); "
                              "choose an empty or new folder")
        try:
            r.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise EpimemError(f"cannot create a vault at {r}: {e.strerror or e}") from None
        created_repo = history.init(r)
        created: list[str] = []
        with mem.vault.lock():
            for d in ("beliefs", "observations", "tensions", "reviews", "state"):
                keep = r / d / ".gitkeep"
                if not (r / d).is_dir() or not any((r / d).iterdir()):
                    (r / d).mkdir(parents=True, exist_ok=True)
                    if not keep.exists():
                        keep.write_text("")
                        created.append(f"{d}/.gitkeep")
            files = {
                "epistemology.md": (TEMPLATES / "epistemology.md").read_text(encoding="utf-8"),
                ".gitignore": (TEMPLATES / "gitignore").read_text(encoding="utf-8"),
                "state/sessions.json": sessions_to_json(Sessions(created=mem.today)),
            }
            for rel, text in files.items():
                if not (r / rel).exists():
                    mem.vault.write_text(rel, text)
                    created.append(rel)
            if created_repo:
                # A folder of existing notes (a copied vault) becomes the first commit whole.
                history.commit(r, ["."], "init: new epimem vault", op="init", when=mem._replayed)
            elif created:
                history.commit(r, created, "init: new epimem vault", op="init", when=mem._replayed)
        mem._after_write()
        return mem, bool(created) or created_repo

    # -- reading -------------------------------------------------------------------
    def beliefs(self, filters: Filters | None = None, **kw: Any) -> list[Belief]:
        f = filters or Filters(**kw)
        self.vault.require()
        bs, _ = self.vault.load_beliefs()
        today, params = self.today, self.params
        return [b for b in bs if f.match(b, rules.effective_confidence(b, today, params))]

    def belief(self, belief_id: str) -> Belief:
        self._check_id(belief_id)
        self.vault.require()
        try:
            return self.vault.read_belief(belief_id)[1]
        except VaultError as e:
            raise EpimemError(str(e)) from None

    def tensions(self, status: str | None = None) -> list[Tension]:
        ts, _ = self.vault.load_tensions()
        return [t for t in ts if status is None or t.status == status]

    # -- writing beliefs -------------------------------------------------------------
    def add_belief(self, *, title: str, statement: str, kind: str, basis: str, permanence: str,
                   confidence: float | None = None, tags: Iterable[str] = (), scope: str = "global",
                   belief_id: str | None = None, supersedes: Iterable[str] = (),
                   pinned: bool = False, note: str = "") -> Belief:
        params = self.params
        title, statement = redact(title.strip(), params.redact), redact(statement.strip(), params.redact)
        if not title:
            raise EpimemError("--title is required")
        if not statement:
            raise EpimemError("--statement is required: say what the belief claims")
        self._check_choice("basis", basis, BASES)
        self._check_choice("permanence", permanence, PERMANENCES)
        if not kind or not re.fullmatch(r"[a-z][a-z0-9\-]*", kind):
            raise EpimemError(f"invalid kind {kind!r}: a lowercase word such as "
                              f"{', '.join(params.kinds[:4])}")
        conf = rules.start_confidence(basis, params) if confidence is None else float(confidence)
        try:
            rules.check_confidence(conf, basis, params)
        except rules.RuleError as e:
            raise EpimemError(str(e)) from None
        supersedes = tuple(supersedes)
        for s in supersedes:
            self._check_id(s)
        with self._lock():
            existing, _ = self.vault.load_beliefs()
            norm = _normalize(statement)
            for b in existing:
                if _normalize(b.statement) == norm:
                    raise EpimemError(f"an identical belief already exists: {b.id} ({b.title}); "
                                      "confirm it with `epimem observe` instead of adding it again")
            ids = {b.id for b in existing} | {p.stem for p in (self.root / "beliefs").glob("*.md")}
            bid = self._check_id(belief_id) if belief_id else _unique(slugify(title), ids)
            if bid in ids:
                raise EpimemError(f"belief '{bid}' already exists")
            how = note or "added by the user"
            b = Belief(id=bid, title=title, kind=kind, basis=basis, confidence=round(conf, 2),
                       permanence=permanence, first=self.today, tags=_clean_tags(tags), scope=scope or "global",
                       pinned=pinned, supersedes=supersedes, statement=statement,
                       evidence=(Evidence(self.today, "added", "", f"{how} ({conf:.2f})"),),
                       path=f"beliefs/{bid}.md")
            writes = {f"beliefs/{bid}.md": render_belief(b)}
            for old_id in supersedes:
                text, old, key = self._read(old_id)
                after = replace(old, status="superseded")
                writes[f"beliefs/{old_id}.md"] = (update_belief_text(
                    text, old, after, (Evidence(self.today, "superseded", f"beliefs/{bid}", f"replaced by {title}"),)), key)
            subject = f"belief: add {bid} ({conf:.2f}, {basis}, {permanence})"
            if supersedes:
                subject += f", superseding {', '.join(supersedes)}"
            self._commit_writes(writes, subject, op="add", beliefs=[bid, *supersedes])
        return b

    def edit_belief(self, belief_id: str, note: str = "", **changes: Any) -> Belief:
        """Change fields by the user's hand; a confidence change is a user action with provenance."""
        allowed = {"title", "statement", "kind", "basis", "permanence", "confidence", "tags", "scope",
                   "pinned", "status"}
        unknown = set(changes) - allowed
        if unknown:
            raise EpimemError(f"cannot edit {', '.join(sorted(unknown))}")
        changes = {k: v for k, v in changes.items() if v is not None}
        if not changes:
            raise EpimemError("nothing to change: pass at least one field")
        params = self.params
        for k in ("title", "statement"):
            if k in changes:
                changes[k] = redact(str(changes[k]).strip(), params.redact)
                if not changes[k]:
                    raise EpimemError(f"--{k} cannot be empty")
        if "basis" in changes:
            self._check_choice("basis", changes["basis"], BASES)
        if "permanence" in changes:
            self._check_choice("permanence", changes["permanence"], PERMANENCES)
        if "status" in changes:
            self._check_choice("status", changes["status"], STATUSES)
        if "tags" in changes:
            changes["tags"] = _clean_tags(changes["tags"])
        with self._lock():
            text, before, key = self._read(belief_id)
            after = replace(before, **changes)
            if "confidence" in changes:
                after = replace(after, confidence=round(float(changes["confidence"]), 2))
            try:
                rules.check_confidence(after.confidence, after.basis, params)
            except rules.RuleError as e:
                raise EpimemError(str(e)) from None
            ch = belief_change(belief_id, before, after)
            if ch is None:
                raise EpimemError(f"{belief_id} already has those values")
            ev = Evidence(self.today, "edited", "", (note or "edited by the user") + ": " + "; ".join(ch.details))
            new_text = update_belief_text(text, before, after, (ev,))
            self._commit_writes({before.path: (new_text, key)}, f"edit: {belief_id} " + ", ".join(ch.details[:2]),
                                op="edit", beliefs=[belief_id])
        return replace(after, evidence=after.evidence + (ev,))

    def reject(self, belief_id: str, *, retire: bool = False, note: str = "") -> Belief:
        """Rule 5: the user says it is no longer true: −0.20, or retire it."""
        with self._lock():
            text, before, key = self._read(belief_id)
            if before.status != "active":
                raise EpimemError(f"{belief_id} is {before.status}, not active")
            after = rules.reject(before, self.today, self.params, retire=retire, note=redact(note, self.params.redact))
            ev = after.evidence[len(before.evidence):]
            new_text = update_belief_text(text, before, replace(after, evidence=before.evidence), ev)
            subject = (f"retire: {belief_id}" if retire else
                       f"reject: {belief_id} ({before.confidence:.2f} → {after.confidence:.2f})")
            self._commit_writes({before.path: (new_text, key)}, subject,
                                op="retire" if retire else "reject", beliefs=[belief_id])
        return after

    def retire(self, belief_id: str, note: str = "") -> Belief:
        return self.reject(belief_id, retire=True, note=note)

    def reinforce(self, belief_id: str, note: str = "", kind: str = "reinforcing") -> Belief:
        """The user restating a belief: recorded as evidence, no number changes (rule 3)."""
        with self._lock():
            text, b, key = self._read(belief_id)
            ev = Evidence(self.today, kind, "", redact(note, self.params.redact) or "the user said this is still true")
            self._commit_writes({b.path: (append_evidence(text, (ev,)), key)},
                                f"{kind}: {belief_id} (no change)", op=kind, beliefs=[belief_id])
        return replace(b, evidence=b.evidence + (ev,))

    def set_pinned(self, belief_id: str, pinned: bool) -> Belief:
        with self._lock():
            text, before, key = self._read(belief_id)
            if before.pinned == pinned:
                return before
            after = replace(before, pinned=pinned)
            ev = Evidence(self.today, "pinned" if pinned else "unpinned", "",
                          "exempt from decay" if pinned else "decays again")
            self._commit_writes({before.path: (update_belief_text(text, before, after, (ev,)), key)},
                                f"{'pin' if pinned else 'unpin'}: {belief_id}", op="pin", beliefs=[belief_id])
        return after

    def supersede(self, old_ids: Iterable[str], by: str, note: str = "") -> Belief:
        old_ids = list(old_ids)
        with self._lock():
            text, new, key = self._read(by)
            writes: dict[str, Any] = {}
            for oid in old_ids:
                if oid == by:
                    raise EpimemError("a belief cannot supersede itself")
                otext, old, okey = self._read(oid)
                after = replace(old, status="superseded")
                writes[old.path] = (update_belief_text(otext, old, after, (
                    Evidence(self.today, "superseded", f"beliefs/{by}", note or f"replaced by {new.title}"),)), okey)
            merged = tuple(dict.fromkeys(new.supersedes + tuple(old_ids)))
            writes[new.path] = (update_belief_text(text, new, replace(new, supersedes=merged)), key)
            self._commit_writes(writes, f"supersede: {', '.join(old_ids)} → {by}", op="supersede",
                                beliefs=[by, *old_ids])
        return replace(new, supersedes=merged)

    # -- observing -------------------------------------------------------------------
    def observe(self, items: list[dict[str, Any]], *, source: str = "cli",
                session: str | None = None) -> ObserveReport:
        """Record 0–N observations as one commit, applying the rules to the beliefs they connect."""
        params = self.params
        today = self.today
        parsed = [self._observation_input(i + 1, item, source, session, today, params)
                  for i, item in enumerate(items)]
        if not parsed:
            return ObserveReport((), None)
        self.vault.require()
        with self._lock():
            month_texts: dict[str, str] = {}
            month_keys: dict[str, Any] = {}

            def month(rel: str) -> str:
                if rel not in month_texts:
                    p = self.vault.path(rel)
                    month_keys[rel] = stat_key(p)
                    month_texts[rel] = p.read_text(encoding="utf-8") if p.exists() else ""
                return month_texts[rel]

            parsed_months: dict[str, list[Observation]] = {}

            def month_obs(rel: str) -> list[Observation]:
                if rel not in parsed_months:
                    parsed_months[rel] = parse_observations(month(rel), rel)[0]
                return parsed_months[rel]

            fresh, dupes = _without_duplicates(parsed, month_obs)
            self._check_session_limit(fresh, today, month_obs, params)
            writes: dict[str, Any] = {}
            beliefs: dict[str, tuple[str, Belief, Belief, Any, list[Evidence]]] = {}
            known: set[str] = set()
            if any(o.connects == "new" and x.get("title") for o, x in fresh):  # a listdir of 10k files costs
                known = {n[:-3] for n in os.listdir(self.root / "beliefs") if n.endswith(".md")}
            results: list[ObservationResult] = []
            new_obs: list[Observation] = []
            tensions: dict[str, tuple[str, Any]] = {}
            for obs, extra in fresh:
                if obs.connects == "new" and extra.get("title"):
                    bid = _unique(slugify(extra["title"]), known | set(beliefs))
                    b = rules.new_belief_from_observation(
                        replace(obs, connects=bid), bid, title=extra["title"], kind=extra["kind"],
                        basis=obs.basis, permanence=extra["permanence"], params=params,
                        tags=extra.get("tags", ()), scope=extra.get("scope", "global"))
                    obs = replace(obs, connects=bid)
                    known.add(bid)
                    writes[b.path] = render_belief(b)
                    new_obs.append(obs)
                    results.append(ObservationResult(obs, bid, created=True, after=b.confidence,
                                                     reason=f"new belief at {b.confidence:.2f} (rule 1)"))
                    continue
                if obs.connects == "new":
                    new_obs.append(obs)
                    results.append(ObservationResult(obs, None, reason="recorded, not connected to a belief"))
                    continue
                if obs.connects not in beliefs:
                    if obs.connects in {r.belief for r in results if r.created}:
                        raise EpimemError(f"observation connects to {obs.connects}, created in the same batch; "
                                          "submit it in a later call")
                    text, b, key = self._read(obs.connects)
                    beliefs[obs.connects] = (text, b, b, key, [])
                text, orig, cur, key, evs = beliefs[obs.connects]
                eff = rules.apply_observation(cur, obs, params)
                evs.append(eff.evidence)
                beliefs[obs.connects] = (text, orig, eff.after, key, evs)
                tid = None
                if eff.open_tension:
                    tid, ttext, tkey = self._tension_for(obs, eff, tensions)
                    tensions[tid] = (ttext, tkey)
                    writes[f"tensions/{tid}.md"] = ttext if tkey is None else (ttext, tkey)
                new_obs.append(obs)
                results.append(ObservationResult(obs, obs.connects, before=eff.before.confidence,
                                                 after=eff.after.confidence, reason=eff.reason,
                                                 tension=tid, alert=eff.alert))
            for bid, (text, orig, cur, key, evs) in beliefs.items():
                writes[f"beliefs/{bid}.md"] = (update_belief_text(text, orig, cur, tuple(evs)), key)
            for obs in new_obs:
                rel = obs.path
                cur = month(rel)
                if not cur:
                    cur = f"# Observations {obs.date:%Y-%m}\n"
                month_texts[rel] = cur.rstrip("\n") + "\n\n" + render_observation(obs)
                writes[rel] = (month_texts[rel], month_keys[rel])
            sha = None
            if writes:
                subject, body = _observe_message(results)
                sessions = sorted({o.session for o in new_obs if o.session})
                sha = self._commit_writes(
                    writes, subject, op="observe", body=body,
                    beliefs=[r.belief for r in results if r.belief],
                    session=", ".join(sessions) or None,
                    extra={"Epimem-Observations": ", ".join(o.id for o in new_obs)})
        return ObserveReport(tuple(dupes + results), sha)

    def _observation_input(self, n: int, item: dict, source: str, session: str | None,
                           today: date, params: Params) -> tuple[Observation, dict]:
        if not isinstance(item, dict):
            raise EpimemError(f"observation {n}: expected an object, got {type(item).__name__}")
        # A misspelt key ("suggest") would silently drop its text: refuse the batch and say which.
        unknown = sorted(set(item) - OBSERVATION_KEYS)
        if unknown:
            raise EpimemError(f"observation {n}: unknown key{'s' if len(unknown) > 1 else ''} "
                              f"{', '.join(repr(k) for k in unknown)}; known keys: {', '.join(sorted(OBSERVATION_KEYS))}")

        def text(key: str, required: bool = False) -> str:
            v = item.get(key)
            if v is None or v == "":
                if required:
                    raise EpimemError(f"observation {n}: '{key}' is required")
                return ""
            if not isinstance(v, str):
                raise EpimemError(f"observation {n}: '{key}' must be text")
            return redact(" ".join(v.split()), params.redact)

        strength = text("strength", True)
        if strength not in STRENGTHS:
            raise EpimemError(f"observation {n}: 'strength' must be one of {', '.join(STRENGTHS)}, not {strength!r}")
        basis = text("basis") or "behavioral"
        if basis not in BASES:
            raise EpimemError(f"observation {n}: 'basis' must be one of {', '.join(BASES)}, not {basis!r}")
        connects = text("connects", True)
        if connects != "new":
            try:
                check_id(connects)
            except IdError as e:
                raise EpimemError(f"observation {n}: 'connects': {e}") from None
        d = today
        if item.get("date"):
            try:
                d = date.fromisoformat(str(item["date"]))
            except ValueError:
                raise EpimemError(f"observation {n}: 'date' must be YYYY-MM-DD, not {item['date']!r}") from None
        sess = text("session") or (session or "")
        if sess and not re.fullmatch(r"[A-Za-z0-9_.:\-]{1,80}", sess):
            raise EpimemError(f"observation {n}: 'session' must be a plain id (letters, digits, - _ . :)")
        extra: dict[str, Any] = {}
        if connects == "new" and item.get("title"):
            extra["title"] = text("title")
            extra["kind"] = text("kind") or "trait"
            if not re.fullmatch(r"[a-z][a-z0-9\-]*", extra["kind"]):
                raise EpimemError(f"observation {n}: invalid 'kind' {extra['kind']!r}")
            extra["permanence"] = text("permanence") or "unknown"
            if extra["permanence"] not in PERMANENCES:
                raise EpimemError(f"observation {n}: 'permanence' must be one of {', '.join(PERMANENCES)}")
            tags = item.get("tags") or []
            if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                raise EpimemError(f"observation {n}: 'tags' must be a list of text")
            extra["tags"] = tuple(tags)
            extra["scope"] = text("scope") or "global"
        obs = Observation(id="", date=d, evidence=text("evidence", True), strength=strength, basis=basis,
                          connects=connects, suggests=text("suggests"), therefore=text("therefore"),
                          source=text("source") or source, session=sess)
        return obs, extra

    def _check_session_limit(self, fresh: list[tuple[Observation, dict]], today: date, month_obs,
                             params: Params) -> None:
        """Rule 9: at most N observations per session, counted from the log itself."""
        per_session: dict[str, int] = {}
        for obs, _ in fresh:
            s = rules.pseudo_session(obs)
            per_session[s] = per_session.get(s, 0) + 1
        for s, n in per_session.items():
            had = self._session_observation_count(s, today, month_obs)
            if had + n > params.observations_per_session:
                these = "this one was" if n == 1 else f"these {n} were"
                raise EpimemError(
                    f"session {s} already has {had} observation{'s' if had != 1 else ''}; "
                    f"at most {params.observations_per_session} per session (rule 9), so "
                    f"{these} not recorded. Zero is a good answer: keep the strongest.")

    def _session_observation_count(self, session: str, today: date, month_obs) -> int:
        # A session spans at most a few days: this month's and last month's logs hold it.
        prev = date(today.year - (today.month == 1), 12 if today.month == 1 else today.month - 1, 1)
        n = 0
        for d in (today, prev):
            for o in month_obs(f"observations/{d:%Y-%m}.md"):
                if rules.pseudo_session(o) == session:
                    n += 1
        return n

    def _tension_for(self, obs: Observation, eff: rules.Effect,
                     pending: dict[str, tuple[str, Any]]) -> tuple[str, str, Any]:
        """(id, text, stat key or None for a new file) of the tension this contradiction goes to.

        A belief with an open tension gets the new evidence added to it, not a
        second file: one tension per open question, however often it recurs.
        """
        from ..core.notes import parse_tension

        bid = eff.before.id
        candidates = [(tid, text, key) for tid, (text, key) in pending.items()]
        tdir = self.root / "tensions"
        if tdir.is_dir():
            for p in sorted(tdir.glob("*.md")):
                if p.stem in pending:
                    continue
                text = p.read_text(encoding="utf-8")
                if f"belief: {bid}" in text:  # cheap filter before parsing
                    candidates.append((p.stem, text, stat_key(p)))
        for tid, text, key in candidates:
            try:
                t = parse_tension(text, tid)
            except NoteError:
                continue  # a malformed tension is never rewritten
            if t.belief == bid and t.status != "resolved":
                line = f"- evidence: [[{rules.observation_link(obs)}]] ({obs.date.isoformat()}: {' '.join(obs.evidence.split())})\n"
                return tid, text.rstrip("\n") + "\n" + line, key
        tid, text = self._new_tension(obs, eff, set(pending))
        return tid, text, None

    def _new_tension(self, obs: Observation, eff: rules.Effect, pending: set[str]) -> tuple[str, str]:
        base = f"{obs.date.isoformat()}-{eff.before.id}"[:70].rstrip("-")
        existing = {p.stem for p in (self.root / "tensions").glob("*.md")} | set(pending)
        tid = _unique(base, existing)
        if eff.divergence:
            title = f"Said and did differ on “{eff.before.title}”"
            suggests = "Self-report and behaviour point different ways; both are kept, neither overrides the other."
        else:
            title = f"Contradicts “{eff.before.title}”"
            suggests = obs.suggests or "The belief may be narrower than stated. Held lightly."
        t = Tension(id=tid, date=obs.date, belief=eff.before.id, status="watching", title=title,
                    what_happened=obs.evidence, evidence=(rules.observation_link(obs),), suggests=suggests)
        return tid, render_tension(t)

    # -- tensions ------------------------------------------------------------------------
    def resolve_tension(self, tension_id: str, note: str) -> Tension:
        try:
            check_tension_id(tension_id)
        except IdError as e:
            raise EpimemError(str(e)) from None
        if not note or not note.strip():
            raise EpimemError("a tension is resolved with a note saying how (--note)")
        rel = f"tensions/{tension_id}.md"
        with self._lock():
            p = self.vault.path(rel)
            if not p.exists():
                raise EpimemError(f"no tension '{tension_id}' ({rel} does not exist)")
            key = stat_key(p)
            text = p.read_text(encoding="utf-8")
            from ..core.notes import parse_tension
            try:
                t = parse_tension(text, tension_id, rel)
            except NoteError as e:
                raise EpimemError(f"{rel}:{e.line}: {e.message}") from None
            if t.status == "resolved":
                raise EpimemError(f"tension {tension_id} is already resolved")
            new = resolve_tension_text(text, self.today, redact(note, self.params.redact))
            self._commit_writes({rel: (new, key)}, f"tension: resolve {tension_id} ({t.status} → resolved)",
                                op="resolve", beliefs=[t.belief])
        return replace(t, status="resolved", resolution=note)

    # -- sessions and reviews --------------------------------------------------------------
    def session_start(self, source: str = "startup") -> SessionReport:
        if source not in ("startup", "resume", "clear", "compact", "fork"):
            raise EpimemError(f"--source must be one of startup, resume, clear, compact, fork; not {source!r}")
        self.vault.require()
        with self._lock():
            s = self._sessions_for_write()
            res = rules.start_session(s, source, self.today, self.params)
            sha = None
            if res.counted:
                sha = self._commit_writes({"state/sessions.json": (sessions_to_json(res.sessions), self._sessions_key())},
                                          f"session: start #{res.sessions.count}", op="session")
        return SessionReport(res.counted, res.sessions.count, res.dormant_days, res.review_due, sha)

    def record_review(self, kind: str, markdown: str, beliefs: Iterable[str] = ()) -> str:
        """Write `reviews/<date>.md` (appending when one exists) and reset the review counter."""
        if kind not in ("audit", "gut-check", "interview", "review"):
            raise EpimemError(f"unknown review kind {kind!r}")
        rel = f"reviews/{self.today.isoformat()}.md"
        body = redact(markdown.strip(), self.params.redact)
        with self._lock():
            p = self.vault.path(rel)
            key = stat_key(p)
            if p.exists():
                text = p.read_text(encoding="utf-8").rstrip("\n") + f"\n\n## {kind}\n\n{body}\n"
            else:
                text = f"---\ndate: {self.today.isoformat()}\nkind: {kind}\n---\n# {kind.capitalize()} {self.today.isoformat()}\n\n{body}\n"
            s = rules.record_review(self._sessions_for_write(), self.today, self.params)
            return self._commit_writes(
                {rel: (text, key), "state/sessions.json": (sessions_to_json(s), self._sessions_key())},
                f"review: {kind} recorded; next review at session {s.next_review_at}",
                op="review", beliefs=list(beliefs))

    def _sessions_key(self):
        return stat_key(self.vault.path("state/sessions.json"))

    def _sessions_for_write(self) -> Sessions:
        """The counter, or an error: a malformed counter is reported, never overwritten."""
        s, problems = self.vault.read_sessions_checked()
        if problems:
            raise EpimemError(f"{problems[0]} (fix it by hand; epimem will not overwrite it)")
        return s

    # -- history -----------------------------------------------------------------------------
    def history(self, belief_id: str) -> list[history.HistoryPoint]:
        self._check_id(belief_id)
        history.require_repo(self.root)
        pts = history.belief_history(self.root, belief_id)
        if not pts and not self.vault.belief_path(belief_id).exists():
            raise EpimemError(f"no belief '{belief_id}' and no history of one")
        return pts

    def diff(self, since: str) -> list[Change]:
        history.require_repo(self.root)
        try:
            base = history.resolve_since(self.root, since)
        except HistoryError as e:
            raise EpimemError(str(e)) from None
        if not history.has_commits(self.root):
            return []
        rows = history.changed_paths(self.root, base)
        return self._describe(rows, (lambda p: f"{base}:{p}") if base else None, lambda p: f"HEAD:{p}")

    def _describe(self, rows, old_spec, new_spec, new_from_disk: bool = False) -> list[Change]:
        rows = [(st, p) for st, p in rows if not Path(p).name.startswith(".")]  # .gitkeep, .gitignore
        specs: list[str] = []
        for _, p in rows:
            if old_spec:
                specs.append(old_spec(p))
            if not new_from_disk:
                specs.append(new_spec(p))
        blobs = iter(history.show_many(self.root, specs))
        changes: list[Change] = []
        obs_added = 0
        for st, p in rows:
            old = next(blobs) if old_spec else None
            if new_from_disk:
                fp = self.root / p
                new = fp.read_text(encoding="utf-8") if fp.exists() else None
            else:
                new = next(blobs)
            stem = Path(p).stem
            if p.startswith("beliefs/") and p.endswith(".md"):
                c = belief_change(stem, history.parse_belief_blob(old, stem), history.parse_belief_blob(new, stem))
            elif p.startswith("tensions/") and p.endswith(".md"):
                c = tension_change(stem, history.parse_tension_blob(old, stem), history.parse_tension_blob(new, stem))
            elif p.startswith("observations/"):
                before = {o.id: o for o in parse_observations(old or "")[0]}
                after = {o.id: o for o in parse_observations(new or "")[0]}
                obs_added += len(after.keys() - before.keys())
                # The log is append-only (a mistake is corrected by a new entry):
                # an entry changed or removed by hand is named, never passed over.
                for oid in sorted(before):
                    if oid not in after:
                        changes.append(Change("observation", oid, "removed", ("the log is append-only",)))
                    elif after[oid] != before[oid]:
                        changes.append(Change("observation", oid, "edited", ("the log is append-only",)))
                c = None
            elif p.startswith("reviews/"):
                c = Change("review", stem, "added" if old is None else "changed")
            else:
                c = Change("file", p, {"A": "added", "D": "removed"}.get(st, "changed"))
            if c:
                changes.append(c)
        if obs_added:
            changes.append(Change("observations", str(obs_added), "recorded"))
        return changes

    def undo(self) -> tuple[str, str]:
        """Revert the last epimem commit with a new commit; returns (new sha, undone subject)."""
        history.require_repo(self.root)
        with self._lock():
            last = history.last_epimem_commit(self.root)
            if last is None:
                raise EpimemError("nothing to undo: no epimem commit in this vault")
            if last.trailers.get("Epimem-Op") == "init":
                raise EpimemError("the last epimem commit created the vault; there is nothing before it to return to")
            try:
                history.revert(self.root, last.sha)
                # Undoing an undo is a redo: say so, rather than "undo: undo: …".
                if last.subject.startswith("undo: "):
                    subject = "redo: " + last.subject[len("undo: "):]
                elif last.subject.startswith("redo: "):
                    subject = "undo: " + last.subject[len("redo: "):]
                else:
                    subject = f"undo: {last.subject}"
                sha = history.commit_index(
                    self.root, subject, op="undo",
                    beliefs=[b.strip() for b in last.trailers.get("Epimem-Beliefs", "").split(",") if b.strip()],
                    extra={"Epimem-Reverts": last.sha}, when=self._replayed)
            except HistoryError as e:
                raise EpimemError(str(e)) from None
        self._after_write()
        return sha, last.subject

    def commit_hand_edits(self) -> tuple[str | None, list[Change], list[Problem]]:
        """Commit what the user changed by hand, with a message naming it.

        Malformed belief files are reported and left out of the commit, so a
        half-finished edit is never recorded as the vault's state.
        """
        history.require_repo(self.root)
        with self._lock():
            rows = [(st, p) for st, p in history.dirty_paths(self.root) if not p.startswith(".epimem/")]
            problems: list[Problem] = []
            keep = []
            for st, p in rows:
                if p.startswith("beliefs/") and p.endswith(".md") and (self.root / p).exists():
                    try:
                        parse_belief((self.root / p).read_text(encoding="utf-8"), Path(p).stem)
                    except NoteError as e:
                        problems.append(Problem(p, e.line, f"{e.message} (not committed)"))
                        continue
                keep.append((st, p))
            if not keep:
                return None, [], problems
            tracked = history.has_commits(self.root)
            changes = self._describe([("A" if st == "??" else st[0], p) for st, p in keep],
                                     (lambda p: f"HEAD:{p}") if tracked else None, None, new_from_disk=True)
            subject = "edit: " + headline(changes) if changes else "edit: files changed by hand"
            body = "\n".join(f"- {c.sentence()}" for c in changes)
            sha = history.commit(self.root, [p for _, p in keep], subject, op="edit", body=body,
                                 beliefs=[c.ident for c in changes if c.what == "belief"], when=self._replayed)
        self._after_write()
        return sha, changes, problems

    # -- validation ------------------------------------------------------------------------------
    def validate(self) -> list[Problem]:
        self.vault.require()
        snap = self.vault.snapshot(self.today)
        problems = list(snap.problems)
        params = self.params
        # A malformed belief is reported once, as itself, not again by everything that links to it.
        ids = {b.id for b in snap.beliefs} | {Path(p.path).stem for p in snap.problems if p.path.startswith("beliefs/")}
        obs_ids = {o.id for o in snap.observations}
        for b in snap.beliefs:
            try:
                rules.check_confidence(b.confidence, b.basis, params)
            except rules.RuleError as e:
                problems.append(Problem(b.path, _key_line(self.root / b.path, "confidence"), str(e)))
            for s in b.supersedes:
                if s not in ids:
                    problems.append(Problem(b.path, _key_line(self.root / b.path, "supersedes"),
                                            f"supersedes unknown belief '{s}'"))
            for ev in b.evidence:
                if ev.link.startswith("observations/") and "#" in ev.link and ev.link.split("#", 1)[1] not in obs_ids:
                    problems.append(Problem(b.path, _line_of(self.root / b.path, ev.link),
                                            f"evidence links to a missing observation [[{ev.link}]]"))
        for o in snap.observations:
            if o.connects != "new" and o.connects not in ids:
                problems.append(Problem(o.path, _line_of(self.root / o.path, f"## {o.id}"),
                                        f"{o.id} connects to unknown belief '{o.connects}'"))
        for t in snap.tensions:
            if t.belief not in ids:
                problems.append(Problem(t.path, _key_line(self.root / t.path, "belief"),
                                        f"tension is about unknown belief '{t.belief}'"))
        return sorted(problems, key=lambda p: (p.path, p.line))

    # -- plumbing ------------------------------------------------------------------------------
    def _check_id(self, value: str) -> str:
        try:
            return check_id(value)
        except IdError as e:
            raise EpimemError(str(e)) from None

    @staticmethod
    def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
        if value not in allowed:
            raise EpimemError(f"--{name} must be one of {', '.join(allowed)}, not {value!r}")

    def _lock(self):
        """The vault lock for a change, once the vault is known to exist: taking it
        creates `.epimem/`, which must not appear at a mistyped --vault path."""
        self.vault.require()
        return self.vault.lock()

    def _read(self, belief_id: str) -> tuple[str, Belief, Any]:
        self._check_id(belief_id)
        self.vault.require()
        try:
            return self.vault.read_belief(belief_id)
        except VaultError as e:
            raise EpimemError(str(e)) from None

    def _commit_writes(self, writes: dict[str, Any], subject: str, *, op: str, **kw: Any) -> str:
        """Write files and commit them through the one write path (all or nothing)."""
        typed = [transaction.replace(rel, v[0], v[1]) if isinstance(v, tuple) else transaction.create(rel, v)
                 for rel, v in writes.items()]
        sig_before = self._context_signature()
        extra = tuple((kw.pop("extra") or {}).items()) if "extra" in kw else ()
        commit = transaction.Commit(subject, op, beliefs=tuple(kw.pop("beliefs", ())), extra=extra,
                                    when=self._replayed, **kw)
        res = transaction.apply(self.root, typed, commit, lock=self.vault.lock())
        changed = []
        for w in typed:
            if w.path in res.changed_beliefs:
                try:
                    changed.append(parse_belief(w.text, Path(w.path).stem))
                except NoteError:
                    pass
        self._after_write(changed, sig_before)
        assert res.commit is not None
        return res.commit

    @property
    def _replayed(self) -> date | None:
        """The overridden date when the clock is replayed (tests, EPIMEM_TODAY)."""
        if self._today is not None or os.environ.get("EPIMEM_TODAY"):
            return self.today
        return None


    def _context_signature(self) -> dict | None:
        from ..store import context_cache as context

        return context.signature(self.root)

    def _after_write(self, changed: list[Belief] | None = None, sig_before: dict | None = None) -> None:
        """Keep the session-start context cache current, so the hook never parses the vault.

        A write that knows which beliefs it changed folds just those in; anything
        else (undo, hand edits, sessions) rebuilds the cache.
        """
        from ..store import context_cache as context

        try:
            if changed is not None:
                context.update_context(self.root, changed, self.params, self.today, sig_before)
            else:
                context.refresh_context(self.root, self.today)
        except Exception:  # a cache must never fail a write that already landed
            pass


# --- helpers --------------------------------------------------------------------------------

def _clean_tags(tags: Iterable[str]) -> tuple[str, ...]:
    # `--tag ""` clears the tags; an empty tag would be written as `[""]`.
    return tuple(t.strip() for t in tags if t.strip())


def _normalize(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _unique(base: str, taken: set[str]) -> str:
    if base not in taken:
        return base
    i = 2
    while f"{base}-{i}" in taken:
        i += 1
    return f"{base}-{i}"


def _without_duplicates(parsed: list[tuple[Observation, dict]], month_obs
                        ) -> tuple[list[tuple[Observation, dict]], list[ObservationResult]]:
    """Give each observation its stable id and set aside those already recorded:
    the same observation submitted twice (a retried hook) is one entry."""
    fresh: list[tuple[Observation, dict]] = []
    dupes: list[ObservationResult] = []
    seen_ids: set[str] = set()
    for obs, extra in parsed:
        rel = f"observations/{obs.date:%Y-%m}.md"
        existing = {o.id: o for o in month_obs(rel)}
        oid, dup = _observation_id(obs, existing, seen_ids)
        if dup is not None:
            dupes.append(ObservationResult(dup, dup.connects if dup.connects != "new" else None,
                                           duplicate=True, reason="already recorded"))
            continue
        seen_ids.add(oid)
        fresh.append((replace(obs, id=oid, path=rel), extra))
    return fresh, dupes


def _observation_id(obs: Observation, existing: dict[str, Observation],
                    pending: set[str]) -> tuple[str, Observation | None]:
    """A stable id from (session, evidence); a longer hash only on a collision."""
    digest = hashlib.sha1(f"{obs.session}\n{_normalize(obs.evidence)}".encode()).hexdigest()
    for n in (4, 6, 8, 12, 40):
        oid = f"obs-{obs.date:%Y%m%d}-{digest[:n]}"
        other = existing.get(oid)
        if other is not None and other.session == obs.session and _normalize(other.evidence) == _normalize(obs.evidence):
            return oid, other
        if other is None and oid not in pending:
            return oid, None
        if oid in pending and other is None:
            # the same observation twice in one batch
            return oid, replace(obs, id=oid)
    raise EpimemError("could not allocate an observation id")


def _observe_message(results: list[ObservationResult]) -> tuple[str, str]:
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


def _line_of(path: Path, needle: str) -> int:
    try:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if needle in line:
                return i
    except OSError:
        pass
    return 1


def _key_line(path: Path, key: str) -> int:
    try:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(rf"^{re.escape(key)}\s*:", line):
                return i
    except OSError:
        pass
    return 1
