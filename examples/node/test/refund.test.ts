import assert from "node:assert/strict";
import { test } from "node:test";

import { availableRub, createGeneration, waitForFinal } from "../src/generations.js";
import { useWorld } from "./world.js";

const mock = useWorld();

test("a failed generation gives the money back", async () => {
  const client = mock.client();
  const before = await availableRub(client);
  // The provider times out on every worker attempt: three attempts, then FAILED.
  await mock.world.forceOutcome({ outcome: "fail", errorCode: "timeout" });

  const created = await createGeneration(client, { modelSlug: "flux-schnell", prompt: "a storm" }, { wait: mock.wait });
  assert.equal(await availableRub(client), before - created.costRub, "reserved while it runs");

  const done = await waitForFinal(client, created.id, { wait: mock.wait });
  assert.equal(done.status, "FAILED");
  assert.equal(done.errorCode, "timeout");
  assert.equal(await availableRub(client), before, "refunded");
});
