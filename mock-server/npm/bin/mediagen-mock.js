#!/usr/bin/env node
// `mediagen-mock` as npm links it into node_modules/.bin: runs the binary
// findBinary() finds (MEDIAGEN_MOCK_BIN, this machine's platform package, a
// checkout's build) with the same arguments and terminal, passes SIGINT,
// SIGTERM and SIGHUP on to it, and ends as it ends: with its exit code, or
// killed by the same signal.
import { spawn } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";

import { findBinary } from "../find-binary.js";

// Set for the binary: a launcher that sees it was started by another launcher
// in the binary's place (a shim on PATH), and stops there instead of looping.
const LAUNCHED_BY = "MEDIAGEN_MOCK_LAUNCHER";
const self = fileURLToPath(import.meta.url);

function fail(message) {
  console.error(`mediagen-mock: ${message}`);
  process.exit(1);
}

if (process.env[LAUNCHED_BY]) {
  fail(
    `${process.env[LAUNCHED_BY]} found this launcher (${self}) where the binary should be; ` +
      "set MEDIAGEN_MOCK_BIN to the mediagen-mock binary",
  );
}

let binary;
try {
  binary = findBinary();
} catch (error) {
  fail(error.message);
}

const child = spawn(binary, process.argv.slice(2), {
  stdio: "inherit",
  env: { ...process.env, [LAUNCHED_BY]: self },
});
const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
const forward = (signal) => child.kill(signal);
for (const signal of signals) process.on(signal, forward);

child.on("error", (error) => fail(`cannot run ${binary}: ${error.message}`));
child.on("exit", (code, signal) => {
  for (const s of signals) process.off(s, forward);
  if (signal) {
    // Ended by a signal: end the same way, so that whoever started this sees it.
    process.exitCode = 128 + (os.constants.signals[signal] ?? 0);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
