"""Recall on public conversations nobody on the team wrote: LoCoMo's development half.

    python bench/recall_public.py                       # the report (WordLlama; about half a minute)
    python bench/recall_public.py --embedder minilm     # the same with the MiniLM option
    python bench/recall_public.py --data DIR --json out.json

DIR holds `locomo-dev.json` or one other LoCoMo-format JSON file, or is that file (default:
`../shared/data/locomo-dev` beside this checkout, or $EPIMEM_LOCOMO). The data is CC BY-NC
4.0: it is read where it lies and every vault made from it lives in a temporary folder that is
removed at the end; nothing of it is written into the repository or the package.

The protocol (the data's README): each conversation is a vault of its own, with one belief per
observation (its text as the title, the speaker as a tag, all on one date, all at the same
confidence); every question with at least one `D<session>:<turn>` evidence id is a query;
recall@k is the share of the question's evidence ids covered by the evidence ids of the top k
items (the paper's definition), MRR the mean of 1 / the rank of the first item covering one.
Figures are per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial:
it names the wrong speaker on purpose) and over all queries.

Each query's candidates come from the real index once (`Recaller.candidates`, the code recall
runs); fusion is then replayed with `rank.fuse` for every setting, so each row of a table ranks
the same lists. The ablation replays, beside today's fusion, the factors earlier rounds shipped
and this data removed (a subject factor, the keyword list's coverage and steepness, the
semantic ranker embedding the question as typed): they live here only, as the evidence.

The defaults are chosen by leave-one-conversation-out cross-validation over a small grid (RRF
k, keyword weight, the share of texts that makes a word too common to embed): for each
conversation the setting best on the other four is measured on it. Both the pooled held-out
figure and the figure of the shipped defaults are reported.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
DAY = date(2023, 1, 1)
DEPTH = 100
_EVIDENCE = re.compile(r"D(\d+):(\d+)")
GRID_K = (1, 2, 5, 10, 20, 60)
GRID_W = (0.5, 0.75, 1.0, 1.5, 2.0)
GRID_SHARE = (None, 0.1, 0.2, 0.3, 0.5)     # None: the question embedded as typed


def default_data() -> Path:
    env = os.environ.get("EPIMEM_LOCOMO")
    return Path(env) if env else HERE.parent.parent / "shared" / "data" / "locomo-dev"


def load(folder: Path) -> list[dict]:
    path = folder / "locomo-dev.json" if folder.is_dir() else folder
    if folder.is_dir() and not path.exists():
        # The held-out half (or the whole of LoCoMo's locomo10.json) comes under another
        # name: a folder holding one JSON file is read as that file.
        found = sorted(folder.glob("*.json"))
        if len(found) == 1:
            path = found[0]
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SystemExit(f"cannot read the LoCoMo development data at {path}: {e.strerror} "
                         "(give --data DIR or set EPIMEM_LOCOMO)") from None


def evidence_ids(value) -> set[str]:
    """`D<n>:<m>` ids in a value (a string, a list, "D8:6; D9:17"), leading zeros dropped."""
    text = " ".join(map(str, value)) if isinstance(value, list) else str(value)
    return {f"D{int(a)}:{int(b)}" for a, b in _EVIDENCE.findall(text)}


def observations(conv: dict) -> list[tuple[str, str, set[str]]]:
    """(text, speaker, evidence ids) of every observation, session by session."""
    out = []
    obs = conv["observation"]
    for key in sorted(obs, key=lambda s: int(re.findall(r"\d+", s)[0])):
        for speaker, entries in obs[key].items():
            for text, ev in entries:
                out.append((" ".join(str(text).split()), speaker, evidence_ids(ev)))
    return out


def make_vault(conv: dict, root: Path, *, dates: dict[int, date] | None = None) -> dict[str, set[str]]:
    """One belief per observation under root/beliefs; returns id → evidence ids.
    `dates` (observation number → date) replaces the one date for those beliefs."""
    from epimem.core.model import Belief, Evidence
    from epimem.core.notes import render_belief

    (root / "beliefs").mkdir(parents=True)
    evidence = {}
    for n, (text, speaker, ev) in enumerate(observations(conv), 1):
        bid = f"obs-{n}"
        day = (dates or {}).get(n, DAY)
        b = Belief(id=bid, title=text, kind="fact", basis="self-report", confidence=0.7,
                   permanence="durable", first=day, tags=(re.sub(r"\W+", "-", speaker.lower()).strip("-"),),
                   evidence=(Evidence(day, "added", "", "LoCoMo observation (0.70)"),))
        (root / "beliefs" / f"{bid}.md").write_text(render_belief(b), encoding="utf-8")
        evidence[bid] = ev
    return evidence


def questions(conv: dict) -> list[dict]:
    return [{"question": q["question"], "category": int(q["category"]), "evidence": evidence_ids(q["evidence"])}
            for q in conv["qa"] if evidence_ids(q.get("evidence", []))]


# --- candidates, once per question ---------------------------------------------------------------

def semantic_list(recaller, state, text: str, cache: dict) -> list[tuple[str, float]]:
    """The semantic ranker's top DEPTH for `text` over every item (what `Recaller._semantic`
    scans, with no filter to apply here): one embedding per distinct text."""
    import numpy as np

    got = cache.get(text)
    if got is None:
        qv = np.asarray(recaller.index.embedder.embed([text])[0], np.float32)
        sims = state.vectors.matrix @ qv
        rows = np.argsort(-sims, kind="stable")[:DEPTH]
        got = cache[text] = [(state.table.keys[r], float(sims[r])) for r in rows]
    return got


def collect(conv: dict, root: Path, embedder: str | None) -> dict:
    from epimem.recall import Recaller
    from epimem.recall.api import semantic_query
    from epimem.recall.rank import Filters

    evidence = make_vault(conv, root)
    r = Recaller(root, today=DAY, embedder=embedder)
    r.sync()
    st = r.state()
    cache: dict = {}
    out = []
    for q in questions(conv):
        c = r.candidates(q["question"], Filters.make(), depth=DEPTH)
        sem = {share: semantic_list(r, st, q["question"] if share is None
                                    else semantic_query(q["question"], st.lexical, share), cache)
               for share in GRID_SHARE}
        out.append({**q, "c": c, "sem": sem, "old": old_factors(q["question"], c, st)})
    return {"evidence": {f"b/{k}": v for k, v in evidence.items()}, "queries": out,
            "items": len(evidence)}


# --- the factors earlier rounds shipped (replayed for the ablation only) ----------------------------

_NAME = re.compile(r"[^\W\d_][\w'’-]*")


def old_factors(question: str, c, st) -> dict:
    """What the removed factors computed for this query: the keyword list's coverage (the
    share of the query's IDF mass its best text holds), its steepness ((s1 − s10) / s1), and
    the subject factor (candidates whose text lacks every capitalised name the question
    uses mid-sentence × 0.5, when some candidate has one)."""
    from epimem.core.text import tokenize

    lex, table = st.lexical, st.table
    tokens = tokenize(question)
    tids = lex.query_terms(tokens)
    cov = 1.0
    if c.keyword and tids:
        row = table.row_of[c.keyword[0][0]]
        present = set(lex.doc_terms[int(lex.doc_ptr[row]):int(lex.doc_ptr[row + 1])].tolist())
        total = sum(lex.idf(t) for t in tids)
        cov = sum(lex.idf(t) for t in tids if t in present) / total if total else 0.0
    scores = [s for _, s, _ in c.keyword]
    steep = 1.0 if len(scores) < 10 or scores[0] <= 0 else max(0.0, (scores[0] - scores[9]) / scores[0])
    names = []
    for m in _NAME.finditer(question):
        w = m.group(0)
        before = question[:m.start()]
        if w[0].isupper() and before.strip() and not re.search(r"[.!?:;]\s*$", before):
            names += [t for t in tokenize(re.sub(r"['’]s$", "", w)) if lex.df(t)]
    subject = {}
    if names:
        has = {key: bool(lex.matched_terms(table.row_of[key], names)) for key in c.items}
        if any(has.values()):
            subject = {key: 0.5 for key, h in has.items() if not h}
    return {"coverage": cov, "steepness": steep, "subject": subject}


def old_fuse(q: dict, *, k: int, w: float, steepness: bool, coverage: bool, subject: bool,
             share) -> list[str]:
    from epimem.recall.rank import rrf

    c = q["c"]
    kw = [key for key, _, _ in c.keyword]
    sem = [key for key, _ in q["sem"][share]]
    o = q["old"]
    wk = w * (o["steepness"] if steepness else 1.0) * (o["coverage"] if coverage else 1.0)
    s = rrf([kw, sem], k, weights=(wk, 1.0))
    if subject:
        s = {key: v * o["subject"].get(key, 1.0) for key, v in s.items()}
    return sorted(s, key=lambda key: -s[key])[:10]


# --- metrics ------------------------------------------------------------------------------------

def ranked(q: dict, mode: str = "fused", *, k: int, w: float, share) -> list[str]:
    from epimem.recall.rank import fuse

    c = q["c"]
    return [r.key for r in fuse(c.keyword, q["sem"][share], c.confidence, limit=10, mode=mode, k=k,
                                kw_weight=w)]


def scores(keys: list[str], q: dict, evidence: dict) -> dict:
    gold = q["evidence"]

    def rec(n):
        got = set()
        for key in keys[:n]:
            got |= evidence.get(key, set())
        return len(gold & got) / len(gold)

    rr = next((1.0 / (i + 1) for i, key in enumerate(keys[:10]) if evidence.get(key, set()) & gold), 0.0)
    return {"R@5": rec(5), "R@10": rec(10), "MRR": rr}


def per_query(convs: list[dict], rank_fn) -> list[list[tuple[int, dict]]]:
    """(category, scores) of every query, conversation by conversation."""
    return [[(q["category"], scores(rank_fn(q), q, cv["evidence"])) for q in cv["queries"]] for cv in convs]


def summary(rows: list[list[tuple[int, dict]]]) -> dict:
    """Per category and "all": mean R@5, R@10, MRR (×100), and the number of queries."""
    per: dict = {}
    for conv in rows:
        for cat, s in conv:
            for key in (cat, "all"):
                per.setdefault(key, []).append(s)
    out = {}
    for key in list(CATEGORIES) + ["all"]:
        got = per.get(key, [])
        out[key] = {m: 100 * sum(r[m] for r in got) / len(got) if got else 0.0 for m in ("R@5", "R@10", "MRR")}
        out[key]["n"] = len(got)
    return out


def table_of(convs: list[dict], rank_fn) -> dict:
    return summary(per_query(convs, rank_fn))


EMBEDDER = "wordllama"   # main() sets the one measured: the shipped k is that embedder's


def use_embedder(name: str | None) -> str:
    """Measure `name` (None: the default): the shipped k `settings_now` gives is that embedder's.
    Every bench that fuses at the shipped settings calls this from its main."""
    global EMBEDDER
    from epimem.recall.embed import normalize_name

    EMBEDDER = normalize_name(name)
    return EMBEDDER


def settings_now() -> dict:
    from epimem.recall.rank import COMMON_SHARE, KW_WEIGHT, rrf_k_for

    return {"k": rrf_k_for(EMBEDDER), "w": KW_WEIGHT, "share": COMMON_SHARE}


def report(convs: list[dict]) -> dict:
    now = settings_now()
    rows = {
        "keyword alone": lambda q: ranked(q, "keyword", **now),
        "semantic alone": lambda q: ranked(q, "semantic", **now),
        "semantic alone, question as typed": lambda q: ranked(q, "semantic", **{**now, "share": None}),
        "fused (shipped)": lambda q: ranked(q, **now),
    }
    return {name: table_of(convs, fn) for name, fn in rows.items()}


def ablation(convs: list[dict]) -> dict:
    now = settings_now()
    before = {"k": 20, "w": 1.5, "steepness": True, "coverage": True, "subject": True, "share": None}
    variants = [
        ("before: RRF k 20, keyword ×1.5 × coverage × steepness, subject factor", before),
        ("… without the subject factor", {**before, "subject": False}),
        ("… without subject and coverage", {**before, "subject": False, "coverage": False}),
        ("plain RRF k 20, keyword ×1.5 (no subject, steepness, coverage)",
         {**before, "subject": False, "coverage": False, "steepness": False}),
        ("plain RRF k 10, keyword ×1.5", {**before, "k": 10, "subject": False, "coverage": False, "steepness": False}),
        ("plain RRF k 5, keyword ×2", {**before, "k": 5, "w": 2.0, "subject": False, "coverage": False,
                                      "steepness": False}),
        (f"plain RRF k {now['k']}, keyword ×{now['w']:g}, question as typed",
         {"k": now["k"], "w": now["w"], "steepness": False, "coverage": False, "subject": False, "share": None}),
        (f"shipped: plain RRF k {now['k']}, keyword ×{now['w']:g}, common words not embedded (> {now['share']:g})",
         {"k": now["k"], "w": now["w"], "steepness": False, "coverage": False, "subject": False,
          "share": now["share"]}),
        ("… + subject factor", {"k": now["k"], "w": now["w"], "steepness": False, "coverage": False,
                                "subject": True, "share": now["share"]}),
        ("… + coverage", {"k": now["k"], "w": now["w"], "steepness": False, "coverage": True,
                          "subject": False, "share": now["share"]}),
        ("… + steepness", {"k": now["k"], "w": now["w"], "steepness": True, "coverage": False,
                           "subject": False, "share": now["share"]}),
    ]
    return {name: table_of(convs, lambda q, s=s: old_fuse(q, **s)) for name, s in variants}


def fast_ranked(q: dict, mode: str = "fused", *, k: int, w: float, share) -> list[str]:
    """`ranked` for the grid: the same order as `rank.fuse` here, where every item has the
    same confidence (so the confidence factor changes no order), without building a Ranked
    for each candidate."""
    from epimem.recall.rank import rrf

    c = q["c"]
    kw = [key for key, _, _ in c.keyword] if mode != "semantic" else []
    sem = [key for key, _ in q["sem"][share]] if mode != "keyword" else []
    s = rrf([kw, sem], k, weights=(w if sem else 1.0, 1.0))
    kr = {key: i for i, key in enumerate(kw)}
    sr = {key: i for i, key in enumerate(sem)}
    return sorted(s, key=lambda key: (-s[key], kr.get(key, 10**9), sr.get(key, 10**9), key))[:10]


def never_below(t: dict, alone: list[dict]) -> bool:
    """Fused R@5 at or above each ranker alone on every category."""
    return all(t[c]["R@5"] >= a[c]["R@5"] - 1e-9 for a in alone for c in t if t[c]["n"])


def cross_validate(convs: list[dict]) -> dict:
    """Leave one conversation out: among the grid points whose fused R@5 is at or above
    each ranker alone on every category of the other four (when any is), the one with the
    best R@5 there, measured on the one left out."""
    grid = [{"k": k, "w": w, "share": s} for k in GRID_K for w in GRID_W for s in GRID_SHARE]
    runs = {}
    for n, g in enumerate(grid):
        runs[n] = {m: per_query(convs, lambda q, g=g, m=m: fast_ranked(q, m, **g))
                   for m in ("fused", "keyword", "semantic")}

    def judge(n, keep):
        t = {m: summary([r for j, r in enumerate(runs[n][m]) if keep(j)]) for m in runs[n]}
        return never_below(t["fused"], [t["keyword"], t["semantic"]]), t["fused"]["all"]["R@5"]

    folds = []
    for i in range(len(convs)):
        rows = [(*judge(n, lambda j, i=i: j != i), n) for n in range(len(grid))]
        ok = [r for r in rows if r[0]]
        _, r5, best = max(ok or rows, key=lambda r: (round(r[1], 6), -grid[r[2]]["k"]))
        held = summary([runs[best]["fused"][i]])["all"]["R@5"]
        folds.append({"held_out": i, "chosen": grid[best], "constrained": bool(ok), "train_R@5": r5,
                      "held_out_R@5": held, "queries": len(convs[i]["queries"])})
    total = sum(f["queries"] for f in folds)
    pooled = sum(f["held_out_R@5"] * f["queries"] for f in folds) / total
    everything = []
    for n, g in enumerate(grid):
        nb, r5 = judge(n, lambda j: True)
        everything.append({**g, "R@5": r5, "never_below": nb})
    everything.sort(key=lambda r: -r["R@5"])
    return {"folds": folds, "pooled_held_out_R@5": pooled, "best_on_all": everything[:10]}


# --- newer over older ------------------------------------------------------------------------------

PAIR_SIMILARITY = 0.7    # how alike two observations of one speaker must be to count as one subject
PAIRS_PER_CONVERSATION = 12   # evenly spaced among those found: each costs two syncs


def session_dates(conv: dict) -> dict[int, date]:
    """Observation number → its session's date ("1:56 pm on 8 May, 2023")."""
    from datetime import datetime

    days = {}
    for key, value in conv["conversation"].items():
        m = re.fullmatch(r"session_(\d+)_date_time", key)
        if m:
            days[int(m.group(1))] = datetime.strptime(value.split(" on ")[-1].strip(), "%d %B, %Y").date()
    out = {}
    n = 0
    obs = conv["observation"]
    for key in sorted(obs, key=lambda s: int(re.findall(r"\d+", s)[0])):
        session = int(re.findall(r"\d+", key)[0])
        for entries in obs[key].values():
            for _ in entries:
                n += 1
                out[n] = days.get(session, DAY)
    return out


