"""The review inbox's buttons in a real browser: headless Chromium (.ci/setup.d/chromium.sh) on the
page `epimem mirror serve` serves, clicking Accept as the user would."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from inbox_support import require_review

pytestmark = pytest.mark.e2e
WT = Path(__file__).resolve().parents[2]
BELIEF = "prefers-small-pull-requests"


def _chromium() -> str:
    for name in (os.environ.get("EPIMEM_CHROMIUM", ""), "chromium", "chromium-browser"):
        if name and (path := shutil.which(name)):
            return path
    pytest.skip("chromium is not installed (CI runs .ci/setup.d/chromium.sh)")


@pytest.mark.seed_rules
def test_clicking_accept_on_the_served_page_applies_the_proposal(vault):
    exe = _chromium()
    sync_api = pytest.importorskip("playwright.sync_api")
    vault.add_belief(title="Prefers small pull requests", statement="Splits work into small, reviewable PRs.",
                     kind="workflow", basis="behavioral", permanence="durable")
    require_review(vault)
    first = vault.observe([{"connects": BELIEF, "strength": "confirming", "evidence": "Split the PR in three.",
                            "session": "s1"}], source="agent", origin="mcp").proposed[0]
    second = vault.observe([{"connects": BELIEF, "strength": "confirming", "evidence": "Split the docs off.",
                             "session": "s2"}], source="agent", origin="mcp").proposed[0]
    env = {**os.environ, "PYTHONPATH": str(WT), "EPIMEM_TODAY": "2026-11-30"}
    proc = subprocess.Popen([sys.executable, "-m", "epimem", "--vault", str(vault.root), "mirror", "serve",
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert " at http://127.0.0.1:" in line, line
        url = line.rsplit(" at ", 1)[1].strip()
        with sync_api.sync_playwright() as p:
            b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
            page = b.new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(url)
            card = page.locator(f"#{first}")
            sync_api.expect(card).to_contain_text("0.30 → 0.35")
            card.get_by_role("button", name="Accept").click()
            page.wait_for_load_state()
            sync_api.expect(page.locator(f"#{first}")).to_have_count(0, timeout=5000)
            sync_api.expect(page.locator(f"#{second}")).to_have_count(1)
            page.locator(f"#{second}").get_by_role("button", name="Reject").click()
            sync_api.expect(page.locator("#inbox")).to_contain_text("Nothing waits for your review.", timeout=5000)
            b.close()
        assert errors == [], errors
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    from epimem.api.memory import Memory

    assert Memory(vault.root).belief(BELIEF).confidence == 0.35
    assert (vault.root / "inbox" / "rejected" / f"{second}.md").is_file()
    log = subprocess.run(["git", "log", "-2", "--format=%s"], cwd=vault.root, capture_output=True, text=True).stdout
    assert log.splitlines()[0].startswith("inbox reject") and log.splitlines()[1].startswith("inbox accept")
