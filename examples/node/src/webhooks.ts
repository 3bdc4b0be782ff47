// The integrator's webhook receiver: node:http, each delivery verified with
// the `standardwebhooks` package before it is believed.
import http from "node:http";
import type { AddressInfo } from "node:net";

import { Webhook } from "standardwebhooks";

import type { components } from "../generated/schema.js";

export type GenerationEvent =
  | components["schemas"]["GenerationCompletedEvent"]
  | components["schemas"]["GenerationFailedEvent"];

export interface Receiver {
  url: string;
  /** Set once the endpoint is registered: the service shows the secret once. */
  secret: string | undefined;
  /** Verified events, in the order they came. */
  events: GenerationEvent[];
  /** How many deliveries failed verification (answered 400). */
  rejected: number;
  /** Resolves with the next verified event (or one already received and not yet taken). */
  next(timeoutMs?: number): Promise<GenerationEvent>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const waiting: Array<(event: GenerationEvent) => void> = [];
  let taken = 0;
  const receiver: Receiver = {
    url: "",
    secret: undefined,
    events: [],
    rejected: 0,
    next(timeoutMs = 10_000) {
      if (taken < receiver.events.length) return Promise.resolve(receiver.events[taken++]!);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no webhook within ${timeoutMs} ms`)), timeoutMs);
        waiting.push((event) => {
          clearTimeout(timer);
          taken++;
          resolve(event);
        });
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let event: GenerationEvent;
      try {
        if (!receiver.secret) throw new Error("no secret yet");
        event = new Webhook(receiver.secret).verify(body, request.headers as Record<string, string>) as GenerationEvent;
      } catch {
        receiver.rejected++;
        response.writeHead(400).end();
        return;
      }
      // Answer at once; the work happens elsewhere.
      response.writeHead(204).end();
      receiver.events.push(event);
      waiting.shift()?.(event);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/mediagen`;
  return receiver;
}
