"""The session-start context cache: `.epimem/context.json`.

The hook runs before every Claude Code session and must not parse a 10,000
belief vault to do it. Every epimem write calls `refresh_context`, which
keeps, per scope and for global beliefs, the few dozen active beliefs most
worth showing, as compact records carrying exactly what the hook needs to
decay and render them. The hook reads this one small file.

The module is imported by the hook, so its top level imports only the
standard library; the vault and the rules are imported inside the functions
that rebuild the cache.

`python -m epimem.context VAULT` rebuilds the cache (the hook starts it in
the background when it finds the cache older than the beliefs).
"""

from __future__ import annotations

import json
import math
import os
import sys
from datetime import date

CACHE_VERSION = 1
CACHE_NAME = "context.json"
PER_SCOPE = 50  # records kept per scope and for global: more than any budget shows
GIST_CHARS = 220

# What the hook needs from `epistemology.md` when there is no cache yet. A test
# keeps these equal to `epimem.core.params.DEFAULTS`, which costs ~15 ms to
# import and so stays off the hook's path.
FALLBACK_PARAMS = {
    "decay": {"stable": 0.001, "durable": 0.005, "situational": 0.015, "unknown": 0.010},
    "decay_floor": 0.20,
    "dormancy_days": 30,
    "review_every_days": 30,
    "tiers": [["factual", 0.90], ["established", 0.70], ["developing", 0.50],
              ["tentative", 0.30], ["speculative", 0.00]],
}


# --- shared with the hook: cheap, dependency-free ---------------------------------

def signature(root: str | os.PathLike) -> dict[str, int]:
    """What the cache was built from: the beliefs folder and the rules file.

    epimem writes files by rename, which changes the folder's mtime, so a
    write anywhere in `beliefs/` is seen with one stat. (An editor that saves
    in place does not change it: `epimem watch` or the next epimem command
    refreshes the cache then.)
    """
    out = {}
    for key, rel in (("beliefs", "beliefs"), ("epistemology", "epistemology.md")):
        try:
            out[key] = os.stat(os.path.join(root, rel)).st_mtime_ns
        except OSError:
            out[key] = 0
    return out


def effective(rec: dict, today: date, params: dict) -> float:
    """Rule 7 on a cache record; equal to `rules.effective_confidence` (tested)."""
    stored = rec["confidence"]
    if rec.get("pinned"):
        return stored
    decay = params["decay"]
    lam = decay.get(rec["permanence"], decay.get("unknown", 0.010))
    anchor = date.fromisoformat(rec.get("confirmed") or rec["first"])
    days = max(0, (today - anchor).days)
    return max(stored * math.exp(-lam * days), min(stored, params["decay_floor"]))


def tier(confidence: float, params: dict) -> str:
    for name, low in params["tiers"]:
        if confidence >= low - 1e-9:
            return name
    return params["tiers"][-1][0]


def cache_path(root: str | os.PathLike) -> str:
    return os.path.join(root, ".epimem", CACHE_NAME)


def read_context_cache(root: str | os.PathLike) -> dict | None:
    """The cache, or None when it is missing, unreadable or of another version."""
    try:
        with open(cache_path(root), encoding="utf-8") as fh:
            cache = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(cache, dict) or cache.get("version") != CACHE_VERSION:
        return None
    return cache


# --- building it (pure) --------------------------------------------------------------

def gist(statement: str, limit: int = GIST_CHARS) -> str:
    """The statement's first sentence, on one line."""
    text = " ".join(statement.split())
    for i, ch in enumerate(text):
        if ch in ".!?" and (i + 1 == len(text) or text[i + 1] == " ") and i >= 12:
            text = text[:i + 1]
            break
    if len(text) > limit:
        text = text[:limit - 1].rstrip() + "…"
    return text


def record(b) -> dict:
    return {
        "id": b.id, "title": b.title, "gist": gist(b.statement), "kind": b.kind,
        "basis": b.basis, "confidence": round(b.confidence, 2), "permanence": b.permanence,
        "first": b.first.isoformat(), "confirmed": b.confirmed.isoformat() if b.confirmed else None,
        "pinned": b.pinned, "scope": b.scope, "tags": list(b.tags),
    }


