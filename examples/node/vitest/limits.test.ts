// Vitest: one mock for the run (vitest/global-setup.ts), a fresh world per
// test, so a test that fills the concurrency cap leaves nothing to the next.
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from "vitest";
import { worldPerTest } from "mediagen-mock";

import { makeClient } from "../src/client.js";
import { createGeneration, waitForFinal } from "../src/generations.js";

const mock = worldPerTest({ beforeAll, afterAll, beforeEach, afterEach });
const wait = (seconds: number) => mock.world.advanceClock(seconds);

test("a sixth task waits for one of five to end: 429 without retry-after, not retried", async () => {
  const client = makeClient(mock.world.baseUrl, mock.world.apiKey!);
  const body = { modelSlug: "flux-schnell", prompt: "a lighthouse" };
  const five = [];
  for (let i = 0; i < 5; i++) five.push(await createGeneration(client, body, { wait }));
  const retries: string[] = [];

  await expect(createGeneration(client, body, { wait, onRetry: (r) => retries.push(r) })).rejects.toThrow(
    /429 RATE_LIMIT_ERROR Maximum 5 concurrent generations allowed/,
  );
  expect(retries).toEqual([]);

  await waitForFinal(client, five[0]!.id, { wait });
  await expect(createGeneration(client, body, { wait })).resolves.toMatchObject({ costRub: five[0]!.costRub });
});

test("the next test's world has no task of the last one", async () => {
  const client = makeClient(mock.world.baseUrl, mock.world.apiKey!);
  const { data } = await client.GET("/v1/generations");
  expect(data?.data).toEqual([]);
  // The run's mock, from the global setup, serves every test.
  expect(mock.server.baseUrl).toBe(process.env.MEDIAGEN_MOCK_URL);
  expect((await mock.server.listWorlds()).map((w) => w.id)).toContain(mock.world.id);
});
