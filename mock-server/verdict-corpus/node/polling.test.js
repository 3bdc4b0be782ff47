// Polling a generation: `poll-rate` (advice), `poll-rate-limited` (violation),
// `read-after-final` (advice). Limits: the general rate, 60 requests a minute
// per address, shared by the client's active tasks.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as clients from "./clients.js";
import { assertNamed, assertNotAccused, assertNotNamed, corpus } from "./harness.js";

const POLL_RATE = "poll-rate";
const LIMITED = "poll-rate-limited";
const AFTER_FINAL = "read-after-final";
const RETRY_AFTER = "retry-before-retry-after";
const edge = corpus();

// Task lengths on the mock (1 s queued, then the model's average): imagen-4 13 s, kling-2-1 91 s.
async function start(svc, model) {
  const answer = await clients.create(svc, { modelSlug: model, prompt: "a slow clip" }, clients.newKey());
  assert.equal(answer.status, 202, answer.text);
  return answer.json.id;
}

test("polling at 10 Hz gets poll-rate advice", async () => {
  const world = await edge();
  const { svc } = await world.newUser();
  const reads = await clients.poll(svc, world.sleep, await start(svc, "imagen-4"), clients.every(0.1));
  assert.ok(reads.length > 100);
  assertNamed(await world.judge(), POLL_RATE);
});

test("polling once a second with one task, 91 reads, gets no poll-rate", async () => {
  const world = await edge();
  const { svc } = await world.newUser();
  const reads = await clients.poll(svc, world.sleep, await start(svc, "kling-2-1"), clients.every(1));
  assert.ok(reads.length >= 61);
  const findings = await world.judge();
  assertNotAccused(findings, POLL_RATE);
  assertNotNamed(findings, AFTER_FINAL);
});

test("two tasks each read every 2 s get no poll-rate", async () => {
  const world = await edge();
  const { svc } = await world.newUser();
  const tasks = [await start(svc, "kling-2-1"), await start(svc, "kling-2-1")];
  assert.ok((await clients.pollRoundRobin(svc, world.sleep, tasks, 1)) >= 90);
  assertNotAccused(await world.judge(), POLL_RATE);
});

test("polling at 10 Hz into the general limit is named poll-rate-limited", async () => {
  // It waits out each 429's retry-after, as it should; its pace is what is wrong.
  const world = await edge({ rateLimits: true });
  const { svc } = await world.newUser();
  const reads = await clients.poll(svc, world.sleep, await start(svc, "kling-2-1"), clients.every(0.1));
  assert.ok(reads.some((answer) => answer.status === 429));
  const findings = await world.judge();
  assertNamed(findings, LIMITED);
  assertNotNamed(findings, RETRY_AFTER);
});

test("polling once a second with the limits on is not named poll-rate-limited", async () => {
  const world = await edge({ rateLimits: true });
  const { svc } = await world.newUser();
  const reads = await clients.poll(svc, world.sleep, await start(svc, "kling-2-1"), clients.every(1));
  assert.ok(reads.length >= 61);
  const findings = await world.judge();
  assertNotAccused(findings, LIMITED);
  assertNotNamed(findings, POLL_RATE);
});
