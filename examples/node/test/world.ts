// Each test file's mock: the run's (mediagen-mock-test), or one for the file
// when it runs alone; each test gets a fresh world with its demo user.
import { mockWorlds } from "mediagen-mock/node-test";

import { type Client, makeClient } from "../src/client.js";

export function useWorld() {
  // The webhook receiver listens on 127.0.0.1, a private address the service refuses by default.
  // A strict verdict: a test whose client breaks the service's rules for clients fails.
  const mock = mockWorlds({ mock: { allowPrivateWebhooks: true }, verdict: "strict" });
  return {
    get world() {
      return mock.world;
    },
    /** The typed client with the world's demo key. */
    client(): Client {
      return makeClient(mock.world.baseUrl, mock.world.apiKey!);
    },
    /** Waiting, in a test, is moving the mock's clock. */
    wait: (seconds: number) => mock.world.advanceClock(seconds),
  };
}

export const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
