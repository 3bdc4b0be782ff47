// The mediagen mock server for Node test suites: `startMock()` runs the
// `mediagen-mock` binary on a free port of 127.0.0.1, and the control faces
// (`MockServer`, `World`, `MockControl`) drive its control API, one method
// per operation of openapi/mock-control.json, named after its operationId.
// Nothing here depends on anything but Node itself.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

import { BINARY_ENV, findBinary, MockStartError } from "./find-binary.js";

export { findBinary, MockStartError, platformPackage } from "./find-binary.js";

/** Environment variables a running mock is shared through (global setups to test files). */
export const ENV = Object.freeze({
  url: "MEDIAGEN_MOCK_URL",
  apiKey: "MEDIAGEN_MOCK_API_KEY",
  log: "MEDIAGEN_MOCK_LOG",
  adminToken: "MEDIAGEN_MOCK_CONTROL_TOKEN",
  binary: BINARY_ENV,
  verdict: "MEDIAGEN_MOCK_VERDICT",
});

const LISTENING = "mediagen-mock listening on ";
const DEMO_KEY = "demo API key: ";

/**
 * Each operation of the control contract: its method and path. The face's
 * methods below are exactly these names (a test checks both against the
 * contract); `checkout_topup` is a page for people and has none.
 */
export const OPERATIONS = Object.freeze({
  getClock: ["GET", "/_mock/clock"],
  advanceClock: ["POST", "/_mock/clock/advance"],
  setModelState: ["POST", "/_mock/models/{slug}/state"],
  forceOutcome: ["POST", "/_mock/outcomes"],
  getSettings: ["GET", "/_mock/settings"],
  updateSettings: ["PUT", "/_mock/settings"],
  listRequests: ["GET", "/_mock/requests"],
  listDeliveries: ["GET", "/_mock/deliveries"],
  createDelivery: ["POST", "/_mock/deliveries"],
  setDns: ["PUT", "/_mock/dns"],
  listOutbox: ["GET", "/_mock/outbox"],
  reset: ["POST", "/_mock/reset"],
  createUser: ["POST", "/_mock/users"],
  getUser: ["GET", "/_mock/users/{userId}"],
  createKey: ["POST", "/_mock/users/{userId}/keys"],
  setBalance: ["PUT", "/_mock/users/{userId}/balance"],
  revokeKey: ["DELETE", "/_mock/keys/{publicPart}"],
  injectFault: ["POST", "/_mock/faults"],
  listFaults: ["GET", "/_mock/faults"],
  clearFaults: ["DELETE", "/_mock/faults"],
  removeFault: ["DELETE", "/_mock/faults/{id}"],
  payInvoice: ["POST", "/_mock/invoices/{id}/pay"],
  payTopup: ["POST", "/_mock/topups/{id}/pay"],
  failTopup: ["POST", "/_mock/topups/{id}/fail"],
  getSnapshot: ["GET", "/_mock/snapshot"],
  putSnapshot: ["PUT", "/_mock/snapshot"],
  createWorld: ["POST", "/_mock/worlds"],
  listWorlds: ["GET", "/_mock/worlds"],
  deleteWorld: ["DELETE", "/_mock/worlds/{id}"],
  streamEvents: ["GET", "/_mock/events"],
  getVerdict: ["GET", "/_mock/verdict"],
  resetVerdict: ["DELETE", "/_mock/verdict"],
  probeWebhooks: ["POST", "/_mock/probes/webhooks"],
});

/** An error answer of the control API, with the service's envelope. */
export class MockError extends Error {
  constructor(method, path, status, envelope, text) {
    const error = envelope?.error ?? {};
    super(`${method} ${path}: ${status} ${error.code ?? ""} ${error.message ?? text}`.replace(/ +/g, " "));
    this.name = "MockError";
    this.method = method;
    this.path = path;
    this.status = status;
    this.code = error.code;
    this.requestId = error.requestId;
    this.details = error.details;
    this.envelope = envelope;
  }
}

