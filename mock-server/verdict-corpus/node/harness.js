// The corpus's side of the mock: worlds, users, faults, the manual clock and
// the verdict, through the mock's documented control API (the mediagen-mock
// package of this checkout, mock-server/npm).
//
// The clients in clients.js know none of this: they get a `Service` (base URL
// and key) and a `sleep` that moves the world's manual clock, so a wait of d
// seconds is d "edge seconds" for the verdict and costs no real time.
import assert from "node:assert/strict";
import http from "node:http";
import path from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { startMock } from "../../npm/index.js";
import { Service, seededRandom } from "./clients.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../../..");

/** Seeded runs of each random strategy (seed = run index). */
export const RUNS = Number(process.env.VERDICT_CORPUS_RUNS ?? 1000);
/** Runs in flight at once, each in a world of its own. */
export const WORKERS = Number(process.env.VERDICT_CORPUS_WORKERS ?? 2);

// The control calls of a run (a clock move per wait) go over kept-alive
// connections of node:http: cheaper than fetch, which is the clients' own.
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** One control call of a world (`{baseUrl}/_mock/...`): its JSON answer. */
function control(world, method, route, body) {
  const data = body === undefined ? undefined : JSON.stringify(body);
  const headers = { accept: "application/json" };
  if (data !== undefined) {
    headers["content-type"] = "application/json";
    headers["content-length"] = Buffer.byteLength(data);
  }
  if (world.adminToken) headers.authorization = `Bearer ${world.adminToken}`;
  return new Promise((resolve, reject) => {
    const request = http.request(world.baseUrl + route, { method, headers, agent }, (answer) => {
      const chunks = [];
      answer.on("data", (chunk) => chunks.push(chunk));
      answer.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        if (answer.statusCode >= 400) reject(new Error(`control ${method} ${route}: ${answer.statusCode} ${text}`));
        else resolve(text.trim() ? JSON.parse(text) : undefined);
      });
    });
    request.on("error", reject);
    request.end(data);
  });
}

/** One world as the corpus drives it. */
export class Edge {
  constructor(world, settings) {
    this.world = world;
    this.settings = settings;
    /** A client's wait: one move of the manual clock by that many seconds. */
    this.sleep = async (seconds) => {
      if (seconds > 0) await control(world, "POST", "/_mock/clock/advance", { seconds });
    };
  }

  /** A fresh user (a client of its own for the verdict) and its service. */
  async newUser(balanceRub = 5000) {
    const user = await control(this.world, "POST", "/_mock/users", { balanceRub });
    return { userId: user.userId, svc: new Service(this.world.baseUrl, user.apiKey) };
  }

  fault(rule) {
    return control(this.world, "POST", "/_mock/faults", rule);
  }

  /** `count` answers of 503 SERVICE_UNAVAILABLE on one route for one user. */
  outage(method, route, userId, count) {
    return this.fault({ effect: "error", method, path: route, userId, count, status: 503, code: "SERVICE_UNAVAILABLE" });
  }

  /** The findings since the last call; then the verdict starts over (each run is
   * a fresh user, so an empty verdict needs no reset). */
  async judge() {
    const { findings } = await control(this.world, "GET", "/_mock/verdict");
    if (findings.length) await control(this.world, "DELETE", "/_mock/verdict");
    return findings;
  }

  /** The user's state as the mock keeps it (`activeGenerations`, balance...). */
  user(userId) {
    return control(this.world, "GET", `/_mock/users/${userId}`);
  }
}

/**
 * One mock for the test file (manual clock, private webhook addresses allowed)
 * and a world per call of `edge(settings)`; the worlds end with the mock.
 */
