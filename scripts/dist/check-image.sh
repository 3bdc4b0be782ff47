#!/usr/bin/env bash
# The image archive as a CI service container would run it: loaded into an
# empty podman store, run with no arguments behind a published port, and
# checked through that port: a request sequence, a non-root user, the health
# check with no shell, the control API's printed openness, and SIGTERM with
# --state saved to a named volume and read back by the next container.
#
# Usage: bash scripts/dist/check-image.sh OUTDIR
# Needs podman and runc (Debian's). runc, since crun refuses this machine's
# hybrid cgroups; explicit --ulimit, since rlimits cannot be raised here.
set -euo pipefail
out="$(cd "$1" && pwd)"
archive="$(ls "${out}"/mediagen-mock-*.oci.tar)"
version="$(basename "${archive}" .oci.tar)"
version="${version#mediagen-mock-}"

work="$(mktemp -d)"
podman=(podman --root "${work}/storage" --runroot "${work}/run")
run=("${podman[@]}" run --runtime runc --ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
cleanup() {
    "${podman[@]}" rm -f -a >/dev/null 2>&1 || true
    "${podman[@]}" volume rm -f -a >/dev/null 2>&1 || true
    "${podman[@]}" system reset -f >/dev/null 2>&1 || true
    rm -rf "${work}"
}
trap cleanup EXIT
fail() {
    echo "check-image: $*" >&2
    exit 1
}
now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$(now)"; }

# Waits for the published port's /health, at most 10 s; prints the port.
healthy() {
    local container="$1" port=""
    for _ in $(seq 200); do
        port="$("${podman[@]}" port "${container}" 8080/tcp 2>/dev/null | head -1 | cut -d: -f2)"
        if [ -n "${port}" ] && curl -fsS -o /dev/null "http://127.0.0.1:${port}/health" 2>/dev/null; then
            echo "${port}"
            return
        fi
        sleep 0.05
    done
    "${podman[@]}" logs "${container}" >&2 || true
    fail "container ${container} did not answer /health within 10 s"
}
demo_key() { "${podman[@]}" logs "$1" | sed -n 's/^demo API key: //p' | head -1; }

started="$(now)"
"${podman[@]}" load -q -i "${archive}" >/dev/null
image="mediagen-mock:${version}"

echo "--> a service container with no arguments"
run_started="$(now)"
service="$("${run[@]}" -d -p 127.0.0.1::8080 "${image}")"
port="$(healthy "${service}")"
echo "first answer: $(elapsed "${started}") s from an empty store (load, run, /health); $(elapsed "${run_started}") s from run"
base="http://127.0.0.1:${port}"
key="$(demo_key "${service}")"
[ -n "${key}" ] || fail "no demo API key in the container's log"
"${podman[@]}" logs "${service}" | grep -q "control API (/_mock/): open to anyone" ||
    fail "the log does not say that the control API is open"

echo "--> a request sequence through the published port"
auth=(-H "Authorization: Bearer ${key}")
curl -fsS "${auth[@]}" "${base}/v1/account" >/dev/null || fail "GET /v1/account"
created="$(curl -fsS "${auth[@]}" -H 'Content-Type: application/json' -H 'Idempotency-Key: image-check-1' \
    -d '{"modelSlug":"flux-schnell","prompt":"a lighthouse"}' "${base}/v1/generations")"
id="$(python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])' <<<"${created}")"
again="$(curl -fsS "${auth[@]}" -H 'Content-Type: application/json' -H 'Idempotency-Key: image-check-1' \
    -d '{"modelSlug":"flux-schnell","prompt":"a lighthouse"}' "${base}/v1/generations")"
[ "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])' <<<"${again}")" = "${id}" ] ||
    fail "a repeat with the same Idempotency-Key made another generation"
status="$(curl -fsS "${auth[@]}" "${base}/v1/generations/${id}" | python3 -c 'import json, sys; print(json.load(sys.stdin)["status"])')"
# The open control API: the mock's own record of the three calls above.
seen="$(curl -fsS "${base}/_mock/requests" | python3 -c '
import json, sys
print(sum(1 for r in json.load(sys.stdin)["data"] if r["path"].startswith("/v1/generations")))')"
[ "${seen}" -ge 3 ] || fail "GET /_mock/requests lists ${seen} calls to /v1/generations, not 3"
echo "generation ${id}: ${status}; one generation for two creates with one key; ${seen} calls in /_mock/requests"

echo "--> a non-root user, and the health check with no shell"
user="$("${podman[@]}" top "${service}" huser user | tail -1)"
case "${user}" in
*root*) fail "the mock runs as root (${user})" ;;
esac
echo "user (host, container): ${user}"
"${podman[@]}" exec "${service}" /usr/local/bin/mediagen-mock health || fail "mediagen-mock health in the container"
if "${podman[@]}" exec "${service}" /bin/sh -c true 2>/dev/null; then
    fail "the image has a shell; it is meant to carry only the mock"
