#!/usr/bin/env bash
# Runs every benchmark of the toolkit and writes BENCHMARKS.md, the table the README
# quotes. Each figure is a median, beside a baseline measured in the same run.
#
#   bash scripts/bench.sh            # about 10 minutes on 2 cores, after the release build
#
# The mock's HTTP benchmark drives the server with wrk from another process, and
# counts its instructions per request under valgrind; both are installed with
# apt-get when they are missing and apt-get is at hand.
set -euo pipefail
cd "$(dirname "$0")/.."
out=BENCHMARKS.md
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

for tool in wrk valgrind; do
  if ! command -v "$tool" >/dev/null; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
      apt-get install -y -qq "$tool" >/dev/null
    else
      echo "$tool is needed for the mock's HTTP benchmark: apt-get install wrk valgrind" >&2
      exit 1
    fi
  fi
done

echo "== webhook-verify (criterion)" >&2
cargo bench -q -p webhook-verify --bench verify -- --noplot >"$logs/verify" 2>&1
echo "== mock HTTP throughput (wrk)" >&2
cargo bench -q -p mediagen-mock-server --bench http >"$logs/http" 2>"$logs/http.err"
echo "== the mock's instructions per request (callgrind)" >&2
bash scripts/profile-request.sh >"$logs/instructions" 2>"$logs/instructions.err"
echo "== signed deliveries" >&2
cargo bench -q -p mediagen-mock-server --bench delivery >"$logs/delivery" 2>"$logs/delivery.err"
echo "== mock memory per 100,000 finished generations" >&2
cargo bench -q -p mediagen-mock-server --bench retention >"$logs/retention" 2>"$logs/retention.err"
echo "== mock worlds: memory after 10,000 created and deleted" >&2
cargo bench -q -p mediagen-mock-server --bench worlds >"$logs/worlds" 2>"$logs/worlds.err"
echo "== the mock's live journal under load" >&2
cargo bench -q -p mediagen-mock-server --bench events >"$logs/events" 2>"$logs/events.err"
echo "== end to end: a burst, then a steady rate of half of it" >&2
cargo bench -q -p mediagen --bench e2e >"$logs/e2e" 2>"$logs/e2e.err"
echo "== batches at the service's limits, polling and by webhook" >&2
cargo bench -q -p mediagen --bench batch >"$logs/batch" 2>"$logs/batch.err"
echo "== four mediagen batch processes at once on one host" >&2
cargo bench -q -p mediagen-cli --bench batch >"$logs/processes" 2>"$logs/processes.err"
echo "== what sharing the pace with the host's processes costs a request" >&2
cargo bench -q -p mediagen --bench pace >"$logs/pace" 2>"$logs/pace.err"
echo "== CLI start-up" >&2
cargo bench -q -p mediagen-cli --bench startup >"$logs/startup" 2>"$logs/startup.err"
echo "== the mock's start-up from Node (startMock)" >&2
cargo build -q --release -p mediagen-mock-server --bin mediagen-mock
MEDIAGEN_MOCK_BIN="${CARGO_TARGET_DIR:-target}/release/mediagen-mock" \
  node mock-server/npm/bench/startup.js >"$logs/node_startup" 2>"$logs/node_startup.err"

python3 - "$logs" "$out" <<'PY'
import json, pathlib, re, sys, datetime, os
logs, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])

def median_ns(group, name):
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", "target"))
    path = target / "criterion" / group / name / "new/estimates.json"
    return json.loads(path.read_text())["median"]["point_estimate"]

def verify_figures(size):
    """One body size of the verify benchmark: this crate against the bare HMAC measured
    beside it, and against standardwebhooks."""
    ours, std, bare = (median_ns(f"verify_{size}", n)
                       for n in ("webhook-verify", "standardwebhooks-1.0.1", "bare-hmac-sha256"))
    us = lambda ns: f"{ns/1000:.2f}" if ns < 10_000 else f"{ns/1000:.1f}"
    return (f"{size.replace('KiB', ' KiB')}: {us(ours)} µs, {ours/bare:.2f}× a bare HMAC-SHA256 ({us(bare)} µs); "
            f"`standardwebhooks` 1.0.1: {us(std)} µs ({std/ours:.1f}× slower)")