def pairs_report(data: list[dict], embedder: str | None, root: Path) -> dict:
    """Two observations of one speaker from different sessions that say nearly the same
    thing (cosine ≥ PAIR_SIMILARITY: a restatement or an update of it), in a vault dated by
    session; the query is the words the two share. Counted: how often the newer ranks above
    the older (both in the top 10) with the newer-first rule and without it, and how often the
    older ranks first once it is confirmed after the newer was seen. PAIRS_PER_CONVERSATION of
    them, evenly spaced, keep the run short."""
    from epimem.core.text import tokens_with_words
    from epimem.recall import Recaller
    from epimem.recall.rank import Filters, fuse

    counts = {"pairs": 0, "newer_above_with_rule": 0, "newer_above_without": 0, "confirmed_older_first": 0}
    for ci, conv in enumerate(data):
        dates = session_dates(conv)
        obs = observations(conv)
        vault = root / f"pairs-{ci}"
        make_vault(conv, vault, dates=dates)
        r = Recaller(vault, today=max(dates.values()) + timedelta(days=30), embedder=embedder)
        r.sync()
        st = r.state()
        mat = st.vectors.matrix
        row = st.table.row_of
        found = []
        for i in range(len(obs)):
            for j in range(i + 1, len(obs)):
                if obs[i][1] != obs[j][1] or dates[i + 1] >= dates[j + 1]:
                    continue
                a, b = f"b/obs-{i + 1}", f"b/obs-{j + 1}"
                if float(mat[row[a]] @ mat[row[b]]) >= PAIR_SIMILARITY and obs[i][0] != obs[j][0]:
                    found.append((i + 1, j + 1))
        step = max(1, len(found) // PAIRS_PER_CONVERSATION)
        for old, new in found[::step][:PAIRS_PER_CONVERSATION]:
            shared = {t for t, _ in tokens_with_words(obs[new - 1][0])}
            query = " ".join(w for t, w in tokens_with_words(obs[old - 1][0]) if t in shared)
            if not query:
                continue
            hits = [h.id for h in r.search(query, limit=10, with_text=False)]
            c = r.candidates(query, Filters.make())
            plain = [c.items[x.key].id for x in fuse(c.keyword, c.semantic, c.confidence, limit=10)]
            o, n = f"obs-{old}", f"obs-{new}"
            if not {o, n} <= set(hits) or not {o, n} <= set(plain):
                continue
            counts["pairs"] += 1
            counts["newer_above_with_rule"] += hits.index(n) < hits.index(o)
            counts["newer_above_without"] += plain.index(n) < plain.index(o)
            # The older confirmed after the newer was seen: it is the current one again.
            path = vault / "beliefs" / f"{o}.md"
            text = path.read_text(encoding="utf-8")
            since = (dates[new] + timedelta(days=1)).isoformat()
            path.write_text(text.replace("\nconfirmed:\n", f"\nconfirmed: {since}\n", 1), encoding="utf-8")
            r.sync()
            again = [h.id for h in r.search(query, limit=10, with_text=False)]
            if {o, n} <= set(again) and again.index(o) < again.index(n):
                counts["confirmed_older_first"] += 1
            path.write_text(text, encoding="utf-8")
            r.sync()
    return counts


# --- output --------------------------------------------------------------------------------------

def print_table(title: str, rows: dict, metrics=("R@5", "R@10", "MRR")) -> None:
    first = next(iter(rows.values()))
    cols = [c for c in first if first[c]["n"]]
    print(f"\n### {title}\n")
    print("| ranking | " + " | ".join(f"{CATEGORIES.get(c, c)} ({first[c]['n']})" for c in cols) + " |")
    print("|---|" + "---|" * len(cols))
    for name, t in rows.items():
        print(f"| {name} | " + " | ".join(" / ".join(f"{t[c][m]:.1f}" for m in metrics) for c in cols) + " |")
    print(f"\n(cells: {' / '.join(metrics)}, ×100)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None, help="the folder holding locomo-dev.json")
    ap.add_argument("--embedder", default=None, help="wordllama (default) or minilm")
    ap.add_argument("--no-cv", action="store_true", help="skip the cross-validation")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    use_embedder(args.embedder)
    data = load(args.data or default_data())
    t0 = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="epimem-locomo-"))
    try:
        convs = [collect(conv, tmp / f"conversation-{i}", args.embedder) for i, conv in enumerate(data)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    built = time.perf_counter() - t0
    n_items = sum(cv["items"] for cv in convs)
    n_q = sum(len(cv["queries"]) for cv in convs)
    print(f"{len(convs)} conversations, {n_items} items, {n_q} queries; embedder {args.embedder or 'wordllama'}; "
          f"settings {settings_now()}; candidates in {built:.1f} s")
    out: dict = {"settings": settings_now(), "embedder": args.embedder or "wordllama", "queries": n_q,
                 "items": n_items}
    out["report"] = report(convs)
    print_table("Each ranker alone and fused", out["report"])
    out["ablation"] = ablation(convs)
    print_table("Ablation: the same candidates, each fusion replayed (R@5)", out["ablation"], ("R@5",))
    tmp = Path(tempfile.mkdtemp(prefix="epimem-locomo-pairs-"))
    try:
        pr = out["newer_over_older"] = pairs_report(data, args.embedder, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    n = max(1, pr["pairs"])
    print(f"\n### Newer over older ({pr['pairs']} pairs of one speaker's observations from different sessions, "
          f"cosine ≥ {PAIR_SIMILARITY})\n")
    with_rule, without, kept = pr["newer_above_with_rule"], pr["newer_above_without"], pr["confirmed_older_first"]
    print(f"newer ranked above the older: {with_rule} ({100 * with_rule / n:.0f}%) with the newer-first rule, "
          f"{without} ({100 * without / n:.0f}%) without; the older confirmed since ranked first: {kept} "
          f"({100 * kept / n:.0f}%)")
    if not args.no_cv:
        cv = out["cross_validation"] = cross_validate(convs)
        print("\n### Leave one conversation out (grid: k × keyword weight × common share)\n")
        print("| held out | queries | chosen on the other four | their R@5 | held-out R@5 |")
        print("|---|---|---|---|---|")
        for f in cv["folds"]:
            c = f["chosen"]
            print(f"| {f['held_out'] + 1} | {f['queries']} | k {c['k']}, w {c['w']:g}, share {c['share']}"
                  f"{'' if f['constrained'] else ' (no point met the per-category rule)'} | "
                  f"{f['train_R@5']:.1f} | {f['held_out_R@5']:.1f} |")
        print(f"\npooled held-out R@5: {cv['pooled_held_out_R@5']:.1f}; "
              f"shipped defaults on all five: {out['report']['fused (shipped)']['all']['R@5']:.1f}")
        print("best grid points on all five (for reference, not for choosing; * = fused never below a "
              "ranker alone on any category): " + "; ".join(
                  f"k {g['k']} w {g['w']:g} share {g['share']}: {g['R@5']:.1f}{'*' if g['never_below'] else ''}"
                  for g in cv["best_on_all"]))
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
