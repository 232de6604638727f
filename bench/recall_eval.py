"""Recall quality: recall@5 and MRR for keyword-only, semantic-only and fused
ranking, on the sample vault and on a synthetic vault.

    python bench/recall_eval.py                      # sample + synthetic (2,000 beliefs)
    python bench/recall_eval.py --beliefs 10000 --observations 50000
    python bench/recall_eval.py --grid               # also sweep RRF k and the confidence weight
    python bench/recall_eval.py --json out.json

The queries are phrased as an assistant would ask at the start of a task
("I'm about to …, what should I know?"), each labelled with the belief ids
that should come back:

- sample vault (`vault/`): SAMPLE_QUERIES below, written against its 25 beliefs;
- synthetic vault (bench/synth.py): CLAIM_QUERIES target one claim of a
  topic — relevant are the active beliefs whose title starts with that claim
  (every qualifier and scope of it) — and TOPIC queries (synth's own labels)
  take every active belief of the topic as relevant.

recall@5 = |relevant ∩ top 5| / min(5, |relevant|); MRR = mean of 1 / rank of
the first relevant result (0 when none is in the top 20). Every mode uses the
same filters and the same confidence weighting; only the rankers fused differ.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

MODES = ("keyword", "semantic", "fused")
TODAY = date(2026, 11, 30)

# (query, relevant ids) — the sample vault in vault/.
SAMPLE_QUERIES = [
    ("I'm about to commit this change; what format should the commit message use?", ["conventional-commits"]),
    ("Before I open a pull request with these 40 files, how does the user like changes split up?",
     ["small-pull-requests"]),
    ("I'm going to fix a bug in billing; should I write a test before touching the code?",
     ["writes-failing-test-first"]),
    ("Setting up tests for the repository layer in billing-service: mocks or a real database?",
     ["tests-against-real-postgres"]),
    ("Writing a query for the ledger: use the ORM or plain SQL?", ["sql-over-orm"]),
    ("I need to return an error from this Go function; how should it be handled?", ["wraps-go-errors"]),
    ("Adding a retry around the payment provider call; anything to watch out for?",
     ["retry-without-idempotency-key", "idempotency-key-table"]),
    ("Where do we store idempotency keys for payment requests?", ["idempotency-key-table"]),
    ("How long should my answers be when the user asks a quick coding question?", ["terse-answers"]),
    ("The user asked for a big refactor of the invoicing module; should I just start editing?",
     ["plans-before-large-changes"]),
    ("Choosing between a new message broker and something we already run; what does the user prefer?",
     ["values-boring-technology"]),
    ("I'm naming variables for amounts of money in this function; any conventions?", ["explicit-long-names"]),
    ("Should I write this clever one-liner or spell it out?", ["readability-over-cleverness",
                                                              "explainable-to-juniors"]),
    ("Writing review comments on a teammate's PR; how direct should I be?", ["direct-review-comments"]),
    ("The user wants to understand this fix; should I explain the mechanism or just patch it?",
     ["asks-why-before-how"]),
    ("Production is down and the user is debugging the outage; how do they feel about this kind of work?",
     ["enjoys-incident-debugging"]),
    ("Should I propose building the React dashboard for them?", ["avoids-frontend-work"]),
    ("What does the user work on and which team are they in?", ["backend-engineer-payments"]),
    ("Where is their career heading; are they aiming for a promotion?", ["wants-staff-engineer-path"]),
    ("When is a good time to ask them for a code review during the day?", ["deep-work-mornings"]),
    ("The ledger sync job runs nightly from cron; is that still the plan?", ["ledger-sync-queue-consumer"]),
    ("New repository: how should people run the tests and the linter?", ["makefile-entrypoint"]),
    ("Who is the code written for; how simple should the explanation be for newcomers?",
     ["explainable-to-juniors"]),
]

# (topic, claim, query): relevant = active beliefs whose title starts with the claim.
CLAIM_QUERIES = [
    ("testing", "writes the failing test first", "I'm fixing a bug now; do they want a red test before the fix?"),
    ("testing", "deletes flaky tests rather than retrying them", "One test fails intermittently in CI; should I add a retry to it?"),
    ("code-review", "asks for small pull requests", "This feature touches 40 files; should I open one big PR?"),
    ("code-review", "wants screenshots for any UI change", "I'm changing the settings page layout; what should the PR description include?"),
    ("naming", "puts units in variable names", "I'm adding a timeout variable in milliseconds; how should I name it?"),
    ("naming", "names booleans as questions", "What should I call this true/false flag for whether the user is active?"),
    ("deadlines", "cuts scope rather than quality when a deadline slips", "We're behind schedule for Friday; drop features or skip tests?"),
    ("deadlines", "negotiates deadlines early", "The product manager just set a launch date that looks too tight; how would they react?"),
    ("documentation", "writes the README before the code", "Starting a new service from scratch; where would they begin?"),
    ("documentation", "keeps architecture decisions in ADRs", "We just chose Kafka over RabbitMQ; where should that decision be recorded?"),
    ("git", "writes commit messages in the imperative", "What tense and mood should my commit message use?"),
    ("git", "never force-pushes shared branches", "My push to the shared release branch was rejected; can I force it?"),
    ("debugging", "reproduces a bug before fixing it", "A customer reported wrong totals; should I patch the calculation right away?"),
    ("debugging", "checks recent deploys first when something breaks", "Errors spiked ten minutes ago; where do I look first?"),
    ("refactoring", "avoids big-bang rewrites", "This module is a mess; should I rewrite it from scratch this week?"),
    ("refactoring", "separates renames from logic changes", "I want to rename a class and fix a bug in it; one commit or two?"),
    ("error-handling", "never swallows exceptions silently", "Is it fine to catch this exception and just pass?"),
    ("error-handling", "fails fast on invalid input", "The function gets a negative quantity; clamp it or raise?"),
    ("logging", "keeps secrets out of logs", "Should I log the full request including the auth header for debugging?"),
    ("logging", "uses structured logging with key-value fields", "How should log lines be formatted in the new worker?"),
    ("performance", "measures before optimising", "This endpoint feels slow; should I start rewriting the loop in C?"),
    ("performance", "sets latency budgets for endpoints", "How fast should the new checkout endpoint respond?"),
    ("security", "keeps secrets in a vault rather than environment files", "Where should I put the database password for the new service?"),
    ("security", "threat-models new endpoints", "We're exposing a new public endpoint for uploads; what should happen before launch?"),
    ("dependencies", "prefers the standard library over new dependencies", "Should I add a package to parse dates or use the built-in module?"),
    ("dependencies", "checks the licence of every new package", "I found a neat library on GitHub; anything to check before adding it?"),
    ("ci", "keeps the CI pipeline under ten minutes", "The build now takes twenty-five minutes; is that acceptable?"),
    ("ci", "treats a red main branch as the top priority", "Main is failing but I have a feature to finish; what comes first?"),
    ("deployment", "never deploys on Fridays", "Can I ship this release on Friday afternoon?"),
    ("deployment", "uses canary releases for risky changes", "How should we roll out the new pricing engine, which is risky?"),
    ("databases", "adds an index before a query ships", "I wrote a new query filtering orders by customer; anything before merging?"),
    ("databases", "uses transactions for every multi-row write", "I'm updating rows in three tables at once; how should the writes be done?"),
    ("api-design", "versions public APIs from day one", "We're launching a public API; should the URLs include a version?"),
    ("api-design", "paginates every list endpoint", "The endpoint returns all invoices; is a plain array fine?"),
    ("typing", "adds type hints to every public function", "Should I annotate the signatures of these new Python functions?"),
    ("typing", "models states with enums rather than strings", "The order status is stored as free text; how would they model it?"),
    ("concurrency", "adds timeouts to every network call", "I'm calling an external HTTP service; what about hanging requests?"),
    ("concurrency", "avoids shared mutable state", "Several goroutines update the same map; how would they structure this?"),
    ("architecture", "prefers a modular monolith over microservices", "Should the new billing feature be its own microservice?"),
    ("architecture", "writes a design doc for anything over a week", "This project will take about three weeks; should I just start coding?"),
    ("meetings", "declines meetings without an agenda", "Someone sent an invite with no description; would they accept it?"),
    ("meetings", "prefers written updates over status meetings", "Should I schedule a weekly status call for the project?"),
    ("communication", "wants terse answers that lead with code", "How long and in what shape should my answer be?"),
    ("communication", "wants options with trade-offs", "They asked which queue to use; give one answer or several?"),
    ("planning", "breaks work into tasks under a day", "How should I split this epic into tickets?"),
    ("planning", "writes acceptance criteria first", "Before implementing the export feature, what should be written down?"),
    ("estimation", "estimates in ranges rather than points", "They asked how long the migration will take; give one number?"),
    ("estimation", "refuses to estimate without a spike", "They want an estimate for an integration with an unknown vendor API."),
    ("on-call", "writes a handover note at the end of each rotation", "My on-call week ends tomorrow; anything expected before I hand off?"),
    ("on-call", "treats alert fatigue as a bug", "The pager goes off ten times a night for nothing; what would they do?"),
    ("mentoring", "pairs with junior engineers on their first tickets", "A new junior joined the team; how do they usually help them start?"),
    ("mentoring", "praises in public and corrects in private", "A teammate made a mistake in a shared channel; how would they handle it?"),
    ("pair-programming", "swaps driver every twenty-five minutes", "We're pairing this afternoon; how often do we switch keyboards?"),
    ("pair-programming", "pairs on production incidents", "There's an outage; work alone or together?"),
    ("learning", "reads the source code of libraries they depend on", "The library docs are unclear; how would they find out how it works?"),
    ("learning", "learns a new language by rewriting a small tool in it", "They want to pick up Rust; how would they go about it?"),
    ("focus", "turns off chat notifications while coding", "Should I ping them on Slack while they're programming?"),
    ("focus", "blocks mornings for deep work", "When can I book time in their calendar?"),
    ("tooling", "automates any task done twice", "I've run the same release steps by hand twice now; what next?"),
    ("tooling", "gives every repository a Makefile entry point", "How should a new repository expose its common commands?"),
    ("code-style", "prefers early returns over nested ifs", "This function has four levels of nested conditionals; how to restructure?"),
    ("code-style", "lets the formatter decide all formatting questions", "Tabs or spaces, and where do the braces go?"),
    ("comments", "deletes commented-out code", "There's a block of old code commented out; keep it just in case?"),
    ("comments", "comments why rather than what", "What should the comments in this tricky function explain?"),
    ("configuration", "validates configuration at startup", "The service crashes hours later when a setting is missing; how to prevent that?"),
    ("configuration", "separates secrets from plain configuration", "Can the API key go in the same YAML file as the timeouts?"),
    ("observability", "defines service level objectives for every service", "What reliability target should the new service have?"),
    ("observability", "alerts on symptoms rather than causes", "Should we alert when CPU goes above 80 percent?"),
    ("migrations", "writes a down migration for every schema change", "I'm adding a column; is the up migration enough?"),
    ("migrations", "backfills in batches rather than one transaction", "I need to fill a new column for 50 million rows; one UPDATE?"),
    ("feature-flags", "removes flags within a month of full rollout", "The new checkout has been on for everyone since spring; keep the flag?"),
    ("feature-flags", "ships unfinished work behind feature flags", "The feature is half done but I want to merge; how?"),
    ("caching", "sets an expiry on every cache entry", "I'm caching exchange rates; how long should entries live?"),
    ("caching", "caches only after measuring a hot path", "Should I add Redis in front of this query just in case?"),
    ("queues", "makes every queue consumer idempotent", "The worker might receive the same message twice; does that matter?"),
    ("queues", "sends failed messages to a dead-letter queue", "What happens to messages the consumer cannot process?"),
    ("feedback", "gives feedback within a day", "I noticed an issue in a colleague's demo last week; when should I tell them?"),
    ("feedback", "prefers direct feedback over hints", "Should I hint that the design has a problem or say it plainly?"),
    ("ai-assistants", "asks the assistant for a plan before edits", "They asked me to change the auth flow; should I start editing files?"),
    ("ai-assistants", "stops the assistant when it edits unrelated files", "While fixing the bug I noticed a typo in another module; fix it too?"),
]


def rank_metrics(ranked: list[str], relevant: set[str], k: int = 5) -> tuple[float, float]:
    top = ranked[:k]
    rec = len(set(top) & relevant) / min(k, len(relevant)) if relevant else 0.0
    rr = next((1.0 / (i + 1) for i, x in enumerate(ranked) if x in relevant), 0.0)
    return rec, rr


def per_query(recaller, queries: list[tuple[str, set[str]]], mode: str, *, k: int | None = None,
              conf_weight: float | None = None) -> list[tuple[float, float]]:
    """(recall@5, reciprocal rank) of each query; k and conf_weight default to
    the vault's configuration."""
    return [rank_metrics([h.id for h in recaller.search(q, limit=20, mode=mode, with_text=False, rrf_k=k,
                                                        conf_weight=conf_weight)], rel)
            for q, rel in queries]


