#!/usr/bin/env bash
# The npm route for integrators in Node and TypeScript: in a fresh folder,
# `npm install ./mock-server/npm` (the mediagen-mock binary and the
# mediagen-mock package), a five-line node --test file using startMock(), the
# README's "From Node and TypeScript" commands as written; the package's own
# tests; `npm pack` with the binary inside, installed where there is no cargo;
# then the example suite in examples/node (node:test and Vitest). Fails on any
# failure, and when a mediagen-mock process outlives the runs.
#
# Usage: bash scripts/node-check.sh
# Only the npm registry is reached. The binary is the workspace's own cargo
# build: the install builds with the profile the target dir already has
# (after `cargo test`, dev: cargo only checks it is fresh), and the pack with
# MEDIAGEN_MOCK_CARGO_PROFILE (here dev unless set, to build nothing again).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="${PWD}"
work="${TMPDIR:-/tmp}/mediagen-node-check"
npm_quiet=(--no-audit --no-fund --loglevel=error)

step() { printf '\n--> %s\n' "$*"; }

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "${node_major}" -lt 20 ]; then
    echo "Node.js 20 or newer is needed (found $(node --version))" >&2
    exit 1
fi

# The five-line file of the issue's held-out check, in the folder given.
five_lines() {
    cat >"$1/five.test.mjs" <<'EOF'
import assert from "node:assert/strict";
import { test } from "node:test";
import { startMock } from "mediagen-mock";
const mock = await startMock();
test("the mock answers with the demo key", async () => assert.equal((await fetch(`${mock.baseUrl}/v1/account`, { headers: { authorization: `Bearer ${mock.apiKey}` } })).status, 200));
EOF
}

rm -rf "${work}"
mkdir -p "${work}/fresh" "${work}/readme" "${work}/packed"

step "a fresh folder: npm init -y && npm install ${repo}/mock-server/npm"
started=${SECONDS}
(cd "${work}/fresh" && npm init -y >/dev/null && npm install "${npm_quiet[@]}" "${repo}/mock-server/npm")
echo "installed in $((SECONDS - started)) s: $("${work}/fresh/node_modules/.bin/mediagen-mock" --version)"

step "a five-line node --test file using startMock()"
five_lines "${work}/fresh"
(cd "${work}/fresh" && node --test five.test.mjs)

step "README.md, From Node and TypeScript: each command as written (<checkout> is this checkout)"
# The paragraph's first sh block gives the commands, its first js block the
# test file named in its first line.
node - "${repo}/README.md" "${work}/readme" "${repo}" >"${work}/readme/commands" <<'EOF'
const fs = require("node:fs");
const path = require("node:path");
const [readme, dir, checkout] = process.argv.slice(2);
const text = fs.readFileSync(readme, "utf8");
const start = text.indexOf("From Node and TypeScript, with npm");
if (start < 0) throw new Error("README.md has no paragraph 'From Node and TypeScript, with npm'");
const blocks = [...text.slice(start).matchAll(/```(\w+)\n([\s\S]*?)```/g)];
const sh = blocks.find(([, lang]) => lang === "sh");
const js = blocks.find(([, lang]) => lang === "js");
const file = js[2].split("\n")[0].replace(/^\/\/\s*/, "").trim();
fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
fs.writeFileSync(path.join(dir, file), js[2]);
for (const line of sh[2].split("\n")) {
  const command = line.replace(/\s+#.*$/, "").trim();
  if (command) console.log(command.replaceAll("<checkout>", checkout));
}
EOF
(
    cd "${work}/readme"
    npm init -y >/dev/null
    while IFS= read -r command; do
        echo "\$ ${command}"
        bash -c "${command}"
    done <commands
)

step "the package's own tests: the face against mock-control.json, the process's end, the install script"
(cd mock-server/npm && npm test)

step "npm pack: the binary goes into the tarball; installed where there is no cargo"
export MEDIAGEN_MOCK_CARGO_PROFILE="${MEDIAGEN_MOCK_CARGO_PROFILE:-dev}"
(cd mock-server/npm && npm pack --silent --pack-destination "${work}" >/dev/null)
tarball="$(ls "${work}"/mediagen-mock-*.tgz)"
echo "packed: ${tarball} ($(du -h "${tarball}" | cut -f1))"
no_cargo="$(dirname "$(command -v node)"):/usr/bin:/bin"
if PATH="${no_cargo}" command -v cargo >/dev/null; then
    echo "cargo is on ${no_cargo}: the packed install is not shown to work without it" >&2
    exit 1
fi
(
    cd "${work}/packed"
    export PATH="${no_cargo}"
    npm init -y >/dev/null
    npm install "${npm_quiet[@]}" "${tarball}"
    five_lines .
    node --test five.test.mjs
)

step "examples/node: npm ci, then npm test (client types generated, tsc, node:test, Vitest)"
(cd examples/node && npm ci "${npm_quiet[@]}" && npm test)

step "no mediagen-mock process left behind"
if pgrep -af "${repo}/mock-server/npm/bin/mediagen-mock|${work}/"; then
    echo "mediagen-mock processes outlived the runs (above)" >&2
    exit 1
fi
echo "none"
