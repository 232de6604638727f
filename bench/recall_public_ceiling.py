"""Where recall's misses are on LoCoMo's development half, and what is reachable (issue 25,
third round): the ceiling of the protocol, the recall of each candidate list by depth, both
embedders fused at once, and a MiniLM rerank of the fused top 20.

    python bench/recall_public_ceiling.py                 # both embedders (MiniLM needs the extra)
    python bench/recall_public_ceiling.py --cache FILE    # keep the lists for a second run
    python bench/recall_public_ceiling.py --onnx MODEL.onnx   # also a third embedder: any mean-pooled
                                                          # BERT-uncased ONNX model file (issue 25 item 4)

The data is read where it lies, as in bench/recall_public.py (its protocol, its vaults in a
temporary folder removed at the end). Each conversation is indexed twice through the real
index (`Recaller.sync`): once with WordLlama, once with MiniLM; the keyword list is the
harness BM25 of bench/recall_public_tried.py at the shipped parameters (which gives the
shipped keyword ranker's order), the semantic lists embed what `api.semantic_query` keeps.
`--cache` writes the lists and similarities (derived from CC BY-NC data: keep the file out of
the repository) so that the tables can be recomputed without embedding again.

Every fusion row is judged as bench/recall_public_tried.py judges: R@5 at its own fixed point
on all five conversations, per category, and the pooled held-out R@5 of leave-one-conversation-
out over a small grid, each fold choosing under the per-category rule (fused at or above each
ranker alone on every category of the other four, when any point is).
"""

from __future__ import annotations

import argparse
import pickle
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import recall_public as rp  # noqa: E402
import recall_public_tried as rt  # noqa: E402

DEPTHS = (5, 10, 20, 50, 100, 200)
DEEP = max(DEPTHS)


def onnx_embedder(path: Path, max_tokens: int = 128):
    """A mean-pooled ONNX sentence model with the BERT-uncased WordPiece vocabulary (the
    MiniLM family's), tokenized by the tokenizer epimem ships for MiniLM; the token
    embeddings are the output of shape (batch, tokens, dim)."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(HERE.parent / "epimem" / "recall" / "data" / "minilm-tokenizer.json"))
    tok.enable_truncation(max_tokens)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    opts = ort.SessionOptions()
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    names = {i.name for i in sess.get_inputs()}
    tokens_out = next(n for n, o in enumerate(sess.get_outputs()) if len(o.shape) == 3)

    def embed(texts):
        out = []
        for s in range(0, len(texts), 64):
            encs = tok.encode_batch(list(texts[s:s + 64]))
            ids = np.asarray([e.ids for e in encs], np.int64)
            mask = np.asarray([e.attention_mask for e in encs], np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in names:
                feed["token_type_ids"] = np.zeros_like(ids)
            hid = sess.run(None, feed)[tokens_out]
            m = mask[:, :, None].astype(np.float32)
            v = (hid * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            out.append(v / np.linalg.norm(v, axis=1, keepdims=True))
        return np.concatenate(out).astype(np.float32)
    return embed


def add_onnx(data, convs, root: Path, path: Path) -> None:
    """The third embedder's similarities ("ox") beside the others, on the same items."""
    wl = rt.collect(data, None, root / "ox")
    embed = onnx_embedder(path)
    for c, w in zip(convs, wl):
        if w["keys"] != c["keys"]:
            raise SystemExit("the ONNX model's items differ from the cached lists")
        mat = embed(w["texts"])
        qv = embed([rt.semq(w, q["question"]) for q in c["questions"]])
        for q, v in zip(c["questions"], qv):
            q["ox"] = mat @ v


def build(data, root: Path) -> list[dict]:
    """Per conversation: keys, evidence, questions, and per question the keyword list and
    both embedders' full similarity vectors (float16 to keep the cache small)."""
    import numpy as np

    from epimem.core.text import tokenize

    wl = rt.collect(data, None, root / "wl")
    try:
        ml = rt.collect(data, "minilm", root / "ml")
    except Exception as e:  # noqa: BLE001 — the MiniLM extra may be absent
        print(f"MiniLM unavailable ({e}); WordLlama only", file=sys.stderr)
        ml = None
    out = []
    for i, c in enumerate(wl):
        if ml is not None and ml[i]["keys"] != c["keys"]:
            raise SystemExit(f"conversation {i + 1}: the two indexes hold different items")
        b = rt.bm25(c)
        qs = []
        for q in c["questions"]:
            text = q["question"]
            sq = rt.semq(c, text)
            row = {**q, "kw": b.top(tokenize(text), k=DEEP),
                   "wl": (c["mat"] @ rt.qvec(c, sq)).astype(np.float16)}
            if ml is not None:
                row["ml"] = (ml[i]["mat"] @ rt.qvec(ml[i], sq)).astype(np.float16)
            qs.append(row)
        out.append({"keys": c["keys"], "evidence": c["evidence"], "questions": qs})
    return out


def top(sims, k=DEEP) -> list[int]:
    import numpy as np

    return np.argsort(-sims.astype(np.float32), kind="stable")[:k].tolist()


