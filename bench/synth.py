"""A synthetic vault for benchmarks and recall evaluation.

    python bench/synth.py PATH --beliefs 10000 --observations 50000 [--seed 0]

or, from Python, `make_vault(root, n_beliefs=10000, n_observations=50000, seed=0)`.

What it writes is a vault in the exact formats of SPEC §1 (every file goes
through `epimem.core.notes.render_*`), made fast by writing files directly
instead of going through `Memory.observe`:

- beliefs drawn from 40 topic clusters (`TOPICS`): each belief's title and
  statement come from its topic's claims, contexts and reasons, its tags start
  with the topic name, and kinds, bases, permanences, scopes, pins, retired and
  superseded beliefs are mixed in realistic proportions;
- observations spread over 24 monthly files, at most 3 per session, each one
  cited by its belief's `## Evidence` section; confidences, `confirmed`,
  `challenged` and evidence lines come from replaying the observations through
  the real rules (`epimem.core.rules.apply_observation`), so the synthetic
  numbers obey the same rules as real ones; about 3% of observations are
  `connects: new`;
- tensions for about 1% of the beliefs, `state/sessions.json`, one audit in
  `reviews/`, `epistemology.md` from `epimem/templates/` when it exists;
- `git init` and a single commit.

Typical use: `python bench/synth.py bench/out/vault-10k` (bench/out/ is
git-ignored); the labels land in `bench/out/vault-10k.labels.json`. On the
project's 2-core machine 10,000 beliefs / 50,000 observations take about 5 s,
git commit included.

Labels for recall evaluation: belief ids end in a five-digit number `n`, and
the belief's topic is `TOPICS[n % len(TOPICS)]` — `topic_of(belief_id)` does
this. `make_vault` also writes `<root>.labels.json` next to the vault (a
sibling file, so it is neither indexed nor committed with the vault; pass
`labels_path` to put it elsewhere, e.g. `bench/out/<vault>/labels.json`):

    {"seed": 0, "end": "2026-11-28", "topics": {"testing": {
        "query": "how do they write and run tests",
        "ids": [...active beliefs of the topic...],
        "global_ids": [...those with scope global...]}, ...}}

Recall only returns active beliefs, so `ids` lists active ones only; project
scoped beliefs are recalled only inside their project, hence `global_ids`.
Everything is deterministic for a given seed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

if __package__ in (None, ""):  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import epimem
from epimem.core import rules
from epimem.core.ids import slugify
from epimem.core.model import Belief, Evidence, Observation, Tension
from epimem.core.notes import render_belief, render_observation, render_tension

# name | query | claims (;) | reasons (;)
_TOPIC_TABLE = """
testing | how do they write and run tests |
 writes the failing test first; keeps unit tests under a second each; tests against a real database instead of mocks;
 uses table-driven tests for edge cases; deletes flaky tests rather than retrying them; runs the whole suite before every push;
 keeps test fixtures next to the tests that use them; asks for a regression test with every bug fix |
 a red test is the only proof a bug is understood; slow suites stop being run; mocks drift from the real thing
code-review | how do they review pull requests and give review comments |
 reviews pull requests the same day; asks for small pull requests; comments with a suggested fix rather than a question;
 reads the tests before the implementation in a review; approves with nits instead of blocking; wants screenshots for any UI change;
 reviews their own diff before requesting review; labels review comments as blocking or optional |
 reviews that wait rot; a reviewer's attention is the scarce resource; authors learn more from a concrete suggestion
naming | how do they name variables functions and files |
 prefers long explicit names over abbreviations; puts units in variable names; names booleans as questions;
 renames things as soon as their meaning drifts; avoids generic names like data or manager; uses domain words from the business;
 keeps file names matching the type they contain; dislikes Hungarian notation |
 a good name saves a comment; wrong names lie longer than wrong comments; the reader is someone new to the code
deadlines | how do they handle deadlines and time pressure |
 cuts scope rather than quality when a deadline slips; negotiates deadlines early; works in the evening before a release;
 ships a thin first version before the deadline; flags a slipping deadline as soon as it is visible; keeps a buffer day before launches;
 refuses to promise dates without an estimate; treats deadlines set by others as negotiable |
 late news is worse than bad news; scope is the only honest lever; rushed code costs more later
documentation | how do they write documentation and READMEs |
 writes the README before the code; keeps architecture decisions in ADRs; documents why rather than what;
 updates docs in the same pull request as the code; prefers runnable examples over prose; keeps a changelog by hand;
 writes runbooks for anything that pages; deletes stale documentation instead of marking it outdated |
 docs that drift are worse than none; the next on-call person reads them at 3 a.m.; examples do not lie
