// The process: a free port, an answer before startMock resolves, a clear
// error when it cannot start, and no mediagen-mock left behind, whether the
// run ends well, a test throws or the runner is interrupted.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test as nodeTest } from "node:test";
import { fileURLToPath } from "node:url";

import { ENV, MockStartError, startMock } from "../index.js";

// A run that hangs fails instead.
const test = (name, fn) => nodeTest(name, { timeout: 60_000 }, fn);
const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
const runner = fileURLToPath(new URL("../node-test-run.js", import.meta.url));

/** Whether a process is alive: not gone and not a zombie nobody reaped yet. */
function alive(pid) {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Waits, in real time, for a process of the OS to end: a signal is handled asynchronously. */
async function ended(pid, ms = 5000) {
  const deadline = Date.now() + ms;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return !alive(pid);
}

/** This process's environment without the test runner's mark, which would make a child report to it. */
function cleanEnv(env = {}) {
  const clean = { ...process.env, ...env };
  delete clean.NODE_TEST_CONTEXT;
  return clean;
}

/** Runs node with `args`; resolves with its exit code and output. */
function node(args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: fixtures,
      env: cleanEnv(env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("exit", (code) => resolve({ code, out }));
  });
}

/** A file in a folder of its own, removed after the test. */
function tempFile(t, name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mediagen-mock-test-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, name);
}

test("startMock answers on a free port of 127.0.0.1, and stop() ends the process", async () => {
  const [a, b] = await Promise.all([startMock(), startMock()]);
  assert.match(a.baseUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.notEqual(a.baseUrl, b.baseUrl);
  const account = await fetch(`${a.baseUrl}/v1/account`, { headers: { authorization: `Bearer ${a.apiKey}` } });
  assert.equal(account.status, 200);
  await Promise.all([a.stop(), b.stop()]);
  assert.equal(a.running, false);
  assert.equal(alive(a.pid) || alive(b.pid), false);
  assert.equal(fs.existsSync(a.logPath), false, "the log goes with the process unless kept");
});

test("a mock that cannot start rejects with its log", async () => {
  await assert.rejects(startMock({ args: ["--no-such-flag"] }), (error) => {
    assert.ok(error instanceof MockStartError);
    assert.match(error.message, /exited .* before listening/);
    assert.match(error.log, /--no-such-flag/);
    return true;
  });
  await assert.rejects(startMock({ binary: "/nonexistent/mediagen-mock" }), MockStartError);
});

test("a test that throws leaves no mediagen-mock behind", async (t) => {
  const pidFile = tempFile(t, "pid");
  const run = await node(["--test", "throws.test.js"], { PID_FILE: pidFile });
  assert.equal(run.code, 1, run.out);
  assert.match(run.out, /the test failed/);
  const pid = Number(fs.readFileSync(pidFile, "utf8"));
  assert.ok(await ended(pid), `mediagen-mock ${pid} still runs`);
});

for (const signal of ["SIGINT", "SIGTERM"]) {
  test(`${signal} to the test process ends its mock`, async () => {
    const child = spawn(process.execPath, ["holds.js"], {
      cwd: fixtures,
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "inherit"],
    });
    const pid = await new Promise((resolve) => child.stdout.once("data", (d) => resolve(Number(String(d)))));
    assert.ok(alive(pid));
    const exited = new Promise((resolve) => child.on("exit", (code, sig) => resolve(sig)));
    child.kill(signal);
    assert.equal(await exited, signal, "the process still ends by the signal");
    assert.ok(await ended(pid), `mediagen-mock ${pid} still runs`);
  });
}

test("a failing test shows its world's request log, and mediagen-mock-test fails", async () => {
  const run = await node([runner, "world-fails.test.js"]);
  assert.equal(run.code, 1, run.out);
  assert.match(run.out, /request log \(1, newest last\)/);
  assert.match(run.out, /GET \/v1\/generations\/not-a-task -> 404/);
});

