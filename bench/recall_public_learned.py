"""Issue 25, fourth round: a learned fusion, two other keyword rankers and fusion weights by
question type, each judged by leave-one-conversation-out on LoCoMo's development half.
Nothing here ships in recall; the rows are written up in docs/recall-rounds.md ("What else was
tried", "Fourth round", "Ninth round").

    python bench/recall_public_learned.py                  # WordLlama, a few minutes
    python bench/recall_public_learned.py --only learned   # one family of rows
    python bench/recall_public_learned.py --only pairwise  # ninth round: about a minute

The items, vectors and lists come from bench/recall_public_tried.py's harness (the real index,
its BM25 at the shipped parameters, the semantic ranker on the query without common words), so
the baseline row is that harness's baseline.

- learned: a logistic model over cheap per-candidate features (each list's 1/(2 + rank), the
  BM25 score over the list's best, the cosine less the list's best, query-term coverage, the
  item's speaker tag named in the question, log length), trained on four conversations'
  candidates (label: the item carries one of the question's evidence ids) and ranking the
  fifth's; pooled over the five folds.
- ql: query likelihood with Dirichlet smoothing (μ chosen per row) as the keyword ranker,
  fused with the shipped RRF; LOO over the (k, weight) grid as every row of the tried harness.
- bigram: BM25 plus β × (the two terms' IDFs) for each pair of adjacent query terms found
  adjacent in the item.
- nested: the pair bonus with β ∈ {0, 0.25, 0.5, 1} chosen inside the folds with (k, w).
- pairwise (ninth round): the same features under a pairwise (linear RankNet: every evidence
  candidate against every non-evidence one of the shipped fused top 30, each question counting
  once) and a listwise objective (linear ListNet: softmax cross-entropy over the fused top 30
  and the question's deeper evidence candidates), fitted by Newton's method in numpy; L2 chosen
  by an inner leave-one-out inside the four training conversations; each paired, question by
  question, against the baseline's held-out procedure (recall_public_pairs' tests).
- qtype: the RRF (k, weight) chosen per question type (when / how many·long·often / who /
  what·which / where / why·how / other) on four conversations, applied to the fifth.
"""

from __future__ import annotations

import argparse
import itertools
import math
import re
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import recall_public as rp  # noqa: E402
import recall_public_tried as tr  # noqa: E402

DEPTH = 100


# --- candidates with their scores ---------------------------------------------------------------

def bm25_scored(b: tr.BM25, terms) -> list[tuple[int, float]]:
    return sorted(bm25_scored_all(b, terms), key=lambda p: (-p[1], p[0]))[:DEPTH]


def sem_scored(c, q) -> list[tuple[int, float]]:
    sims = c["mat"] @ tr.qvec(c, tr.semq(c, q))
    order = np.argsort(-sims, kind="stable")[:DEPTH]
    return [(int(i), float(sims[i])) for i in order]


def speaker_tokens(c, row) -> set[str]:
    from epimem.core.text import tokenize

    key = ("spk", row)
    if key not in c:
        c[key] = set(tokenize(c["texts"][row].partition("\nTags: ")[2]))
    return c[key]


FEATURES = ("kw 1/(2+rank)", "sem 1/(2+rank)", "bm25/max", "cos-max", "coverage", "speaker named", "log len")


def candidates(c, q) -> tuple[list[int], np.ndarray]:
    """The union of both lists' top 100 and each candidate's features."""
    from epimem.core.text import tokenize

    key = ("cand", q["question"])
    if key in c:
        return c[key]
    qt = set(tokenize(q["question"]))
    kw = bm25_scored(tr.bm25(c), tokenize(q["question"]))
    sem = sem_scored(c, q["question"])
    kr = {r: i for i, (r, _) in enumerate(kw)}
    sr = {r: i for i, (r, _) in enumerate(sem)}
    ks = dict(kw)
    ss = dict(sem)
    kmax = kw[0][1] if kw else 1.0
    smax = sem[0][1] if sem else 1.0
    rows = list(dict.fromkeys([r for r, _ in kw] + [r for r, _ in sem]))
    x = np.zeros((len(rows), len(FEATURES)), np.float64)
    for j, r in enumerate(rows):
        toks = set(c["toks"][r])
        cos = ss.get(r)
        if cos is None:
            cos = float(c["mat"][r] @ tr.qvec(c, tr.semq(c, q["question"])))
        x[j] = (1 / (2 + kr[r] + 1) if r in kr else 0.0,
                1 / (2 + sr[r] + 1) if r in sr else 0.0,
                ks.get(r, 0.0) / kmax if kmax else 0.0,
                cos - smax,
                len(qt & toks) / len(qt) if qt else 0.0,
                1.0 if speaker_tokens(c, r) & qt else 0.0,
                math.log(1 + len(c["toks"][r])))
    c[key] = (rows, x)
    return rows, x


