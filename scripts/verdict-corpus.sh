#!/usr/bin/env bash
# The verdict corpus (mock-server/verdict-corpus): clients written from the
# service document alone, in Python (pytest) and Node (node:test), run against
# mediagen-mock. Each buggy client must be named by its rule in
# GET /_mock/verdict; each correct one must never be accused, random strategies
# over 1,000 seeded runs each (VERDICT_CORPUS_RUNS sets fewer or more).
#
# Usage: bash scripts/verdict-corpus.sh [python] [node]    (both by default)
# The binary is MEDIAGEN_MOCK_BIN, by default target/debug/mediagen-mock: build
# it first (cargo build -p mediagen-mock-server --bin mediagen-mock); nothing is
# compiled here. The Python harness takes mediagen_mock from the checkout
# (mock-server/python/src, plain Python) and the Node one mock-server/npm by
# path, so neither package is installed; only pytest is, into a virtual
# environment kept in ${TMPDIR:-/tmp} and made when it lacks it.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="${PWD}"

step() { printf '\n--> %s\n' "$*"; }

export MEDIAGEN_MOCK_BIN="${MEDIAGEN_MOCK_BIN:-${repo}/target/debug/mediagen-mock}"
if [ ! -x "${MEDIAGEN_MOCK_BIN}" ]; then
    echo "no mediagen-mock at ${MEDIAGEN_MOCK_BIN}: build it with" >&2
    echo "    cargo build -p mediagen-mock-server --bin mediagen-mock" >&2
    echo "or set MEDIAGEN_MOCK_BIN" >&2
    exit 1
fi
echo "mock: ${MEDIAGEN_MOCK_BIN} ($("${MEDIAGEN_MOCK_BIN}" --version)); runs per random strategy: ${VERDICT_CORPUS_RUNS:-1000}"

suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(python node)

python_suite() {
    local venv="${TMPDIR:-/tmp}/mediagen-verdict-corpus-venv"
    if ! "${venv}/bin/python" -c 'import pytest' 2>/dev/null; then
        step "a virtual environment with pytest in ${venv}"
        rm -rf "${venv}"
        python3 -m venv "${venv}"
        "${venv}/bin/pip" install --quiet --disable-pip-version-check "pytest==9.2.0"
    fi
    step "python: pytest mock-server/verdict-corpus/python"
    local started=${SECONDS}
    (
        cd mock-server/verdict-corpus/python
        PYTHONPATH="${repo}/mock-server/python/src${PYTHONPATH:+:${PYTHONPATH}}" \
            "${venv}/bin/python" -m pytest -q -p no:cacheprovider
    )
    echo "python suite: $((SECONDS - started)) s"
}

node_suite() {
    local node_major
    node_major="$(node -p 'process.versions.node.split(".")[0]')"
    if [ "${node_major}" -lt 20 ]; then
        echo "Node.js 20 or newer is needed (found $(node --version))" >&2
        return 1
    fi
    step "node: node --test mock-server/verdict-corpus/node"
    local started=${SECONDS}
    # Two files at a time, each with a mock of its own: fetch is the costly
    # part of a run, and one Node process uses one core.
    (cd mock-server/verdict-corpus/node && node --test --test-concurrency=2 --test-reporter=spec ./*.test.js)
    echo "node suite: $((SECONDS - started)) s"
}

status=0
for suite in "${suites[@]}"; do
    case "${suite}" in
        python) python_suite || status=1 ;;
        node) node_suite || status=1 ;;
        *)
            echo "unknown suite ${suite}: python or node" >&2
            exit 2
            ;;
    esac
done
exit "${status}"
