import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { createGeneration, waitForFinal } from "../src/generations.js";
import { type Receiver, startReceiver } from "../src/webhooks.js";
import { useWorld } from "./world.js";

const mock = useWorld();
let receiver: Receiver;
before(async () => {
  receiver = await startReceiver();
});
after(() => receiver.close());

test("a completed generation is delivered, signed, to the receiver", async () => {
  const client = mock.client();
  const { data: endpoint } = await client.POST("/v1/webhook-endpoints", { body: { url: receiver.url } });
  assert.ok(endpoint, "endpoint registered");
  receiver.secret = endpoint.secret;

  const created = await createGeneration(client, { modelSlug: "flux-schnell", prompt: "a lighthouse" }, { wait: mock.wait });
  assert.equal((await waitForFinal(client, created.id, { wait: mock.wait })).status, "SUCCEEDED");

  const event = await receiver.next();
  assert.equal(event.type, "generation.completed");
  assert.equal(event.data.generation.id, created.id);
  assert.equal(receiver.rejected, 0);
  if (event.type === "generation.completed") assert.ok(event.data.generation.output_urls.length);
  const [delivery, ...more] = await mock.world.listDeliveries();
  assert.deepEqual(more, []);
  assert.equal(delivery?.eventId, event.id);
  assert.equal(delivery?.state, "delivered");
  assert.deepEqual(delivery?.attempts.map((a) => a.responseStatus), [204]);
});

test("a delivery signed with another secret is refused", async () => {
  const client = mock.client();
  const { data: endpoint } = await client.POST("/v1/webhook-endpoints", { body: { url: receiver.url } });
  assert.ok(endpoint);
  receiver.secret = "whsec_" + Buffer.from("not the endpoint's secret, 32 by").toString("base64");

  const created = await createGeneration(client, { modelSlug: "flux-schnell", prompt: "a lighthouse" }, { wait: mock.wait });
  const events = receiver.events.length;
  await waitForFinal(client, created.id, { wait: mock.wait });

  // The mock retries a refused delivery on its own clock; the first attempt is enough here.
  const deadline = Date.now() + 10_000;
  while (receiver.rejected === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(receiver.rejected, 1);
  assert.equal(receiver.events.length, events);
});
