#!/usr/bin/env bash
# The two npm tarballs of scripts/dist.sh as a Node team installs them: a new
# folder, a new HOME (an empty npm cache), a PATH of node's own directory,
# /usr/bin and /bin (no cargo), and a registry that cannot be reached, so that
# the platform package can only come from its tarball. Checked: nothing runs at
# install time; the platform package is the one installed, from the tarball; a
# five-line node --test file using startMock() gets an answer to an
# authenticated GET /v1/account; `npx mediagen-mock --version` runs the
# binary. Then the main tarball alone, optional dependencies omitted: both
# `npx mediagen-mock` and startMock() fail, naming mediagen-mock-linux-x64-gnu.
#
# Usage: bash scripts/dist/check-npm.sh OUTDIR
# Prints `first answer: N s`: from an empty folder to the first answered
# request (npm install, then node --test, whose one test makes the request).
set -euo pipefail

# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"
size() { awk -v n="$(stat -c %s "$1")" 'BEGIN { if (n >= 1048576) printf "%.1f MiB", n / 1048576; else printf "%.0f KiB", n / 1024 }'; }

[ $# -eq 1 ] && [ -d "$1" ] || {
    echo "usage: bash scripts/dist/check-npm.sh OUTDIR" >&2
    exit 2
}
out="$(cd "$1" && pwd)"
one() {
    local found=("$@")
    [ ${#found[@]} -eq 1 ] && [ -f "${found[0]}" ] || fail "expected one $(basename "$1") in ${out}, found: ${found[*]}"
    echo "${found[0]}"
}
main="$(one "${out}"/mediagen-mock-[0-9]*.tgz)"
platform="$(one "${out}"/mediagen-mock-linux-x64-gnu-[0-9]*.tgz)"
version="$(basename "${main}" .tgz)"
version="${version#mediagen-mock-}"
[ "$(basename "${platform}")" = "mediagen-mock-linux-x64-gnu-${version}.tgz" ] ||
    fail "$(basename "${platform}") is not the platform package of mediagen-mock ${version}"

work="$(cd "$(mktemp -d)" && pwd -P)"
trap 'rm -rf "${work}"' EXIT

# What a new user has: no variable of ours, no npm settings, no cargo.
while IFS= read -r name; do unset "${name}"; done < <(compgen -e | grep -Ei '^(npm_config_|MEDIAGEN_MOCK_)' || true)
export HOME="${work}/home"
export PATH="$(dirname "$(command -v node)"):/usr/bin:/bin"
mkdir -p "${HOME}"
if command -v cargo >/dev/null; then
    fail "cargo is on PATH (${PATH}): the install is not shown to work without it"
fi
# Nothing may come from a registry: the platform package must be the tarball's.
# npm still asks the registry once for it, as an optional dependency, and goes
# on without an answer (a 404 on the real one, before it is published); with
# no retries the refused connection costs nothing.
export npm_config_registry="http://127.0.0.1:9/" npm_config_fetch_retries=0 npm_config_update_notifier=false
npm_flags=(--no-audit --no-fund --foreground-scripts --loglevel=warn)

# Fails when an install ran a lifecycle script: --foreground-scripts prints
# `> name@version stage` for each; npm records `hasInstallScript` in the lock.
no_scripts_ran() {
    local log="$1" dir="$2"
    if grep -E '^> .*@.* (preinstall|install|postinstall|prepare)$' "${log}"; then
        cat "${log}" >&2
        fail "a script ran at install time (above)"
    fi
    node - "${dir}" <<'EOF' || fail "an installed package has an install script"
const fs = require("node:fs");
const path = require("node:path");
const dir = process.argv[2];
const lock = JSON.parse(fs.readFileSync(path.join(dir, "node_modules/.package-lock.json"), "utf8"));
let bad = false;
for (const [where, entry] of Object.entries(lock.packages)) {
  const scripts = JSON.parse(fs.readFileSync(path.join(dir, where, "package.json"), "utf8")).scripts ?? {};
  const install = ["preinstall", "install", "postinstall", "prepare"].filter((s) => s in scripts);
  if (entry.hasInstallScript || install.length) {
    console.error(`${where}: ${install.join(", ") || "hasInstallScript"}`);
    bad = true;
  }
}
process.exit(bad ? 1 : 0);
EOF
}

step "the detector sees a script that runs (a package with a postinstall)"
mkdir -p "${work}/probe/pkg" "${work}/probe/app"
echo '{ "name": "probe", "version": "1.0.0", "scripts": { "postinstall": "echo probe ran" } }' >"${work}/probe/pkg/package.json"
(cd "${work}/probe/app" && npm init -y >/dev/null && npm install "${npm_flags[@]}" ../pkg) >"${work}/probe.log" 2>&1 ||
    { cat "${work}/probe.log" >&2; fail "npm install of the probe"; }
if (no_scripts_ran "${work}/probe.log" "${work}/probe/app") >/dev/null 2>&1; then
    fail "a postinstall ran and was not seen: the check below would prove nothing"
fi
echo "seen"

step "npm install of the two tarballs into an empty folder"
started="$(now)"
mkdir "${work}/app"
cd "${work}/app"
npm init -y >/dev/null
npm install "${npm_flags[@]}" "${platform}" "${main}" >"${work}/install.log" 2>&1 ||
    { cat "${work}/install.log" >&2; fail "npm install failed"; }
cat "${work}/install.log"
no_scripts_ran "${work}/install.log" .
node - <<'EOF' || fail "the platform package does not come from its tarball"
const lock = require("./node_modules/.package-lock.json").packages;
const entry = lock["node_modules/mediagen-mock-linux-x64-gnu"];
if (!entry?.resolved?.startsWith("file:")) throw new Error(`installed from ${entry?.resolved ?? "nowhere"}`);
const wanted = lock["node_modules/mediagen-mock"].optionalDependencies ?? {};
if (wanted["mediagen-mock-linux-x64-gnu"] !== entry.version) throw new Error(`main wants ${JSON.stringify(wanted)}, got ${entry.version}`);
console.log(`mediagen-mock-linux-x64-gnu ${entry.version} from ${entry.resolved}; no install script in either package`);
EOF

step "a five-line node --test file using startMock(): an authenticated GET /v1/account"
cat >five.test.mjs <<'EOF'
import assert from "node:assert/strict";
import { test } from "node:test";
import { startMock } from "mediagen-mock";
const mock = await startMock();
test("the mock answers with the demo key", async () => assert.equal((await fetch(`${mock.baseUrl}/v1/account`, { headers: { authorization: `Bearer ${mock.apiKey}` } })).status, 200));
EOF
timeout -k 5 120 node --test five.test.mjs >"${work}/test.log" 2>&1 || { cat "${work}/test.log" >&2; fail "node --test five.test.mjs"; }
first="$(elapsed "${started}")"
grep -E '^# (pass|fail)' "${work}/test.log"
echo "first answer: ${first} s from an empty folder (npm install of both tarballs, node --test with one GET /v1/account)"

step "npx mediagen-mock --version: the launcher runs the platform package's binary"
told="$(timeout -k 5 30 npx --no-install mediagen-mock --version)" || fail "npx mediagen-mock --version failed"
[ "${told}" = "mediagen-mock ${version}" ] || fail "npx mediagen-mock --version says '${told}', not 'mediagen-mock ${version}'"
binary="$(node --input-type=module -e 'import { findBinary } from "mediagen-mock"; console.log(findBinary())')"
[ "${binary}" = "${work}/app/node_modules/mediagen-mock-linux-x64-gnu/bin/mediagen-mock" ] ||
    fail "findBinary() gives ${binary}, not the platform package's"
echo "${told}: ${binary}"

step "the main tarball alone (--omit=optional): the first call names the missing platform package"
mkdir "${work}/alone"
cd "${work}/alone"
npm init -y >/dev/null
npm install "${npm_flags[@]}" --omit=optional "${main}" >"${work}/alone.log" 2>&1 ||
    { cat "${work}/alone.log" >&2; fail "npm install --omit=optional failed"; }
no_scripts_ran "${work}/alone.log" .
[ ! -e node_modules/mediagen-mock-linux-x64-gnu ] || fail "the platform package was installed despite --omit=optional"
# The launcher is node_modules/.bin/mediagen-mock, first on npx's PATH: it must
# not take itself for the binary. The timeout ends it if it does.
if said="$(timeout -k 5 30 npx --no-install mediagen-mock --version 2>&1)"; then
    fail "npx mediagen-mock --version succeeded with no binary: ${said}"
fi
rejected="$(timeout -k 5 30 node --input-type=module -e '
import { startMock } from "mediagen-mock";
try { await startMock(); console.log("started"); process.exit(1); } catch (error) { console.log(error.message); }')" ||
    fail "startMock() did not reject with a message: ${rejected}"
for text in "${said}" "${rejected}"; do
    for expected in "mediagen-mock-linux-x64-gnu" "--omit=optional" "MEDIAGEN_MOCK_BIN" \
        "cargo build --release -p mediagen-mock-server" "npm install <checkout>/mock-server/npm"; do
        grep -qF -- "${expected}" <<<"${text}" || fail "the message lacks '${expected}': ${text}"
    done
done
echo "npx mediagen-mock --version:"
sed 's/^/  /' <<<"${said}"

step "no mediagen-mock process left behind"
if left="$(pgrep -af -- "${work}/")"; then
    fail "processes outlived the checks: ${left}"
fi
echo "none"

echo
echo "npm tarballs: $(basename "${platform}") $(size "${platform}"), $(basename "${main}") $(size "${main}")"