def label(c, q, rows) -> np.ndarray:
    gold = q["evidence"]
    return np.array([1.0 if c["evidence"].get(c["keys"][r], set()) & gold else 0.0 for r in rows])


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, iters: int = 30,
                 sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Newton's method on the L2-penalised log loss (intercept unpenalised), each row's loss
    times its sample weight (1 when none is given)."""
    X = np.hstack([x, np.ones((len(x), 1))])
    sw = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight, np.float64)
    w = np.zeros(X.shape[1])
    pen = np.full(X.shape[1], l2)
    pen[-1] = 0.0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(X @ w)))
        g = X.T @ (sw * (p - y)) + pen * w
        h = (X * (sw * p * (1 - p))[:, None]).T @ X + np.diag(pen + 1e-9)
        step = np.linalg.solve(h, g)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def standardise(x, mu, sd):
    return (x - mu) / sd


def learned_rows(convs, feats: tuple[int, ...], l2=1.0):
    """Pooled held-out per-query scores of the learned fusion over the given feature columns."""
    held = [None] * len(convs)
    weights = []
    for i in range(len(convs)):
        xs, ys = [], []
        for j, c in enumerate(convs):
            if j == i:
                continue
            for q in c["questions"]:
                rows, x = candidates(c, q)
                xs.append(x[:, feats])
                ys.append(label(c, q, rows))
        X = np.vstack(xs)
        Y = np.concatenate(ys)
        mu, sd = X.mean(0), X.std(0) + 1e-9
        w = fit_logistic(standardise(X, mu, sd), Y, l2)
        weights.append((w, mu, sd))
        c = convs[i]
        out = []
        for q in c["questions"]:
            rows, x = candidates(c, q)
            s = standardise(x[:, feats], mu, sd) @ w[:-1]
            order = sorted(range(len(rows)), key=lambda j: (-s[j], j))[:10]
            out.append((q["category"], rp.scores([c["keys"][rows[j]] for j in order], q, c["evidence"])))
        held[i] = out
    return held, weights


# --- other keyword rankers -------------------------------------------------------------------------

def ql_dirichlet(mu):
    """Query likelihood, Dirichlet-smoothed: Σ_t log(1 + tf / (μ p(t|C))) + |q| log(μ / (dl + μ)),
    over the items holding at least one query term (the rest score below every such item only
    approximately, as in every inverted-index implementation)."""
    def fn(c, q):
        from epimem.core.text import tokenize

        b = tr.bm25(c)
        if "ctf" not in c:
            ctf: Counter = Counter()
            for t in c["toks"]:
                ctf.update(t)
            c["ctf"] = (ctf, sum(ctf.values()))
        ctf, total = c["ctf"]
        terms = [t for t in tokenize(q) if t in ctf]
        sc: dict[int, float] = {}
        for t in dict.fromkeys(terms):
            pc = ctf[t] / total
            for i, f in b.post.get(t, ()):
                sc[i] = sc.get(i, 0.0) + math.log(1 + f / (mu * pc))
        nq = len(dict.fromkeys(terms))
        final = {i: s + nq * math.log(mu / (b.dl[i] + mu)) for i, s in sc.items()}
        return sorted(final, key=lambda i: (-final[i], i))[:DEPTH]
    return fn


def bm25_bigram(beta, window=1):
    """BM25 plus beta × (idf(a) + idf(b)) for each pair of adjacent query terms (a, b) that the
    item holds within `window` positions of each other, in either order. Window 1 is the tried
    harness's pair bonus (`BM25.scores(…, pair_beta)`, the one copy of the formula); wider
    windows check positions here, with the same weight."""
    def fn(c, q):
        from epimem.core.text import tokenize

        b = tr.bm25(c)
        qt = tokenize(q)
        if window == 1:
            return b.top(qt, pair_beta=beta)
        base = dict(bm25_scored_all(b, qt))
        pairs = tr.adjacent_pairs(qt)
        if pairs:
            for i in list(base):
                toks = c["toks"][i]
                pos: dict[str, list[int]] = {}
                for n, t in enumerate(toks):
                    pos.setdefault(t, []).append(n)
                for x, y in pairs:
                    if x in pos and y in pos and any(abs(m - n) <= window for m in pos[x] for n in pos[y]):
                        base[i] += tr.pair_weight(beta, b.idf(x), b.idf(y))
        return sorted(base, key=lambda i: (-base[i], i))[:DEPTH]
    return fn


def bm25_scored_all(b: tr.BM25, terms) -> list[tuple[int, float]]:
    return [(i, s) for i, s in b.scores(terms).items() if s > 0]


def bigram_nested(convs, betas=(0.0, 0.25, 0.5, 1.0)):
    """Leave one conversation out with β chosen inside the folds too: (β, k, w) best on the
    other four under the per-category rule (as tr.judge), measured on the fifth."""
    fused, alone = {}, {}
    for beta in betas:
        kwf = bm25_bigram(beta, 1) if beta else tr.kw_plain
        lists = {}
        for ci, c in enumerate(convs):
            for q in c["questions"]:
                lists[(ci, q["question"])] = (kwf(c, q["question"]), tr.sem_plain(c, q["question"]))
        alone[beta] = (tr.per_query(convs, lambda c, q, lists=lists: lists[(convs.index(c), q["question"])][0][:10]),
                       tr.per_query(convs, lambda c, q, lists=lists: lists[(convs.index(c), q["question"])][1][:10]))
        for k, w in itertools.product(tr.GRID_K, tr.GRID_W):
            fused[(beta, k, w)] = tr.per_query(
                convs,
                lambda c, q, k=k, w=w, lists=lists: tr.rrf(list(lists[(convs.index(c), q["question"])]), k, (w, 1.0)))

    def part(rows, keep):
        return rp.summary([r for j, r in enumerate(rows) if keep(j)])

    acc = total = 0.0
    chosen = []
    for i in range(len(convs)):
        def train(j, i=i):
            return j != i
        best = max(fused, key=lambda g: (rp.never_below(part(fused[g], train), [part(a, train) for a in alone[g[0]]]),
                                         round(part(fused[g], train)["all"]["R@5"], 6), -g[1]))
        held = part(fused[best], lambda j, i=i: j == i)["all"]
        acc += held["R@5"] * held["n"]
        total += held["n"]
        chosen.append(best)
    return acc / total, chosen


# --- fusion by question type -------------------------------------------------------------------------

QTYPES = (("when", re.compile(r"(?i)\bwhen\b|\bwhat (?:year|month|date|day|time)\b")),
          ("how many/long/often", re.compile(r"(?i)\bhow (?:many|much|long|often|old)\b")),
          ("who", re.compile(r"(?i)^\s*who\b|\bwho\b")),
          ("where", re.compile(r"(?i)\bwhere\b")),
          ("why/how", re.compile(r"(?i)\bwhy\b|\bhow\b")),
          ("what/which", re.compile(r"(?i)\bwhat\b|\bwhich\b")))


def qtype(text: str) -> str:
    return next((name for name, rx in QTYPES if rx.search(text)), "other")


def qtype_rows(convs, grid_k=tr.GRID_K, grid_w=tr.GRID_W):
    """For each held-out conversation and question type, the (k, w) best on that type's questions
    in the other four (ties: the shipped point first); measured on the fifth."""
    now = rp.settings_now()
    lists = {}
    for ci, c in enumerate(convs):
        for qi, q in enumerate(c["questions"]):
            lists[(ci, qi)] = (tr.kw_plain(c, q["question"]), tr.sem_plain(c, q["question"]))
    sc = {}
    for k, w in itertools.product(grid_k, grid_w):
        for ci, c in enumerate(convs):
            for qi, q in enumerate(c["questions"]):
                top = tr.rrf(list(lists[(ci, qi)]), k, (w, 1.0))
                sc[(k, w, ci, qi)] = rp.scores([c["keys"][r] for r in top], q, c["evidence"])
    types = {(ci, qi): qtype(q["question"]) for ci, c in enumerate(convs) for qi, q in enumerate(c["questions"])}
    held = []
    chosen = []
    for i in range(len(convs)):
        pick = {}
        for t in set(types.values()):
            keys = [key for key, tt in types.items() if tt == t and key[0] != i]

            def val(g, keys=keys):
                return (round(sum(sc[(g[0], g[1], *key)]["R@5"] for key in keys), 6),
                        g == (now["k"], now["w"]))
            pick[t] = max(itertools.product(grid_k, grid_w), key=val)
        chosen.append(pick)
        held.append([(q["category"], sc[(*pick[types[(i, qi)]], i, qi)]) for qi, q in enumerate(convs[i]["questions"])])
    return held, chosen, Counter(types.values())


# --- pairwise and listwise learned fusion (ninth round) ------------------------------------------

TOP = 30                            # the shipped fused list's top: where the objectives look
L2_GRID = (0.1, 1.0, 10.0, 100.0)   # chosen inside the training folds (an inner LOO), never on the test
FEATURE_SETS = {"ranks only": (0, 1), "ranks + scores": (0, 1, 2, 3), "all seven": tuple(range(7))}


def fused_top(c, q, top=TOP) -> list[int]:
    """The shipped fusion's first `top` rows for the question (RRF at the shipped k and weight)."""
    key = ("fused", q["question"], top)
    if key not in c:
        now = rp.settings_now()
        c[key] = tr.rrf([tr.kw_plain(c, q["question"]), tr.sem_plain(c, q["question"])], now["k"],
                        (now["w"], 1.0), limit=top)
    return c[key]


