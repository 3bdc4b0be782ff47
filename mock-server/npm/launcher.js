#!/usr/bin/env node
// `mediagen-mock` as npm links it into node_modules/.bin: runs the binary
// findBinary() finds (MEDIAGEN_MOCK_BIN, the platform package, a checkout's
// build) with the same arguments and terminal, passes signals on, and exits as
// it does. Nothing is built or downloaded at install time.
import { spawn } from "node:child_process";

import { findBinary } from "./index.js";

// Set for the child: a launcher that finds itself started by a launcher has
// been found in place of the binary, and stops there instead of looping.
const LAUNCHED = "MEDIAGEN_MOCK_LAUNCHER";
if (process.env[LAUNCHED]) {
  console.error(`mediagen-mock: ${process.env[LAUNCHED]} ran another launcher, not the binary; set MEDIAGEN_MOCK_BIN`);
  process.exit(1);
}
let binary;
try {
  binary = findBinary();
} catch (error) {
  console.error(`mediagen-mock: ${error.message}`);
  process.exit(1);
}
const env = { ...process.env, [LAUNCHED]: process.argv[1] };
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", env });
const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
const forward = (signal) => child.kill(signal);
for (const signal of signals) process.on(signal, forward);
child.on("error", (error) => {
  console.error(`mediagen-mock: cannot run ${binary}: ${error.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  for (const s of signals) process.off(s, forward);
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
