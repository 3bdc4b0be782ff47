#!/usr/bin/env bash
# The instructions the mock spends on one request of the service, counted by
# callgrind: unlike a rate, the count does not move with what else a shared host
# runs, so it tells two builds of the request path apart where wrk cannot.
#
#   bash scripts/profile-request.sh              # GET /v1/generations/{id}, then POST /v1/generations
#   bash scripts/profile-request.sh get OUTDIR   # one of them; keeps OUTDIR/get.cg for callgrind_annotate
#
# The release mock runs under valgrind on 127.0.0.1 (rate limits off, a clock a
# million times faster, no queue, as in `cargo bench --bench http`); wrk sends a
# warm-up, then the counted requests, with counting switched on only for them.
# Creates go to 200 users, so that none is refused for its five active tasks.
# Needs valgrind, wrk, curl and python3 (apt-get install valgrind wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
kinds=("${1:-get}")
[ $# -eq 0 ] && kinds=(get post)
out="${2:-$(mktemp -d)}"
mkdir -p "${out}"

cargo build --quiet --release -p mediagen-mock-server --bin mediagen-mock
mock="${CARGO_TARGET_DIR:-${PWD}/target}/release/mediagen-mock"

for kind in "${kinds[@]}"; do
    log="${out}/${kind}.log"
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="${out}/${kind}.cg" \
        "${mock}" --listen 127.0.0.1:0 --rate-limits off --time-scale 1000000 --queue-seconds 0 \
        >"${log}" 2>&1 &
    pid=$!
    base=""
    for _ in $(seq 300); do
        base="$(sed -n 's/^mediagen-mock listening on \(http:\/\/[0-9.:]*\).*/\1/p' "${log}")"
        [ -n "${base}" ] && break
        sleep 0.2
    done
    [ -n "${base}" ] || { echo "the mock did not start: see ${log}" >&2; kill "${pid}"; exit 1; }
    # The wrk script and the URL of the request counted.
    url="$(python3 - "${base}" "${kind}" "${out}/${kind}.lua" <<'EOF'
import json, sys, urllib.request
base, kind, script = sys.argv[1:]
def call(method, path, body, key=None):
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(base + path, json.dumps(body).encode(), headers, method=method)
    return json.load(urllib.request.urlopen(request))
create = {"modelSlug": "flux-schnell", "prompt": "a lighthouse at dusk", "params": {"aspect_ratio": "16:9"}}
keys = [call("POST", "/_mock/users", {"balanceRub": 1e9})["apiKey"] for _ in range(200 if kind == "post" else 1)]
with open(script, "w") as lua:
    lua.write("local keys = {" + ",".join(json.dumps(k) for k in keys) + "}\n")
    if kind == "post":
        lua.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n')
        lua.write("wrk.body = " + json.dumps(json.dumps(create)) + "\n")
        print(base + "/v1/generations")
    else:
        generation = call("POST", "/v1/generations", create, keys[0])["id"]
        print(f"{base}/v1/generations/{generation}")
    lua.write('request = function()\n  wrk.headers["Authorization"] = "Bearer " .. keys[math.random(#keys)]\n'
              '  return wrk.format()\nend\n')
EOF
)"
    wrk -t1 -c4 -d2s -s "${out}/${kind}.lua" "${url}" >/dev/null
    callgrind_control -i on "${pid}" >/dev/null 2>&1
    wrk -t1 -c4 -d8s -s "${out}/${kind}.lua" "${url}" >"${out}/${kind}.wrk"
    callgrind_control -i off "${pid}" >/dev/null 2>&1
    kill -INT "${pid}"
    wait "${pid}" || true
    requests="$(awk '/requests in/ {print $1}' "${out}/${kind}.wrk")"
    refused="$(awk '/Non-2xx/ {print $NF}' "${out}/${kind}.wrk")"
    total="$(callgrind_annotate "${out}/${kind}.cg" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')"
    echo "${kind}: ${requests} requests (${refused:-0} not 2xx), $((total / requests)) instructions each"
done