/** The control API of one world (the server's root, or a world made by `createWorld`). */
export class MockControl {
  /**
   * @param {string} baseUrl the world's base URL, without a slash at the end
   * @param {{ adminToken?: string }} [options]
   */
  constructor(baseUrl, { adminToken } = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.adminToken = adminToken;
  }

  getClock() {
    return call(this, "getClock");
  }
  advanceClock(seconds) {
    return call(this, "advanceClock", {}, { seconds });
  }
  setModelState(slug, state) {
    return call(this, "setModelState", { slug }, { state });
  }
  forceOutcome(outcome) {
    return call(this, "forceOutcome", {}, outcome);
  }
  getSettings() {
    return call(this, "getSettings");
  }
  updateSettings(settings) {
    return call(this, "updateSettings", {}, settings);
  }
  async listRequests() {
    return (await call(this, "listRequests")).data;
  }
  async listDeliveries() {
    return (await call(this, "listDeliveries")).data;
  }
  createDelivery(endpointId, payload) {
    return call(this, "createDelivery", {}, { endpointId, payload });
  }
  setDns(host, addresses) {
    return call(this, "setDns", {}, { host, addresses });
  }
  async listOutbox() {
    return (await call(this, "listOutbox")).data;
  }
  async reset() {
    await call(this, "reset");
  }
  createUser(user = {}) {
    return call(this, "createUser", {}, user);
  }
  getUser(userId) {
    return call(this, "getUser", { userId });
  }
  createKey(userId, scope) {
    return call(this, "createKey", { userId }, scope === undefined ? {} : { scope });
  }
  async setBalance(userId, balanceRub) {
    await call(this, "setBalance", { userId }, { balanceRub });
  }
  async revokeKey(publicPart) {
    await call(this, "revokeKey", { publicPart });
  }
  injectFault(rule) {
    return call(this, "injectFault", {}, rule);
  }
  async listFaults() {
    return (await call(this, "listFaults")).data;
  }
  async clearFaults() {
    await call(this, "clearFaults");
  }
  async removeFault(id) {
    await call(this, "removeFault", { id });
  }
  payInvoice(id) {
    return call(this, "payInvoice", { id });
  }
  payTopup(id) {
    return call(this, "payTopup", { id });
  }
  failTopup(id) {
    return call(this, "failTopup", { id });
  }
  getSnapshot() {
    return call(this, "getSnapshot");
  }
  async putSnapshot(snapshot) {
    await call(this, "putSnapshot", {}, snapshot);
  }
  async createWorld(settings = {}) {
    const made = await call(this, "createWorld", {}, settings);
    return new World(this, made);
  }
  async listWorlds() {
    return (await call(this, "listWorlds")).data;
  }
  async deleteWorld(id) {
    await call(this, "deleteWorld", { id });
  }
  async streamEvents() {
    return new EventStream(await send(this, "streamEvents", {}, undefined, "text/event-stream"));
  }
  /**
   * The verdict on the world's client. `strict` names rules of advice that
   * spoil `clean` as well (an array, or a comma-separated string), sent as
   * `?strict=poll-rate,read-after-final`; each finding's `fails` tells whether
   * it spoils `clean`. An id the mock does not know rejects with its 400.
   */
  getVerdict({ strict } = {}) {
    const rules = strictRules(strict);
    return call(this, "getVerdict", {}, undefined, rules.length ? { strict: rules.join(",") } : undefined);
  }
  async resetVerdict() {
    await call(this, "resetVerdict");
  }
  probeWebhooks(endpointId) {
    return call(this, "probeWebhooks", {}, { endpointId });
  }
}

/** Sends one control operation; the JSON answer, or undefined for an empty one. */
async function call(control, operation, params = {}, body = undefined, query = undefined) {
  const text = await (await send(control, operation, params, body, "application/json", query)).text();
  return text.trim() ? JSON.parse(text) : undefined;
}

