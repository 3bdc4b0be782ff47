// Clients of the media generation service, written from its document alone.
//
// Each strategy is a small function over plain HTTP (Node's global fetch), as an
// outside integrator would write it from media-generation-api.md: a base URL,
// an API key, and nothing of the mock. Waiting is a `sleep(seconds)` the caller
// passes in: in production a timer, in the corpus a move of the mock's manual
// clock. Random strategies take a seeded `rng` (a function giving [0, 1)), so a
// run is fixed by its seed.
//
// Some strategies are wrong on purpose (marked BUGGY): the verdict must name
// them. The others follow the document and must not be accused.
import { randomUUID } from "node:crypto";

export const FINAL_STATUSES = new Set(["SUCCEEDED", "FAILED"]);

// -- plain HTTP ----------------------------------------------------------------

/** No answer: the connection closed before one came. */
export class Dropped extends Error {}

/** One answer: status, lower-case headers, the body parsed when it is JSON. */
export class Answer {
  constructor(status, headers, text) {
    this.status = status;
    this.headers = headers;
    this.text = text;
    try {
      this.json = text ? JSON.parse(text) : null;
    } catch {
      this.json = null;
    }
  }

  /** `error.code` of the document's error envelope. */
  get code() {
    return typeof this.json?.error?.code === "string" ? this.json.error.code : undefined;
  }

  /** Limits, rule 3: `retry-after` in seconds (windowed limits only). */
  get retryAfter() {
    const value = this.headers.get("retry-after");
    const seconds = value === null ? NaN : Number(value);
    return Number.isFinite(seconds) ? seconds : undefined;
  }
}

