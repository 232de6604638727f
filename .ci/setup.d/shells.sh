#!/usr/bin/env bash
# zsh and fish for the tab-completion tests (tests/cli/test_completion.py); bash is always there.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends zsh fish