/**
 * Sends one control operation; its answer, or a `MockError` for a refusal.
 * `query`: the operation's query parameters, by the contract's names.
 */
async function send(control, operation, params = {}, body = undefined, accept = "application/json", query = undefined) {
  const [method, template] = OPERATIONS[operation];
  let route = template.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(String(params[name])));
  if (query) {
    // Commas stay as they are: `strict` is a comma-separated list.
    const pairs = Object.entries(query).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v).replace(/%2C/g, ",")}`);
    route += `?${pairs.join("&")}`;
  }
  const headers = { accept };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (control.adminToken) headers.authorization = `Bearer ${control.adminToken}`;
  const answer = await fetch(control.baseUrl + route, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!answer.ok) {
    const text = await answer.text();
    let envelope;
    try {
      envelope = JSON.parse(text);
    } catch {
      envelope = undefined;
    }
    throw new MockError(method, route, answer.status, envelope, text);
  }
  return answer;
}

/**
 * A world's live journal (`GET /_mock/events`, Server-Sent Events), read as it
 * happens: `for await (const event of stream)` gives one object per event
 * (`seq`, `at`, `type` and the ids that tie events together), and
 * `{ type: "lagged", missed }` when the reader fell behind. Open from the
 * moment it exists, so nothing after is missed; `close()` ends it.
 */
export class EventStream {
  #answer;

  constructor(answer) {
    this.#answer = answer;
  }

  async *[Symbol.asyncIterator]() {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of this.#answer.body) {
      buffer += decoder.decode(chunk, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const data = buffer
          .slice(0, end)
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart());
        buffer = buffer.slice(end + 2);
        if (data.length) yield JSON.parse(data.join("\n"));
      }
    }
  }

  /** Ends the stream. */
  async close() {
    await this.#answer.body?.cancel().catch(() => {});
  }
}

/**
 * A world of a running mock: the whole service and its own control API under `baseUrl`.
 * With an admin token, the mock gives each world a `controlToken` of its own, which this
 * object sends on its control calls and `delete()` in place of the admin token: one that
 * leaks reaches this world alone.
 */
export class World extends MockControl {
  #parent;

  constructor(parent, { id, baseUrl, demoApiKey, controlToken }) {
    super(baseUrl, { adminToken: controlToken ?? parent.adminToken });
    this.#parent = parent;
    this.id = id;
    this.apiKey = demoApiKey;
    this.controlToken = controlToken;
  }

  /** Ends the world (`deleteWorld` on the server that made it, with this world's token). */
  delete() {
    return new MockControl(this.#parent.baseUrl, { adminToken: this.adminToken }).deleteWorld(this.id);
  }

  /** The verdict on the world's client: the same as `getVerdict(options)`. */
  verdict(options) {
    return this.getVerdict(options);
  }
}

/** A mock that is already running, shared through the environment by a global setup. */
export class MockClient extends MockControl {
  constructor({ baseUrl, apiKey, adminToken, logPath }) {
    super(baseUrl, { adminToken });
    this.apiKey = apiKey;
    this.logPath = logPath;
  }

  /** What the process has written to its log so far ("" when this process cannot see it). */
  log() {
    try {
      return this.logPath ? fs.readFileSync(this.logPath, "utf8") : "";
    } catch {
      return "";
    }
  }

  /** The variables that let another process `connectMock()` to this mock. */
  env() {
    const env = { [ENV.url]: this.baseUrl, [ENV.apiKey]: this.apiKey ?? "" };
    if (this.logPath) env[ENV.log] = this.logPath;
    if (this.adminToken) env[ENV.adminToken] = this.adminToken;
    return env;
  }
}

/** The mock a global setup started, from `MEDIAGEN_MOCK_URL` and its companions. */
export function connectMock(env = process.env) {
  const baseUrl = env[ENV.url];
  if (!baseUrl) {
    throw new Error(`${ENV.url} is not set: start the mock in a global setup, or call startMock()`);
  }
  return new MockClient({
    baseUrl,
    apiKey: env[ENV.apiKey] || undefined,
    adminToken: env[ENV.adminToken] || undefined,
    logPath: env[ENV.log] || undefined,
  });
}

/** The mocks this process started and has not stopped: ended with it, whatever ends it. */
const running = new Set();
let hooked = false;

function killAll() {
  for (const mock of running) mock.kill();
}

function onSignal(signal) {
  killAll();
  // Ending the process is the signal's default; do it when nobody else listens.
  if (process.listenerCount(signal) === 1) {
    process.removeListener(signal, onSignal);
    process.kill(process.pid, signal);
  }
}

function hookProcessEnd() {
  if (hooked) return;
  hooked = true;
  process.on("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, onSignal);
}

/** The command line `startMock(options)` runs. */
export function mockCommand(options = {}) {
  const args = options.args ?? [];
  const own = [
    ["--listen", "127.0.0.1:0"],
    ["--clock", options.clock ?? "manual"],
    ["--rate-limits", options.rateLimits === false ? "off" : "on"],
  ];
  if (options.timeScale !== undefined) own.push(["--time-scale", String(options.timeScale)]);
  if (options.allowPrivateWebhooks) own.push(["--allow-private-webhooks", "true"]);
  if (options.adminToken) own.push(["--admin-token", options.adminToken]);
  if (options.responses && options.responses !== "full") own.push(["--responses", options.responses]);
  // A flag in `args` replaces the one given here.
  const given = new Set(args.filter((a) => a.startsWith("--")).map((a) => a.split("=")[0]));
  const command = [options.binary ?? findBinary(options.env)];
  for (const [flag, value] of own) if (!given.has(flag)) command.push(`${flag}=${value}`);
  return [...command, ...args];
}

/** A `mediagen-mock` process on 127.0.0.1, made by `startMock()`. */
export class MockServer extends MockClient {
  #child;
  #logDir;
  #keepLog;
  #exited;

  constructor(child, { baseUrl, apiKey, adminToken, logDir, keepLog }) {
    super({ baseUrl, apiKey, adminToken, logPath: path.join(logDir, "mock.log") });
    this.#child = child;
    this.#logDir = logDir;
    this.#keepLog = keepLog;
    this.#exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("exit", () => resolve());
    });
    this.#exited.then(() => running.delete(this));
    running.add(this);
    hookProcessEnd();
  }

  /** The process id. */
  get pid() {
    return this.#child.pid;
  }

  /** Whether the process is still running. */
  get running() {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /**
   * Kills the process at once and removes its log unless `keepLog` was asked:
   * what happens when this Node process ends without `stop()`.
   */
  kill() {
    if (this.running) this.#child.kill("SIGKILL");
    running.delete(this);
    this.#removeLog();
  }

  #removeLog() {
    if (!this.#keepLog) fs.rmSync(this.#logDir, { recursive: true, force: true });
  }

  /**
   * Stops the process: SIGTERM (it finishes the requests in flight), then
   * SIGKILL after `timeoutMs`. Removes its log unless `keepLog` was asked.
   */
  async stop({ timeoutMs = 10_000 } = {}) {
    if (this.running) {
      // Waiting for the exit keeps this process alive, which the child no longer does.
      this.#child.ref();
      this.#child.kill("SIGTERM");
      let timer;
      const late = new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMs, "late");
      });
      if ((await Promise.race([this.#exited, late])) === "late") {
        this.#child.kill("SIGKILL");
        await this.#exited;
      }
      clearTimeout(timer);
    }
    running.delete(this);
    this.#removeLog();
  }

  async [Symbol.asyncDispose]() {
    await this.stop();
  }
}

/**
 * Starts `mediagen-mock` on a free port of 127.0.0.1 and resolves once it
 * answers a request. The clock is manual unless told: time moves only
 * through `advanceClock`. The process ends with this one, also on an
 * uncaught error, SIGINT or SIGTERM; `stop()` ends it sooner.
 */
export async function startMock(options = {}) {
  const command = mockCommand(options);
  const timeoutMs = options.startTimeoutMs ?? 30_000;
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), "mediagen-mock-"));
  const logPath = path.join(logDir, "mock.log");
  const logFd = fs.openSync(logPath, "a");
  let child;
  try {
    child = spawn(command[0], command.slice(1), {
      stdio: ["ignore", "pipe", logFd],
      env: options.env ?? process.env,
    });
  } finally {
    fs.closeSync(logFd);
  }
  // Neither the process nor its output keeps this one alive: a suite that
  // forgets stop() still ends, and the exit hook ends the mock, from now on.
  child.unref();
  const starting = { kill: () => child.kill("SIGKILL") };
  running.add(starting);
  hookProcessEnd();
  const readLog = () => {
    try {
      return fs.readFileSync(logPath, "utf8");
    } catch {
      return "";
    }
  };
  let address;
  try {
    address = await waitForAddress(child, timeoutMs);
  } catch (error) {
    running.delete(starting);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    const log = readLog();
    fs.rmSync(logDir, { recursive: true, force: true });
    throw new MockStartError(`${error.message}: ${command.join(" ")}`, log);
  }
  const { baseUrl, apiKey } = address;
  running.delete(starting);
  const mock = new MockServer(child, {
    baseUrl,
    apiKey,
    adminToken: options.adminToken,
    logDir,
    keepLog: options.keepLog ?? false,
  });
  try {
    await firstAnswer(baseUrl, timeoutMs);
  } catch (error) {
    const log = mock.log();
    await mock.stop();
    throw new MockStartError(error.message, log);
  }
  return mock;
}

/** Reads the address and the demo key the binary prints on stdout when it listens. */
function waitForAddress(child, timeoutMs) {
  return new Promise((resolve, reject) => {
    let baseUrl;
    let apiKey;
    const lines = readline.createInterface({ input: child.stdout });
    const timer = setTimeout(() => finish(new Error(`no address within ${timeoutMs} ms`)), timeoutMs);
    const onExit = (code, signal) => finish(new Error(`mediagen-mock exited (${signal ?? `exit ${code}`}) before listening`));
    const onError = (error) => finish(new Error(`mediagen-mock did not start: ${error.message}`));
    function finish(error) {
      clearTimeout(timer);
      child.off("exit", onExit);
      child.off("error", onError);
      lines.close();
      // The rest of stdout is not needed; reading it on keeps the pipe from filling.
      child.stdout.resume();
      child.stdout.unref?.();
      if (error) reject(error);
      else resolve({ baseUrl, apiKey });
    }
    lines.on("line", (line) => {
      if (line.startsWith(LISTENING)) baseUrl = line.slice(LISTENING.length).trim();
      if (line.startsWith(DEMO_KEY)) apiKey = line.slice(DEMO_KEY.length).trim();
      if (baseUrl && apiKey) finish();
    });
    child.once("exit", onExit);
    child.once("error", onError);
  });
}

/** GET /health until it answers: the listener is bound before the address is printed, so the first one normally does. */
async function firstAnswer(baseUrl, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const answer = await fetch(`${baseUrl}/health`);
      await answer.arrayBuffer();
      if (answer.ok) return;
      last = `GET /health answered ${answer.status}`;
    } catch (error) {
      last = `GET /health failed: ${error.cause?.message ?? error.message}`;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${last ?? "GET /health did not answer"} within ${timeoutMs} ms`);
}

