#!/usr/bin/env bash
# Browser tests of the mock's dashboard (/_mock/ui): playwright-core from npm
# drives Debian's chromium (no browser download) against the mediagen-mock
# binary built with the dev profile.
#
# Usage: bash scripts/browser-check.sh
#   CHROMIUM=/path/to/chromium        another browser binary (default /usr/bin/chromium)
#   UPDATE_README_SCREENSHOT=1        also write mock-server/docs/dashboard.png
# Screenshots are left in mock-server/ui-tests/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "${chromium}" ]; then
    echo "no browser at ${chromium}: apt-get install chromium, or set CHROMIUM" >&2
    exit 1
fi

cargo build -q -p mediagen-mock-server --bin mediagen-mock
export MEDIAGEN_MOCK_BIN="${CARGO_TARGET_DIR:-${PWD}/target}/debug/mediagen-mock"
export CHROMIUM="${chromium}"

cd mock-server/ui-tests
npm ci --no-audit --no-fund --loglevel=error
npm test
