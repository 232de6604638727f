#!/usr/bin/env bash
# npm, for the end-to-end tests with real agents' CLIs (tests/npm_tools.py installs each one,
# pinned, from the npm registry). Without it those tests skip and say why.
set -euo pipefail
if command -v npm >/dev/null 2>&1; then exit 0; fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm
