#!/usr/bin/env bash
# The pip route for integrators outside Rust: a fresh virtual environment,
# `pip install ./mock-server/python` (the mediagen-mock binary and the
# mediagen_mock package), then the package's type check and tests, and the
# example suite in examples/python, run by four pytest-xdist workers sharing one
# server.
#
# Usage: bash scripts/python-check.sh
# The binary is built with the dev profile, in the workspace's target dir (or
# CARGO_TARGET_DIR): pip builds ./mock-server/python in place, so cargo finds
# the workspace and reuses what `cargo test` built. Set
# MATURIN_PEP517_ARGS to build otherwise (e.g. "--release" or "").
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${TMPDIR:-/tmp}/mediagen-python-check-venv"
if [ -z "${MATURIN_PEP517_ARGS+set}" ]; then
    export MATURIN_PEP517_ARGS="--profile dev"
fi

step() { printf '\n--> %s\n' "$*"; }

step "a fresh virtual environment in ${venv}"
rm -rf "${venv}"
python3 -m venv "${venv}"
pip=("${venv}/bin/pip" --disable-pip-version-check)

step "pip install ./mock-server/python (MATURIN_PEP517_ARGS=${MATURIN_PEP517_ARGS})"
started=${SECONDS}
"${pip[@]}" install --quiet ./mock-server/python
echo "installed in $((SECONDS - started)) s: $("${venv}/bin/mediagen-mock" --version)"

step "the test requirements"
"${pip[@]}" install --quiet -r mock-server/python/requirements-test.txt -r examples/python/requirements.txt

# The venv's bin/ first, as an activated venv would have it.
export PATH="${venv}/bin:${PATH}"
unset MEDIAGEN_MOCK_BIN

step "mypy --strict on the package"
(cd mock-server/python && "${venv}/bin/mypy")

step "pytest mock-server/python/tests (the package itself)"
"${venv}/bin/pytest" -q -p no:cacheprovider mock-server/python/tests

step "pytest -n 4 examples/python (an integrator's suite: four workers, one server, a world each)"
"${venv}/bin/pytest" -n 4 examples/python