/**
 * What a failing test shows: the verdict on the world it used (when it has
 * findings; read with the rules of advice `strict` names), its request log
 * and the end of the log of the mock process (`server`) that serves it.
 */
export async function failureReport(world, server = world, { logLines = 40, strict } = {}) {
  const parts = [`mediagen-mock world at ${world.baseUrl}`];
  // The verdict, when it has findings: what the client did wrong may be why the test failed.
  try {
    const verdict = await world.getVerdict({ strict });
    if (verdict.findings?.length) parts.push(verdictText(verdict, { strict: strictRules(strict) }));
  } catch (error) {
    parts.push(refusalText(strictRules(strict), error));
  }
  try {
    const requests = await world.listRequests();
    parts.push(`request log (${requests.length}, newest last):`);
    for (const r of [...requests].reverse().slice(-50)) {
      parts.push(`  ${r.at} ${r.method} ${r.path} -> ${r.status ?? "dropped"}${r.fault ? ` (fault ${r.fault})` : ""}`);
    }
  } catch (error) {
    parts.push(`request log unavailable: ${error.message}`);
  }
  const log = typeof server.log === "function" ? server.log() : "";
  if (server.logPath && !log.trim()) parts.push(`process log (${server.logPath}): empty`);
  if (log.trim()) {
    const tail = log.trimEnd().split("\n").slice(-logLines);
    parts.push(`process log (${server.logPath}), last ${tail.length} lines:`, ...tail.map((l) => `  ${l}`));
  }
  return parts.join("\n");
}

