"""Rules 21 and 23 held by hypothesis: whatever a model types into a belief file by hand — any
confidence, any basis, a secret in any field, a broken line — no reader shows a number
`validate` refuses, and none lets the secret through.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from readers_support import TODAY

from epimem.core import rules
from epimem.core.model import BASES

pytestmark = pytest.mark.slow

SECRETS = ("ghp_Zq7Xw9Pk3Lm5Nb8Vc2Rt6Yu1Io4Ea0Sd3Fg7Hj", "sk-ant-Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk",
           "password: hunter2hunter2", "AKIAABCDEFGHIJKLMNOP")
FIELDS = ("title", "statement", "tag", "evidence", "scope")

edits = st.fixed_dictionaries({
    "confidence": st.floats(0, 1).map(lambda x: round(x, 2)),
    "basis": st.sampled_from(BASES),
    "secret": st.sampled_from(SECRETS),
    "where": st.sampled_from(FIELDS),
    "broken": st.booleans(),
})


def _apply(path: Path, e: dict) -> None:
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    for i, ln in enumerate(lines):
        if ln.startswith("confidence:"):
            lines[i] = f"confidence: {e['confidence']:.2f}"
        elif ln.startswith("basis:"):
            lines[i] = f"basis: {e['basis']}"
        elif ln.startswith("title:") and e["where"] == "title":
            lines[i] = f"title: Avoids ORMs {e['secret']}"
        elif ln.startswith("tags:") and e["where"] == "tag":
            lines[i] = f'tags: ["{e["secret"]}"]'
        elif ln.startswith("scope:") and e["where"] == "scope":
            lines[i] = f'scope: "{e["secret"]}"'
        elif ln.startswith("status:") and e["broken"]:
            lines[i] = "status: [unclosed"
    text = "\n".join(lines)
    if e["where"] == "statement":
        text = text.replace("Writes SQL by hand.", f"Writes SQL by hand. {e['secret']}")
    if e["where"] == "evidence":
        text = text.rstrip("\n") + f"\n- 2026-11-30 · edited — typed {e['secret']}\n"
    path.write_text(text, encoding="utf-8")


def _leaks(text: str) -> bool:
    low = text.lower()
    return any(s.split()[-1].lower()[4:] in low for s in SECRETS)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(e=edits)
def test_no_reader_shows_an_invalid_number_or_a_secret(cli, e):
    from vaults import new_vault

    tmp = Path(tempfile.mkdtemp(prefix="epimem-readers-"))
    try:
        mem = new_vault(tmp / "v", today=TODAY)
        mem.add_belief(title="Avoids ORMs", statement="Writes SQL by hand.", kind="preference",
                       basis="behavioral", permanence="durable")
        _apply(mem.root / "beliefs" / "avoids-orms.md", e)
        params = mem.params
        for b in mem.beliefs(status=None):
            assert rules.rule_problems(b, params, today=None) == [], (e, b)  # rule 20 is the writers'
        outputs = [cli("--vault", mem.root, *args).out for args in (
            ("belief", "list", "--json", "--status", "all"), ("belief", "show", "avoids-orms", "--json"),
            ("export",), ("mirror", "audit", "--json"), ("recall", "orms", "--json"))]
        from epimem.store.context_cache import refresh_context

        outputs.append(json.dumps(refresh_context(mem.root)))
        for out in outputs:
            assert not _leaks(out), (e, out[:2000])
        shown = json.loads(outputs[0])["beliefs"]
        for b in shown:
            assert b["confidence"] <= rules.cap(b["basis"], params) + 1e-9, (e, b)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
