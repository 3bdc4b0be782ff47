#!/usr/bin/env bash
# `mediagen mcp --mock` judged from outside, by the Model Context Protocol's own
# tools and by an independent client:
#   1. the official conformance suite (@modelcontextprotocol/conformance) against the
#      server over streamable HTTP on loopback, every scenario that applies to it
#      (docs/mcp.md lists the others and why they do not apply);
#   2. the official inspector's CLI (@modelcontextprotocol/inspector --cli) over
#      stdio: tools/list, and tools/call of generate, held open (2025 revisions)
#      and as a task (the 2026-07-28 revision, with the tasks extension);
#   3. scripts/mcp/client_check.py, driven by the `mcp` Python SDK: the tools, a
#      generation through to a saved file, the spending cap, a timed-out call
#      retried (the same generation, charged once); the mock's verdict clean.
# Fails on any failure.
#
# Usage: bash scripts/mcp-check.sh
# The npm packages are pinned by scripts/mcp/package-lock.json (no install scripts) and the Python SDK here; only the npm registry and PyPI are reached.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n--> %s\n' "$*"; }

# The Python SDK of the protocol, pinned; and the suite's and the inspector's tree.
python_sdk="mcp==2.3.0"
venv="${TMPDIR:-/tmp}/mediagen-mcp-venv"
tools="${PWD}/scripts/mcp"

step "install: npm ci in scripts/mcp, ${python_sdk} in ${venv}"
stamp="${tools}/node_modules/.installed-$(sha256sum "${tools}/package-lock.json" | cut -c1-16)"
if [ ! -f "${stamp}" ]; then
    # `npm install` from the lockfile, not `npm ci`: npm 11 refuses this lock in ci for
    # an optional Windows-only dependency of vite that it leaves out of every lock.
    (cd "${tools}" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
    touch "${stamp}"
fi
if ! "${venv}/bin/python" -c "import importlib.metadata as m; assert m.version('mcp') == '2.3.0'" 2>/dev/null; then
    python3 -m venv "${venv}"
    "${venv}/bin/pip" install --quiet --disable-pip-version-check "${python_sdk}"
fi
cargo build --quiet -p mediagen-cli --bin mediagen
mediagen="${CARGO_TARGET_DIR:-${PWD}/target}/debug/mediagen"

# The suite imports fs.globSync, which Node 22 has; on Node 20 a loader hook gives it.
conformance=(node)
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
    conformance+=(--import "${tools}/node20-register.mjs")
fi
conformance+=("${tools}/node_modules/@modelcontextprotocol/conformance/dist/index.js")
inspector="${tools}/node_modules/.bin/mcp-inspector"

work="$(mktemp -d)"
server_pid=""
cleanup() {
    local status=$?
    if [ -n "${server_pid}" ]; then
        kill "${server_pid}" 2>/dev/null && wait "${server_pid}" 2>/dev/null || true
    fi
    if [ "${status}" -ne 0 ] && [ -f "${work}/server.log" ]; then
        echo "the server's stderr:" >&2
        cat "${work}/server.log" >&2
    fi
    rm -rf "${work}"
    return "${status}"
}
trap cleanup EXIT

step "the conformance suite against mediagen --mock mcp --listen 127.0.0.1:0"
"${mediagen}" --mock mcp --listen 127.0.0.1:0 2>"${work}/server.log" &
server_pid=$!
url=""
for _ in $(seq 100); do
    url="$(sed -n 's/.*serving streamable HTTP at \(http[^ ]*\).*/\1/p' "${work}/server.log")"
    [ -n "${url}" ] && break
    kill -0 "${server_pid}" 2>/dev/null || break
    sleep 0.1
done
[ -n "${url}" ] || { echo "the server did not start" >&2; exit 1; }
# The scenarios that apply: the others call the reference server's own test tools,
# resources and prompts, or capabilities this server does not declare (docs/mcp.md).
for scenario in server-initialize ping logging-set-level tools-list server-sse-polling \
    server-sse-multiple-streams dns-rebinding-protection; do
    "${conformance[@]}" server --url "${url}" --scenario "${scenario}" >"${work}/${scenario}.log" 2>&1 || {
        cat "${work}/${scenario}.log" >&2
        echo "conformance scenario ${scenario} failed" >&2
        exit 1
    }
    grep -E "^Passed: [0-9]+/[0-9]+, 0 failed" "${work}/${scenario}.log" >/dev/null || {
        cat "${work}/${scenario}.log" >&2
        echo "conformance scenario ${scenario} has failures" >&2
        exit 1
    }
    echo "${scenario}: $(grep -E '^Passed:' "${work}/${scenario}.log")"
done
kill "${server_pid}" && wait "${server_pid}" 2>/dev/null || true
server_pid=""

step "the inspector's CLI over stdio: tools/list, tools/call generate"
listed="$("${inspector}" --cli "${mediagen}" --mock mcp --method tools/list 2>"${work}/inspector.log")"
for tool in list_models estimate_cost generate get_generation get_balance mock_verdict; do
    grep -q "\"name\": \"${tool}\"" <<<"${listed}" || {
        echo "tools/list does not list ${tool}: ${listed}" >&2
        exit 1
    }
done
called="$("${inspector}" --cli "${mediagen}" --mock mcp --method tools/call --tool-name generate \
    --tool-arg model=flux-schnell --tool-arg "prompt=a lighthouse at dusk" --tool-arg requestId=inspector-1 \
    2>>"${work}/inspector.log")"
grep -q '"status": "SUCCEEDED"' <<<"${called}" && grep -q '"isError": false' <<<"${called}" || {
    echo "tools/call generate did not succeed: ${called}" >&2
    cat "${work}/inspector.log" >&2
    exit 1
}
grep -q "verdict on this server's traffic: clean" "${work}/inspector.log" || {
    echo "the mock's verdict on the server is not clean:" >&2
    cat "${work}/inspector.log" >&2
    exit 1
}
echo "listed 6 tools; generate SUCCEEDED; the mock's verdict clean"

step "the inspector's CLI as a client of the protocol's 2026-07-28 revision: generate as a task"
# That revision's inspector declares the tasks extension, so generate answers with a
# task that the inspector polls (tasks/get) to its result. The server's stdout is
# recorded to show that the answer was a task.
cat >"${work}/recorded.sh" <<EOF
#!/bin/sh
"${mediagen}" --mock mcp | tee "${work}/modern.out"
EOF
chmod +x "${work}/recorded.sh"
called="$("${inspector}" --cli --protocol-era modern "${work}/recorded.sh" --method tools/call \
    --tool-name generate --tool-arg model=flux-schnell --tool-arg "prompt=a lighthouse at dawn" \
    --tool-arg requestId=inspector-2 2>"${work}/inspector.log")"
grep -q '"status": "SUCCEEDED"' <<<"${called}" && grep -q '"isError": false' <<<"${called}" \
    && grep -q '"resultType":"task"' "${work}/modern.out" && grep -q '"status":"completed"' "${work}/modern.out" || {
    echo "generate did not run as a task to SUCCEEDED: ${called}" >&2
    cat "${work}/inspector.log" "${work}/modern.out" >&2
    exit 1
}
grep -q "verdict on this server's traffic: clean" "${work}/inspector.log" || {
    echo "the mock's verdict on the server is not clean:" >&2
    cat "${work}/inspector.log" >&2
    exit 1
}
echo "generate answered with a task, polled to SUCCEEDED; the mock's verdict clean"

step "an independent client: the mcp Python SDK (scripts/mcp/client_check.py)"
"${venv}/bin/python" "${tools}/client_check.py" "${mediagen}"
