"""The screenshot of the visual mirror in docs/ (docs/mirror-page.png).

    python bench/mirror_page_screenshot.py [--out docs/mirror-page.png] [--chromium PATH]

Builds the sample vault (`vault/`) as its own repository, gives one belief a known history
through the real API (the same one the browser tests check, tests/mirror/page_support.py),
writes its page with `epimem mirror page` and photographs that belief's card in headless
Chromium (Playwright, the system browser).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "mirror"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "mirror-page.png")
    ap.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"))
    ap.add_argument("--dark", action="store_true")
    args = ap.parse_args(argv)
    if not args.chromium:
        print("chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 1
    from page_support import KNOWN, add_known_history, sample_copy
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="epimem-shot-") as tmp:
        root = sample_copy(Path(tmp) / "vault")
        add_known_history(root, markup=False)
        html = Path(tmp) / "mirror.html"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "EPIMEM_TODAY": "2026-11-30"}
        subprocess.run([sys.executable, "-m", "epimem", "--vault", str(root), "mirror", "page", "--out", str(html)],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox", "--disable-gpu"])
            page = b.new_page(viewport={"width": 900, "height": 700},
                              color_scheme="dark" if args.dark else "light")
            page.goto(html.as_uri())
            # The card of the belief with a history: its points, the decay, the markers, open evidence.
            page.locator("#filter").evaluate("f => { f.hidden = true; }")  # sticky: it would cover the card
            page.locator(f"#b-{KNOWN} details.points").evaluate("d => { d.open = true; }")
            page.locator(f"#b-{KNOWN}").screenshot(path=str(args.out))
            b.close()
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