test("a strict verdict fails the test whose world ends with a violation, naming the rule first", async () => {
  const run = await node([runner, "verdict.test.js"], { VERDICT: "strict" });
  assert.equal(run.code, 1, run.out);
  assert.match(run.out, /# pass 2/);
  assert.match(run.out, /# fail 1/);
  assert.match(run.out, /create-retry-new-key — mediagen-mock verdict: 1 finding of 1 fails the test/);
  assert.match(run.out, /violation create-retry-new-key \(x1\) fails: /);
  const lenient = await node([runner, "verdict.test.js"], { VERDICT: "off", [ENV.verdict]: "strict" });
  assert.equal(lenient.code, 0, lenient.out);
});

test("strict:RULE fails on that rule's advice too, from the option or MEDIAGEN_MOCK_VERDICT", async () => {
  for (const env of [{ VERDICT: "strict:create-without-key,read-after-final" }, { [ENV.verdict]: "strict:create-without-key" }]) {
    const run = await node([runner, "verdict.test.js"], env);
    assert.equal(run.code, 1, run.out);
    assert.match(run.out, /# pass 1/);
    assert.match(run.out, /# fail 2/);
    assert.match(run.out, /create-without-key — mediagen-mock verdict: 1 finding of 1 fails the test \(strict: create-without-key/);
    assert.match(run.out, /advice create-without-key \(x1\) fails: /);
  }
});

test("a mistyped rule fails each test with the mock's message naming the known rules", async () => {
  const run = await node([runner, "verdict.test.js"], { VERDICT: "strict:create-without-kee" });
  assert.equal(run.code, 1, run.out);
  assert.match(run.out, /# fail 3/);
  // The mock's message lists the rules it knows.
  assert.match(run.out, /mediagen-mock verdict: strict:create-without-kee refused — .*create-without-key/);
  assert.match(run.out, /GET \/_mock\/verdict\?strict=create-without-kee: 400 VALIDATION_ERROR/);
});

test("a verdict mode that is none fails the file at once, saying what is expected", async () => {
  const run = await node([runner, "verdict.test.js"], { VERDICT: "strickt" });
  assert.equal(run.code, 1, run.out);
  assert.match(run.out, /verdict = "strickt": expected "strict", "strict:RULE,RULE"/);
});

test("a test that fails on its own shows its world's verdict beside its request log", async () => {
  const run = await node([runner, "verdict.test.js"], { VERDICT: "off", OWN_FAILURE: "1" });
  assert.equal(run.code, 1, run.out);
  assert.match(run.out, /# fail 1/);
  assert.match(run.out, /the client's own check/);
  assert.match(run.out, /# create-retry-new-key — mediagen-mock verdict: 1 finding of 1 fails the test/);
  assert.match(run.out, /# request log \(2, newest last\)/);
});

test("with mediagen-mock-test, one mock serves the run and each test gets a fresh world", async (t) => {
  const seenFile = tempFile(t, "seen");
  const run = await node([runner, "shared-a.test.js", "shared-b.test.js"], {
    SEEN_FILE: seenFile,
  });
  assert.equal(run.code, 0, run.out);
  const seen = fs.readFileSync(seenFile, "utf8").trim().split("\n").map((l) => l.split(" "));
  assert.equal(seen.length, 4);
  assert.equal(new Set(seen.map(([pid]) => pid)).size, 2, "two files, two processes");
  assert.equal(new Set(seen.map(([, server]) => server)).size, 1, "one mock");
  assert.equal(new Set(seen.map(([, , world]) => world)).size, 4, "a world per test");
  const port = new URL(seen[0][1]).port;
  await assert.rejects(fetch(`http://127.0.0.1:${port}/health`), "the mock ended with the run");
});

test("a world's live journal tells a fault, its request and a clock move, in order", async () => {
  const mock = await startMock();
  try {
    const world = await mock.createWorld();
    const events = await world.streamEvents();
    await world.injectFault({ effect: "error", method: "GET", path: "/v1/account", status: 503 });
    const refused = await fetch(`${world.baseUrl}/v1/account`, {
      headers: { authorization: `Bearer ${world.apiKey}` },
    });
    assert.equal(refused.status, 503);
    await world.advanceClock(5);
    const seen = [];
    for await (const event of events) {
      seen.push(event);
      if (event.type === "clock") break;
    }
    await events.close();
    assert.deepEqual(seen.map((e) => e.type), ["fault", "request", "clock"]);
    assert.equal(seen[0].requestId, seen[1].requestId);
    assert.equal(seen[1].status, 503);
  } finally {
    await mock.stop();
  }
});

test("a world made with an admin token sends its own control token, which no other world takes", async () => {
  const mock = await startMock({ adminToken: "s3cret" });
  try {
    const world = await mock.createWorld();
    const other = await mock.createWorld();
    assert.ok(world.controlToken, "the mock answers a controlToken");
    assert.notEqual(world.controlToken, "s3cret");
    assert.notEqual(world.controlToken, other.controlToken);
    assert.equal(world.adminToken, world.controlToken, "its control calls carry its own token");
    await world.advanceClock(5);

    const crossed = await fetch(`${world.baseUrl}/_mock/clock`, {
      headers: { authorization: `Bearer ${other.controlToken}` },
    });
    assert.equal(crossed.status, 401);

    await world.delete();
    assert.deepEqual((await mock.listWorlds()).map((w) => w.id), [other.id]);
  } finally {
    await mock.stop();
  }
});

test("a world made without an admin token has no control token", async () => {
  const mock = await startMock();
  try {
    const world = await mock.createWorld();
    assert.equal(world.controlToken, undefined);
    await world.advanceClock(1);
    await world.delete();
  } finally {
    await mock.stop();
  }
});
