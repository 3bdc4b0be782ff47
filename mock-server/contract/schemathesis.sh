#!/usr/bin/env bash
# Contract test with schemathesis (from PyPI): starts the mock on 127.0.0.1 and
# checks every operation of openapi/openapi.json against it: no 5xx, and every
# status, media type, header and body as the contract declares.
#
#   mock-server/contract/schemathesis.sh                  # 100 examples per operation, ~2.5 min
#   mock-server/contract/schemathesis.sh --max-examples 500 --seed 1
#
# Extra arguments go to `schemathesis run`. The venv is kept between runs in
# ${TMPDIR:-/tmp}/mediagen-schemathesis-venv. The Rust property test
# mock-server/tests/it/contract.rs checks the same in CI.
set -euo pipefail
cd "$(dirname "$0")/../.."

venv="${TMPDIR:-/tmp}/mediagen-schemathesis-venv"
[ -x "${venv}/bin/schemathesis" ] || {
    python3 -m venv "${venv}"
    "${venv}/bin/pip" install --quiet --disable-pip-version-check "schemathesis>=4.32,<5"
}

cargo build --quiet -p mediagen-mock-server --bin mediagen-mock
target_dir="$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"

# A fixed key so the run can authenticate; limits off so that the general rate
# limit does not turn the run into a test of 429s. Nothing may leave the
# machine, yet a webhook URL schemathesis makes up names a host the mock would
# look up in DNS: so the webhook-endpoint operations are left to contract.rs,
# whose webhook hosts are pinned to loopback, and the clock is manual.
key="mg_live_schemathesis_$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
log="$(mktemp)"
"${target_dir}/debug/mediagen-mock" --listen 127.0.0.1:0 --rate-limits off --clock manual \
    --demo-api-key "${key}" --demo-balance-rub 1000000 >"${log}" 2>&1 &
mock=$!
# schemathesis keeps a cache in its working directory: a scratch one, not the repo.
scratch="$(mktemp -d)"
trap 'kill "${mock}" 2>/dev/null; wait "${mock}" 2>/dev/null; rm -rf "${log}" "${scratch}"' EXIT
for _ in $(seq 100); do
    grep -q '^mediagen-mock listening on' "${log}" && break
    kill -0 "${mock}" || { cat "${log}" >&2; exit 1; }
    sleep 0.1
done
base="$(sed -n 's/^mediagen-mock listening on \(http:[^ ]*\).*/\1/p' "${log}")"
echo "mock at ${base}"

spec="${PWD}/openapi/openapi.json"
cd "${scratch}"
"${venv}/bin/schemathesis" run "${spec}" \
    --url "${base}" \
    --header "Authorization: Bearer ${key}" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
    --exclude-path-regex '^/v1/webhook-endpoints' \
    --max-examples 100 \
    --workers 1 \
    --generation-database none \
    --no-color \
    "$@"