git | how do they use git commits and branches |
 writes commit messages in the imperative; rebases feature branches before merging; keeps one logical change per commit;
 squashes fixup commits before review; never force-pushes shared branches; uses conventional commit prefixes;
 tags every release; bisects to find regressions |
 history is documentation; a clean history makes bisect useful; shared branches must not be rewritten
debugging | how do they debug problems and find root causes |
 reproduces a bug before fixing it; reads the stack trace top to bottom first; adds logging before reaching for a debugger;
 bisects when a regression appears; writes down hypotheses while debugging; wants the root cause rather than a workaround;
 checks recent deploys first when something breaks; debugs with a minimal reproduction in a scratch file |
 a fix without a cause comes back; guessing wastes more time than measuring; the simplest reproduction explains the most
refactoring | how do they approach refactoring and cleaning up code |
 refactors in small separate commits; refactors only with tests in place; leaves code cleaner than they found it;
 avoids big-bang rewrites; extracts functions before changing behaviour; removes dead code on sight;
 separates renames from logic changes; postpones refactors during incidents |
 mixed diffs hide bugs; rewrites lose the knowledge in old code; small steps keep the build green
error-handling | how do they handle errors and exceptions |
 wraps errors with context at every layer; fails fast on invalid input; never swallows exceptions silently;
 returns typed errors instead of strings; retries only idempotent operations; validates at the boundary and trusts inside;
 prefers explicit error returns over exceptions; writes error messages that say how to fix the problem |
 an error without context costs an hour; silent failures corrupt data; the message is read by someone in a hurry
logging | how do they log and what do they put in logs |
 uses structured logging with key-value fields; logs at the boundary rather than everywhere; keeps secrets out of logs;
 includes a request id in every log line; prefers fewer logs at the right level; removes debug logs before merging;
 logs decisions rather than steps; treats warning logs as bugs to fix |
 noise hides the signal; logs are read during incidents; a leaked token in a log is an incident
performance | how do they approach performance and optimisation |
 measures before optimising; profiles in production-like data; sets latency budgets for endpoints;
 avoids premature optimisation; benchmarks every hot-path change; prefers simple algorithms until numbers say otherwise;
 watches allocation counts in hot loops; caches only after measuring |
 intuition about performance is usually wrong; the slow part is rarely where you expect; complexity costs more than milliseconds
security | how do they think about security and secrets |
 keeps secrets in a vault rather than environment files; reviews dependencies for known vulnerabilities; applies least privilege to service accounts;
 rotates credentials after every incident; threat-models new endpoints; never logs personal data;
 pins base images by digest; asks for a security review before launching public APIs |
 breaches start with convenience; a leaked key is forever; least privilege limits the blast radius
dependencies | how do they choose and manage dependencies |
 prefers the standard library over new dependencies; pins dependency versions; reads a library's issues before adopting it;
 updates dependencies weekly in small batches; vendors small libraries instead of depending on them; removes unused dependencies;
 checks the licence of every new package; avoids frameworks for small services |
 every dependency is a liability; upgrades are easier in small steps; the standard library does not break
ci | how do they set up continuous integration pipelines |
 keeps the CI pipeline under ten minutes; runs linters in CI rather than pre-commit hooks; fails the build on warnings;
 caches dependencies in CI; runs tests in parallel shards; treats a red main branch as the top priority;
 reproduces CI failures locally before retrying; keeps pipeline config next to the code |
 slow pipelines get skipped; a flaky pipeline teaches people to ignore red; CI is the shared definition of done
deployment | how do they deploy and release software |
 deploys small changes many times a day; never deploys on Fridays; uses canary releases for risky changes;
 keeps rollbacks a single command; deploys behind feature flags; watches dashboards for fifteen minutes after a deploy;
 automates every deployment step; writes a rollback plan before risky releases |
 small deploys are easy to roll back; a deploy nobody watches is a gamble; manual steps get skipped
databases | how do they work with databases and SQL |
 prefers hand-written SQL over an ORM; adds an index before a query ships; uses transactions for every multi-row write;
 keeps migrations backwards compatible; prefers Postgres for new services; normalises first and denormalises with evidence;
 checks query plans for new queries; avoids stored procedures |
 the database outlives the code; a missing index is an outage waiting; ORMs hide the queries that matter
