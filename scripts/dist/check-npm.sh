#!/usr/bin/env bash
# The two npm tarballs of a release, installed as a Node team would: in a new
# folder with a new HOME and no cargo on PATH, nothing run at install time,
# then a node --test file using startMock(), and `npx mediagen-mock`. Then the
# main package alone (optional dependencies omitted): the first call names the
# platform package that is missing.
#
# Usage: bash scripts/dist/check-npm.sh OUTDIR
set -euo pipefail
cd "$(dirname "$0")/../.."
out="$(cd "$1" && pwd)"
main="$(ls "${out}"/mediagen-mock-[0-9]*.tgz)"
platform="$(ls "${out}"/mediagen-mock-linux-x64-gnu-*.tgz)"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
fail() {
    echo "check-npm: $*" >&2
    exit 1
}
now() { date +%s.%N; }

export HOME="${work}/home" PATH="$(dirname "$(command -v node)"):/usr/bin:/bin"
mkdir -p "${HOME}"
unset MEDIAGEN_MOCK_BIN
! command -v cargo >/dev/null || fail "cargo is on ${PATH}: the install is not shown to work without it"
npm_quiet=(--no-audit --no-fund --loglevel=error)
export NPM_CONFIG_UPDATE_NOTIFIER=false

echo "--> npm install of the two tarballs into an empty folder"
started="$(now)"
mkdir "${work}/app"
cd "${work}/app"
npm init -y >/dev/null
npm install "${npm_quiet[@]}" --foreground-scripts "${platform}" "${main}" >"${work}/install.log" 2>&1 ||
    { cat "${work}/install.log" >&2; fail "npm install failed"; }
if grep -q "^> " "${work}/install.log"; then
    cat "${work}/install.log" >&2
    fail "a script ran at install time"
fi
node -e '
const scripts = require("mediagen-mock/package.json").scripts ?? {};
const ran = ["preinstall", "install", "postinstall"].filter((s) => s in scripts);
if (ran.length) { console.error("install scripts: " + ran); process.exit(1); }'
cat >five.test.mjs <<'JS'
import assert from "node:assert/strict";
import { test } from "node:test";
import { startMock } from "mediagen-mock";
const mock = await startMock();
test("the mock answers with the demo key", async () => assert.equal((await fetch(`${mock.baseUrl}/v1/account`, { headers: { authorization: `Bearer ${mock.apiKey}` } })).status, 200));
JS
node --test five.test.mjs >"${work}/test.log" 2>&1 || { cat "${work}/test.log" >&2; fail "node --test"; }
echo "first answer: $(python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.2f}")' "${started}" "$(now)") s from an empty folder (npm install, node --test)"
told="$(npx --no-install mediagen-mock --version)"
[ "${told}" = "mediagen-mock $(basename "${main}" .tgz | sed 's/^mediagen-mock-//')" ] || fail "npx mediagen-mock --version says ${told}"
node -e 'import("mediagen-mock").then(({ findBinary }) => { const b = findBinary(); if (!b.includes("node_modules/mediagen-mock-linux-x64-gnu/")) { console.error(b); process.exit(1); } console.log("binary: " + b); })'
echo "${told}, from the platform package"

echo "--> the main package alone (--omit=optional): the platform package is named"
mkdir "${work}/alone"
cd "${work}/alone"
npm init -y >/dev/null
npm install "${npm_quiet[@]}" --omit=optional "${main}" >/dev/null 2>&1 || fail "npm install --omit=optional failed"
[ ! -e node_modules/mediagen-mock-linux-x64-gnu ] || fail "the platform package was installed despite --omit=optional"
if said="$(npx --no-install mediagen-mock --version 2>&1)"; then
    fail "mediagen-mock ran with no binary: ${said}"
fi
grep -q "mediagen-mock-linux-x64-gnu" <<<"${said}" && grep -q "MEDIAGEN_MOCK_BIN" <<<"${said}" ||
    fail "the message does not name the platform package and MEDIAGEN_MOCK_BIN: ${said}"
echo "said: ${said}"
echo "npm checks passed: $(du -h "${platform}" | cut -f1) + $(du -h "${main}" | cut -f1)"