def summarise(pq: list[tuple[float, float]]) -> dict:
    return {"recall@5": sum(a for a, _ in pq) / len(pq), "mrr": sum(b for _, b in pq) / len(pq),
            "queries": len(pq)}


def evaluate(recaller, queries: list[tuple[str, set[str]]], *, k: int | None = None,
             conf_weight: float | None = None) -> dict:
    """Metrics per mode."""
    return {mode: summarise(per_query(recaller, queries, mode, k=k, conf_weight=conf_weight)) for mode in MODES}


def sample_set(root: Path) -> list[tuple[str, set[str]]]:
    ids = {p.stem for p in (root / "beliefs").glob("*.md")}
    for _, rel in SAMPLE_QUERIES:
        missing = set(rel) - ids
        assert not missing, f"sample query labels unknown beliefs: {missing}"
    return [(q, set(rel)) for q, rel in SAMPLE_QUERIES]


def synthetic_sets(root: Path, labels: dict) -> tuple[list, list]:
    """(claim queries, topic queries) with their relevant active belief ids."""
    from epimem.core.notes import parse_belief

    titles: dict[str, str] = {}
    for p in (root / "beliefs").glob("*.md"):
        b = parse_belief(p.read_text(encoding="utf-8"), p.stem)
        if b.status == "active":
            titles[b.id] = b.title.lower()
    claims = []
    for _topic, claim, q in CLAIM_QUERIES:
        rel = {i for i, t in titles.items() if t.startswith(claim.lower())}
        if rel:
            claims.append((q, rel))
    topics = [(t["query"], set(t["ids"])) for t in labels["topics"].values() if t["ids"]]
    return claims, topics