api-design | how do they design APIs and endpoints |
 designs the API before the implementation; versions public APIs from day one; prefers boring REST over clever RPC;
 returns problem details on errors; makes every mutating endpoint idempotent; writes the OpenAPI spec by hand;
 avoids breaking changes without a deprecation window; paginates every list endpoint |
 an API is a promise; clients break in ways you cannot see; retries make idempotency mandatory
typing | how do they use types and type checking |
 adds type hints to every public function; runs the type checker in strict mode; prefers dataclasses over dictionaries;
 models states with enums rather than strings; avoids Any in new code; uses newtypes for identifiers;
 treats type errors as build failures; prefers immutable data structures |
 types are documentation the compiler checks; strings carry no meaning; a mutable shared value is a bug later
concurrency | how do they deal with concurrency threads and async code |
 avoids shared mutable state; prefers message passing over locks; adds timeouts to every network call;
 uses context cancellation everywhere; runs the race detector in CI; limits goroutines with worker pools;
 keeps async code out of the domain layer; reproduces race conditions with stress tests |
 races appear only in production; a call without a timeout is a hang; locks compose badly
architecture | how do they think about system architecture and design |
 prefers a modular monolith over microservices; draws the data flow before choosing components; keeps the domain free of frameworks;
 picks boring technology unless it hurts; designs for deletion; writes a design doc for anything over a week;
 separates reads from writes only when load demands it; keeps service boundaries aligned with teams |
 distributed systems multiply failure modes; a design doc is cheaper than a rewrite; boring technology has known failure modes
meetings | how do they feel about meetings and calendars |
 declines meetings without an agenda; prefers written updates over status meetings; keeps mornings free of meetings;
 ends meetings with written decisions; joins design reviews but skips standups when possible; time-boxes every meeting;
 asks for a document before a discussion; leaves meetings that lost their purpose |
 meetings fragment focus; decisions not written down are not made; a document scales better than a call
communication | how do they communicate and what answers do they want |
 wants terse answers that lead with code; asks for the reasoning behind a recommendation; prefers bullet points over paragraphs;
 says no directly rather than vaguely; writes long messages asynchronously rather than calling; wants options with trade-offs;
 dislikes filler and apologies in answers; asks clarifying questions before starting |
 clarity saves everyone time; vague answers create more questions; decisions need the trade-offs visible
planning | how do they plan work before starting |
 asks for a written plan before large changes; breaks work into tasks under a day; writes acceptance criteria first;
 plans the rollback before the rollout; keeps a running todo list per task; re-plans after every surprise;
 sketches the interface before the implementation; timeboxes spikes |
 a plan exposes the unknowns early; small tasks keep momentum; surprises are cheaper on paper
estimation | how do they estimate effort and timelines |
 estimates in ranges rather than points; doubles the first estimate; refuses to estimate without a spike;
 tracks estimates against actuals; estimates in days rather than story points; separates effort from calendar time;
 re-estimates when scope changes; gives estimates only for the next milestone |
 single numbers pretend to a certainty nobody has; unknowns dominate estimates; calendars are not effort
on-call | how do they handle on-call duty and pages |
 fixes noisy alerts during the on-call week; writes a handover note at the end of each rotation; keeps runbooks next to alerts;
 silences alerts only with a ticket; pages a second person early rather than late; reviews every page in a weekly meeting;
 treats alert fatigue as a bug; keeps the laptop charged and the VPN tested before a shift |
 a noisy pager hides the real page; tired people make worse fixes; the next shift deserves context
mentoring | how do they mentor and help junior engineers |
 pairs with junior engineers on their first tickets; explains the why behind review comments; lets juniors own small decisions;
 answers questions with questions first; writes onboarding docs from new hires' questions; shares mistakes openly;
 praises in public and corrects in private; gives juniors visible projects |
 people learn by doing; an explained rule is followed, an imposed one is worked around; trust grows with ownership
pair-programming | how do they pair program and collaborate on code |
 pairs on hard problems rather than routine ones; swaps driver every twenty-five minutes; prefers mob sessions for design questions;
 pairs remotely with a shared editor; stops pairing when it becomes watching; pairs on production incidents;
 pairs with reviewers to avoid long review threads; keeps pairing sessions under two hours |
 two people catch more than one; long sessions drain both; synchronous review beats a long thread
learning | how do they learn new technologies and skills |
 learns a new language by rewriting a small tool in it; reads the source code of libraries they depend on; keeps notes of what they learn;
 prefers official documentation over tutorials; learns by teaching; takes a course before adopting a framework;
 reads postmortems from other companies; builds a toy version of a system to understand it |
 reading source removes magic; teaching exposes gaps; other people's outages are cheap lessons
