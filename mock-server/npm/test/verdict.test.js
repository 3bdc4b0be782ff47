// The verdict's words and modes, without a mock: the first line names the
// rules that fail, a receiver's finding shows its endpoint and messages, and
// a mode that is none of off, strict and strict:RULE,RULE is refused where it
// is given.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ENV, verdictMode, verdictText, worldPerTest } from "../index.js";
import { setupMock } from "../vitest-setup.js";

const finding = (rule, severity, fails, more = {}) => ({
  rule,
  severity,
  message: `${rule} happened`,
  documentRule: "a rule",
  advice: "do better",
  requestIds: ["req_1"],
  firstAt: "2026-11-27T10:00:00Z",
  count: 1,
  fails,
  ...more,
});

test("verdictText names the failing rules first, then the findings, those that fail first", () => {
  const verdict = {
    clean: false,
    checked: { requests: 4, deliveries: 2 },
    findings: [
      finding("create-without-key", "advice", false),
      finding("receiver-failed", "violation", true, {
        endpoint: { id: "we_1", url: "http://127.0.0.1:9/hook" },
        messageIds: ["msg_1", "msg_2"],
      }),
      finding("poll-rate", "advice", true),
    ],
  };
  assert.deepEqual(verdictText(verdict, { strict: ["poll-rate"] }).split("\n"), [
    "receiver-failed, poll-rate — mediagen-mock verdict: 2 findings of 3 fail the test (strict: poll-rate; 4 requests, 2 deliveries checked)",
    "  violation receiver-failed (x1) fails: receiver-failed happened",
    "    document: a rule; do: do better",
    "    endpoint: we_1 http://127.0.0.1:9/hook; messages: msg_1, msg_2",
    "  advice poll-rate (x1) fails: poll-rate happened",
    "    document: a rule; do: do better",
    "    requests: req_1",
    "  advice create-without-key (x1): create-without-key happened",
    "    document: a rule; do: do better",
    "    requests: req_1",
  ]);
  const clean = { clean: true, checked: { requests: 1, deliveries: 0 }, findings: [finding("create-without-key", "advice", false)] };
  assert.match(verdictText(clean), /^mediagen-mock verdict: clean — advice that fails nothing: create-without-key \(1 requests/);
});

test("a verdict mode is off, strict, or strict with rule ids; anything else is refused", () => {
  assert.deepEqual(verdictMode(undefined), { strict: false, rules: [] });
  assert.deepEqual(verdictMode("off"), { strict: false, rules: [] });
  assert.deepEqual(verdictMode("strict"), { strict: true, rules: [] });
  assert.deepEqual(verdictMode("strict:poll-rate, read-after-final,poll-rate"), {
    strict: true,
    rules: ["poll-rate", "read-after-final"],
  });
  assert.throws(() => verdictMode("strickt", ENV.verdict), /MEDIAGEN_MOCK_VERDICT = "strickt": expected "strict"/);
  const hooks = { before() {}, after() {}, beforeEach() {}, afterEach() {} };
  assert.throws(() => worldPerTest(hooks, { verdict: "poll-rate" }), /verdict = "poll-rate"/);
});

test("setupMock passes its verdict mode to the workers through MEDIAGEN_MOCK_VERDICT", async (t) => {
  const saved = { url: process.env[ENV.url], verdict: process.env[ENV.verdict] };
  t.after(() => {
    for (const [key, name] of [["url", ENV.url], ["verdict", ENV.verdict]]) {
      if (saved[key] === undefined) delete process.env[name];
      else process.env[name] = saved[key];
    }
  });
  // A mock already shared: the setup starts none.
  process.env[ENV.url] = "http://127.0.0.1:1";
  assert.equal(await setupMock({ verdict: "strict:poll-rate" })(), undefined);
  assert.equal(process.env[ENV.verdict], "strict:poll-rate");
  assert.throws(() => setupMock({ verdict: "strict-ish" }), /verdict = "strict-ish"/);
});
