import assert from "node:assert/strict";
import { test } from "node:test";

import { availableRub, createGeneration, waitForFinal } from "../src/generations.js";
import { useWorld } from "./world.js";

const mock = useWorld();

test("a 503 on create is retried with the same Idempotency-Key and charged once", async () => {
  const client = mock.client();
  const before = await availableRub(client);
  await mock.world.injectFault({ method: "POST", path: "/v1/generations", effect: "error", status: 503, count: 2 });
  const retries: string[] = [];

  const created = await createGeneration(
    client,
    { modelSlug: "flux-schnell", prompt: "a lighthouse" },
    { wait: mock.wait, onRetry: (reason) => retries.push(reason) },
  );

  assert.deepEqual(retries, ["answered 503", "answered 503"]);
  assert.equal(await availableRub(client), before - created.costRub, "charged once");
  const creates = (await mock.world.listRequests()).filter((r) => r.method === "POST" && r.path === "/v1/generations");
  assert.deepEqual(creates.map((r) => r.status).sort(), [202, 503, 503]);
});

test("a connection dropped after the create acted: the retry gets the same task, charged once", async () => {
  const client = mock.client();
  const before = await availableRub(client);
  // The service creates the task, then the connection closes before the answer.
  await mock.world.injectFault({ method: "POST", path: "/v1/generations", effect: "drop_after" });
  const retries: string[] = [];

  const created = await createGeneration(
    client,
    { modelSlug: "flux-schnell", prompt: "a lighthouse" },
    { wait: mock.wait, onRetry: (reason) => retries.push(reason) },
  );

  assert.equal(retries.length, 1);
  assert.match(retries[0]!, /^connection failed/);
  assert.equal(await availableRub(client), before - created.costRub, "one task, one charge");
  const { data } = await client.GET("/v1/generations");
  assert.deepEqual(data?.data.map((g) => g.id), [created.id]);
});

test("a dropped poll is retried and the generation still followed to its end", async () => {
  const client = mock.client();
  const created = await createGeneration(client, { modelSlug: "flux-schnell", prompt: "a lighthouse" }, { wait: mock.wait });
  await mock.world.injectFault({ method: "GET", path: "/v1/generations/*", effect: "drop" });
  const retries: string[] = [];

  const done = await waitForFinal(client, created.id, { wait: mock.wait, onRetry: (reason) => retries.push(reason) });

  assert.equal(done.status, "SUCCEEDED");
  assert.equal(retries.length, 1);
  assert.match(retries[0]!, /^connection failed/);
});
