#!/usr/bin/env bash
# Headless Chromium for the mirror page's browser tests (tests/mirror/test_page_browser.py).
# Playwright drives this system binary; it never downloads a browser of its own.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends chromium fonts-dejavu-core
