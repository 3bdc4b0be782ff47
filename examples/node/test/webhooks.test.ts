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

  const delivery = await receiver.next();
  assert.ok(delivery.verified, "the signature verifies");
  const { event } = delivery;
  assert.equal(event.type, "generation.completed");
  assert.equal(event.data.generation.id, created.id);
  if (event.type === "generation.completed") assert.ok(event.data.generation.output_urls.length);

  // One message for the one endpoint (its attempt is recorded once the mock has read the 204,
  // which may be after this line: the attempt itself is not asserted).
  const messages = await mock.world.listDeliveries();
  assert.deepEqual(messages.map((m) => m.eventId), [event.id]);
});

test("a delivery that does not verify with the receiver's secret is refused", async () => {
  const client = mock.client();
  const { data: endpoint } = await client.POST("/v1/webhook-endpoints", { body: { url: receiver.url } });
  assert.ok(endpoint);
  receiver.secret = `whsec_${Buffer.from("not the endpoint's secret, 32 by").toString("base64")}`;

  const created = await createGeneration(client, { modelSlug: "flux-schnell", prompt: "a lighthouse" }, { wait: mock.wait });
  await waitForFinal(client, created.id, { wait: mock.wait });

  assert.deepEqual(await receiver.next(), { verified: false });

  // The delivery was signed correctly, with the endpoint's secret: to the service, this
  // receiver failed it, and the mock's verdict says so once it has read the 400.
  let verdict = await mock.world.getVerdict();
  for (let reads = 1; reads < 200 && !verdict.findings.some((f) => f.rule === "receiver-failed"); reads++) {
    verdict = await mock.world.getVerdict();
  }
  assert.ok(verdict.findings.some((f) => f.rule === "receiver-failed" && f.severity === "violation"));
  // Asked for on purpose: the strict verdict at the test's end judges the rest.
  await mock.world.resetVerdict();
});
