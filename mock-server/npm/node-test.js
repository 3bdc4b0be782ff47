// node:test: a fresh world of the mock for each test of the file.
//
//   import { test } from "node:test";
//   import { mockWorlds } from "mediagen-mock/node-test";
//   const mock = mockWorlds();
//   test("...", async () => { mock.world.baseUrl; mock.world.apiKey; });
//
// Run with `node --import mediagen-mock/node-test-setup --test` for one mock
// for the whole run; without it, each test file starts its own.
import { after, afterEach, before, beforeEach } from "node:test";

import { worldPerTest } from "./index.js";

export function mockWorlds(options) {
  return worldPerTest({ before, after, beforeEach, afterEach }, options);
}