export function corpus() {
  const state = { mock: undefined };
  before(async () => {
    state.mock = await startMock({
      clock: "manual",
      allowPrivateWebhooks: true,
      binary: process.env.MEDIAGEN_MOCK_BIN || path.join(repo, "target/debug/mediagen-mock"),
    });
  });
  after(async () => {
    agent.destroy();
    await state.mock?.stop();
  });
  /** A world with a manual clock; limits off unless `{ rateLimits: true }`. */
  return async function edge({ rateLimits = false } = {}) {
    const settings = { clock: "manual", rateLimits, demoUser: false };
    const world = await state.mock.createWorld(settings);
    const made = new Edge(world, settings);
    made.sibling = () => edge({ rateLimits });
    return made;
  };
}

// -- judging -------------------------------------------------------------------

export const describe = (findings) =>
  findings.length ? findings.map((f) => `${f.rule} (${f.severity}): ${f.message}`).join("; ") : "no findings";

export const named = (findings, rule) => findings.filter((f) => f.rule === rule);

/** What accuses a correct client: a finding of the rule under test, or any violation. */
export const accusations = (findings, rule) => findings.filter((f) => f.rule === rule || f.severity === "violation");

export function assertNamed(findings, rule) {
  assert.ok(named(findings, rule).length, `expected ${rule} to be named; the verdict said: ${describe(findings)}`);
}

export function assertNotNamed(findings, rule) {
  assert.equal(named(findings, rule).length, 0, `expected no ${rule}; the verdict said: ${describe(findings)}`);
}

export function assertNotAccused(findings, rule) {
  const wrong = accusations(findings, rule);
  assert.equal(wrong.length, 0, `a correct client was accused: ${describe(wrong)}`);
}

/**
 * The findings of a fixed-pace scenario, run (each time as a fresh user) until
 * the client kept its pace at the edge. Real seconds add to a client's waits,
 * and on a starved machine they make a fixed pace look as if it grew: a run
 * counts only when the real gaps between the requests of its chain (the send
 * times `scenario` resolves to) differ by at most `tolerance` seconds.
 */
export async function steady(edge, scenario, { tolerance = 0.015, tries = 10 } = {}) {
  const spreads = [];
  for (let n = 0; n < tries; n += 1) {
    const sent = await scenario(edge);
    const findings = await edge.judge();
    const gaps = sent.slice(1).map((at, i) => at - sent[i]);
    spreads.push(gaps.length ? Math.max(...gaps) - Math.min(...gaps) : 0);
    if (spreads.at(-1) <= tolerance) return findings;
  }
  throw new Error(
    `the client never kept a fixed pace within ${tolerance} s of real time in ${tries} runs ` +
      `(spreads ${spreads.map((s) => s.toFixed(3)).join(", ")} s): the machine is too busy`,
  );
}

/**
 * Runs a correct strategy `runs` times (seed = run index), each as a fresh user,
 * spread over `WORKERS` worlds, and counts the runs it was accused in. Prints
 * the rate, and fails on any accusation.
 */
export async function assertNeverAccused(edge, strategy, rule, run, runs = RUNS) {
  const workers = Math.max(1, Math.min(WORKERS, runs));
  const edges = [edge];
  for (let w = 1; w < workers; w += 1) edges.push(await edge.sibling());
  const accused = [];
  await Promise.all(
    edges.map(async (mine, worker) => {
      for (let seed = worker; seed < runs; seed += workers) {
        await run(mine, seededRandom(seed), seed);
        const wrong = accusations(await mine.judge(), rule);
        if (wrong.length) accused.push({ seed, wrong });
      }
    }),
  );
  await Promise.all(edges.slice(1).map((other) => other.world.delete()));
  accused.sort((a, b) => a.seed - b.seed);
  const rate = ((100 * accused.length) / runs).toFixed(1);
  const line = `${strategy}: ${accused.length} accusations in ${runs} runs (${rate} %) [${rule}]`;
  console.log(line);
  const examples = accused.slice(0, 3).map(({ seed, wrong }) => `seed ${seed}: ${describe(wrong)}`);
  assert.equal(accused.length, 0, [line, ...examples].join("\n"));
}