/**
 * One mock per run and a fresh world per test, on any runner's hooks:
 * `worldPerTest({ before, after, beforeEach, afterEach })` (node:test) or
 * `worldPerTest({ beforeAll, afterAll, beforeEach, afterEach })` (Vitest,
 * Jest). Uses the mock a global setup shares (`MEDIAGEN_MOCK_URL`), or starts
 * one for this file. A failing test gets the world's verdict (when it has
 * findings), request log and the mock's log in its output.
 *
 * `verdict` (else `MEDIAGEN_MOCK_VERDICT`): `"strict"` fails a test that
 * passed when its world ends with a violation in the mock's verdict;
 * `"strict:poll-rate,read-after-final"` also when it ends with a finding of
 * those rules of advice. The mock chooses what fails and refuses an id it
 * does not know; a value that is none of these throws here.
 */
export function worldPerTest(hooks, { world: settings = {}, mock: options = {}, verdict } = {}) {
  const mode = verdictMode(verdict ?? process.env[ENV.verdict], verdict === undefined ? ENV.verdict : "verdict");
  const before = hooks.before ?? hooks.beforeAll;
  const after = hooks.after ?? hooks.afterAll;
  let server;
  let own;
  let current;
  before(async () => {
    if (process.env[ENV.url]) {
      server = connectMock();
    } else {
      own = await startMock(options);
      server = own;
    }
  });
  hooks.beforeEach(async () => {
    current = await server.createWorld(settings);
  });
  hooks.afterEach(async (context) => {
    const world = current;
    current = undefined;
    if (!world) return;
    if (failed(context)) {
      const report = await failureReport(world, server, { strict: mode.strict ? mode.rules : undefined });
      // node:test escapes a new line inside one diagnostic: one per line.
      if (typeof context?.diagnostic === "function") for (const line of report.split("\n")) context.diagnostic(line);
      else console.error(report);
      await world.delete();
      return;
    }
    if (!mode.strict) {
      await world.delete();
      return;
    }
    // Read before the world goes; a hook that throws fails its test.
    let judged;
    try {
      judged = await world.getVerdict({ strict: mode.rules });
    } catch (error) {
      await world.delete();
      // An unknown rule id: the mock's 400 lists the ids it knows.
      throw new Error(refusalText(mode.rules, error));
    }
    await world.delete();
    if (!judged.clean) throw new Error(verdictText(judged, { strict: mode.rules }));
  });
  after(async () => {
    await own?.stop();
  });
  return {
    /** The current test's world. */
    get world() {
      if (!current) throw new Error("no world outside a test: use it inside test(...)");
      return current;
    },
    /** The mock itself (its root world), for what spans tests. */
    get server() {
      if (!server) throw new Error("the mock is not started yet: use it inside a hook or a test");
      return server;
    },
  };
}