focus | how do they protect focus and deep work |
 blocks mornings for deep work; turns off chat notifications while coding; works on one task at a time;
 batches email and chat twice a day; uses a timer for focus sessions; keeps a scratch file for interruptions;
 takes a walk before hard decisions; closes the laptop at a fixed time |
 context switching costs more than it looks; deep work needs protected time; rested people write better code
tooling | how do they set up tools and scripts |
 gives every repository a Makefile entry point; automates any task done twice; keeps dotfiles in a repository;
 uses a task runner instead of shell history; writes small scripts rather than clicking through consoles; prefers command-line tools over GUIs;
 pins tool versions per repository; keeps the local setup to one command |
 automation is documentation that runs; a new machine should take minutes; clicks are not reproducible
code-style | how do they format code and follow style guides |
 lets the formatter decide all formatting questions; keeps functions short; prefers early returns over nested ifs;
 avoids clever one-liners; keeps line length under a hundred characters; orders code top-down by abstraction;
 prefers composition over inheritance; limits files to one main concept |
 formatting debates are waste; nesting hides the main path; clever code is a loan against the next reader
comments | how do they write code comments |
 comments why rather than what; deletes commented-out code; writes doc comments for every exported function;
 leaves TODOs only with a ticket number; explains workarounds with a link to the issue; prefers self-explaining code over comments;
 keeps comments in sync during refactors; writes a header comment for every module |
 a stale comment lies; the code says what, only a comment says why; a TODO without owner never happens
configuration | how do they manage configuration and settings |
 keeps configuration in environment variables; validates configuration at startup; avoids configuration flags nobody uses;
 keeps defaults safe for production; documents every setting next to its default; prefers code over configuration for logic;
 separates secrets from plain configuration; keeps one configuration file per environment |
 invalid configuration should fail loudly and early; every flag doubles the test matrix; unsafe defaults ship
observability | how do they approach monitoring metrics and tracing |
 adds metrics before launching a feature; defines service level objectives for every service; traces requests across services;
 builds dashboards around user-facing symptoms; alerts on symptoms rather than causes; keeps cardinality of metrics low;
 adds tracing spans around every external call; reviews dashboards weekly |
 you cannot fix what you cannot see; users feel symptoms not causes; high cardinality costs money
migrations | how do they run database and data migrations |
 writes a down migration for every schema change; backfills in batches rather than one transaction; tests migrations on a copy of production;
 separates schema changes from data changes; runs migrations before the code that needs them; avoids locking tables during business hours;
 keeps migrations idempotent; asks for rollback SQL before running a migration |
 a failed migration at scale is an outage; locks block everyone; a way back must exist before going forward
feature-flags | how do they use feature flags |
 ships unfinished work behind feature flags; removes flags within a month of full rollout; names flags after the behaviour they change;
 keeps flag checks at the edges of the code; rolls out flags by percentage; keeps a registry of active flags;
 tests both sides of every flag; avoids flags for configuration |
 old flags are dead code with a switch; partial rollouts limit damage; every flag doubles the paths
caching | how do they use caches and caching |
 caches only after measuring a hot path; sets an expiry on every cache entry; prefers cache-aside over write-through;
 invalidates caches on writes explicitly; avoids caching personal data; keeps caches in process until scale demands more;
 adds cache hit-rate metrics; designs for a cold cache on startup |
 cache invalidation is the hard part; a stale cache is a data bug; a cold start must not take the service down
queues | how do they use message queues and background jobs |
 makes every queue consumer idempotent; uses a Postgres job table before adding a broker; sends failed messages to a dead-letter queue;
 keeps messages small and versioned; monitors queue depth and age; processes messages in order only when needed;
 retries with exponential backoff; replaces cron jobs with queue consumers |
 messages arrive twice; a growing queue is a slow outage; infrastructure you already run is cheaper
feedback | how do they give and receive feedback |
 asks for feedback after every project; gives feedback within a day; prefers direct feedback over hints;
 writes feedback down before delivering it; separates feedback on work from feedback on people; thanks people for critical feedback;
 asks what they could have done differently in retrospectives; gives specific examples with every piece of feedback |
 late feedback cannot be used; vague feedback cannot be acted on; criticism is information
ai-assistants | how do they work with AI coding assistants like Claude |
 asks the assistant for a plan before edits; reviews every diff the assistant proposes; asks the assistant to explain unfamiliar code first;
 keeps the assistant away from production credentials; prefers small focused prompts; asks the assistant to write tests for its own changes;
 stops the assistant when it edits unrelated files; asks for alternatives before accepting a design |
 an unreviewed diff is a liability; small prompts give checkable answers; the assistant does not carry the pager
