#!/usr/bin/env node
// `mediagen-mock-test [node --test arguments]`: node --test with one mock for
// the whole run. Node 20's test runner has no global setup (and loads
// --import modules only in the test files' processes), so this starts the
// mock, shares it with the test files through the environment
// (MEDIAGEN_MOCK_URL, ...; `mockWorlds()` of mediagen-mock/node-test reads
// it), runs `node --test` with the arguments given, and stops the mock when
// that ends, with its exit code. SIGINT and SIGTERM go to the tests first.
//
// The mock's flags: `--mock-arg=FLAG` (repeatable, written with `=`), such as
// `--mock-arg=--allow-private-webhooks`, or its own environment variables
// (MEDIAGEN_MOCK_ALLOW_PRIVATE_WEBHOOKS=true, ...); each world chooses its
// clock and response mode.
import { spawn } from "node:child_process";

import { startMock } from "./index.js";

const MOCK_ARG = "--mock-arg=";
const argv = process.argv.slice(2);
const args = argv.filter((a) => a.startsWith(MOCK_ARG)).map((a) => a.slice(MOCK_ARG.length));
const mock = await startMock({ args });
const tests = spawn(process.execPath, ["--test", ...argv.filter((a) => !a.startsWith(MOCK_ARG))], {
  stdio: "inherit",
  env: { ...process.env, ...mock.env() },
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => tests.kill(signal));
}
const [code, signal] = await new Promise((resolve) => tests.on("exit", (...end) => resolve(end)));
await mock.stop();
process.exitCode = code ?? (signal ? 128 + ({ SIGINT: 2, SIGTERM: 15 }[signal] ?? 1) : 1);