/** One client's access to `{baseUrl}` with `Authorization: Bearer <key>`. */
export class Service {
  constructor(baseUrl, apiKey) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.apiKey = apiKey;
    /** When each request went out (seconds), for a caller that wants to know the pace it really kept. */
    this.sent = [];
  }

  /** One request; rejects with `Dropped` when no answer came. */
  async send(method, path, { body, headers = {} } = {}) {
    const all = { authorization: `Bearer ${this.apiKey}`, accept: "application/json", ...headers };
    if (body !== undefined) all["content-type"] = "application/json";
    let answer;
    this.sent.push(performance.now() / 1000);
    try {
      answer = await fetch(this.baseUrl + path, {
        method,
        headers: all,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return new Answer(answer.status, answer.headers, await answer.text());
    } catch (error) {
      throw new Dropped(`${method} ${path}: ${error.cause?.code ?? error.message}`);
    }
  }
}

export const newKey = () => randomUUID();

/** mulberry32: a small seeded generator, so a run is fixed by its seed. */
export function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const uniform = (rng, low, high) => low + (high - low) * rng();

// -- retry policies: the waits between attempts -------------------------------
// Limits, rule 5: "exponential delay with jitter, 1 s, 2 s, 4 s, 8 s, stop after
// 5 attempts". Each policy gives the waits before retry 1, 2, ...; when they run
// out the client gives up.

const BASES = [1, 2, 4, 8];

export const fullJitter = (rng) => BASES.map((base) => uniform(rng, 0, base));
export const equalJitter = (rng) => BASES.map((base) => base / 2 + uniform(rng, 0, base / 2));
export function decorrelatedJitter(rng, cap = 20) {
  let previous = 1;
  return BASES.map(() => (previous = Math.min(cap, uniform(rng, 1, previous * 3))));
}
export const exponential = () => [...BASES];
export const fixed = (seconds, retries = 4) => () => Array(retries).fill(seconds);
/** BUGGY: retries at once. */
export const noWait = fixed(0);
/** BUGGY: good back-off, but 11 attempts where the document says 5. */
export const tenRetriesWithBackOff = (rng) =>
  Array.from({ length: 10 }, (_, retry) => {
    const base = Math.min(30, 2 ** retry);
    return base / 2 + uniform(rng, 0, base / 2);
  });

// -- retrying a request --------------------------------------------------------

/** Errors, Client handling 2: RATE_LIMIT_ERROR, SERVICE_UNAVAILABLE, GATEWAY_*
 * (and BILLING_*: "retry with exponential delay"); and no answer at all. */
export function isRetryable(answer) {
  if (answer === undefined) return true;
  const code = answer.code ?? "";
  return ["RATE_LIMIT_ERROR", "SERVICE_UNAVAILABLE"].includes(code) || /^(GATEWAY|BILLING)_/.test(code);
}

/** Sends until an answer not to be retried, waiting as told between attempts and
 * never less than `retry-after`; gives up when the waits run out. */
export async function withRetries(send, sleep, waits) {
  const pending = [...waits];
  for (;;) {
    let answer;
    try {
      answer = await send();
    } catch (error) {
      if (!(error instanceof Dropped)) throw error;
    }
    if (!isRetryable(answer) || pending.length === 0) return answer;
    let wait = pending.shift();
    if (answer?.retryAfter !== undefined) wait = Math.max(wait, answer.retryAfter);
    await sleep(wait);
  }
}

/** GET /v1/generations/:id, retried through the errors the document says to retry. */
export const readGeneration = (svc, sleep, id, waits) =>
  withRetries(() => svc.send("GET", `/v1/generations/${id}`), sleep, waits);

// -- creating ------------------------------------------------------------------

export const create = (svc, body, key) =>
  svc.send("POST", "/v1/generations", { body, headers: key === undefined ? {} : { "idempotency-key": key } });

/** Rule 7 of the create: every attempt with the same Idempotency-Key. */
export function createRetryingSameKey(svc, sleep, body, waits) {
  const key = newKey();
  return withRetries(() => create(svc, body, key), sleep, waits);
}

/** BUGGY: a fresh Idempotency-Key on every attempt. */
export const createRetryingNewKey = (svc, sleep, body, waits) =>
  withRetries(() => create(svc, body, newKey()), sleep, waits);

// -- polling -------------------------------------------------------------------

export const status = (answer) => answer?.json?.status;

/** Reads a generation until its status is final, waiting `interval()` before
 * each read; a 429's `retry-after` is waited out before going on. */
export async function poll(svc, sleep, id, interval) {
  const answers = [];
  for (;;) {
    await sleep(interval());
    const answer = await svc.send("GET", `/v1/generations/${id}`);
    answers.push(answer);
    if (answer.status === 429) {
      await sleep(answer.retryAfter ?? 1);
      continue;
    }
    if (FINAL_STATUSES.has(status(answer))) return answers;
  }
}

export const every = (seconds) => () => seconds;

/** Polls several generations in turn, one read every `perRead` seconds: each is
 * read every `perRead * n` s, its share of the general limit when `perRead` is 1. */
export async function pollRoundRobin(svc, sleep, ids, perRead) {
  let reads = 0;
  const active = [...ids];
  while (active.length) {
    for (const id of [...active]) {
      await sleep(perRead);
      const answer = await svc.send("GET", `/v1/generations/${id}`);
      reads += 1;
      if (FINAL_STATUSES.has(status(answer))) active.splice(active.indexOf(id), 1);
    }
  }
  return reads;
}

// -- the concurrency limit -----------------------------------------------------

/** Rule 5 of the create, Limits rule 4: 429 RATE_LIMIT_ERROR without retry-after. */
export const isConcurrencyRefusal = (answer) =>
  answer?.status === 429 && answer.code === "RATE_LIMIT_ERROR" && answer.retryAfter === undefined;

/** A batch's start: `count` generations, each with its own key. */
export async function startBatch(svc, model, count) {
  const ids = [];
  for (let n = 0; n < count; n += 1) {
    const answer = await create(svc, { modelSlug: model, prompt: `batch item ${n}` }, newKey());
    if (answer.status !== 202) throw new Error(`create: ${answer.status} ${answer.text}`);
    ids.push(answer.json.id);
  }
  return ids;
}

/** Creates with one key; after the concurrency 429 (no retry-after comes with
 * it) waits as told, giving up when the waits run out. */
export async function createBackingOff(svc, sleep, body, waits) {
  const key = newKey();
  const answers = [await create(svc, body, key)];
  for (const wait of waits) {
    if (!isConcurrencyRefusal(answers.at(-1))) break;
    await sleep(wait);
    answers.push(await create(svc, body, key));
  }
  return answers;
}

/** BUGGY: re-sends the refused create every 0.05 s. */
export const createInATightLoop = (svc, sleep, body, tries = 20) =>
  createBackingOff(svc, sleep, body, Array(tries).fill(0.05));

/** Limits, rule 4: "the client waits for one of its tasks to finish". Reads its
 * own tasks in turn, one read a second, and creates again once one is final.
 * With `earlyRetry`, first tries once more after that many seconds. */
export async function createWhenATaskEnds(svc, sleep, body, ownTasks, { earlyRetry } = {}) {
  const key = newKey();
  const answers = [await create(svc, body, key)];
  if (!isConcurrencyRefusal(answers.at(-1))) return answers;
  if (earlyRetry !== undefined) {
    await sleep(earlyRetry);
    answers.push(await create(svc, body, key));
    if (!isConcurrencyRefusal(answers.at(-1))) return answers;
  }
  for (;;) {
    for (const id of ownTasks) {
      await sleep(1);
      if (FINAL_STATUSES.has(status(await svc.send("GET", `/v1/generations/${id}`)))) {
        answers.push(await create(svc, body, key));
        return answers;
      }
    }
  }
}

// -- webhook endpoints: a POST that may act ------------------------------------

/** GET /v1/webhook-endpoints. The wrapper of the list is not shown: a bare
 * array, or the first array member of an object. */
export async function endpoints(svc) {
  const body = (await svc.send("GET", "/v1/webhook-endpoints")).json;
  if (Array.isArray(body)) return body;
  return Object.values(body ?? {}).find(Array.isArray) ?? [];
}

/** BUGGY: the POST answered 503 is sent again after `wait`, without looking
 * whether the first took effect. */
export async function addEndpointRepeating(svc, sleep, url, wait) {
  const answers = [];
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      answers.push(await svc.send("POST", "/v1/webhook-endpoints", { body: { url } }));
      if (answers.at(-1).status < 500) return answers;
    } catch (error) {
      if (!(error instanceof Dropped)) throw error;
    }
    await sleep(wait);
  }
  return answers;
}

/** Errors, Client handling: a failed POST that may have acted is not sent again
 * blindly. Wait, read the list; if the endpoint is there, rotate its secret
 * (shown once, and lost with the answer); if not, create it again. */
export async function addEndpointReadingFirst(svc, sleep, url) {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    let answer;
    try {
      answer = await svc.send("POST", "/v1/webhook-endpoints", { body: { url } });
    } catch (error) {
      if (!(error instanceof Dropped)) throw error;
    }
    if (answer !== undefined && answer.status < 500) return answer.status === 201 ? answer.json : undefined;
    await sleep(1);
    const existing = (await endpoints(svc)).find((endpoint) => endpoint.url === url);
    if (existing) {
      const rotated = await svc.send("POST", `/v1/webhook-endpoints/${existing.id}/rotate-secret`);
      return { id: existing.id, url, secret: rotated.json?.secret };
    }
  }
  return undefined;
}
