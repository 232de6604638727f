"""How well cosine similarity tells a near-duplicate belief from a contradiction (rule 17).

Each pair is (existing belief, new title + statement). Paraphrases should be caught
as "similar"; contradictions look alike to an embedding too — which is why rule 17
only lists similar beliefs and never merges. Unrelated pairs set the floor.

    python bench/similar_pairs.py            # the table in docs/recall.md
    python bench/similar_pairs.py --json
    python bench/similar_pairs.py --locomo   # rule 17 on public pairs nobody here wrote

`--locomo` reads the labelled pairs of bench/data/similar_pairs_public_refs.json from LoCoMo's
development half (../shared/data/locomo-dev, or --data): near-duplicates (an event of a
session and the observation stating the same fact) and distinct facts (two observations LoCoMo
lists apart). The speaker's name is taken out (a belief never names its person), each text is
written out as a claim (`core.ids.claim_key`), and the cosine is rule 17's test.

Uses the embedder `similar_beliefs` uses (the vault's default), nothing else.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

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


LABELLED = Path(__file__).resolve().parent / "data" / "similar_pairs_public_refs.json"
LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev" / "locomo-dev.json"


def _without(name: str, text: str) -> str:
    import re

    return re.sub(rf"\b{re.escape(name)}('s)?\b", "", text).strip(" ,.")


def locomo_pairs(data: Path = LOCOMO, labelled: Path = LABELLED) -> dict[str, list[tuple[str, str]]]:
    """The labelled pairs' texts, read from the data set (never copied into the project)."""
    convs = json.loads(Path(data).read_text(encoding="utf-8"))
    refs = json.loads(Path(labelled).read_text(encoding="utf-8"))
    out: dict[str, list[tuple[str, str]]] = {}
    for label in ("near_duplicate", "distinct"):
        pairs = []
        for conv, session, speaker, event, obs_a, obs_b in refs[label]:
            c = convs[conv]
            obs = c["observation"][f"session_{session}_observation"][speaker]
            a = (c["event_summary"][f"events_session_{session}"][speaker][event] if event is not None
                 else obs[obs_b][0])
            pairs.append((_without(speaker, a), _without(speaker, obs[obs_a][0])))
        out[label] = pairs
    return out


def measure_locomo(embedder: str | None = None, data: Path = LOCOMO) -> dict:
    import numpy as np

    from epimem.core.ids import claim_key
    from epimem.core.params import DEFAULTS
    from epimem.recall.embed import get_embedder

    emb = get_embedder(embedder)
    groups = locomo_pairs(data)
    out: dict = {"embedder": emb.name, "threshold": DEFAULTS.similar_threshold, "claims": {}, "raw": {}}
    for label, pairs in groups.items():
        for key, norm in (("claims", claim_key), ("raw", lambda t: t)):
            a = emb.embed([norm(p[0]) for p in pairs])
            b = emb.embed([norm(p[1]) for p in pairs])
            out[key][label] = [round(float(s), 3) for s in np.sum(a * b, axis=1)]
    rows = []
    for th in (0.35, 0.4, 0.45, 0.5, 0.55, 0.6):
        row = {"threshold": th}
        for key in ("claims", "raw"):
            nd, ds = out[key]["near_duplicate"], out[key]["distinct"]
            row[key] = {"near_duplicates_caught": sum(s >= th for s in nd), "distinct_listed": sum(s >= th for s in ds)}
        rows.append(row)
    out["thresholds"] = rows
    out["sizes"] = {k: len(v) for k, v in groups.items()}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--embedder", default=None)
    ap.add_argument("--locomo", action="store_true", help="rule 17 on LoCoMo's labelled pairs")
    ap.add_argument("--data", type=Path, default=LOCOMO)
    args = ap.parse_args(argv)
    if args.locomo:
        r = measure_locomo(args.embedder, args.data)
        if args.json:
            print(json.dumps(r, indent=2))
            return 0
        n, d = r["sizes"]["near_duplicate"], r["sizes"]["distinct"]
        print(f"embedder {r['embedder']}; {n} near-duplicate and {d} distinct pairs (LoCoMo dev); "
              f"default threshold {r['threshold']}")
        print("threshold  claims: near-dups caught  distinct listed   raw: near-dups caught  distinct listed")
        for row in r["thresholds"]:
            c, w = row["claims"], row["raw"]
            print(f"{row['threshold']:<10} {c['near_duplicates_caught']:>3}/{n:<20} {c['distinct_listed']:>3}/{d:<14} "
                  f"{w['near_duplicates_caught']:>3}/{n:<18} {w['distinct_listed']:>3}/{d}")
        return 0
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