def ranked_list(c, q, top=TOP) -> tuple[np.ndarray, np.ndarray]:
    """Indices into candidates(c, q)'s rows, and their labels: the shipped fused top `top` in its
    order, then every other candidate that carries evidence (so a deep positive is learnt from
    too). The negatives are only those of the fused top: the objective is about the top of the
    ranking, not the easy negatives deep in either list."""
    key = ("list", q["question"], top)
    if key not in c:
        rows, _ = candidates(c, q)
        y = label(c, q, rows)
        at = {r: j for j, r in enumerate(rows)}
        head = [at[r] for r in fused_top(c, q, top)]
        seen = set(head)
        idx = np.array(head + [j for j in range(len(rows)) if y[j] and j not in seen], dtype=np.int64)
        c[key] = (idx, y[idx])
    return c[key]


def pair_rows(lists) -> tuple[np.ndarray, np.ndarray]:
    """RankNet's pairs: for each list (features, labels), every positive less every negative,
    each pair weighted 1 / (the list's number of pairs) so each question counts once. Lists
    with no positive or no negative give no pair."""
    diffs, wts = [], []
    for x, y in lists:
        pos, neg = x[y > 0], x[y == 0]
        if not len(pos) or not len(neg):
            continue
        d = (pos[:, None, :] - neg[None, :, :]).reshape(-1, x.shape[1])
        diffs.append(d)
        wts.append(np.full(len(d), 1.0 / len(d)))
    if not diffs:
        return np.zeros((0, lists[0][0].shape[1] if lists else 0)), np.zeros(0)
    return np.vstack(diffs), np.concatenate(wts)


