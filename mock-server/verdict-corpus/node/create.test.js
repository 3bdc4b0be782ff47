// Re-sending a create: `create-retry-new-key`. POST /v1/generations, rule 7: a
// request with the same Idempotency-Key returns the existing generation.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as clients from "./clients.js";
import { assertNamed, assertNotAccused, corpus } from "./harness.js";

const NEW_KEY = "create-retry-new-key";
const PROMPT = { modelSlug: "flux-schnell", prompt: "a lighthouse at dusk" };
const edge = corpus();

// How the first create goes wrong: a 503 before acting, a connection dropped
// before acting, a connection dropped after acting (the answer was lost).
const FAULTS = {
  "503": { effect: "error", status: 503, code: "SERVICE_UNAVAILABLE" },
  "dropped connection": { effect: "drop" },
  "dropped after acting": { effect: "drop_after" },
};

for (const [name, fault] of Object.entries(FAULTS)) {
  test(`a create sent again with a new key after a ${name} is named`, async () => {
    const world = await edge();
    const { userId, svc } = await world.newUser();
    await world.fault({ ...fault, method: "POST", path: "/v1/generations", userId, count: 1 });
    const answer = await clients.createRetryingNewKey(svc, world.sleep, PROMPT, clients.exponential());
    assert.equal(answer?.status, 202);
    assertNamed(await world.judge(), NEW_KEY);
  });

  test(`a create sent again with the same key after a ${name} is not accused`, async () => {
    const world = await edge();
    const { userId, svc } = await world.newUser();
    await world.fault({ ...fault, method: "POST", path: "/v1/generations", userId, count: 1 });
    const answer = await clients.createRetryingSameKey(svc, world.sleep, PROMPT, clients.exponential());
    assert.equal(answer?.status, 202);
    assert.equal((await world.user(userId)).activeGenerations, 1, "one generation, one charge");
    assertNotAccused(await world.judge(), NEW_KEY);
  });
}
