#!/usr/bin/env bash
# Installs the tools of package-lock.json (Spectral, Redocly, Prism, pinned) into
# scripts/contract-tools/node_modules, once per lockfile. `npm ci` from the npm
# registry only, with no install scripts: nothing downloads a browser or a binary.
#
# Usage: bash scripts/contract-tools/install.sh   (the lint and Prism checks call it)
set -euo pipefail
cd "$(dirname "$0")"

stamp="node_modules/.installed-$(sha256sum package-lock.json | cut -c1-16)"
[ -f "${stamp}" ] && exit 0
printf '\n--> npm ci in scripts/contract-tools\n'
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
touch "${stamp}"