def params_record(params) -> dict:
    return {
        "decay": dict(params.decay), "decay_floor": params.decay_floor,
        "dormancy_days": params.dormancy_days, "review_every_days": params.review_every_days,
        "tiers": [[n, low] for n, low in params.tiers],
    }


def build_context_cache(beliefs, params, today: date, *, sig: dict | None = None,
                        problems: int = 0, per_scope: int = PER_SCOPE) -> dict:
    """Per scope (and global), the active beliefs ranked by effective confidence today.

    Pure: `beliefs` are `Belief` values, `params` a `Params`. Decay moves
    slowly, so a ranking made at the last write is still right at the next
    session start; the hook re-ranks the kept records with today's date.
    """
    prm = params_record(params)
    groups: dict[str, list[tuple[float, dict]]] = {}
    active = 0
    for b in beliefs:
        if b.status != "active":
            continue
        active += 1
        rec = record(b)
        groups.setdefault(b.scope or "global", []).append((effective(rec, today, prm), rec))
    ranked: dict[str, list[dict]] = {}
    for scope, items in groups.items():
        items.sort(key=lambda x: (-x[0], -x[1]["confidence"], x[1]["id"]))
        ranked[scope] = [rec for _, rec in items[:per_scope]]
    return {
        "version": CACHE_VERSION,
        "built": today.isoformat(),
        "signature": sig or {},
        "params": prm,
        "counts": {"beliefs": len(beliefs), "active": active, "problems": problems,
                   "scopes": {s: len(v) for s, v in groups.items()}},
        "global": ranked.pop("global", []),
        "scopes": ranked,
    }


# --- I/O -------------------------------------------------------------------------------

def write_context_cache(root: str | os.PathLike, cache: dict) -> None:
    """Atomic: the hook reads the old cache or the new one, never half of one."""
    path = cache_path(root)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(cache, fh, ensure_ascii=False, separators=(",", ":"))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def refresh_context(root: str | os.PathLike, today: date | None = None) -> dict:
    """Rebuild `.epimem/context.json` from the vault's files (called after every write)."""
    from .clock import ClockError, today as clock_today
    from .vault import Vault

    vault = Vault(root)
    # Taken before reading, so a write that lands while we read leaves the
    # cache marked stale rather than looking current.
    sig = signature(vault.root)
    if today is None:
        try:
            today = clock_today()
        except ClockError:
            today = date.today()
    params, _ = vault.params()
    beliefs, problems = vault.load_beliefs()
    cache = build_context_cache(beliefs, params, today, sig=sig, problems=len(problems))
    write_context_cache(vault.root, cache)
    return cache


def update_context(root: str | os.PathLike, changed, params, today: date,
                   sig_before: dict | None) -> dict:
    """Fold the beliefs one write changed into the cache, without reading the vault.

    A full rebuild reads 10,000 beliefs; an observation touches three. The
    update is exact for the changed beliefs; a belief that leaves a top list
    is not replaced by the next one until the next full rebuild, which is the
    hook's background refresh or any later rebuild. If anything else changed
    since the cache was built (`sig_before` differs), rebuild fully instead.
    """
    cache = read_context_cache(root)
    prm = params_record(params)
    if cache is None or cache.get("signature") != sig_before or cache.get("params") != prm:
        return refresh_context(root, today)
    ids = {b.id for b in changed}
    groups: dict[str, list[dict]] = {"global": cache.get("global", []), **cache.get("scopes", {})}
    touched = set()
    for scope, recs in groups.items():
        kept = [r for r in recs if r["id"] not in ids]
        if len(kept) != len(recs):
            groups[scope] = kept
            touched.add(scope)
    for b in changed:
        if b.status == "active":
            scope = b.scope or "global"
            groups.setdefault(scope, []).append(record(b))
            touched.add(scope)
    for scope in touched:
        groups[scope].sort(key=lambda r: (-effective(r, today, prm), -r["confidence"], r["id"]))
        del groups[scope][PER_SCOPE:]
    cache["global"] = groups.pop("global")
    cache["scopes"] = groups
    cache["signature"] = signature(root)
    write_context_cache(root, cache)
    return cache


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m epimem.context VAULT", file=sys.stderr)
        return 2
    marker = os.path.join(args[0], ".epimem", "context.refreshing")
    try:
        refresh_context(args[0])
    finally:
        try:
            os.unlink(marker)
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
