"""How well cosine similarity tells a near-duplicate belief from a contradiction (rule 17).

Each pair is (existing belief, new title + statement). Paraphrases should be caught
as "similar"; contradictions look alike to an embedding too — which is why rule 17
only lists similar beliefs and never merges. Unrelated pairs set the floor.

    python bench/similar_pairs.py            # the table in docs/recall.md
    python bench/similar_pairs.py --json

Uses the embedder `similar_beliefs` uses (the vault's default), nothing else.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

PARAPHRASES = [
    ("Prefers SQL over an ORM. Writes queries by hand.",
     "Prefers hand-written SQL over an ORM. Avoids ORMs, writes SQL."),
    ("Keeps pull requests small and reviewable. Splits work into small PRs.",
     "Prefers small PRs. Opens small pull requests."),
    ("Wants terse answers. Short replies without preamble.", "Likes short, direct answers. No long explanations."),
    ("Writes a failing test first. Starts from a red test.", "Does test-driven development. Test before code."),
    ("Deep work in the mornings. Does focused work before noon.",
     "Most productive early in the day. Focus time in the morning."),
    ("Uses tabs for indentation.", "Indents with tabs, not spaces."),
    ("Asks why before how. Wants the reason before the plan.",
     "Wants to understand the motivation first. Asks for the why."),
    ("Values boring technology. Picks proven tools.", "Prefers proven, unexciting tools over new ones."),
    ("Plans before large changes. Writes a plan first.", "Makes a plan before big refactors."),
    ("Uses conventional commits. Commit messages follow Conventional Commits.",
     "Writes commit messages in the conventional commits format."),
]
CONTRADICTIONS = [
    ("Prefers SQL over an ORM. Writes queries by hand.", "Prefers an ORM over raw SQL. Avoids writing SQL by hand."),
    ("Keeps pull requests small and reviewable. Splits work into small PRs.",
     "Ships large pull requests. One big PR per feature."),
    ("Wants terse answers. Short replies without preamble.", "Wants long, detailed answers. Thorough explanations."),
    ("Writes a failing test first. Starts from a red test.", "Writes tests after the code, if at all."),
    ("Deep work in the mornings. Does focused work before noon.", "Does focused work late at night."),
    ("Uses tabs for indentation.", "Uses spaces for indentation, never tabs."),
    ("Asks why before how. Wants the reason before the plan.", "Skips the why and goes straight to the how."),
    ("Values boring technology. Picks proven tools.", "Likes trying the newest tools and frameworks."),
    ("Plans before large changes. Writes a plan first.", "Dives into large changes without a plan."),
    ("Uses conventional commits. Commit messages follow Conventional Commits.", "Writes free-form commit messages."),
]
# Neighbours: the same topic, a different claim. Both beliefs belong in the vault.
RELATED = [
    ("Tests against a real Postgres. Integration tests use a real database.", "Mocks the database in unit tests."),
    ("Prefers SQL over an ORM. Writes queries by hand.", "Uses database migrations for every schema change."),
    ("Keeps pull requests small and reviewable.", "Leaves direct review comments."),
    ("Wraps Go errors with context.", "Prefers explicit long names in Go code."),
    ("Deep work in the mornings. Does focused work before noon.", "Takes meetings in the afternoon."),
    ("Uses conventional commits.", "Rebases before merging."),
    ("Writes a failing test first.", "Runs the test suite before every push."),
    ("Wants terse answers.", "Asks for code examples in explanations."),
]
UNRELATED = [
    ("Prefers SQL over an ORM. Writes queries by hand.", "Deep work in the mornings. Focus before noon."),
    ("Uses tabs for indentation.", "Wants a staff engineer path."),
    ("Wants terse answers. Short replies without preamble.", "Wraps Go errors with context."),
    ("Values boring technology. Picks proven tools.", "Enjoys debugging incidents."),
    ("Keeps pull requests small and reviewable.", "Avoids frontend work."),
]


def measure(embedder: str | None = None) -> dict:
    import numpy as np

    from epimem.recall.embed import get_embedder

    emb = get_embedder(embedder)
    out = {"embedder": emb.name, "groups": {}}
    t0 = time.perf_counter()
    for name, pairs in (("paraphrase", PARAPHRASES), ("contradiction", CONTRADICTIONS), ("related", RELATED),
                        ("unrelated", UNRELATED)):
        a = emb.embed([p[0] for p in pairs])
        b = emb.embed([p[1] for p in pairs])
        sims = np.sum(a * b, axis=1)
        out["groups"][name] = [round(float(s), 3) for s in sims]
    out["seconds"] = round(time.perf_counter() - t0, 3)
    para, contra, rel, unrel = (out["groups"][k] for k in ("paraphrase", "contradiction", "related", "unrelated"))
    rows = []
    for th in (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8):
        rows.append({"threshold": th,
                     "paraphrases_caught": sum(s >= th for s in para),
                     "contradictions_listed": sum(s >= th for s in contra),
                     "related_listed": sum(s >= th for s in rel),
                     "unrelated_listed": sum(s >= th for s in unrel)})
    out["thresholds"] = rows
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--embedder", default=None)
    args = ap.parse_args(argv)
    r = measure(args.embedder)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(f"embedder {r['embedder']}; {sum(len(v) for v in r['groups'].values())} pairs in {r['seconds']} s")
    for k, v in r["groups"].items():
        print(f"{k:<14} min {min(v):.3f}  median {sorted(v)[len(v)//2]:.3f}  max {max(v):.3f}   {v}")
    print("threshold  paraphrases caught  contradictions listed  related listed  unrelated listed")
    for row in r["thresholds"]:
        print(f"{row['threshold']:<10} {row['paraphrases_caught']:>2}/{len(PARAPHRASES):<17} "
              f"{row['contradictions_listed']:>2}/{len(CONTRADICTIONS):<20} "
              f"{row['related_listed']:>2}/{len(RELATED):<13} {row['unrelated_listed']}/{len(UNRELATED)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