def fmt(name: str, res: dict) -> str:
    cells = " | ".join(f"{res[m]['recall@5']:.3f} / {res[m]['mrr']:.3f}" for m in MODES)
    return f"| {name} ({res['fused']['queries']} queries) | {cells} |"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--beliefs", type=int, default=2000)
    ap.add_argument("--observations", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--grid", action="store_true", help="sweep RRF k and the confidence weight")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--keep", help="build the synthetic vault here and keep it")
    args = ap.parse_args(argv)

    import synth

    from epimem.recall import Recaller

    tmp = Path(tempfile.mkdtemp(prefix="epimem-eval-"))
    results: dict = {}
    try:
        sample = tmp / "sample"
        shutil.copytree(HERE.parent / "vault", sample, ignore=shutil.ignore_patterns(".epimem"))
        r_sample = Recaller(sample, today=TODAY)
        sq = sample_set(sample)

        syn = Path(args.keep) if args.keep else tmp / "synthetic"
        labels_path = syn.parent / (syn.name + ".labels.json")
        if not (syn / "beliefs").is_dir():
            synth.make_vault(syn, n_beliefs=args.beliefs, n_observations=args.observations, seed=args.seed,
                             labels_path=labels_path, commit=False)
        labels = json.loads(labels_path.read_text())
        t = time.perf_counter()
        r_syn = Recaller(syn, today=TODAY)
        r_syn.sync()
        build = time.perf_counter() - t
        cq, tq = synthetic_sets(syn, labels)

        sets = {"sample vault": (r_sample, sq),
                f"synthetic {args.beliefs} beliefs, claim queries": (r_syn, cq),
                f"synthetic {args.beliefs} beliefs, topic queries": (r_syn, tq)}
        print(f"(synthetic vault indexed in {build:.1f}s)\n")
        print("| query set | keyword recall@5 / MRR | semantic recall@5 / MRR | fused recall@5 / MRR |")
        print("|---|---|---|---|")
        for name, (rc, qs) in sets.items():
            res = evaluate(rc, qs)
            results[name] = res
            print(fmt(name, res))
        if args.grid:
            print("\nGrid (fused recall@5 / MRR, claim queries + sample):")
            grid = {}
            for k in (10, 20, 60):
                for w in (0.0, 0.05, 0.1, 0.2, 0.3):
                    a = evaluate(r_syn, cq, k=k, conf_weight=w)["fused"]
                    b = evaluate(r_sample, sq, k=k, conf_weight=w)["fused"]
                    grid[f"k={k},w={w}"] = {"claims": a, "sample": b}
                    print(f"  k={k:<3} w={w:<4} claims {a['recall@5']:.3f}/{a['mrr']:.3f}   "
                          f"sample {b['recall@5']:.3f}/{b['mrr']:.3f}")
            results["grid"] = grid
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print()
    for name, r in results.items():
        if name == "grid":
            continue
        for metric in ("recall@5", "mrr"):
            best = max(r["keyword"][metric], r["semantic"][metric])
            f = r["fused"][metric]
            verdict = "beats both" if f > best + 1e-9 else ("ties the best" if abs(f - best) < 1e-9 else "LOSES")
            print(f"{name}: fused {metric} {f:.3f} vs best single {best:.3f}: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
