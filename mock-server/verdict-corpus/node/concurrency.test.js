// The concurrency limit, 5 active tasks: `concurrency-retry-loop`. POST
// /v1/generations, rule 5; Limits, rules 4 and 5. The client's batch holds 5
// long tasks (veo-3: 181 s), so nothing frees a slot while it backs off.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as clients from "./clients.js";
import { assertNamed, assertNeverAccused, assertNotAccused, corpus, steady } from "./harness.js";

const LOOP = "concurrency-retry-loop";
const SIXTH = { modelSlug: "veo-3", prompt: "the sixth clip" };
const edge = corpus();

async function withFiveActive(world) {
  const { userId, svc } = await world.newUser(10_000);
  return { userId, svc, own: await clients.startBatch(svc, "veo-3", 5) };
}

test("a create re-sent every 0.05 s is named concurrency-retry-loop", async () => {
  const findings = await steady(await edge(), async (world) => {
    const { svc } = await withFiveActive(world);
    const answers = await clients.createInATightLoop(svc, world.sleep, SIXTH);
    assert.ok(answers.every(clients.isConcurrencyRefusal));
    return svc.sent.slice(5);
  });
  assertNamed(findings, LOOP);
});

test("full jitter after the concurrency 429 is never accused", async () => {
  const strategy = "create after 5 active tasks, full jitter 0-1, 0-2, 0-4, 0-8 s";
  await assertNeverAccused(await edge(), strategy, LOOP, async (world, rng) => {
    const { svc } = await withFiveActive(world);
    const answers = await clients.createBackingOff(svc, world.sleep, SIXTH, clients.fullJitter(rng));
    assert.equal(answers.length, 5);
  });
});

test("an early first retry, then 2, 4, 8 s, is not accused", async () => {
  const world = await edge();
  const { svc } = await withFiveActive(world);
  await clients.createBackingOff(svc, world.sleep, SIXTH, [0.05, 2, 4, 8]);
  assertNotAccused(await world.judge(), LOOP);
});

for (const [name, earlyRetry] of [
  ["reading its tasks first", undefined],
  ["one early retry, then reading its tasks", 0.05],
]) {
  test(`a create once a task has ended (${name}) is not accused`, async () => {
    const world = await edge();
    const { svc, own } = await withFiveActive(world);
    const answers = await clients.createWhenATaskEnds(svc, world.sleep, SIXTH, own, { earlyRetry });
    assert.equal(answers.at(-1).status, 202, answers.at(-1).text);
    assertNotAccused(await world.judge(), LOOP);
  });
}