/**
 * The ids of a strict choice of rules: an array, or a comma-separated string
 * as the `strict` query parameter takes it; blanks and repeats dropped.
 */
function strictRules(strict) {
  if (strict === undefined || strict === null) return [];
  const parts = typeof strict === "string" ? strict.split(",") : [...strict].map(String);
  return [...new Set(parts.map((rule) => rule.trim()).filter(Boolean))];
}

/**
 * `verdict` of `worldPerTest` and `setupMock`, or `MEDIAGEN_MOCK_VERDICT`:
 * `off` (or nothing), `strict` (violations fail a test) or
 * `strict:RULE,RULE` (those rules of advice too).
 */
export function verdictMode(value, name = "verdict") {
  const text = (value ?? "").trim();
  if (text === "" || text === "off") return { strict: false, rules: [] };
  if (text === "strict") return { strict: true, rules: [] };
  if (text.startsWith("strict:")) return { strict: true, rules: strictRules(text.slice("strict:".length)) };
  throw new Error(
    `${name} = ${JSON.stringify(value)}: expected "strict", "strict:RULE,RULE" (rules of advice that ` +
      `fail a test as well, such as strict:poll-rate,read-after-final) or "off"`,
  );
}

/** Whether a finding spoils `clean`; a mock older than `fails` failed on violations only. */
function fails(finding) {
  return "fails" in finding ? Boolean(finding.fails) : finding.severity === "violation";
}

