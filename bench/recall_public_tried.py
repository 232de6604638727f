"""What retrieval practice offers, tried on LoCoMo's development half and judged by
leave-one-conversation-out (issue 25 item 3). Nothing here ships in recall: each row is a
change to one ranker or to the fusion, replayed beside today's ranking on the same items.

    python bench/recall_public_tried.py                    # WordLlama (a few minutes of CPU)
    python bench/recall_public_tried.py --embedder minilm

The data is read where it lies, as in bench/recall_public.py (its protocol, its vaults in a
temporary folder removed at the end). Each conversation's items, vectors and keyword index
come from the real index once (`Recaller.sync`); the keyword side is then a BM25 written here
with its parameters open (k1, b, the BM25+ and BM25L variants bm25s also implements, a weight
for the tags line), so one harness scores every variant. Its first row, with the shipped
parameters, reproduces the shipped keyword ranker and fusion (a slow test holds it).

For every row: R@5 of the keyword ranker alone, fused R@5 at the shipped RRF k and keyword
weight on all five conversations, and the pooled held-out R@5 of leave-one-conversation-out,
where for each conversation the (k, weight) best on the other four among those whose fused R@5
is at or above each ranker alone on every category there (when any is) is measured on it. A
row earns a change of default only if its held-out figure beats the baseline row's.
"""

from __future__ import annotations

import argparse
import itertools
import math
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import recall_public as rp  # noqa: E402

GRID_K = (1, 2, 5)
GRID_W = (0.5, 0.75, 1.0, 1.5)
DEPTH = 100
_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december"
           "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
# "on 9 November, 2022", "in May 2023", "November 9, 2022", "2023-05-08" — and the "as
# mentioned" a dated question often ends with.
_DATE = re.compile(
    rf"(?i)\b(?:(?:on|in|as of|around|by)\s+)?(?:the\s+)?(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?"
    rf"(?:{_MONTHS})\.?,?\s+\d{{4}}|(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    rf"|(?:{_MONTHS})\.?,?\s+\d{{4}}|\d{{4}}-\d{{2}}-\d{{2}})\b")


# English irregular forms → their base (went → go, bought → buy, children → child): what the
# light suffix folding of core/text cannot reach. A general list, not read off the data.
_IRREGULAR = """become:became begin:began,begun break:broke,broken bring:brought build:built buy:bought
catch:caught choose:chose,chosen come:came do:did,done,does draw:drew,drawn drink:drank,drunk drive:drove,driven
eat:ate,eaten fall:fell,fallen feel:felt fight:fought find:found fly:flew,flown forget:forgot,forgotten
get:got,gotten give:gave,given go:went,gone,goes,going grow:grew,grown have:had,has,having hear:heard hold:held
keep:kept know:knew,known leave:left lead:led lose:lost make:made,makes,making meet:met pay:paid ride:rode,ridden
ring:rang run:ran say:said see:saw,seen sell:sold send:sent shake:shook sing:sang,sung sit:sat sleep:slept
speak:spoke,spoken spend:spent stand:stood steal:stole swim:swam,swum take:took,taken,takes,taking teach:taught
tell:told think:thought throw:threw,thrown understand:understood wake:woke,woken wear:wore,worn win:won
write:wrote,written child:children man:men woman:women foot:feet tooth:teeth mouse:mice"""
IRREGULAR = {form: pair.split(":")[0] for pair in _IRREGULAR.split() for form in pair.split(":")[1].split(",")}
_IRREGULAR_RE = re.compile(r"(?i)\b(" + "|".join(sorted(IRREGULAR, key=len, reverse=True)) + r")\b")


def fold_irregular(text: str) -> str:
    return _IRREGULAR_RE.sub(lambda m: IRREGULAR[m.group(0).lower()], text)


def strip_dates(text: str) -> str:
    s = _DATE.sub(" ", text)
    s = re.sub(r",?\s+(?:as\s+)?mentioned\s*(?=[?.,]|$)", "", s)
    return " ".join(s.split())


