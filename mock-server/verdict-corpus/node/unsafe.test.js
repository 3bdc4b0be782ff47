// A POST that may act, answered 503: `unsafe-repeat`. Errors, Client handling: a
// request that may have taken effect is not sent again blindly; POST
// /v1/webhook-endpoints has no Idempotency-Key, so the client reads the list.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as clients from "./clients.js";
import { assertNamed, assertNotAccused, corpus } from "./harness.js";

const UNSAFE = "unsafe-repeat";
const URL = "http://127.0.0.1:9/webhooks"; // never delivered to: no task ends here
const edge = corpus();

for (const [name, wait] of [["at once", 0], ["after 1 s", 1]]) {
  test(`an endpoint POST sent again ${name} without reading is named unsafe-repeat`, async () => {
    const world = await edge();
    const { userId, svc } = await world.newUser();
    await world.outage("POST", "/v1/webhook-endpoints", userId, 1);
    const answers = await clients.addEndpointRepeating(svc, world.sleep, URL, wait);
    assert.deepEqual(answers.map((a) => a.status), [503, 201]);
    assertNamed(await world.judge(), UNSAFE);
  });
}

test("an endpoint POST sent again after reading the list is not accused", async () => {
  const world = await edge();
  const { userId, svc } = await world.newUser();
  await world.outage("POST", "/v1/webhook-endpoints", userId, 1);
  const created = await clients.addEndpointReadingFirst(svc, world.sleep, URL);
  assert.match(created?.secret ?? "", /^whsec_/);
  assert.deepEqual((await clients.endpoints(svc)).map((e) => e.url), [URL]);
  assertNotAccused(await world.judge(), UNSAFE);
});

test("an endpoint POST that acted before its connection dropped is found by reading", async () => {
  const world = await edge();
  const { userId, svc } = await world.newUser();
  await world.fault({ effect: "drop_after", method: "POST", path: "/v1/webhook-endpoints", userId, count: 1 });
  const created = await clients.addEndpointReadingFirst(svc, world.sleep, URL);
  assert.match(created?.secret ?? "", /^whsec_/);
  assert.deepEqual((await clients.endpoints(svc)).map((e) => e.url), [URL]);
  assertNotAccused(await world.judge(), UNSAFE);
});
