"""Does epimem follow a person who changes, and does "0.80" mean right four times in five?

    python bench/bench_tracking.py [--people 8] [--days 365] [--backend core|api] [--seed 26]
                                   [--observers good,middle,poor] [--sweep] [--follow]
                                   [--grid 'start=0.3,0.55;step=0.05,0.08;…'] [--point 'start=0.55;…']
                                   [--decompose] [--out bench/out/tracking.json]

Simulated people (bench/tracking_sim.py: traits that hold, change abruptly or slowly, rest
on each other, or were never there) live a year of sessions; observers of three qualities
record what they see; the user answers the questions the session context asks and, when a
review is due, a gut-check. For each observer quality it reports, at every session start:

- ECE and Brier of each active belief's effective confidence against how often the belief
  is right when relied on (the chance that a session's behaviour bears it out), and the same
  against whether it holds at all (`*_holds`);
- the stale-serve rate: session starts whose context listed, as current, a belief the person
  had left;
- sessions from a change until the context stops listing the old belief as current (median,
  90th percentile), changes never followed, and tension detection (a tension, or the user's
  word, on the old belief within 60 days of the change);
- wrongful retirements (a true belief retired or superseded: without the user, and by the
  user's mistaken word) and true beliefs lowered by a rule;
- with `--follow`: the same with the calibration proposals of the audit applied at every
  review (`audit --apply`), and the proposals made.

Every run reports two sets of rule parameters: `seed`, SPEC §2's first numbers (behavioural
start 0.30, confirmation step 0.05, challenge step 0.10, read from the sample vault, which pins
them), and `defaults`, what a fresh vault gets now (chosen with this benchmark, issue 26). A
lever `--grid`, `--point` or `--sweep` does not name keeps the seed's value, so that every
figure published before the defaults moved reproduces with its command.

`--backend core` (the default) runs the rules' pure functions in memory (the fast path;
which functions, in tracking_sim.py); `--backend api` runs the product on a vault in a
temporary folder (every observation a commit, the context from the hook's cache).
`--sweep` runs a grid of parameters on the fast path for every observer quality; `--grid` a
wider one over the levers of `LEVERS`, each point judged by its worst observer; `--point` adds
the full report for one point; `--decompose` splits the ECE by band, kind of belief and period,
and the stale serves by cause.

Figures and the table of defaults: docs/benchmarks.md ("Belief tracking").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import tracking_sim as ts  # noqa: E402

from epimem.core.notes import parse_note  # noqa: E402
from epimem.core.params import DEFAULTS, Params, params_from_meta  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def seed_params() -> Params:
    """SPEC §2's first rule numbers, as the sample vault's epistemology.md pins them."""
    meta = parse_note((ROOT / "vault" / "epistemology.md").read_text(encoding="utf-8")).meta
    params, problems = params_from_meta(meta, "vault/epistemology.md")
    if problems:
        raise SystemExit("; ".join(p.message for p in problems))
    return params


SEED = seed_params()

KEYS = ("ece", "brier", "ece_last_quarter", "ece_holds", "brier_holds", "stale_serve_rate", "sessions_to_follow_median",
        "sessions_to_follow_p90", "unfollowed", "detection_rate", "wrong_retired_auto", "wrong_retired_user",
        "lowered_true", "questions_asked", "verdicts")


LEVERS = {
    "start": "rule 1: the behavioural start", "step": "rule 3: the confirmation step",
    "challenge": "rule 4: the challenge step", "free": "rule 4: challenges before confidence drops",
    "decay": "rule 7: a factor on every rate", "fast": "rule 7: a further factor on situational and unknown",
    "list": "the session context's listing threshold (api/context.MIN_EFFECTIVE)",
}


def grid(spec: str) -> dict[str, tuple[Params, float]]:
    """`start=0.3,0.5;step=0.05,0.1;challenge=0.1,0.2;…` (`LEVERS`): every combination, as
    (parameters, listing threshold)."""
    import itertools

    from epimem.api import context

    axes: dict[str, list[float]] = {}
    for part in filter(None, spec.split(";")):
        k, _, vs = part.partition("=")
        if k.strip() not in LEVERS:
            raise SystemExit(f"--grid: unknown lever {k!r} (one of {', '.join(LEVERS)})")
        axes[k.strip()] = [float(v) for v in vs.split(",")]
    out: dict[str, tuple[Params, float]] = {}
    for combo in itertools.product(*axes.values()):
        v = dict(zip(axes, combo))
        rate = v.get("decay", 1.0)
        fast = v.get("fast", 1.0)
        params = replace(
            SEED, start={**SEED.start, "behavioral": v.get("start", SEED.start["behavioral"])},
            confirm_step=v.get("step", SEED.confirm_step),
            challenge_step=v.get("challenge", SEED.challenge_step),
            free_challenges=int(v.get("free", SEED.free_challenges)),
            decay={k: r * rate * (fast if k in ("situational", "unknown") else 1.0) for k, r in SEED.decay.items()})
        name = ", ".join(f"{k} {x:g}" for k, x in v.items())
        out[name] = (params, v.get("list", context.MIN_EFFECTIVE))
    return out


def candidates() -> dict[str, Params]:
    out: dict[str, Params] = {}
    for start in (0.30, 0.40, 0.50):
        for step in (0.05, 0.08, 0.10):
            for slow in (1.0, 0.5):
                name = f"start {start:.2f}, step {step:.2f}, decay ×{slow:g}"
                out[name] = replace(SEED, start={**SEED.start, "behavioral": start}, confirm_step=step,
                                    decay={k: v * slow for k, v in SEED.decay.items()})
    return out


def row(label: str, s: dict) -> str:
    def f(k: str) -> str:
        v = s.get(k)
        return "—" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))
    return f"| {label} | " + " | ".join(f(k) for k in KEYS) + " |"


def header() -> list[str]:
    return ["| run | " + " | ".join(KEYS) + " |", "|---|" + "---:|" * len(KEYS)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--people", type=int, default=8)
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--backend", choices=("core", "api"), default="core")
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--observers", default="good,middle,poor")
    ap.add_argument("--sweep", action="store_true", help="a grid of parameters on the fast path")
    ap.add_argument("--follow", action="store_true", help="also: follow the calibration proposals")
    ap.add_argument("--propose-min", type=int, default=None,
                    help="verdicts before a proposal (core/calibration.PROPOSE_MIN)")
    ap.add_argument("--no-questions", action="store_true",
                    help="the fast path's context without open questions (as before SPEC §14)")
    ap.add_argument("--grid", default="", help="a wider sweep of levers on the fast path: "
                    "'start=0.3,0.5;step=0.05,0.1;challenge=0.1,0.2;free=1,0;decay=1,0.5;fast=1,2;list=0.3,0.4'")
    ap.add_argument("--point", default="",
                    help="the full report for one point of the levers as well (--grid's syntax, one value each)")
    ap.add_argument("--decompose", action="store_true",
                    help="also: the ECE by band, kind of belief and period; the stale serves by cause")
    ap.add_argument("--verdicts", choices=("fit", "holds"), default="holds",
                    help="what the simulated user's 'still true?' answers: a draw of the session fit "
                         "(what the ECE scores) or whether it holds at all (before round 4)")
    ap.add_argument("--spurious", type=int, default=ts.SPURIOUS,
                    help="one-off patterns per person (the world's base rate of first sightings that are not habits)")
    ap.add_argument("--out", default=str(HERE / "out" / "tracking.json"))
    a = ap.parse_args(argv)
    if a.grid:
        return sweep_grid(a)
    observers = [o for o in a.observers.split(",") if o]
    if a.propose_min is not None:
        from epimem.core import calibration

        calibration.PROPOSE_MIN = a.propose_min
    results: dict = {"people": a.people, "days": a.days, "backend": a.backend, "seed": a.seed,
                     "questions": not a.no_questions, "propose_min": a.propose_min,
                     "verdicts": a.verdicts, "spurious": a.spurious, "load": _load(), "runs": {}}
    lines = header()
    t0 = time.time()
    configs = {"seed": SEED, "defaults": DEFAULTS}
    if a.point:
        (point, (params_, listing)), *more = grid(a.point).items()
        if more or listing != context_threshold():
            raise SystemExit("--point: one value per lever, and no listing threshold (use --grid)")
        configs[point] = params_
    if a.sweep:
        configs.update(candidates())
    for name, params in configs.items():
        for o in observers:
            for follow in ((False, True) if a.follow else (False,)):
                t = time.time()
                fig = ts.run(a.people, o, backend="core" if a.sweep else a.backend, seed=a.seed, params=params,
                             follow_proposals=follow, days=a.days, questions=not a.no_questions,
                             verdicts=a.verdicts, spurious=a.spurious)
                s = fig.summary()
                s["seconds"] = round(time.time() - t, 1)
                label = f"{name} · {o}" + (" · following proposals" if follow else "")
                results["runs"][label] = s
                lines.append(row(label, s))
                print(lines[-1], flush=True)
                if a.decompose:
                    s["decomposition"] = decomposition(fig, params)
                    print(json.dumps(s["decomposition"], indent=1, ensure_ascii=False), flush=True)
    if a.sweep:
        lines += ["", "Worst observer per configuration (ECE, stale-serve at the middle observer):"]
        worst = {}
        for name in configs:
            runs = [results["runs"][f"{name} · {o}"] for o in observers]
            worst[name] = (max(r["ece"] for r in runs),
                           results["runs"].get(f"{name} · middle", runs[0])["stale_serve_rate"])
        for name, (e, st) in sorted(worst.items(), key=lambda kv: kv[1]):
            lines.append(f"- {name}: worst ECE {e:.3f}, middle stale-serve {st:.3f}")
        results["worst"] = {k: {"ece": v[0], "stale_middle": v[1]} for k, v in worst.items()}
    results["seconds"] = round(time.time() - t0, 1)
    print("\n".join(lines[2:] if not a.sweep else lines[-len(configs) - 1:]))
    print(f"{a.people} people × {a.days} days, backend {a.backend}, seed {a.seed}; {results['seconds']} s; "
          f"load {results['load']}")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


def context_threshold() -> float:
    from epimem.api import context

    return context.MIN_EFFECTIVE


def decomposition(fig: ts.Figures, params: Params) -> dict:
    from collections import Counter

    n = max(1, fig.sessions)
    return {"bands": ts.decompose_bands(fig.tagged, params), "kinds": ts.decompose(fig.tagged, 2),
            "periods": ts.decompose(fig.tagged, 3),
            "stale_causes": {k: round(v / n, 4) for k, v in Counter(fig.stale_causes).most_common()}}


def sweep_grid(a) -> int:
    """Each point of `--grid` for every observer; a point is judged by its worst observer."""
    from epimem.api import context

    observers = [o for o in a.observers.split(",") if o]
    points = grid(a.grid)
    results: dict = {"people": a.people, "days": a.days, "seed": a.seed, "grid": a.grid, "verdicts": a.verdicts,
                     "spurious": a.spurious, "load": _load(), "runs": {}}
    t0 = time.time()
    print("| point | worst ECE | ECE by observer | worst stale-serve | stale-serve by observer | "
          "wrongful (auto) | sessions to follow p90 (worst) | true beliefs listed per session (fewest) |", flush=True)
    print("|---|---:|---|---:|---|---:|---:|---:|", flush=True)
    keep = context.MIN_EFFECTIVE
    try:
        for name, (params, listing) in points.items():
            context.MIN_EFFECTIVE = listing
            per = {}
            for o in observers:
                fig = ts.run(a.people, o, backend="core", seed=a.seed, params=params, days=a.days,
                             follow_proposals=a.follow, verdicts=a.verdicts, spurious=a.spurious)
                s = fig.summary()
                per[o] = {k: s[k] for k in ("ece", "ece_last_quarter", "stale_serve_rate", "wrong_retired_auto",
                                            "sessions_to_follow_p90", "lowered_true", "unfollowed",
                                            "served_true_per_session")}
                if a.decompose:
                    per[o]["decomposition"] = decomposition(fig, params)
            worst = {"ece": max(r["ece"] for r in per.values()),
                     "stale": max(r["stale_serve_rate"] for r in per.values()),
                     "auto": sum(r["wrong_retired_auto"] for r in per.values()),
                     "p90": max(r["sessions_to_follow_p90"] or 0 for r in per.values()),
                     "served": min(r["served_true_per_session"] for r in per.values())}
            results["runs"][name] = {"observers": per, "worst": worst}
            print(f"| {name} | {worst['ece']:.3f} | " + " / ".join(f"{r['ece']:.3f}" for r in per.values())
                  + f" | {100 * worst['stale']:.1f} % | "
                  + " / ".join(f"{100 * r['stale_serve_rate']:.1f}" for r in per.values())
                  + f" | {worst['auto']} | {worst['p90']} | {worst['served']:.2f} |", flush=True)
    finally:
        context.MIN_EFFECTIVE = keep
    results["seconds"] = round(time.time() - t0, 1)
    print(f"{a.people} people × {a.days} days, seed {a.seed}, observers {','.join(observers)}; "
          f"{results['seconds']} s; load {results['load']} → {_load()}")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


def _load() -> str:
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return os.getloadavg().__repr__() if hasattr(os, "getloadavg") else "?"


if __name__ == "__main__":
    sys.exit(main())