def fit_pairwise(lists, l2=1.0) -> np.ndarray:
    """A linear RankNet: the pairwise logistic loss Σ log(1 + exp(−w·(x⁺ − x⁻))) + l2/2 |w|², as
    fit_logistic on the differences and their negations (labels 1 and 0: by that symmetry its
    intercept stays at 0, and the loss is counted twice, so the penalty is 2 × l2)."""
    d, wt = pair_rows(lists)
    w = fit_logistic(np.vstack([d, -d]), np.concatenate([np.ones(len(d)), np.zeros(len(d))]), 2 * l2,
                     sample_weight=np.concatenate([wt, wt]))
    return w[:-1]


def listwise_loss(w, lists, l2=0.0):
    """ListNet's top-one cross-entropy with the labels' uniform distribution as the target:
    Σ over lists of −Σ t log softmax(x w), t = y / Σ y, + l2/2 |w|²; lists with no positive
    are skipped. Returns (loss, gradient, Hessian), summed over the lists without a loop in Python."""
    keep = [(x, y) for x, y in lists if y.sum() > 0]
    X = np.vstack([x for x, _ in keep])
    t = np.concatenate([y / y.sum() for _, y in keep])
    starts = np.cumsum([0] + [len(y) for _, y in keep])[:-1]
    group = np.repeat(np.arange(len(keep)), [len(y) for _, y in keep])
    s = X @ w
    m = np.maximum.reduceat(s, starts)
    e = np.exp(s - m[group])
    z = np.add.reduceat(e, starts)
    p = e / z[group]
    loss = float(-(t * (s - m[group] - np.log(z[group]))).sum() + 0.5 * l2 * w @ w)
    grad = X.T @ (p - t) + l2 * w
    u = np.add.reduceat(X * p[:, None], starts)
    hess = (X * p[:, None]).T @ X - u.T @ u + l2 * np.eye(len(w))
    return loss, grad, hess