def prepare(convs) -> None:
    for c in convs:
        for q in c["questions"]:
            q["wl_top"] = top(q["wl"])
            if "ml" in q:
                q["ml_top"] = top(q["ml"])
            if "ox" in q:
                q["ox_top"] = top(q["ox"])


# --- the ceiling and the depth of each list --------------------------------------------------------

def covered(rows, q, c) -> float:
    got = set()
    for r in rows:
        got |= c["evidence"].get(c["keys"][r], set())
    return len(q["evidence"] & got) / len(q["evidence"])


def best5(q, c) -> float:
    """The most of a question's evidence any five items can cover (greedy set cover, exact
    for every question here but a few multi-hop ones, where it is a lower bound)."""
    gold = set(q["evidence"])
    picks = 0
    got: set = set()
    ev = [c["evidence"].get(k, set()) & gold for k in c["keys"]]
    while picks < 5:
        gain = max(ev, key=lambda e: len(e - got))
        if not gain - got:
            break
        got |= gain
        picks += 1
    return len(got) / len(gold)


def by_category(convs, fn) -> dict:
    per: dict = {}
    for c in convs:
        for q in c["questions"]:
            v = fn(q, c)
            for key in (q["category"], "all"):
                per.setdefault(key, []).append(v)
    return {k: 100 * sum(v) / len(v) for k, v in per.items()}


def ceiling_table(convs) -> list[tuple[str, dict]]:
    everything = lambda q, c: covered(range(len(c["keys"])), q, c)  # noqa: E731
    rows = [("any item (R@∞ ceiling)", by_category(convs, everything)),
            ("any five items (R@5 ceiling)", by_category(convs, best5))]
    lists = [("keyword", lambda q: q["kw"]), ("WordLlama", lambda q: q["wl_top"])]
    if "ml_top" in convs[0]["questions"][0]:
        lists.append(("MiniLM", lambda q: q["ml_top"]))
    for d in DEPTHS:
        for name, get in lists:
            rows.append((f"{name} top {d}", by_category(convs, lambda q, c, d=d, get=get: covered(get(q)[:d], q, c))))
        rows.append((f"keyword ∪ WordLlama top {d}",
                     by_category(convs, lambda q, c, d=d: covered(set(q["kw"][:d]) | set(q["wl_top"][:d]), q, c))))
        if len(lists) == 3:
            rows.append((f"keyword ∪ both embedders top {d}", by_category(
                convs, lambda q, c, d=d: covered({*q["kw"][:d], *q["wl_top"][:d], *q["ml_top"][:d]}, q, c))))
    return rows


# --- fusions ----------------------------------------------------------------------------------------

def fused(q, k, weights, lists=("kw", "wl_top", "ml_top"), depth=rt.DEPTH):
    return rt.rrf([q[name][:depth] for name in lists], k, weights)


def rerank(q, k, w, n, alpha):
    """The shipped fusion (keyword + WordLlama), then its top n reordered by a blend of the
    fused RRF score (scaled to the best) and the MiniLM cosine: (1 − alpha) × rrf + alpha × cos."""
    import numpy as np

    first = rt.rrf([q["kw"][:rt.DEPTH], q["wl_top"][:rt.DEPTH]], k, (w, 1.0), limit=n)
    s: dict = {}
    for ranking, ww in ((q["kw"][:rt.DEPTH], w), (q["wl_top"][:rt.DEPTH], 1.0)):
        for i, r in enumerate(ranking):
            s[r] = s.get(r, 0.0) + ww / (k + i + 1)
    best = s[first[0]] if first else 1.0
    cos = np.asarray(q["ml"], np.float32)
    return sorted(first, key=lambda r: -((1 - alpha) * s[r] / best + alpha * float(cos[r])))[:10]


def judge(convs, rank_fn, grid, shipped, alone_fns) -> dict:
    """rank_fn(q, point) → rows. LOO over the grid's points under the per-category rule."""
    def rows_of(fn):
        return [[(q["category"], rp.scores([c["keys"][r] for r in fn(q)], q, c["evidence"]))
                 for q in c["questions"]] for c in convs]

    runs = {g: rows_of(lambda q, g=g: rank_fn(q, g)) for g in grid}
    alone = [rows_of(fn) for fn in alone_fns]

    def part(rows, keep):
        return rp.summary([r for j, r in enumerate(rows) if keep(j)])

    acc = total = 0.0
    chosen = []
    for i in range(len(convs)):
        train = lambda j, i=i: j != i  # noqa: E731
        al = [part(a, train) for a in alone]
        best = max(grid, key=lambda g: (rp.never_below(part(runs[g], train), al),
                                        round(part(runs[g], train)["all"]["R@5"], 6)))
        held = part(runs[best], lambda j, i=i: j == i)["all"]
        acc += held["R@5"] * held["n"]
        total += held["n"]
        chosen.append(best)
    at = rp.summary(runs[shipped])
    return {"held_out": acc / total, "chosen": chosen, "at": at,
            "never_below": rp.never_below(at, [rp.summary(a) for a in alone]),
            "alone": [rp.summary(a)["all"]["R@5"] for a in alone]}


