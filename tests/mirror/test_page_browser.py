"""The visual mirror in a real browser: headless Chromium from Debian (.ci/setup.d/chromium.sh),
driven by Playwright for Python with the system executable (Playwright never downloads a browser)."""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from page_support import KNOWN, KNOWN_MARKERS, KNOWN_STEPS, XSS, XSS_TITLE, history_vault

pytestmark = pytest.mark.e2e
WT = Path(__file__).resolve().parents[2]


def _chromium() -> str:
    for name in (os.environ.get("EPIMEM_CHROMIUM", ""), "chromium", "chromium-browser"):
        if name and (path := shutil.which(name)):
            return path
    pytest.skip("chromium is not installed (Debian: apt-get install chromium; CI runs .ci/setup.d/chromium.sh)")


@pytest.fixture(scope="module")
def browser():
    exe = _chromium()
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed (pip install -e '.[test]')")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    root = history_vault(tmp_path_factory.mktemp("browser") / "vault")
    out = root.parent / "mirror.html"
    env = {**os.environ, "PYTHONPATH": str(WT), "EPIMEM_TODAY": "2026-11-30"}
    r = subprocess.run([sys.executable, "-m", "epimem", "--vault", str(root), "mirror", "page", "--out", str(out)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return out


def _expect(locator):
    from playwright.sync_api import expect

    return expect(locator)


class Watched:
    """A page with everything it logs, throws, asks and fetches recorded."""

    def __init__(self, browser, **context):
        self.ctx = browser.new_context(**context)
        self.page = self.ctx.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))

        def dialog(d):
            self.dialogs.append(d.message)
            d.dismiss()
        self.page.on("dialog", dialog)

    def close(self):
        self.ctx.close()


@pytest.fixture
def watched(browser):
    made: list[Watched] = []

    def make(**context) -> Watched:
        w = Watched(browser, **context)
        made.append(w)
        return w

    yield make
    for w in made:
        w.close()


def test_page_loads_with_no_console_error_and_no_request_outside_the_file(watched, page_file):
    w = watched()
    w.page.goto(page_file.as_uri(), wait_until="load")
    w.page.wait_for_timeout(300)  # let the filter script run
    assert w.errors == []
    assert w.requests == [page_file.as_uri()]
    assert w.page.title().startswith("Mirror · vault · 2026-11-30")
    assert w.page.locator("#filter").is_visible()


def test_static_content_reads_without_javascript(watched, page_file):
    w = watched(java_script_enabled=False)
    w.page.goto(page_file.as_uri())
    assert w.page.locator(f"#b-{KNOWN} h4").inner_text() == "Reviews diffs line by line"
    assert w.page.locator(f'svg[data-belief="{KNOWN}"] circle.step').count() == len(KNOWN_STEPS)
    assert not w.page.locator("#filter").is_visible()  # it would do nothing without the script
    assert "The filter needs JavaScript" in w.page.locator("#beliefs").inner_text()


def test_known_belief_shows_exactly_its_points(watched, page_file):
    w = watched()
    w.page.goto(page_file.as_uri())
    chart = w.page.locator(f'svg[data-belief="{KNOWN}"]')
    pts = chart.locator("circle.step").evaluate_all(
        "els => els.map(e => [e.dataset.date, e.dataset.value, +e.getAttribute('cx'), +e.getAttribute('cy')])")
    assert [(d, v) for d, v, _, _ in pts] == KNOWN_STEPS
    xs = [x for _, _, x, _ in pts]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)          # one x per day, in date order
    ys = {v: y for _, v, _, y in pts}
    assert ys["0.40"] < ys["0.35"] < ys["0.30"] < ys["0.20"]     # higher confidence is drawn higher
    markers = chart.locator("a.marker").evaluate_all("els => els.map(e => [e.dataset.date, e.dataset.kind])")
    assert [tuple(m) for m in markers] == KNOWN_MARKERS
    # The table behind the chart says the same, for a reader who cannot see it.
    rows = w.page.locator(f"#b-{KNOWN} table.steps-table tbody tr").evaluate_all(
        "els => els.map(e => [e.cells[0].textContent, e.cells[1].textContent])")
    assert [tuple(r) for r in rows] == KNOWN_STEPS
    # Keyboard: a marker takes the focus and Enter opens its evidence line.
    rejection = chart.locator("a.marker.rejection")
    rejection.focus()
    assert w.page.evaluate("document.activeElement.classList.contains('rejection')")
    w.page.keyboard.press("Enter")
    target = w.page.evaluate("location.hash")
    assert target.startswith(f"#ev-{KNOWN}-")
    line = w.page.locator(target)
    line.wait_for(state="visible", timeout=2000)
    assert "only for risky changes" in line.inner_text()


