import assert from "node:assert/strict";
import { test } from "node:test";

import { availableRub, createGeneration, download, waitForFinal } from "../src/generations.js";
import { PNG_MAGIC, useWorld } from "./world.js";

const mock = useWorld();

test("with only what the service document guarantees, the typed client still works", async () => {
  await mock.world.updateSettings({ responses: "minimal" });
  const client = mock.client();

  const created = await createGeneration(client, { modelSlug: "flux-schnell", prompt: "a lighthouse" }, { wait: mock.wait });
  const done = await waitForFinal(client, created.id, { wait: mock.wait });

  assert.equal(done.status, "SUCCEEDED");
  assert.deepEqual(Object.keys(done).sort(), ["costRub", "id", "outputUrls", "status"], "the mode is on");
  assert.deepEqual([...(await download(done.outputUrls![0]!, mock.wait)).subarray(0, 8)], PNG_MAGIC);
  assert.equal(typeof (await availableRub(client)), "number");
});