def fusion_rows(convs):
    kw = lambda q: q["kw"][:10]  # noqa: E731
    wl = lambda q: q["wl_top"][:10]  # noqa: E731
    ml = lambda q: q["ml_top"][:10]  # noqa: E731
    two = [(k, w) for k in rt.GRID_K for w in rt.GRID_W]
    rows = [("keyword + WordLlama (shipped)", judge(
        convs, lambda q, g: fused(q, g[0], (g[1], 1.0), ("kw", "wl_top")), two, (2, 0.75), [kw, wl]))]
    for d in (50, 200):
        rows.append((f"keyword + WordLlama, lists of {d}", judge(
            convs, lambda q, g, d=d: fused(q, g[0], (g[1], 1.0), ("kw", "wl_top"), depth=d), two, (2, 0.75), [kw, wl])))
    if "ml_top" not in convs[0]["questions"][0]:
        return rows
    rows.append(("keyword + MiniLM", judge(
        convs, lambda q, g: fused(q, g[0], (g[1], 1.0), ("kw", "ml_top")), two, (2, 0.75), [kw, ml])))
    three = [(k, w, w2) for k in rt.GRID_K for w in rt.GRID_W for w2 in (0.25, 0.5, 0.75, 1.0)]
    rows.append(("keyword + WordLlama × w2 + MiniLM (three lists)", judge(
        convs, lambda q, g: fused(q, g[0], (g[1], g[2], 1.0)), three, (2, 0.75, 0.5), [kw, wl, ml])))
    rows.append(("three lists at k 2, 0.75 / 1 / 1 (fixed)", judge(
        convs, lambda q, g: fused(q, 2, (0.75, 1.0, 1.0)), [(2, 0.75, 1.0)], (2, 0.75, 1.0), [kw, wl, ml])))
    rr = [(n, a) for n in (10, 20, 30) for a in (0.25, 0.5, 0.75, 1.0)]
    rows.append(("shipped fusion, top n reranked by MiniLM cosine (blend α)", judge(
        convs, lambda q, g: rerank(q, 2, 0.75, g[0], g[1]), rr, (20, 0.5), [kw, wl])))
    if "ox_top" in convs[0]["questions"][0]:
        ox = lambda q: q["ox_top"][:10]  # noqa: E731
        rows.append(("keyword + the --onnx model", judge(
            convs, lambda q, g: fused(q, g[0], (g[1], 1.0), ("kw", "ox_top")), two, (2, 0.75), [kw, ox])))
        rows.append(("keyword + WordLlama × w2 + the --onnx model", judge(
            convs, lambda q, g: fused(q, g[0], (g[1], g[2], 1.0), ("kw", "wl_top", "ox_top")), three,
            (2, 0.75, 1.0), [kw, wl, ox])))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None, help="the folder holding locomo-dev.json")
    ap.add_argument("--cache", type=Path, default=None, help="read the lists from / write them to this file")
    ap.add_argument("--onnx", type=Path, default=None, help="a third embedder: a mean-pooled BERT-uncased ONNX file")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if args.cache and args.cache.exists():
        convs = pickle.loads(args.cache.read_bytes())
    else:
        data = rp.load(args.data or rp.default_data())
        tmp = Path(tempfile.mkdtemp(prefix="epimem-locomo-ceiling-"))
        try:
            convs = build(data, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if args.cache:
            args.cache.write_bytes(pickle.dumps(convs))
    if args.onnx:
        data = rp.load(args.data or rp.default_data())
        tmp = Path(tempfile.mkdtemp(prefix="epimem-locomo-ceiling-"))
        try:
            add_onnx(data, convs, tmp, args.onnx)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    prepare(convs)
    print(f"lists ready in {time.perf_counter() - t0:.1f} s\n")
    cats = (1, 2, 3, 4, 5, "all")
    print("### Ceiling and depth: share of a question's evidence ids covered (×100)\n")
    print("| items | " + " | ".join(rp.CATEGORIES.get(c, c) for c in cats) + " |")
    print("|---|" + "---|" * len(cats))
    for name, t in ceiling_table(convs):
        print(f"| {name} | " + " | ".join(f"{t[c]:.1f}" for c in cats) + " |", flush=True)
    print("\n### Fusions (R@5 at the row's fixed point; LOO held-out)\n")
    print("| fusion | alone (R@5) | fused at fixed point (1 / 2 / 3 / 4 / 5 / all) | LOO held-out | chosen |")
    print("|---|---|---|---|---|")
    for name, r in fusion_rows(convs):
        s = r["at"]
        cells = " / ".join(f"{s[c]['R@5']:.1f}" for c in cats)
        print(f"| {name} | {' / '.join(f'{a:.1f}' for a in r['alone'])} | {cells}"
              f"{'' if r['never_below'] else ' (below a ranker alone)'} | {r['held_out']:.1f} | "
              f"{'; '.join(' '.join(f'{x:g}' for x in g) for g in r['chosen'])} |", flush=True)
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