def results(log, key):
    return [dict(kv.split("=") for kv in line.split()[2:])
            for line in (logs / log).read_text().splitlines() if line.startswith(f"RESULT {key} ")]

def result(log, key):
    return results(log, key)[0]

e2e = result("e2e", "e2e")
steady = result("e2e", "steady")
retention = result("retention", "retention")
worlds = result("worlds", "worlds")
start = result("startup", "startup")
pace = result("pace", "pace")
node_start = result("node_startup", "node_startup")
delivery = (logs / "delivery").read_text().strip()
http = (logs / "http").read_text().strip()
instructions = (logs / "instructions").read_text().strip().splitlines()
rate = re.search(r"median (\d+)/s", delivery).group(1)
paced = {r["readers"]: r for r in results("events", "paced")}
saturated = {r["readers"]: r for r in results("events", "saturated")}
alone, watched = paced["0"], paced["2"]

rows = [
    ("verify a 1 KiB and a 64 KiB webhook", "`cargo bench -p webhook-verify --bench verify`",
     f"{verify_figures('1KiB')}. {verify_figures('64KiB')}"),
    ("signed webhook deliveries", "`cargo bench -p mediagen-mock-server --bench delivery`",
     f"{int(rate):,} per second to a verifying local receiver"),
    (f"end to end: {int(e2e['generations']):,} generations, {int(e2e['users']):,} users, webhooks, clock ×100",
     "`cargo bench -p mediagen --bench e2e`",
     f"{int(e2e['per_second']):,} generations/s (a burst: every create at once); final state → verified delivery p50 {e2e['p50_ms']} ms, p99 {e2e['p99_ms']} ms (queueing included); peak memory {e2e['peak_mib']} MiB"),
    (f"end to end at a steady rate: half the burst's maximum, {steady['seconds']} s",
     "`cargo bench -p mediagen --bench e2e` (second run; `MEDIAGEN_BENCH_RATE` sets the rate)",
     f"offered {int(steady['offered_per_second']):,}/s, achieved {int(steady['achieved_per_second']):,}/s; final state → verified delivery p50 {steady['p50_ms']} ms, p99 {steady['p99_ms']} ms, max {steady['max_ms']} ms; peak memory {steady['peak_mib']} MiB"),
    (f"the mock's live journal: {int(alone['offered_per_second']):,} requests/s for {alone['seconds']} s, two `GET /_mock/events` readers",
     "`cargo bench -p mediagen-mock-server --bench events`",
     f"no event lost (each reader got every logged request, no gap in `seq`); {int(watched['achieved_per_second']):,}/s achieved, "
     f"{int(alone['achieved_per_second']):,}/s without readers; latency p50 {watched['p50_ms']} ms (without: {alone['p50_ms']} ms), "
     f"p99 {watched['p99_ms']} ms (without: {alone['p99_ms']} ms). Saturated by 64 clients: {int(saturated['2']['per_second']):,}/s "
     f"with the readers, {int(saturated['0']['per_second']):,}/s without ({saturated['2']['lost']} events missed, told as `lagged`)"),
    (f"mock memory per 100,000 finished generations ({int(retention['generations']):,} in all)",
     "`cargo bench -p mediagen-mock-server --bench retention`",
     f"+{retention['bounded_mib_per_100k']} MiB with the default `--retain 20000`; +{retention['unbounded_mib_per_100k']} MiB with no bound"),
    (f"mock worlds: {int(worlds['cycles']):,} created, used and deleted",
     "`cargo bench -p mediagen-mock-server --bench worlds`",
     f"resident memory {worlds['start_mib']} → {worlds['end_mib']} MiB ({float(worlds['grown_mib']):+.1f} MiB; the bound is 10 MiB); "
     f"{worlds['cycle_us']} µs a cycle over HTTP; a live world holds {worlds['alive_kib']} KiB"),
    *[(f"a batch of {b['count']} `{b['model']}`, {b['mode']}: limits on, clock ×20",
       "`cargo bench -p mediagen --bench batch`",
       f"{b['makespan_s']} s, {b['ratio']}× its bound of {b['bound_s']} s "
       f"({'2N' if b['mode'] == 'polling' else 'N'} requests at 60 a minute, or 5 tasks at a time); "
       f"{b['requests_per_generation']} requests per generation; {b['rate_limited']} answered 429")
      for b in results("batch", "batch")],
    *[(("one `mediagen batch`" if p['processes'] == '1' else f"{p['processes']} × `mediagen batch` at once on one host, one key each")
       + f", {p['count']} `{p['model']}` in all: limits on, clock ×20"
       + ("" if p['processes'] == '1' else ", the pace shared by the host's processes" if p['pace'] == 'shared'
          else ", each process on a pace of its own (`MEDIAGEN_SHARED_PACE=off`)"),
       "`cargo bench -p mediagen-cli --bench batch`",
       f"{p['makespan_s']} s, {p['ratio']}× the bound of all their generations, {p['bound_s']} s (2N requests at 60 a minute per address); "
       f"{p['requests_per_generation']} requests per generation; {p['rate_limited']} answered 429")
      for p in results("processes", "processes")],
    ("what sharing the pace with the host's processes costs a request", "`cargo bench -p mediagen --bench pace`",
     "; ".join(f"state file {where}: +{pace.get(f'{name}_cpu_cost_us', 'n/a')} µs on a CPU, "
               f"+{pace[f'{name}_cost_us']} µs of wall time"
               for name, where in (("memory", "in memory (tmpfs, as `$XDG_RUNTIME_DIR`)"), ("disk", "on disk (as the cache directory)"))
               if f"{name}_cost_us" in pace)
     + f"; against {pace.get('own_cpu_us', 'n/a')} µs on a CPU and {pace['own_us']} µs of wall time a request to a bare local server with the process's own pace "
       f"(medians of {pace['rounds']} rounds of {int(pace['requests']):,})"),
    ("CLI start-up (`mediagen --version`)", "`cargo bench -p mediagen-cli --bench startup`",
     f"{start['version_ms']} ms (starting any process: {start['true_ms']} ms); `generate --help` {start['help_ms']} ms; `--mock models` {start['mock_models_ms']} ms"),
    ("the mock from Node: `startMock()` to the first answered request", "`node mock-server/npm/bench/startup.js` (release binary)",
     f"{node_start['start_ms']} ms (`mediagen-mock --version`: {node_start['version_ms']} ms)"),
]
INSTALL_HEADING = "## Install: from nothing to the first answer"
text = [
    "# Benchmarks",
    "",
    f"Written by `bash scripts/bench.sh` on {datetime.date.today()} ({os.cpu_count()} cores). "
    "Each figure is a median, beside a baseline measured in the same run.",
    "",
    "| what | command | result |",
    "|---|---|---|",
    *[f"| {a} | {b} | {c} |" for a, b, c in rows],
    "",
    "## Mock server HTTP throughput",
    "",
    "`cargo bench -p mediagen-mock-server --bench http` (wrk in another process):",
    "",
    http,
    "",
    "Instructions the mock spends on one request (`bash scripts/profile-request.sh`: "
    "callgrind, which the host's load does not move; user space only):",
    "",
    *[f"- {line}" for line in instructions],
    "",
]
# The install section is scripts/bench-install.sh's, measured apart (it compiles
# from nothing): kept as it stands.
if out.exists():
    kept = out.read_text().split(INSTALL_HEADING, 1)
    if len(kept) == 2:
        text += [INSTALL_HEADING + kept[1].rstrip("\n"), ""]
out.write_text("\n".join(text))
print(out.read_text())
PY
