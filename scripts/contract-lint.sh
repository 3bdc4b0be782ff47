#!/usr/bin/env bash
# The two contracts through the linters integrators run on them: Spectral with
# `spectral:oas` and Redocly with `recommended`, configured in scripts/contract-tools
# (.spectral.yaml, redocly.yaml, .redocly.lint-ignore.yaml), where each exception
# names its place and reason. Fails on any error; warnings are printed, with
# their count per document and tool.
#
# Usage: bash scripts/contract-lint.sh
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/contract-tools/install.sh
tools=scripts/contract-tools
bin="${tools}/node_modules/.bin"
export REDOCLY_SUPPRESS_UPDATE_NOTICE=true

step() { printf '\n--> %s\n' "$*"; }

failed=()
# Redocly names each document by its entry under `apis` in redocly.yaml.
for api in service=openapi/openapi.json mock-control=openapi/mock-control.json; do
    name="${api%%=*}"
    document="${api#*=}"
    step "Spectral (spectral:oas): ${document}"
    "${bin}/spectral" lint --ruleset "${tools}/.spectral.yaml" --fail-severity error "${document}" ||
        failed+=("Spectral on ${document}")
    step "Redocly (recommended): ${document}"
    "${bin}/redocly" lint --config "${tools}/redocly.yaml" --format stylish "${name}" ||
        failed+=("Redocly on ${document}")
done

if [ "${#failed[@]}" -gt 0 ]; then
    printf 'errors from %s (above)\n' "${failed[@]}" >&2
    exit 1
fi
