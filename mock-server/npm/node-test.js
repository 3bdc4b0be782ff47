// node:test: a fresh world of the mock for each test of the file.
//
//   import { test } from "node:test";
//   import { mockWorlds } from "mediagen-mock/node-test";
//   const mock = mockWorlds();
//   test("...", async () => { mock.world.baseUrl; mock.world.apiKey; });
//
// Run with `mediagen-mock-test` (node --test with one mock for the whole
// run); with a plain `node --test`, each test file starts its own.
// `mockWorlds({ verdict: "strict" })`, or "strict:poll-rate,read-after-final",
// fails a test whose world's verdict is not clean (see worldPerTest).
import { after, afterEach, before, beforeEach } from "node:test";

import { worldPerTest } from "./index.js";

export function mockWorlds(options) {
  return worldPerTest({ before, after, beforeEach, afterEach }, options);
}