def fit_listwise(lists, l2=1.0, iters=50) -> np.ndarray:
    """Newton's method with step halving on listwise_loss (convex in w)."""
    w = np.zeros(lists[0][0].shape[1])
    loss, g, h = listwise_loss(w, lists, l2)
    for _ in range(iters):
        step = np.linalg.solve(h + 1e-9 * np.eye(len(w)), g)
        a = 1.0
        while a > 1e-6:
            new = listwise_loss(w - a * step, lists, l2)
            if new[0] <= loss + 1e-12:
                break
            a /= 2
        else:
            break
        w = w - a * step
        done = abs(loss - new[0]) < 1e-10 * max(1.0, abs(loss))
        loss, g, h = new
        if done or np.abs(a * step).max() < 1e-9:
            break
    return w


FITTERS = {"pairwise (RankNet)": fit_pairwise, "listwise (ListNet)": fit_listwise}


def train_lists(convs, which, feats, top=TOP):
    """The training lists (raw features, labels) of the conversations `which`."""
    out = []
    for j in which:
        c = convs[j]
        for q in c["questions"]:
            idx, y = ranked_list(c, q, top)
            out.append((candidates(c, q)[1][idx][:, feats], y))
    return out


def fit_on(convs, which, feats, fit, l2, top=TOP):
    """Weights, mean and spread fitted on the conversations `which` (features standardised on
    their training lists' rows)."""
    lists = train_lists(convs, which, feats, top)
    allx = np.vstack([x for x, _ in lists])
    mu, sd = allx.mean(0), allx.std(0) + 1e-9
    return fit([(standardise(x, mu, sd), y) for x, y in lists], l2), mu, sd


def rank_with(c, q, feats, model, pool="top", top=TOP) -> list[int]:
    """The question's top 10 rows under a linear score: pool "top" reorders the shipped fused top
    `top`, "union" ranks every candidate of both top 100s; ties go to the fused order (then the
    union's order)."""
    w, mu, sd = model
    rows, x = candidates(c, q)
    at = {r: j for j, r in enumerate(rows)}
    head = [at[r] for r in fused_top(c, q, top)]
    if pool == "union":
        seen = set(head)
        head += [j for j in range(len(rows)) if j not in seen]
    s = standardise(x[head][:, feats], mu, sd) @ w
    order = sorted(range(len(head)), key=lambda n: (-s[n], n))[:10]
    return [rows[head[n]] for n in order]


def score_conv(c, feats, model, pool):
    return [(q["category"], rp.scores([c["keys"][r] for r in rank_with(c, q, feats, model, pool)], q, c["evidence"]))
            for q in c["questions"]]


