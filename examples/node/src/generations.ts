// Creating a generation and following it to its end: what the integrator's
// service does for each order.
import { randomUUID } from "node:crypto";

import { type Client, type CreateGenerationRequest, type Generation, describe } from "./client.js";
import { type RetryOptions, type Wait, sleep, withRetry } from "./retry.js";

const FINAL = new Set(["SUCCEEDED", "FAILED", "CANCELLED"]);

export interface Created {
  id: string;
  costRub: number;
  idempotencyKey: string;
}

/**
 * POST /v1/generations with an Idempotency-Key, retried with the same key:
 * a retry after a lost answer gets the same task, charged once.
 */
export async function createGeneration(
  client: Client,
  body: CreateGenerationRequest,
  { idempotencyKey = randomUUID(), ...retry }: RetryOptions & { idempotencyKey?: string } = {},
): Promise<Created> {
  const { data, error, response } = await withRetry(
    () => client.POST("/v1/generations", { body, params: { header: { "Idempotency-Key": idempotencyKey } } }),
    retry,
  );
  if (!data) throw new Error(`create failed: ${describe(error, response)}`);
  return { id: data.id, costRub: data.costRub, idempotencyKey };
}

/** Polls a generation until it is final, waiting `everySeconds` between polls. */
export async function waitForFinal(
  client: Client,
  id: string,
  { wait = sleep, everySeconds = 1, maxPolls = 600, ...retry }: RetryOptions & { everySeconds?: number; maxPolls?: number } = {},
): Promise<Generation> {
  for (let poll = 0; poll < maxPolls; poll++) {
    const { data, error, response } = await withRetry(
      () => client.GET("/v1/generations/{id}", { params: { path: { id } } }),
      { wait, ...retry },
    );
    if (!data) throw new Error(`poll of ${id} failed: ${describe(error, response)}`);
    // An unknown status is not final: keep polling (the service may add states).
    if (FINAL.has(data.status)) return data;
    await wait(everySeconds);
  }
  throw new Error(`generation ${id} not final after ${maxPolls} polls`);
}

/** Downloads a result file (a storage link: no key). */
export async function download(url: string, wait: Wait = sleep): Promise<Uint8Array> {
  const { response } = await withRetry(async () => ({ response: await fetch(url) }), { wait });
  if (!response.ok) throw new Error(`download of ${url} answered ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** The available balance in roubles. */
export async function availableRub(client: Client): Promise<number> {
  const { data, error, response } = await client.GET("/v1/billing/balance");
  if (!data) throw new Error(`balance failed: ${describe(error, response)}`);
  return data.availableRub;
}
