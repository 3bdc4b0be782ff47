#!/usr/bin/env bash
# `mediagen webhooks trigger` against receivers written with the Standard Webhooks
# packages integrators use (`standardwebhooks` from PyPI and from npm, pinned): each
# event type the contract defines is delivered and accepted; a delivery signed with
# another secret is refused by the receiver and told as a failure the service would
# retry; a mistyped --set is refused before anything is sent.
#
# Usage: bash scripts/trigger-check.sh   (after a cargo build of mediagen-cli)
set -euo pipefail
cd "$(dirname "$0")/.."
repo="${PWD}"
mediagen="${repo}/${CARGO_TARGET_DIR:-target}/debug/mediagen"
work="${TMPDIR:-/tmp}/mediagen-trigger-check"
venv="${work}/venv"
mkdir -p "${work}"
[ -x "${venv}/bin/python" ] && "${venv}/bin/python" -c "import standardwebhooks" 2>/dev/null || {
    python3 -m venv "${venv}"
    "${venv}/bin/pip" install --quiet --disable-pip-version-check "standardwebhooks==1.1.0"
}
[ -d "${work}/node/node_modules/standardwebhooks" ] || {
    mkdir -p "${work}/node"
    (cd "${work}/node" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "standardwebhooks@1.1.1")
}
cp scripts/trigger/receiver.mjs "${work}/node/"

secret="whsec_$(head -c 32 /dev/urandom | base64)"
other="whsec_$(head -c 32 /dev/urandom | base64)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT

check() { # NAME COMMAND...: starts the receiver, triggers, checks
    local name="$1"; shift
    local log="${work}/receiver-${#pids[@]}.log"
    rm -f "${log}"
    "$@" "${secret}" >"${log}" &
    pids+=("$!")
    # The port is the first whole line (a line counts once its newline is written).
    until [ "$(wc -l 2>/dev/null <"${log}" || echo 0)" -ge 1 ]; do sleep 0.05; done
    local url="http://127.0.0.1:$(head -1 "${log}")/hooks"
    for event in generation.completed generation.failed; do
        outcome="$("${mediagen}" webhooks trigger "${event}" --to "${url}" --secret "${secret}" --jq .outcome)"
        [ "${outcome}" = delivered ] || { echo "${name}: ${event} was not accepted: ${outcome}" >&2; cat "${log}" >&2; exit 1; }
    done
    outcome="$("${mediagen}" webhooks trigger generation.completed --to "${url}" --secret "${other}" --jq '"\(.status) \(.outcome)"')"
    [ "${outcome}" = "400 failed" ] || { echo "${name}: another secret's delivery: ${outcome}" >&2; exit 1; }
    status=0
    "${mediagen}" webhooks trigger generation.completed --to "${url}" --secret "${secret}" \
        --set data.generation.cost_rub=free >/dev/null 2>&1 || status=$?
    [ "${status}" -eq 2 ] || { echo "${name}: a mistyped --set exited ${status}, not 2" >&2; exit 1; }
    local received
    received="$(tail -n +2 "${log}" | wc -l)"
    [ "${received}" -eq 3 ] || { echo "${name}: received ${received} deliveries, not 3" >&2; cat "${log}" >&2; exit 1; }
    echo "${name}: both events verified and accepted, another secret refused, a mistyped --set never sent"
}

check "python standardwebhooks 1.1.0" "${venv}/bin/python" scripts/trigger/receiver.py
check "npm standardwebhooks 1.1.1" node "${work}/node/receiver.mjs"
