import assert from "node:assert/strict";
import { test } from "node:test";

import { availableRub, createGeneration, download, waitForFinal } from "../src/generations.js";
import { PNG_MAGIC, useWorld } from "./world.js";

const mock = useWorld();

test("a generation created with an Idempotency-Key succeeds and its output is a PNG", async () => {
  const client = mock.client();
  const before = await availableRub(client);
  const body = { modelSlug: "flux-schnell", prompt: "a lighthouse at dusk" };

  const created = await createGeneration(client, body, { wait: mock.wait });
  const again = await createGeneration(client, body, { idempotencyKey: created.idempotencyKey, wait: mock.wait });
  assert.equal(again.id, created.id, "the same key names the same task");
  assert.equal(await availableRub(client), before - created.costRub, "charged once");

  const done = await waitForFinal(client, created.id, { wait: mock.wait });
  assert.equal(done.status, "SUCCEEDED");
  assert.ok(done.outputUrls?.length);

  const png = await download(done.outputUrls[0]!, mock.wait);
  assert.deepEqual([...png.subarray(0, 8)], PNG_MAGIC);
  assert.ok(png.length > 100);
});
