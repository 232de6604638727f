"""Issue 25, fifth round: is the adjacent-pair bonus of BM25 a real gain on LoCoMo's development
half, or noise? Paired tests on per-question R@5, held-out by leave-one-conversation-out.

    python bench/recall_public_pairs.py                    # WordLlama
    python bench/recall_public_pairs.py --embedder minilm

The items, vectors, lists and LOO rule are those of bench/recall_public_tried.py (the real index,
the semantic ranker on the query without common words, RRF over k × keyword weight chosen on the
other four conversations under the per-category rule). Rows compared, question by question:

- held-out: the baseline's LOO ((k, w) chosen in each fold, no bonus) against the pair bonus's
  nested LOO (β ∈ {0, 0.25, 0.5, 1} chosen in each fold together with (k, w));
- fixed point: the shipped k and weight, no bonus against β = PAIR_BETA, on all five.

For each: the mean difference of per-question R@5 (×100), a 95 % paired bootstrap interval
(questions resampled with replacement), the two-sided p-value of a paired randomisation test (the
sign of each question's difference flipped at random), how many questions move either way, and
the difference per category. The bonus is the tried harness's (`BM25.scores(…, pair_beta)`,
the one copy of its formula); a slow test holds that harness to the shipped keyword ranker at β 0.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import recall_public as rp  # noqa: E402
import recall_public_tried as tr  # noqa: E402

BETAS = (0.0, 0.25, 0.5, 1.0)
RESAMPLES = 20000
PAIR_BETA = 1.0   # the β the fixed-point rows test (round 4's best on all five)


def kw_pairs(beta):
    """The keyword list with the pair bonus at β (0: plain BM25)."""
    def fn(c, q):
        from epimem.core.text import tokenize

        return tr.bm25(c).top(tokenize(q), pair_beta=beta)
    return fn


def runs(convs, betas=BETAS):
    """Per β: the per-question rows of each ranker alone and of every fused (k, w)."""
    out = {}
    for beta in betas:
        kwf = kw_pairs(beta)
        lists = {}
        for ci, c in enumerate(convs):
            for qi, q in enumerate(c["questions"]):
                lists[(ci, qi)] = (kwf(c, q["question"]), tr.sem_plain(c, q["question"]))

        alone = (_rows(convs, lists, lambda kw, sem: kw[:10]), _rows(convs, lists, lambda kw, sem: sem[:10]))
        fused = {(k, w): _rows(convs, lists, lambda kw, sem, k=k, w=w: tr.rrf([kw, sem], k, (w, 1.0)))
                 for k, w in itertools.product(tr.GRID_K, tr.GRID_W)}
        out[beta] = (alone, fused)
    return out


def _rows(convs, lists, rank):
    """Per conversation, per question: (category, scores) of `rank(keyword list, semantic list)`."""
    return [[(q["category"], rp.scores([c["keys"][r] for r in rank(*lists[(ci, qi)])], q, c["evidence"]))
             for qi, q in enumerate(c["questions"])] for ci, c in enumerate(convs)]


def loo(convs, got, betas):
    """Leave one conversation out over (β, k, w) for β in `betas`: the point best on the other
    four among those meeting the per-category rule there (as tr.judge), measured on the fifth.
    Returns the held-out rows (per conversation, per question) and the points chosen."""
    def part(rows, keep):
        return rp.summary([r for j, r in enumerate(rows) if keep(j)])

    held, chosen = [], []
    for i in range(len(convs)):
        def train(j, i=i):
            return j != i
        grid = [(b, k, w) for b in betas for (k, w) in got[b][1]]
        alone = {b: [part(a, train) for a in got[b][0]] for b in betas}
        best = max(grid, key=lambda g: (rp.never_below(part(got[g[0]][1][g[1:]], train), alone[g[0]]),
                                        round(part(got[g[0]][1][g[1:]], train)["all"]["R@5"], 6), -g[1]))
        held.append(got[best[0]][1][best[1:]][i])
        chosen.append(best)
    return held, chosen


def flat(rows):
    return np.array([s["R@5"] for conv in rows for _, s in conv]), np.array([cat for conv in rows for cat, _ in conv])


def paired(a_rows, b_rows, seed=25):
    """b − a on per-question R@5 (×100): mean, 95 % bootstrap interval, randomisation p."""
    a, cat = flat(a_rows)
    b, _ = flat(b_rows)
    d = 100 * (b - a)
    rng = np.random.default_rng(seed)
    n = len(d)
    boot = d[rng.integers(0, n, size=(RESAMPLES, n))].mean(1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    signs = rng.choice((-1.0, 1.0), size=(RESAMPLES, n))
    null = (signs * d).mean(1)
    p = (1 + np.sum(np.abs(null) >= abs(d.mean()) - 1e-12)) / (RESAMPLES + 1)
    per_cat = {c: (float(d[cat == c].mean()), int((d[cat == c] > 0).sum()), int((d[cat == c] < 0).sum()))
               for c in sorted(set(cat.tolist()))}
    return {"a": 100 * a.mean(), "b": 100 * b.mean(), "diff": float(d.mean()), "ci": (float(lo), float(hi)),
            "p": float(p), "better": int((d > 0).sum()), "worse": int((d < 0).sum()), "n": n, "per_cat": per_cat}


def conv_diffs(a_rows, b_rows):
    return [100 * (np.mean([s["R@5"] for _, s in b]) - np.mean([s["R@5"] for _, s in a]))
            for a, b in zip(a_rows, b_rows)]


def conv_sign_p(diffs):
    """Two-sided exact sign-flip p of the mean of per-conversation differences (the unit that
    is really independent; five of them cannot reach below 1/16)."""
    d = np.asarray(diffs)
    flips = np.array(list(itertools.product((-1.0, 1.0), repeat=len(d))))
    return float(np.mean(np.abs((flips * d).mean(1)) >= abs(d.mean()) - 1e-12))


def show(name, r):
    cats = "; ".join(f"{c}: {m:+.1f} ({up}↑ {dn}↓)" for c, (m, up, dn) in r["per_cat"].items())
    print(f"| {name} | {r['a']:.1f} | {r['b']:.1f} | {r['diff']:+.2f} | [{r['ci'][0]:+.2f}, {r['ci'][1]:+.2f}] | "
          f"{r['p']:.3f} | {r['better']} / {r['worse']} |\n    per category: {cats}", flush=True)


def cats(s):
    return " / ".join(f"{s[c]['R@5']:.1f}" for c in (1, 2, 3, 4, 5, "all"))


def main(argv=None) -> int:

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--embedder", default=None)
    args = ap.parse_args(argv)
    rp.use_embedder(args.embedder)
    data = rp.load(args.data or rp.default_data())
    t0 = time.perf_counter()
    convs = tr.collect(data, args.embedder)
    betas = tuple(sorted(set(BETAS) | {PAIR_BETA}))
    got = runs(convs, betas)
    now = rp.settings_now()
    at = (now["k"], now["w"])
    print(f"embedder {args.embedder or 'wordllama'}; shipped k {at[0]}, weight {at[1]:g}; "
          f"pair β {PAIR_BETA:g}\n")
    print("| β | keyword alone (1 / 2 / 3 / 4 / 5 / all) | fused at the shipped k, w | rule |")
    print("|---|---|---|---|")
    for b in betas:
        kw, sem = (rp.summary(a) for a in got[b][0])
        f = rp.summary(got[b][1][at])
        print(f"| {b:g} | {cats(kw)} | {cats(f)} | {'holds' if rp.never_below(f, [kw, sem]) else 'broken'} |")
    print(f"semantic alone: {cats(rp.summary(got[0.0][0][1]))}\n")

    base_held, base_chosen = loo(convs, got, (0.0,))
    nest_held, nest_chosen = loo(convs, got, tuple(b for b in BETAS))
    fix_held, fix_chosen = loo(convs, got, (PAIR_BETA,))
    print("| comparison (per-question R@5 ×100) | baseline | pair bonus | difference | 95 % bootstrap | "
          "randomisation p | questions better / worse |")
    print("|---|---|---|---|---|---|---|")
    show("held-out: baseline LOO vs β chosen inside the folds", paired(base_held, nest_held))
    show(f"held-out: baseline LOO vs β {PAIR_BETA:g} fixed, (k, w) in the folds", paired(base_held, fix_held))
    show(f"all five at the shipped k, w: β 0 vs β {PAIR_BETA:g}", paired(got[0.0][1][at], got[PAIR_BETA][1][at]))
    w1 = (at[0], 1.0)
    show(f"all five at k {w1[0]}, weight 1 (the folds' choice): β 0 vs β {PAIR_BETA:g}",
         paired(got[0.0][1][w1], got[PAIR_BETA][1][w1]))
    show(f"all five: β 0 at the shipped k, w vs β 0 at k {w1[0]}, weight 1 (the weight move alone)",
         paired(got[0.0][1][at], got[0.0][1][w1]))
    show(f"all five: shipped (β 0, k {at[0]}, w {at[1]:g}) vs what the folds pick (β {PAIR_BETA:g}, k {w1[0]}, w 1)",
         paired(got[0.0][1][at], got[PAIR_BETA][1][w1]))
    f1 = rp.summary(got[PAIR_BETA][1][w1])
    ok = rp.never_below(f1, [rp.summary(a) for a in got[PAIR_BETA][0]])
    print(f"    β {PAIR_BETA:g}, k {w1[0]}, w 1 on all five: {cats(f1)} (rule {'holds' if ok else 'broken'})")
    print(f"\nchosen per fold — baseline: {base_chosen}\n  nested: {nest_chosen}\n  β {PAIR_BETA:g}: {fix_chosen}")
    cd = conv_diffs(base_held, nest_held)
    print("per-conversation held-out differences (nested − baseline): " + ", ".join(f"{x:+.1f}" for x in cd)
          + f"; exact sign-flip p over the {len(cd)} conversations: {conv_sign_p(cd):.3f}")
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
