#!/usr/bin/env bash
# Prism's validating proxy (`prism proxy --errors`, pinned in scripts/contract-tools)
# between the `mediagen` command and the mock: every request and every answer of a
# short session is checked against openapi/openapi.json, as an integrator who puts
# Prism in front of the service would see it. The session: the catalogue, a
# webhook endpoint (create, list, delete), a generation created and waited for,
# the list, the balance and history, and a request the service refuses. Fails
# when a command fails or Prism reports one violation.
#
# Usage: bash scripts/prism-check.sh [CONTRACT]   (default openapi/openapi.json)
# Prism re-encodes binary answers, so nothing here downloads a file or a PDF.
set -euo pipefail
cd "$(dirname "$0")/.."

contract="${1:-openapi/openapi.json}"

bash scripts/contract-tools/install.sh
prism="${PWD}/scripts/contract-tools/node_modules/.bin/prism"
cargo build --quiet -p mediagen-mock-server --bin mediagen-mock -p mediagen-cli --bin mediagen
bin="${CARGO_TARGET_DIR:-${PWD}/target}/debug"

step() { printf '\n--> %s\n' "$*"; }

work="$(mktemp -d)"
# With --errors an answer that breaks the contract reaches the client as Prism's
# own error (and the command fails); a request Prism refuses, or a violation of
# lower severity, is logged. Each counts.
violation='Violation:|Request terminated with error'

pids=()
cleanup() {
    local status=$?
    if [ "${status}" -ne 0 ] && [ -f "${work}/prism.log" ]; then
        echo "Prism's log of the failure:" >&2
        grep -E "${violation}" "${work}/prism.log" >&2 || true
    fi
    for pid in "${pids[@]}"; do kill "${pid}" 2>/dev/null && wait "${pid}" 2>/dev/null || true; done
    rm -rf "${work}"
    return "${status}"
}
trap cleanup EXIT

# start VAR LOG PATTERN COMMAND...: starts COMMAND in the background, logging to
# LOG, and sets VAR to the URL its log line matching the sed expression PATTERN gives.
start() {
    local var="$1" log="$2" pattern="$3" url
    shift 3
    "$@" >"${log}" 2>&1 &
    pids+=($!)
    for _ in $(seq 300); do
        url="$(sed -n "${pattern}" "${log}")"
        [ -n "${url}" ] && { printf -v "${var}" '%s' "${url}"; return; }
        kill -0 "${pids[-1]}" 2>/dev/null || break
        sleep 0.1
    done
    cat "${log}" >&2
    echo "$1 did not start" >&2
    return 1
}

key="mg_live_prismcheck_$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
# Private webhooks: the endpoint below is on loopback, and nothing leaves the machine.
start mock "${work}/mock.log" 's/^mediagen-mock listening on \(http:[^ ]*\).*/\1/p' \
    "${bin}/mediagen-mock" --listen 127.0.0.1:0 --demo-api-key "${key}" \
    --time-scale 20 --allow-private-webhooks
start proxy "${work}/prism.log" 's/.*Prism is listening on \(http:[^ ]*\).*/\1/p' \
    "${prism}" proxy --errors --port 0 "${contract}" "${mock}"
echo "mock at ${mock}, Prism in front of it at ${proxy}"

export MEDIAGEN_BASE_URL="${proxy}" MEDIAGEN_API_KEY="${key}" MEDIAGEN_CONFIG="${work}/config.toml"
touch "${MEDIAGEN_CONFIG}"
# Runs `mediagen ARGS` through Prism and shows the start of its JSON answer, which
# is left in ${work}/out.
mediagen() {
    printf '$ mediagen %s\n' "$*"
    SECONDS=0
    "${bin}/mediagen" --json "$@" >"${work}/out"
    python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])))[:160], "...")' "${work}/out"
    echo "  (${SECONDS} s)"
}
field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "${work}/out" "$1"; }

step "the CLI through Prism"
mediagen models
mediagen webhooks create http://127.0.0.1:9/mediagen-hooks --event generation.failed \
    --description "Prism check"
endpoint="$(field id)"
mediagen webhooks list
mediagen generate --wait -m flux-schnell "a lighthouse at dusk"
[ "$(field status)" = SUCCEEDED ] || { echo "the generation did not succeed" >&2; exit 1; }
mediagen list
mediagen balance
mediagen history
mediagen webhooks delete "${endpoint}"
echo "\$ mediagen generate -m no-such-model ... (the service refuses it: 404 NOT_FOUND)"
if "${bin}/mediagen" generate -m no-such-model "a lighthouse at dusk" 2>"${work}/refused"; then
    echo "a generation with an unknown model was accepted" >&2
    exit 1
fi
cat "${work}/refused"
grep -q NOT_FOUND "${work}/refused" || { echo "the refusal is not the service's NOT_FOUND" >&2; exit 1; }

step "Prism's violations"
violations="$(grep -cE "${violation}" "${work}/prism.log" || true)"
grep -E "${violation}" "${work}/prism.log" || true
requests="$(grep -c 'Request received' "${work}/prism.log" || true)"
echo "${requests} requests through Prism, ${violations} violations"
[ "${violations}" -eq 0 ]