def nested_rows(convs, feats, fit, pools=("top", "union"), alone=None, grid=L2_GRID):
    """Leave one conversation out, L2 chosen inside: for each held-out conversation, each L2 of
    the grid is scored by an inner leave-one-out over the other four (train on three, rank the
    fourth), the best there under the per-category rule (fused at or above each ranker alone on
    every category of the four, when any L2 is; then R@5; ties: the larger L2) is fitted on all
    four and ranks the fifth. Per pool: the held-out rows, and the L2 chosen per fold."""
    held = {p: [] for p in pools}
    chosen = {p: [] for p in pools}
    first = {}
    for i in range(len(convs)):
        train = [j for j in range(len(convs)) if j != i]
        inner = {p: {} for p in pools}
        for l2 in grid:
            got = {p: [] for p in pools}
            for j in train:
                model = fit_on(convs, [t for t in train if t != j], feats, fit, l2)
                for p in pools:
                    got[p].append(score_conv(convs[j], feats, model, p))
            for p in pools:
                inner[p][l2] = rp.summary(got[p])
        ref = [rp.summary([a[j] for j in train]) for a in alone] if alone else []
        for p in pools:
            best = max(grid, key=lambda l2, p=p: (rp.never_below(inner[p][l2], ref),
                                                   round(inner[p][l2]["all"]["R@5"], 6), l2))
            model = fit_on(convs, train, feats, fit, best)
            held[p].append(score_conv(convs[i], feats, model, p))
            chosen[p].append(best)
            if i == 0:
                first[p] = model
    return held, chosen, first


