// Retrying a read through a 503 outage: `retry-without-backoff` and `too-many-attempts`.
// Errors, Client handling 2: retry SERVICE_UNAVAILABLE with exponential delay.
// Limits, rule 5: exponential delay with jitter, 1, 2, 4, 8 s, stop after 5 attempts.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as clients from "./clients.js";
import { assertNamed, assertNeverAccused, assertNotAccused, assertNotNamed, corpus, steady } from "./harness.js";

const BACKOFF = "retry-without-backoff";
const ATTEMPTS = "too-many-attempts";
const edge = corpus();

/** A client with one generation reads it while its route answers `outage` 503s
 * (or, with effect "drop", closes the connection that many times). */
async function readThroughOutage(edge, rng, waits, outage, effect = "503", sent = undefined) {
  const { userId, svc } = await edge.newUser();
  const created = await clients.create(svc, { modelSlug: "flux-schnell", prompt: "a lighthouse" }, clients.newKey());
  const id = created.json.id;
  const route = `/v1/generations/${id}`;
  if (effect === "drop") await edge.fault({ effect: "drop", method: "GET", path: route, userId, count: outage });
  else await edge.outage("GET", route, userId, outage);
  const answer = await clients.readGeneration(svc, edge.sleep, id, waits(rng));
  sent?.push(...svc.sent.slice(1));
  return answer;
}

for (const [name, waits] of [
  ["at once", clients.noWait],
  ["every 0.2 s", clients.fixed(0.2)],
  ["every 1 s, 4 retries", clients.fixed(1)],
]) {
  test(`retries ${name} are named retry-without-backoff`, async () => {
    const findings = await steady(await edge(), async (world) => {
      const sent = [];
      const answer = await readThroughOutage(world, clients.seededRandom(0), waits, 4, "503", sent);
      assert.equal(answer?.status, 200);
      return sent;
    });
    assertNamed(findings, BACKOFF);
  });
}

for (const [name, waits] of [
  ["full jitter: uniform from 0 up to 1, 2, 4, 8 s", clients.fullJitter],
  ["decorrelated jitter: min(cap, uniform(1, 3 * previous))", clients.decorrelatedJitter],
]) {
  test(`${name} is never accused`, async () => {
    await assertNeverAccused(await edge(), `GET through 4 x 503, ${name}`, BACKOFF, async (world, rng) => {
      const answer = await readThroughOutage(world, rng, waits, 4);
      assert.equal(answer?.status, 200);
    });
  });
}

for (const [name, effect] of [["503s", "503"], ["dropped connections", "drop"]]) {
  test(`plain exponential back-off through ${name} is not accused`, async () => {
    const world = await edge();
    const answer = await readThroughOutage(world, clients.seededRandom(0), clients.exponential, 4, effect);
    assert.equal(answer?.status, 200);
    assertNotAccused(await world.judge(), BACKOFF);
  });

  test(`a slow fixed 10 s interval through a 40 s outage of ${name} is not accused`, async () => {
    // No answer at 0, 10, 20, 30 s, the answer at 40 s.
    const world = await edge();
    const answer = await readThroughOutage(world, clients.seededRandom(0), clients.fixed(10), 4, effect);
    assert.equal(answer?.status, 200);
    assertNotAccused(await world.judge(), BACKOFF);
  });
}

test("ten retries with back-off are named too-many-attempts", async () => {
  const world = await edge();
  const answer = await readThroughOutage(world, clients.seededRandom(0), clients.tenRetriesWithBackOff, 10);
  assert.equal(answer?.status, 200);
  assertNamed(await world.judge(), ATTEMPTS);
});

test("ten retries with back-off are not called retry-without-backoff", async () => {
  // The delays grow: what is wrong is their number, which has its own rule now.
  const world = await edge();
  await readThroughOutage(world, clients.seededRandom(0), clients.tenRetriesWithBackOff, 10);
  assertNotNamed(await world.judge(), BACKOFF);
});

test("a client that stops after five attempts is not accused", async () => {
  const world = await edge();
  const answer = await readThroughOutage(world, clients.seededRandom(0), clients.equalJitter, 10);
  assert.equal(answer?.status, 503); // it gave up
  const findings = await world.judge();
  assertNotAccused(findings, ATTEMPTS);
  assertNotAccused(findings, BACKOFF);
});