"""


def _split_topics(table: str) -> list[dict]:
    # A topic starts on a line with two '|'; its claims and reasons follow.
    topics, buf = [], []
    for line in table.strip().splitlines():
        if line.count("|") == 2 and not line.startswith(" ") and buf:
            topics.append(" ".join(buf))
            buf = []
        buf.append(line.strip())
    topics.append(" ".join(buf))
    out = []
    for t in topics:
        name, query, claims, reasons = (p.strip() for p in t.split("|"))
        out.append({"name": name, "query": query,
                    "claims": [c.strip() for c in claims.split(";") if c.strip()],
                    "reasons": [r.strip() for r in reasons.split(";") if r.strip()]})
    return out


_TOPICS = _split_topics(_TOPIC_TABLE)
TOPICS: tuple[str, ...] = tuple(t["name"] for t in _TOPICS)
TOPIC_QUERIES: dict[str, str] = {t["name"]: t["query"] for t in _TOPICS}


def topic_of(belief_id: str) -> str:
    """The topic a synthetic belief was drawn from (its id ends in its number)."""
    return TOPICS[int(belief_id.rsplit("-", 1)[1]) % len(TOPICS)]


_QUALIFIERS = ("", "", "", "", " in Go services", " in Python code", " on the payments team", " for new code",
               " under deadline pressure", " in side projects", " when the change is risky", " at work",
               " for anything user-facing", " in shared repositories", " on legacy code")
_CONTEXTS = ("while working on the billing service", "during the ledger migration", "in the reporting job",
             "on the public API", "while fixing a production bug", "in a pairing session",
             "while onboarding a new teammate", "on a Friday afternoon release", "in the search indexer",
             "during an incident follow-up", "in a weekend side project", "while reviewing a teammate's change",
             "on the notifications worker", "in the auth gateway", "during quarterly planning",
             "on the data export tool", "in the mobile backend", "while preparing a demo")
_EXCEPTIONS = ("prototypes", "one-off scripts", "incident hotfixes", "generated code", "internal tools",
               "code that will be deleted next month", "tests", "the legacy monolith")
_FREQUENCY = ("almost always", "most of the time", "when it matters", "by default", "without being asked",
              "more often than not", "consistently", "when nobody is watching")
_GENERIC_TAGS = ("go", "python", "team", "habit", "backend", "work", "quality", "speed", "reliability",
                 "collaboration")
_PROJECTS = ("billing-service", "ledger-sync", "search-indexer", "auth-gateway", "notifications")

_KINDS = (("preference", 22), ("workflow", 18), ("convention", 16), ("trait", 9), ("value", 8),
          ("antipattern", 6), ("solution", 6), ("decision", 5), ("motivation", 4), ("fact", 4),
          ("identity", 2))
_BASES = (("behavioral", 58), ("self-report", 24), ("interpretive", 11), ("fact", 7))
_PERMANENCES = (("durable", 45), ("stable", 20), ("situational", 15), ("unknown", 20))
# Strength of a follow-up observation, and the share of self-reported confirmations.
_STRENGTHS = (("confirming", 72), ("complicating", 12), ("contradicting", 10), ("single", 6))


def _pick(rng: random.Random, table) -> str:
    names = [n for n, _ in table]
    return rng.choices(names, weights=[w for _, w in table])[0]


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


class _Ids:
    def __init__(self, rng: random.Random):
        self.rng, self.used = rng, set()

    def hex(self, digits: int, prefix: str = "") -> str:
        while True:
            v = prefix + f"{self.rng.getrandbits(4 * digits):0{digits}x}"
            if v not in self.used:
                self.used.add(v)
                return v


def make_vault(root, n_beliefs: int = 10000, n_observations: int = 50000, seed: int = 0,
               end: date = date(2026, 11, 28), months: int = 24, labels_path=None,
               commit: bool = True) -> dict:
    """Write a synthetic vault at `root` (which must not exist or be empty).

    Returns a summary: counts, the labels file and the seconds it took.
    """
    t0 = time.perf_counter()
    root = Path(root)
    if root.exists() and any(root.iterdir()):
        raise FileExistsError(f"{root} exists and is not empty; refusing to write a synthetic vault into it")
    rng = random.Random(seed)
    ids = _Ids(rng)
    first_month = end.year * 12 + end.month - 1 - (months - 1)
    start = date(first_month // 12, first_month % 12 + 1, 1)
    span = (end - start).days + 1
    for sub in ("beliefs", "observations", "tensions", "reviews", "state"):
        (root / sub).mkdir(parents=True, exist_ok=True)

    # Sessions: 1–3 observation slots each, spread over the period.
    slots: list[tuple[date, str]] = []
    session_days: dict[str, int] = {}
    while len(slots) < n_observations:
        d = start + timedelta(days=rng.randrange(span))
        sid = ids.hex(6)
        session_days[d.isoformat()] = session_days.get(d.isoformat(), 0) + 1
        for _ in range(min(rng.choice((1, 1, 2, 2, 3)), n_observations - len(slots))):
            slots.append((d, sid))
    # Sessions that recorded nothing (zero is a good answer).
    for _ in range(len(session_days) // 4 + 1):
        d = (start + timedelta(days=rng.randrange(span))).isoformat()
        session_days[d] = session_days.get(d, 0) + 1
    rng.shuffle(slots)

    # ~3% unconnected; the rest spread over beliefs with a long tail, every
    # belief getting its first sighting when there are enough observations.
    n_new = n_observations // 33
    connected = slots[n_new:]
    per_belief: list[list[tuple[date, str]]] = [[] for _ in range(n_beliefs)]
    for i in range(min(n_beliefs, len(connected))):
        per_belief[i].append(connected[i])
    rest = connected[n_beliefs:]
    if rest and n_beliefs:
        weights = [rng.paretovariate(1.6) for _ in range(n_beliefs)]
        for slot, bi in zip(rest, rng.choices(range(n_beliefs), weights=weights, k=len(rest))):
            per_belief[bi].append(slot)

    observations: list[Observation] = []
    beliefs: list[Belief] = []
    tension_candidates: list[tuple[Observation, rules.Effect]] = []
    obs_ids: set[str] = set()

    def new_obs_id(d: date) -> str:
        while True:
            oid = f"obs-{d:%Y%m%d}-{rng.getrandbits(16):04x}"
            if oid not in obs_ids:
                obs_ids.add(oid)
                return oid

    def make_obs(d: date, sid: str, strength: str, basis: str, connects: str, claim: str) -> Observation:
        ctx = rng.choice(_CONTEXTS)
        if strength == "single":
            ev = f"First sign: {claim}, {ctx}."
        elif strength == "confirming":
            ev = (f"Said it themselves: “{claim}”." if basis == "self-report"
                  else f"Again {claim}, {ctx}.")
        elif strength == "complicating":
            ev = f"{_cap(claim)}, {ctx}, but made an exception for {rng.choice(_EXCEPTIONS)}."
        else:
            ev = f"Went against “{claim}”, {ctx}."
        return Observation(id=new_obs_id(d), date=d, evidence=" ".join(ev.split()), strength=strength,
                           basis=basis, connects=connects, suggests=_cap(claim) + ".",
                           therefore=f"Keep in mind: {claim}.", source="claude-code", session=sid)

    for n in range(n_beliefs):
        topic = _TOPICS[n % len(_TOPICS)]
        claim = rng.choice(topic["claims"])
        title = _cap(claim) + rng.choice(_QUALIFIERS)
        bid = f"{slugify(title, 60)}-{n:05d}"
        kind, basis, perm = _pick(rng, _KINDS), _pick(rng, _BASES), _pick(rng, _PERMANENCES)
        tags = [topic["name"]] + rng.sample(_GENERIC_TAGS, rng.choice((0, 1, 1, 2)))
        scope = rng.choice(_PROJECTS) if rng.random() < 0.12 else "global"
        statement = (f"{_cap(claim)} {rng.choice(_FREQUENCY)}, {rng.choice(_CONTEXTS)} and elsewhere. "
                     f"The reason they give: {rng.choice(topic['reasons'])}.")
        mine = sorted(per_belief[n])
        if mine:
            d, sid = mine[0]
            origin = make_obs(d, sid, "single", basis, bid, claim)
            observations.append(origin)
            b = rules.new_belief_from_observation(origin, bid, title=title, kind=kind, basis=basis,
                                                  permanence=perm, tags=tuple(tags), scope=scope)
            b = replace(b, statement=statement)
        else:
            d = start + timedelta(days=rng.randrange(span))
            conf = rules.start_confidence(basis)
            b = Belief(id=bid, title=title, kind=kind, basis=basis, confidence=conf, permanence=perm,
                       first=d, tags=tuple(tags), scope=scope, statement=statement,
                       evidence=(Evidence(d, "added", "", f"added by the user ({conf:.2f})"),))
        evs = list(b.evidence)
        for d, sid in mine[1:]:
            strength = _pick(rng, _STRENGTHS)
            obasis = "self-report" if strength == "confirming" and rng.random() < 0.15 else "behavioral"
            o = make_obs(d, sid, strength, obasis, bid, claim)
            observations.append(o)
            if strength == "contradicting":
                b = replace(b, evidence=tuple(evs))  # the rule counts earlier challenges
            eff = rules.apply_observation(b, o)
            b = eff.after
            evs.append(eff.evidence)
            if eff.open_tension:
                tension_candidates.append((o, eff))
        beliefs.append(replace(b, evidence=tuple(evs)))

    for d, sid in slots[:n_new]:
        topic = rng.choice(_TOPICS)
        observations.append(make_obs(d, sid, "single", "behavioral", "new", rng.choice(topic["claims"])))

    # Pinned, retired and superseded beliefs, as a user would leave them.
    by_topic: dict[int, list[int]] = {}
    for i in range(n_beliefs):
        by_topic.setdefault(i % len(_TOPICS), []).append(i)
    for i, b in enumerate(beliefs):
        r = rng.random()
        last = max(e.date for e in b.evidence)
        when = min(end, last + timedelta(days=rng.randrange(1, 60)))
        if r < 0.01:
            beliefs[i] = replace(b, pinned=True, evidence=b.evidence + (
                Evidence(when, "pinned", "", "exempt from decay"),))
        elif r < 0.04:
            beliefs[i] = rules.reject(b, when, retire=True, note="the user said this no longer holds")
        elif r < 0.06:
            later = [j for j in by_topic[i % len(_TOPICS)]
                     if beliefs[j].first > b.first and beliefs[j].status == "active" and j != i]
            if later:
                j = rng.choice(later)
                new = beliefs[j]
                when = max(new.first, last)
                beliefs[i] = replace(b, status="superseded", evidence=b.evidence + (
                    Evidence(when, "superseded", f"beliefs/{new.id}", f"replaced by {new.title}"),))
                beliefs[j] = replace(new, supersedes=new.supersedes + (b.id,))

    tensions: list[Tension] = []
    want = max(1, n_beliefs // 100) if tension_candidates else 0
    tids: set[str] = set()
    for o, eff in rng.sample(tension_candidates, min(want, len(tension_candidates))):
        tid = f"{o.date.isoformat()}-{eff.before.id}"[:70].rstrip("-")
        k = 2
        while tid in tids:
            tid, k = f"{tid[:66]}-{k}", k + 1
        tids.add(tid)
        status = rng.choices(("watching", "unresolved", "resolved"), weights=(60, 15, 25))[0]
        res = ""
        if status == "resolved":
            rd = min(end, o.date + timedelta(days=rng.randrange(1, 45)))
            res = f"{rd.isoformat()} — the user: it depends on the situation; belief kept as is"
        title = (f"Said and did differ on “{eff.before.title}”" if eff.divergence
                 else f"Contradicts “{eff.before.title}”")
        tensions.append(Tension(id=tid, date=o.date, belief=eff.before.id, status=status, title=title,
                                what_happened=o.evidence, evidence=(rules.observation_link(o),),
                                suggests="The belief may be narrower than stated. Held lightly.",
                                resolution=res))

    # --- write ----------------------------------------------------------------------
    bdir = root / "beliefs"
    for b in beliefs:
        with open(bdir / f"{b.id}.md", "w", encoding="utf-8") as fh:
            fh.write(render_belief(b))
    observations.sort(key=lambda o: (o.date, o.session, o.id))
    by_month: dict[str, list[str]] = {}
    for o in observations:
        by_month.setdefault(f"{o.date:%Y-%m}", []).append(render_observation(o))
    for m, parts in by_month.items():
        (root / "observations" / f"{m}.md").write_text(
            f"# Observations {m}\n\n" + "\n".join(parts), encoding="utf-8")
    for t in tensions:
        (root / "tensions" / f"{t.id}.md").write_text(render_tension(t), encoding="utf-8")

    days = dict(sorted(session_days.items()))
    count = sum(days.values())
    review = end - timedelta(days=rng.randrange(5, 25))
    at_review = sum(v for k, v in days.items() if k <= review.isoformat())
    (root / "state" / "sessions.json").write_text(json.dumps({
        "count": count, "last_session": max(days) if days else None, "last_review": review.isoformat(),
        "next_review_at": at_review + 10, "created": min(days) if days else None, "days": days,
    }, indent=2) + "\n", encoding="utf-8")
    # In the format this epimem writes, as a vault it made would be: no migration before the first change.
    from epimem.core import kernel

    (root / kernel.FORMAT_FILE).write_text(kernel.format_text(kernel.VAULT_FORMAT), encoding="utf-8")
    (root / "reviews" / f"{review.isoformat()}.md").write_text(
        f"---\ndate: {review.isoformat()}\nkind: audit\n---\n# Audit {review.isoformat()}\n\n"
        f"Synthetic audit at session {at_review}: {len(beliefs)} beliefs, "
        f"{len(observations)} observations, {len(tensions)} tensions.\n", encoding="utf-8")
    templates = Path(epimem.__file__).resolve().parent / "templates"
    if (templates / "epistemology.md").exists():
        shutil.copyfile(templates / "epistemology.md", root / "epistemology.md")
    gi = templates / "gitignore"
    (root / ".gitignore").write_text(gi.read_text(encoding="utf-8") if gi.exists() else ".epimem/\n",
                                     encoding="utf-8")

    # --- labels, outside the vault ----------------------------------------------------
    labels = {"seed": seed, "end": end.isoformat(), "beliefs": n_beliefs, "observations": n_observations,
              "topics": {t["name"]: {"query": t["query"], "ids": [], "global_ids": []} for t in _TOPICS}}
    for b in beliefs:
        if b.status != "active":
            continue
        entry = labels["topics"][topic_of(b.id)]
        entry["ids"].append(b.id)
        if b.scope == "global":
            entry["global_ids"].append(b.id)
    labels_file = Path(labels_path) if labels_path else root.parent / f"{root.name}.labels.json"
    labels_file.parent.mkdir(parents=True, exist_ok=True)
    labels_file.write_text(json.dumps(labels, indent=1) + "\n", encoding="utf-8")

    if commit:
        stamp = f"{end.isoformat()}T12:00:00+00:00"
        env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
               "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]
        subprocess.run([*git, "init", "-q"], cwd=root, check=True, env=env)
        subprocess.run([*git, "add", "-A"], cwd=root, check=True, env=env)
        subprocess.run([*git, "-c", "gc.auto=0", "commit", "-q", "-m",
                        f"synthetic vault: {len(beliefs)} beliefs, {len(observations)} observations "
                        f"(seed {seed})"], cwd=root, check=True, env=env)
        # Packed now, in the foreground: the commit's 60,000 loose objects set off git's automatic
        # gc in a detached process, which packed them while a bench copied the vault (objects gone
        # mid-copy) or timed its first commands.
        subprocess.run([*git, "gc", "-q"], cwd=root, check=True, env=env)

    return {"root": str(root), "beliefs": len(beliefs), "observations": len(observations),
            "tensions": len(tensions), "sessions": count, "labels": str(labels_file),
            "seconds": round(time.perf_counter() - t0, 2)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Write a synthetic epimem vault for benchmarks.")
    ap.add_argument("path", help="where to create the vault (must not exist or be empty)")
    ap.add_argument("--beliefs", type=int, default=10000)
    ap.add_argument("--observations", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--labels", default=None, help="labels file (default: <path>.labels.json beside the vault)")
    ap.add_argument("--no-commit", action="store_true", help="skip git init and the commit")
    a = ap.parse_args(argv)
    try:
        out = make_vault(a.path, a.beliefs, a.observations, a.seed, labels_path=a.labels,
                         commit=not a.no_commit)
    except FileExistsError as e:
        print(f"synth: {e}", file=sys.stderr)
        return 2
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())


def lift_session_bound(root, limit: int = 1_000_000) -> None:
    """Rule 9 out of a benchmark's way: the sessions a vault never counted share one session's three
    observations a day, and a benchmark records many under names of its own. The bound is read and
    counted as before (what it costs is measured); only its number is raised, in epistemology.md,
    committed as the user would."""
    import re

    p = Path(root) / "epistemology.md"
    text = p.read_text(encoding="utf-8")
    new, n = re.subn(r"(?m)^observations_per_session: *\d+ *$", f"observations_per_session: {limit}", text, count=1)
    if not n:
        new = text.replace("---\n", f"---\nobservations_per_session: {limit}\n", 1)
    p.write_text(new, encoding="utf-8")
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m",
                    "epistemology: observations_per_session for the benchmark", "--", "epistemology.md"],
                   cwd=root, check=True, capture_output=True)