def pairwise_report(convs, kw_rows, sem_rows, pools=("top", "union"), grid=L2_GRID):
    """Every (objective, feature set, pool) row against the baseline's held-out procedure."""
    import recall_public_pairs as pairs

    got = pairs.runs(convs, (0.0,))
    base_held, base_chosen = pairs.loo(convs, got, (0.0,))
    kw_alone, sem_alone = rp.summary(kw_rows), rp.summary(sem_rows)
    b = rp.summary(base_held)
    print(f"baseline held-out (k, w) per fold {[g[1:] for g in base_chosen]}: {cats(b)}"
          f"{'' if rp.never_below(b, [kw_alone, sem_alone]) else ' (below)'}\n", flush=True)
    print("| model | features | pool | held-out R@5 (1 / 2 / 3 / 4 / 5 / all) | rule | L2 per fold | "
          "− baseline held-out | 95 % bootstrap | p | better / worse | per conversation (sign-flip p) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    out = {}
    for (mname, fit), (fname, feats) in itertools.product(FITTERS.items(), FEATURE_SETS.items()):
        t = time.perf_counter()
        held, chosen, first = nested_rows(convs, feats, fit, pools, (kw_rows, sem_rows), grid)
        for p in pools:
            s = rp.summary(held[p])
            ok = rp.never_below(s, [kw_alone, sem_alone])
            r = pairs.paired(base_held, held[p])
            cd = pairs.conv_diffs(base_held, held[p])
            print(f"| {mname} | {fname} | {'fused top ' + str(TOP) if p == 'top' else 'union of both top 100'} | "
                  f"{cats(s)} | {'holds' if ok else 'broken'} | {', '.join(f'{x:g}' for x in chosen[p])} | "
                  f"{r['diff']:+.2f} | [{r['ci'][0]:+.2f}, {r['ci'][1]:+.2f}] | {r['p']:.3f} | "
                  f"{r['better']} / {r['worse']} | {', '.join(f'{x:+.1f}' for x in cd)} "
                  f"({pairs.conv_sign_p(cd):.3f}) |",
                  flush=True)
            out[(mname, fname, p)] = (s, ok, chosen[p], r)
        w, mu, sd = first[pools[0]]
        print(f"    fold-1 weights per raw unit ({time.perf_counter() - t:.0f} s): " + ", ".join(
            f"{FEATURES[f]} {w[j] / sd[j]:+.3g}" for j, f in enumerate(feats)), flush=True)
    return out


# --- output ---------------------------------------------------------------------------------------

def cats(s):
    return " / ".join(f"{s[c]['R@5']:.1f}" for c in (1, 2, 3, 4, 5, "all"))


def alone_rows(convs):
    """Per conversation, per question: the scores of the keyword and the semantic list alone."""
    return (tr.per_query(convs, lambda c, q: tr.kw_plain(c, q["question"])[:10]),
            tr.per_query(convs, lambda c, q: tr.sem_plain(c, q["question"])[:10]))


def alone_tables(convs):
    kw, sem = alone_rows(convs)
    return rp.summary(kw), rp.summary(sem)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--embedder", default=None)
    ap.add_argument("--only", default=None, help="learned, pairwise, ql, bigram, nested or qtype")
    ap.add_argument("--l2", default=",".join(f"{x:g}" for x in L2_GRID),
                    help="pairwise: the L2 grid the inner folds choose from (comma-separated)")
    args = ap.parse_args(argv)
    rp.use_embedder(args.embedder)
    data = rp.load(args.data or rp.default_data())
    t0 = time.perf_counter()
    convs = tr.collect(data, args.embedder)
    kw_alone, sem_alone = alone_tables(convs)
    print(f"keyword alone {cats(kw_alone)}\nsemantic alone {cats(sem_alone)}\n")

    def want(name):
        return not args.only or args.only in name

    if want("baseline"):
        r = tr.judge(convs, tr.kw_plain, tr.sem_plain, None, None)
        print(f"| baseline RRF | {cats(r['shipped_k_w'])} | LOO {r['held_out_R@5']:.1f} |", flush=True)
    if want("learned"):
        sets = {"all seven": tuple(range(7)),
                "ranks only": (0, 1),
                "ranks + scores": (0, 1, 2, 3),
                "ranks + coverage + speaker + length": (0, 1, 4, 5, 6),
                "ranks + scores + coverage": (0, 1, 2, 3, 4)}
        for name, feats in sets.items():
            for l2 in (1.0, 100.0):
                held, ws = learned_rows(convs, feats, l2)
                s = rp.summary(held)
                ok = rp.never_below(s, [kw_alone, sem_alone])
                print(f"| learned logistic, {name}, L2 {l2:g} | {cats(s)}{'' if ok else ' (below)'} | "
                      f"held-out {s['all']['R@5']:.1f} |", flush=True)
                w, mu, sd = ws[0]
                print("    fold-1 weights (per raw unit): " + ", ".join(
                    f"{FEATURES[f]} {w[j] / sd[j]:+.3g}" for j, f in enumerate(feats)), flush=True)
    if want("pairwise"):
        grid = tuple(float(x) for x in args.l2.split(","))
        print(f"pairwise / listwise: L2 chosen inside the folds from {grid}; lists: the shipped fused top {TOP}")
        pairwise_report(convs, *alone_rows(convs), grid=grid)
    if want("ql"):
        for mu in (5, 10, 25, 50, 100, 300):
            r = tr.judge(convs, ql_dirichlet(mu), tr.sem_plain, None, None)
            print(f"| QL Dirichlet μ {mu} | kw {r['keyword_alone']:.1f} | {cats(r['shipped_k_w'])}"
                  f"{'' if r['never_below_at_shipped'] else ' (below)'} | LOO {r['held_out_R@5']:.1f} | "
                  f"{r['chosen']} |", flush=True)
    if want("bigram"):
        for beta, win in ((0.25, 1), (0.5, 1), (1.0, 1), (0.5, 3), (1.0, 3)):
            r = tr.judge(convs, bm25_bigram(beta, win), tr.sem_plain, None, None)
            print(f"| BM25 + pair bonus β {beta:g}, window {win} | kw {r['keyword_alone']:.1f} | "
                  f"{cats(r['shipped_k_w'])}{'' if r['never_below_at_shipped'] else ' (below)'} | "
                  f"LOO {r['held_out_R@5']:.1f} | {r['chosen']} |", flush=True)
    if want("nested"):
        held, chosen = bigram_nested(convs)
        print(f"| BM25 + pair bonus, β in {{0, 0.25, 0.5, 1}} chosen inside the folds | held-out {held:.1f} | "
              f"{chosen} |", flush=True)
    if want("qtype"):
        held, chosen, counts = qtype_rows(convs)
        s = rp.summary(held)
        ok = rp.never_below(s, [kw_alone, sem_alone])
        print(f"question types: {dict(counts)}")
        print(f"| RRF (k, w) per question type | {cats(s)}{'' if ok else ' (below)'} | "
              f"held-out {s['all']['R@5']:.1f} |")
        for i, p in enumerate(chosen):
            print(f"    fold {i + 1}: " + "; ".join(f"{t} {k} {w:g}" for t, (k, w) in sorted(p.items())))
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