def adjacent_pairs(tokens):
    """The distinct unordered pairs of neighbouring, different tokens (stopwords are already out
    of a token list, so "trip to Paris" pairs trip with paris). Issue 25, rounds 4–5: the pair
    bonus lives here, in the harness, because it did not earn a place in the product."""
    out = {}
    for a, b in zip(tokens, tokens[1:]):
        if a != b:
            out.setdefault((a, b) if a < b else (b, a), None)
    return list(out)


def pair_weight(beta, ia, ib):
    """The bonus an item gets for holding a query pair next to each other: β × the two IDFs."""
    return beta * (ia + ib)


class BM25:
    """Okapi BM25 (and BM25+ / BM25L) over token lists; document length is its number of
    terms, as in epimem.recall.bm25."""

    def __init__(self, docs, k1=1.2, b=0.75, variant="okapi", delta=1.0):
        self.k1, self.b, self.variant, self.delta = k1, b, variant, delta
        tfs = [Counter(d) for d in docs]
        self.n = len(docs)
        self.dl = [sum(t.values()) for t in tfs]
        self.avg = (sum(self.dl) / self.n) if self.n else 1.0
        self.df: Counter = Counter()
        self.post: dict = {}
        for i, t in enumerate(tfs):
            self.df.update(t.keys())
            for w, f in t.items():
                self.post.setdefault(w, []).append((i, f))
        self.pair_post: dict = {}
        for i, d in enumerate(docs):
            for p in adjacent_pairs(d):
                self.pair_post.setdefault(p, []).append(i)

    def idf(self, w) -> float:
        df = self.df.get(w, 0)
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5))

    def scores(self, terms, weights=None, pair_beta=0.0) -> dict[int, float]:
        """Every item's score (items that share no term with the query are absent); with
        pair_beta, the bonus for adjacent query-word pairs adjacent in the item."""
        sc: dict[int, float] = {}
        for t in dict.fromkeys(terms):
            qw = 1.0 if weights is None else weights.get(t, 1.0)
            idf = self.idf(t)
            for i, f in self.post.get(t, ()):
                norm = 1 - self.b + self.b * self.dl[i] / self.avg
                if self.variant == "l":
                    ct = f / norm
                    s = (self.k1 + 1) * (ct + self.delta) / (self.k1 + ct + self.delta)
                else:
                    s = f * (self.k1 + 1) / (f + self.k1 * norm) + (self.delta if self.variant == "plus" else 0.0)
                sc[i] = sc.get(i, 0.0) + qw * idf * s
        if pair_beta:
            for a, b in adjacent_pairs(list(terms)):
                bonus = pair_weight(pair_beta, self.idf(a), self.idf(b))
                for i in self.pair_post.get((a, b), ()):
                    sc[i] += bonus
        return sc

    def top(self, terms, weights=None, k=DEPTH, pair_beta=0.0) -> list[int]:
        sc = self.scores(terms, weights, pair_beta)
        return sorted((i for i, s in sc.items() if s > 0), key=lambda i: (-sc[i], i))[:k]


# --- the items, once ---------------------------------------------------------------------------