fi
health="$(tar -xOf "${archive}" manifest.json | python3 -c '
import json, sys, tarfile
(entry,) = json.load(sys.stdin)
with tarfile.open(sys.argv[1]) as tar:
    print(json.load(tar.extractfile(entry["Config"]))["config"].get("Healthcheck", {}).get("Test"))
' "${archive}")"
[ "${health}" = "['CMD', '/usr/local/bin/mediagen-mock', 'health']" ] ||
    fail "the image's health check is ${health}"
"${podman[@]}" rm -f "${service}" >/dev/null

echo "--> SIGTERM as PID 1 with a live journal open: a quick exit, --state saved to a volume"
"${podman[@]}" volume create mock-state >/dev/null
stateful=(-p 127.0.0.1::8080 -v mock-state:/data -e MEDIAGEN_MOCK_STATE=/data/state.json)
first="$("${run[@]}" -d "${stateful[@]}" "${image}")"
port="$(healthy "${first}")"
base="http://127.0.0.1:${port}"
key="$(demo_key "${first}")"
created="$(curl -fsS -H "Authorization: Bearer ${key}" -H 'Content-Type: application/json' \
    -H 'Idempotency-Key: image-check-2' -d '{"modelSlug":"flux-schnell","prompt":"kept"}' "${base}/v1/generations")"
id="$(python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])' <<<"${created}")"
curl -sN "${base}/_mock/events" >/dev/null 2>&1 &
stream=$!
sleep 0.2
stop_started="$(now)"
"${podman[@]}" stop -t 10 "${first}" >/dev/null
stopped_in="$(elapsed "${stop_started}")"
kill "${stream}" 2>/dev/null || true
code="$("${podman[@]}" inspect --format '{{.State.ExitCode}}' "${first}")"
echo "stopped in ${stopped_in} s, exit code ${code}"
[ "${code}" = "0" ] || fail "the mock exited ${code} at SIGTERM (137 means it was killed)"
python3 -c 'import sys; sys.exit(float(sys.argv[1]) >= 5)' "${stopped_in}" || fail "SIGTERM took ${stopped_in} s"
"${podman[@]}" logs "${first}" | grep -q "state saved\|saved" || {
    "${podman[@]}" logs "${first}" >&2
    fail "the log does not say the state was saved"
}
second="$("${run[@]}" -d "${stateful[@]}" "${image}")"
port="$(healthy "${second}")"
[ "$(demo_key "${second}")" = "${key}" ] || fail "the demo key changed across the restart"
curl -fsS -o /dev/null -H "Authorization: Bearer ${key}" "http://127.0.0.1:${port}/v1/generations/${id}" ||
    fail "generation ${id} was lost across the restart"
echo "generation ${id} and the demo key came back from the volume"

echo "--> closed with MEDIAGEN_MOCK_ADMIN_TOKEN"
closed="$("${run[@]}" -d -p 127.0.0.1::8080 -e MEDIAGEN_MOCK_ADMIN_TOKEN=s3cret "${image}")"
port="$(healthy "${closed}")"
refused="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${port}/_mock/clock")"
[ "${refused}" = "401" ] || fail "the control API answered ${refused} without the token"
curl -fsS -o /dev/null -H 'Authorization: Bearer s3cret' "http://127.0.0.1:${port}/_mock/clock" ||
    fail "the control API refused its token"
"${podman[@]}" logs "${closed}" | grep -q "admin token is required" || fail "the log does not say the token is required"

size="$("${podman[@]}" image inspect --format '{{.Size}}' "${image}")"
echo "image: $((size / 1000000)) MB unpacked, archive $(du -h "${archive}" | cut -f1)"
[ "${size}" -lt 30000000 ] || fail "the image is ${size} bytes, over 30 MB"
echo "image checks passed"
