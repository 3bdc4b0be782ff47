// The integrator's client: openapi-fetch over the types openapi-typescript
// generates from the contract (generated/schema.d.ts, made before the tests).
import createClient from "openapi-fetch";

import type { components, paths } from "../generated/schema.js";

export type Client = ReturnType<typeof createClient<paths>>;
export type Generation = components["schemas"]["Generation"];
export type CreateGenerationRequest = components["schemas"]["CreateGenerationRequest"];

export function makeClient(baseUrl: string, apiKey: string): Client {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });
}

/** The error envelope's code and message, or the status when the body is not one. */
export function describe(error: unknown, response: Response): string {
  const envelope = error as { error?: { code?: string; message?: string } } | undefined;
  return `${response.status} ${envelope?.error?.code ?? ""} ${envelope?.error?.message ?? ""}`.trim();
}
