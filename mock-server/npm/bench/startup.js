// Start-up of the mock from Node: `startMock()` until its first answered
// request (it resolves once GET /health has answered), the median of RUNS
// runs, beside the cost of starting the binary at all (`--version`)
// measured in the same run.
//
//   node bench/startup.js                 (MEDIAGEN_MOCK_BIN picks the binary)
import { execFileSync } from "node:child_process";

import { findBinary, startMock } from "../index.js";

const RUNS = Number(process.env.RUNS ?? 30);

async function median(run) {
  await run();
  await run(); // warm-up: the binary in the page cache
  const times = [];
  for (let i = 0; i < RUNS; i++) times.push(await run());
  times.sort((a, b) => a - b);
  return times[Math.floor(RUNS / 2)];
}

const binary = findBinary();
const version = await median(async () => {
  const started = performance.now();
  execFileSync(binary, ["--version"]);
  return performance.now() - started;
});
const start = await median(async () => {
  const started = performance.now();
  const mock = await startMock();
  const elapsed = performance.now() - started;
  await mock.stop();
  return elapsed;
});
console.log(`startMock() to the first answered request, median of ${RUNS} runs (${binary})`);
console.log(`  mediagen-mock --version   ${version.toFixed(1)} ms`);
console.log(`  startMock()               ${start.toFixed(1)} ms`);
console.log(`RESULT node_startup start_ms=${start.toFixed(1)} version_ms=${version.toFixed(1)}`);