/**
 * A verdict in words: a first line that names the rules that fail the test
 * (the line a runner's summary shows), then each finding, those first.
 * `strict`: the rules of advice the verdict was read with.
 */
export function verdictText(verdict, { strict = [] } = {}) {
  const { requests = 0, deliveries = 0 } = verdict.checked ?? {};
  const findings = verdict.findings ?? [];
  const failing = findings.filter(fails);
  const scope = `${strict.length ? `strict: ${strict.join(", ")}; ` : ""}${requests} requests, ${deliveries} deliveries checked`;
  const ids = (list) => [...new Set(list.map((f) => f.rule))].join(", ");
  let head;
  if (!verdict.clean) {
    const count = `${failing.length} ${failing.length === 1 ? "finding" : "findings"} of ${findings.length}`;
    head = `${ids(failing) || "not clean"} — mediagen-mock verdict: ${count} ${failing.length === 1 ? "fails" : "fail"} the test (${scope})`;
  } else if (findings.length) {
    head = `mediagen-mock verdict: clean — advice that fails nothing: ${ids(findings)} (${scope})`;
  } else {
    head = `mediagen-mock verdict: clean — no finding (${scope})`;
  }
  const lines = [head];
  for (const f of [...failing, ...findings.filter((f) => !fails(f))]) {
    lines.push(`  ${f.severity} ${f.rule} (x${f.count})${fails(f) ? " fails" : ""}: ${f.message}`);
    lines.push(`    document: ${f.documentRule}; do: ${f.advice}`);
    if (f.endpoint) {
      lines.push(`    endpoint: ${f.endpoint.id} ${f.endpoint.url}; messages: ${(f.messageIds ?? []).join(", ")}`);
    } else {
      lines.push(`    requests: ${(f.requestIds ?? []).join(", ")}`);
    }
  }
  return lines.join("\n");
}

/** A verdict the mock would not give: for an unknown rule id, its message lists the known ones. */
function refusalText(strict, error) {
  const chosen = strict.length ? `strict:${strict.join(",")}` : "the verdict";
  const message = error?.envelope?.error?.message;
  if (!(error instanceof MockError) || !message) return `mediagen-mock verdict: ${chosen} could not be read — ${error?.message ?? error}`;
  const call = `${error.method} ${error.path}: ${error.status} ${error.code ?? ""}`.trim();
  return `mediagen-mock verdict: ${chosen} refused — ${message}\n  ${call}${error.requestId ? ` (${error.requestId})` : ""}`;
}

/** Whether the test an afterEach hook ran for failed: node:test's `passed`, Vitest's task state. */
function failed(context) {
  if (context && "passed" in context) return context.passed === false;
  return context?.task?.result?.state === "fail";
}