def test_filter_narrows_the_list(watched, page_file):
    w = watched()
    w.page.goto(page_file.as_uri())
    visible = "els => els.filter(e => e.offsetParent !== null).map(e => e.dataset.id)"
    every = w.page.locator(".belief[data-id]").evaluate_all(visible)
    assert len(every) == int(w.page.locator("#f-count").inner_text().split(" of ")[1].split()[0])
    w.page.locator("#f-text").fill("diff")
    _expect(w.page.locator("#f-count")).to_have_text(re.compile(r"^1 of "), timeout=2000)
    assert w.page.locator(".belief[data-id]").evaluate_all(visible) == [KNOWN]
    w.page.locator("#f-text").fill("")
    w.page.locator("#f-kind").select_option("workflow")
    w.page.wait_for_timeout(200)
    shown = w.page.locator(".belief[data-id]").evaluate_all(visible)
    assert KNOWN in shown and 1 < len(shown) < len(every)
    assert set(w.page.locator(".belief[data-id]").evaluate_all(
        "els => els.filter(e => e.offsetParent !== null).map(e => e.dataset.kind)")) == {"workflow"}
    w.page.locator("#f-kind").select_option("")
    w.page.locator("#f-tag").select_option("review")
    w.page.wait_for_timeout(200)
    assert w.page.locator(".belief[data-id]").evaluate_all(visible) == [KNOWN]


def test_markup_in_a_title_shows_as_text(watched, page_file):
    w = watched()
    w.page.goto(page_file.as_uri())
    w.page.wait_for_timeout(300)
    assert w.dialogs == []
    assert w.page.locator(f"#b-{XSS} h4").inner_text() == XSS_TITLE
    assert w.page.locator(f"#b-{XSS} .statement").inner_text() == 'Says <img src=x onerror="alert(2)"> & means it.'
    assert w.page.locator("main script, main img").count() == 0
    w.page.locator("#f-text").fill("<script>")
    _expect(w.page.locator("#f-count")).to_have_text(re.compile(r"^1 of "), timeout=2000)
    assert w.dialogs == []


def _busy_pixels(browser, png: bytes) -> tuple[int, float]:
    """(distinct colours, share of pixels unlike the corner's), decoded by the browser itself."""
    ctx = browser.new_context()
    try:
        p = ctx.new_page()
        return tuple(p.evaluate("""async (src) => {
            const img = new Image(); img.src = src; await img.decode();
            const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
            const g = c.getContext('2d'); g.drawImage(img, 0, 0);
            const d = g.getImageData(0, 0, c.width, c.height).data;
            const colours = new Set(); let unlike = 0;
            for (let i = 0; i < d.length; i += 4) {
              colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
              if (Math.abs(d[i] - d[0]) + Math.abs(d[i + 1] - d[1]) + Math.abs(d[i + 2] - d[2]) > 60) unlike++;
            }
            return [colours.size, unlike / (d.length / 4)];
        }""", "data:image/png;base64," + base64.b64encode(png).decode()))
    finally:
        ctx.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshot_is_not_blank_in_light_and_dark(browser, watched, page_file, tmp_path, scheme):
    w = watched(viewport={"width": 1000, "height": 1200}, color_scheme=scheme)
    w.page.goto(page_file.as_uri())
    png = w.page.locator(f"#b-{KNOWN}").screenshot()
    colours, unlike = _busy_pixels(browser, png)
    assert colours > 20 and 0.01 < unlike < 0.6, (colours, unlike)
    bg = w.page.evaluate("getComputedStyle(document.body).backgroundColor")
    lum = sum(int(x) for x in bg[bg.index("(") + 1:bg.index(")")].split(",")[:3])
    assert (lum < 150) if scheme == "dark" else (lum > 600), bg


def test_prints_legibly(watched, page_file, tmp_path):
    w = watched()
    w.page.goto(page_file.as_uri())
    w.page.emulate_media(media="print", color_scheme="dark")
    assert w.page.evaluate("getComputedStyle(document.body).color") == "rgb(0, 0, 0)"
    assert w.page.evaluate("getComputedStyle(document.body).backgroundColor") in ("rgb(255, 255, 255)",)
    assert not w.page.locator("#filter").is_visible() and not w.page.locator("nav").is_visible()
    pdf = w.page.pdf(format="A4")
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page") > 3


def test_serve_updates_the_page_within_2_s_of_a_hand_edit(watched, tmp_path):
    root = history_vault(tmp_path / "vault")
    env = {**os.environ, "PYTHONPATH": str(WT), "EPIMEM_TODAY": "2026-11-30"}
    proc = subprocess.Popen([sys.executable, "-m", "epimem", "--vault", str(root), "mirror", "serve", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert " at http://127.0.0.1:" in line, line + proc.stderr.read() if proc.poll() is not None else line
        url = line.rsplit(" at ", 1)[1].strip()
        w = watched()
        w.page.goto(url)
        title = w.page.locator("#b-terse-answers h4")
        assert title.inner_text() == "Wants terse answers for routine code"
        p = root / "beliefs" / "terse-answers.md"
        text = p.read_text(encoding="utf-8")
        t0 = time.monotonic()
        p.write_text(text.replace("title: Wants terse answers for routine code",
                                  "title: Wants terse answers, edited by hand"), encoding="utf-8")
        # The page's CSP forbids eval, so wait with Playwright's own assertion, not wait_for_function.
        _expect(w.page.locator("#b-terse-answers h4")).to_have_text("Wants terse answers, edited by hand",
                                                                     timeout=2000)
        assert time.monotonic() - t0 < 2.0
        assert w.errors == []
        origin = url.split("/?")[0]
        assert all(r.startswith(origin + "/") for r in w.requests), w.requests
        assert subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True,
                              text=True).stdout.strip() == "M beliefs/terse-answers.md"  # only the hand edit
    finally:
        proc.terminate()
        proc.wait(timeout=10)