def collect(data, embedder, root: Path | None = None) -> list[dict]:
    """Every conversation's items, vectors and questions, from a vault built for it under `root`
    (a scratch folder, removed afterwards, when none is named: what is kept is in memory)."""
    if root is None:
        tmp = Path(tempfile.mkdtemp(prefix="epimem-locomo-"))
        try:
            return collect(data, embedder, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    from epimem.core.text import tokenize
    from epimem.recall import Recaller

    out = []
    for i, conv in enumerate(data):
        ev = rp.make_vault(conv, root / f"c{i}")
        r = Recaller(root / f"c{i}", today=rp.DAY, embedder=embedder)
        r.sync()
        st = r.state()
        keys = list(st.table.keys)
        texts = [st.vectors.text(st.table.row_of[k]) for k in keys]
        out.append({"keys": keys, "texts": texts, "mat": st.vectors.matrix, "lex": st.lexical,
                    "toks": [tokenize(t) for t in texts], "evidence": {f"b/{k}": v for k, v in ev.items()},
                    "questions": rp.questions(conv), "embed": r.index.embedder.embed, "bm": {}, "qv": {}})
    return out


def qvec(c, text):
    import numpy as np

    v = c["qv"].get(text)
    if v is None:
        v = c["qv"][text] = np.asarray(c["embed"]([text])[0], np.float32)
    return v


def sem_top(c, v, k=DEPTH) -> list[int]:
    import numpy as np

    sims = c["mat"] @ v
    return np.argsort(-sims, kind="stable")[:k].tolist()


def semq(c, text) -> str:
    from epimem.recall.api import semantic_query

    return semantic_query(text, c["lex"])


def bm25(c, **kw) -> BM25:
    key = tuple(sorted(kw.items()))
    if key not in c["bm"]:
        opts = dict(kw)
        tags = opts.pop("tags", 1.0)
        docs = c["toks"]
        if opts.pop("fold", False):
            from epimem.core.text import tokenize

            docs = [tokenize(fold_irregular(t)) for t in c["texts"]]
        if tags != 1.0:
            from epimem.core.text import tokenize

            docs = []
            for t in c["texts"]:
                body, _, tagline = t.partition("\nTags: ")
                docs.append(tokenize(body) + tokenize(tagline) * int(tags))
        c["bm"][key] = BM25(docs, **opts)
    return c["bm"][key]


# --- rankers and fusions -------------------------------------------------------------------------

def rrf(lists, k, weights, limit=10) -> list[int]:
    s: dict[int, float] = {}
    pos = []
    for ranking, w in zip(lists, weights):
        p = {}
        for i, row in enumerate(ranking):
            s[row] = s.get(row, 0.0) + w / (k + i + 1)
            p[row] = i
        pos.append(p)
    return sorted(s, key=lambda r: (-s[r], *(p.get(r, 10**9) for p in pos), r))[:limit]


def kw_plain(c, q, **bm):
    from epimem.core.text import tokenize

    return bm25(c, **bm).top(tokenize(q))


def sem_plain(c, q):
    return sem_top(c, qvec(c, semq(c, q)))


def first_pass(c, q, m):
    now = rp.settings_now()
    return rrf([kw_plain(c, q), sem_plain(c, q)], now["k"], (now["w"], 1.0), limit=m)


def kw_rm3(m, t, lam):
    """RM3-like feedback on the keyword side: the t terms weighing most (tf share × IDF, by
    rank) in the m best of a first fused pass join the query at total weight lam × t."""
    def fn(c, q):
        from epimem.core.text import tokenize

        qs = set(tokenize(q))
        b = bm25(c)
        wts: Counter = Counter()
        for rank, row in enumerate(first_pass(c, q, m)):
            toks = c["toks"][row]
            for w, f in Counter(toks).items():
                if w not in qs:
                    wts[w] += f / max(1, len(toks)) * b.idf(w) / (2 + rank)
        exp = [w for w, _ in wts.most_common(t)]
        total = sum(wts[w] for w in exp) or 1.0
        weights = {w: 1.0 for w in qs} | {w: lam * t * wts[w] / total for w in exp}
        return b.top(list(weights), weights)
    return fn


def sem_rocchio(m, beta):
    """Rocchio feedback on the query vector: plus beta × the mean of the m best of a first pass."""
    def fn(c, q):
        import numpy as np

        v = qvec(c, semq(c, q)) + beta * c["mat"][first_pass(c, q, m)].mean(0)
        return sem_top(c, v / np.linalg.norm(v))
    return fn


def sem_centered(npc):
    """The semantic ranker on centred vectors: every item's and the query's vector less the
    items' mean and its projection on their first npc principal components, then cosine
    (static mean-pooled embeddings share a common direction that dominates cosine)."""
    def fn(c, q):
        import numpy as np

        key = ("centred", npc)
        if key not in c:
            m = np.asarray(c["mat"], np.float32)
            mu = m.mean(0)
            pcs = np.linalg.svd(m - mu, full_matrices=False)[2][:npc]

            def proj(v):
                v = v - mu
                return v - (v @ pcs.T) @ pcs
            x = proj(m)
            c[key] = (x / np.linalg.norm(x, axis=1, keepdims=True), proj)
        mat, proj = c[key]
        v = proj(qvec(c, semq(c, q)))
        return np.argsort(-(mat @ (v / np.linalg.norm(v))), kind="stable")[:DEPTH].tolist()
    return fn


def fuse_mmr(lam):
    """Maximal marginal relevance over the fused top 20: a result's fused score (scaled to the
    best) minus lam × its largest cosine to a result already placed."""
    def fn(c, q, kw, sem, k, w):
        s: dict[int, float] = {}
        for ranking, ww in ((kw, w), (sem, 1.0)):
            for i, row in enumerate(ranking):
                s[row] = s.get(row, 0.0) + ww / (k + i + 1)
        rest = rrf([kw, sem], k, (w, 1.0), limit=20)
        top = max(s[r] for r in rest) if rest else 1.0
        out: list[int] = []
        mat = c["mat"]
        while rest and len(out) < 10:
            best = max(rest, key=lambda r: s[r] / top - lam * max((float(mat[r] @ mat[o]) for o in out), default=0.0))
            out.append(best)
            rest.remove(best)
        return out
    return fn


def fuse_three(w3):
    """A third list: the semantic ranker on the question as typed, at weight w3."""
    def fn(c, q, kw, sem, k, w):
        return rrf([kw, sem, sem_top(c, qvec(c, q))], k, (w, 1.0, w3))
    return fn


def variants():
    """(name, keyword ranker, semantic ranker, fusion or None, query rewrite or None)."""
    rows = [("baseline: shipped BM25 (k1 1.2, b 0.75), semantic without common words, RRF",
             kw_plain, sem_plain, None, None)]
    for k1, b in itertools.product((0.9, 1.2, 1.6, 2.0), (0.3, 0.5, 0.75, 1.0)):
        if (k1, b) != (1.2, 0.75):
            rows.append((f"BM25 k1 {k1:g}, b {b:g}", lambda c, q, k1=k1, b=b: kw_plain(c, q, k1=k1, b=b),
                         sem_plain, None, None))
    rows += [
        ("BM25+ (δ 1)", lambda c, q: kw_plain(c, q, variant="plus", delta=1.0), sem_plain, None, None),
        ("BM25L (δ 0.5)", lambda c, q: kw_plain(c, q, variant="l", delta=0.5), sem_plain, None, None),
        ("tags line ×0 in BM25 (field weight)", lambda c, q: kw_plain(c, q, tags=0), sem_plain, None, None),
        ("tags line ×2 in BM25 (field weight)", lambda c, q: kw_plain(c, q, tags=2), sem_plain, None, None),
        ("dates stripped from the question (both rankers)", kw_plain, sem_plain, None, strip_dates),
        ("irregular forms folded to their base in BM25 (both sides)",
         lambda c, q: kw_plain(c, fold_irregular(q), fold=True), sem_plain, None, None),
        ("RM3 on BM25: 3 docs, 5 terms, λ 0.3", kw_rm3(3, 5, 0.3), sem_plain, None, None),
        ("RM3 on BM25: 5 docs, 10 terms, λ 0.5", kw_rm3(5, 10, 0.5), sem_plain, None, None),
        ("Rocchio on the query vector: 3 docs, β 0.5", kw_plain, sem_rocchio(3, 0.5), None, None),
        ("Rocchio on the query vector: 5 docs, β 1", kw_plain, sem_rocchio(5, 1.0), None, None),
        ("semantic on centred vectors (the items' mean out)", kw_plain, sem_centered(0), None, None),
        ("semantic on centred vectors, first 2 principal components out", kw_plain, sem_centered(2), None, None),
        ("MMR over the fused top 20, λ 0.1", kw_plain, sem_plain, fuse_mmr(0.1), None),
        ("MMR over the fused top 20, λ 0.2", kw_plain, sem_plain, fuse_mmr(0.2), None),
        ("third list: semantic on the question as typed, ×0.5", kw_plain, sem_plain, fuse_three(0.5), None),
    ]
    return rows


# --- scoring ------------------------------------------------------------------------------------

def per_query(convs, rank_fn):
    out = []
    for c in convs:
        keys = c["keys"]
        out.append([(q["category"], rp.scores([keys[r] for r in rank_fn(c, q)], q, c["evidence"]))
                    for q in c["questions"]])
    return out


def judge(convs, kw_fn, sem_fn, fuse_fn, rewrite) -> dict:
    cache: dict = {}

    def lists(c, q):
        key = (id(c), q["question"])
        if key not in cache:
            text = rewrite(q["question"]) if rewrite else q["question"]
            cache[key] = (kw_fn(c, text), sem_fn(c, text))
        return cache[key]

    kw_rows = per_query(convs, lambda c, q: lists(c, q)[0][:10])
    sem_rows = per_query(convs, lambda c, q: lists(c, q)[1][:10])
    fused = {}
    for k, w in itertools.product(GRID_K, GRID_W):
        if fuse_fn is None:
            fused[(k, w)] = per_query(convs, lambda c, q, k=k, w=w: rrf(list(lists(c, q)), k, (w, 1.0)))
        else:
            fused[(k, w)] = per_query(convs, lambda c, q, k=k, w=w: fuse_fn(c, q["question"], *lists(c, q), k, w))

    def part(rows, keep):
        return rp.summary([r for j, r in enumerate(rows) if keep(j)])

    total = acc = 0.0
    chosen = []
    for i in range(len(convs)):
        def train(j, i=i):
            return j != i
        alone = [part(kw_rows, train), part(sem_rows, train)]
        best = max(fused, key=lambda g: (rp.never_below(part(fused[g], train), alone),
                                         round(part(fused[g], train)["all"]["R@5"], 6), -g[0]))
        held = part(fused[best], lambda j, i=i: j == i)["all"]
        total += held["n"]
        acc += held["R@5"] * held["n"]
        chosen.append(best)
    now = rp.settings_now()
    shipped = rp.summary(fused[(now["k"], now["w"])])
    return {"held_out_R@5": acc / total, "chosen": chosen, "shipped_k_w": shipped,
            "keyword_alone": rp.summary(kw_rows)["all"]["R@5"],
            "semantic_alone": rp.summary(sem_rows)["all"]["R@5"],
            "never_below_at_shipped": rp.never_below(shipped, [rp.summary(kw_rows), rp.summary(sem_rows)])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None, help="the folder holding locomo-dev.json")
    ap.add_argument("--embedder", default=None, help="wordllama (default) or minilm")
    ap.add_argument("--only", default=None, help="run only the rows whose name contains this")
    args = ap.parse_args(argv)
    rp.use_embedder(args.embedder)
    data = rp.load(args.data or rp.default_data())
    t0 = time.perf_counter()
    convs = collect(data, args.embedder)
    now = rp.settings_now()
    print(f"{len(convs)} conversations; embedder {args.embedder or 'wordllama'}; LOO grid k {GRID_K} × "
          f"keyword weight {GRID_W}; shipped k {now['k']}, weight {now['w']:g}\n")
    print("| tried | keyword alone | semantic alone | fused at shipped k, w (1 / 2 / 3 / 4 / 5 / all) | "
          "LOO held-out R@5 | (k, w) chosen per fold |")
    print("|---|---|---|---|---|---|")
    for name, kw_fn, sem_fn, fuse_fn, rewrite in variants():
        if args.only and args.only not in name:
            continue
        r = judge(convs, kw_fn, sem_fn, fuse_fn, rewrite)
        s = r["shipped_k_w"]
        cats = " / ".join(f"{s[c]['R@5']:.1f}" for c in (1, 2, 3, 4, 5, "all"))
        folds = ", ".join(f"{k} {w:g}" for k, w in r["chosen"])
        print(f"| {name} | {r['keyword_alone']:.1f} | {r['semantic_alone']:.1f} | {cats}"
              f"{'' if r['never_below_at_shipped'] else ' (below a ranker alone on a category)'} | "
              f"{r['held_out_R@5']:.1f} | {folds} |", flush=True)
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
