// The integrator's webhook receiver: node:http, each delivery verified with
// the `standardwebhooks` package before it is believed.
import http from "node:http";
import type { AddressInfo } from "node:net";

import { Webhook } from "standardwebhooks";

import type { components } from "../generated/schema.js";

export type GenerationEvent =
  | components["schemas"]["GenerationCompletedEvent"]
  | components["schemas"]["GenerationFailedEvent"];

/** One delivery as the receiver judged it: the event when it verified, nothing when refused (400). */
export type Received = { verified: true; event: GenerationEvent } | { verified: false };

export interface Receiver {
  url: string;
  /** Set once the endpoint is registered: the service shows the secret once. */
  secret: string | undefined;
  /** Resolves with the next delivery (or one already received and not yet taken). */
  next(timeoutMs?: number): Promise<Received>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const waiting: Array<(delivery: Received) => void> = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let delivery: Received;
      try {
        if (!receiver.secret) throw new Error("no secret yet");
        const event = new Webhook(receiver.secret).verify(body, request.headers as Record<string, string>);
        delivery = { verified: true, event: event as GenerationEvent };
        // Answer at once; the work happens elsewhere.
        response.writeHead(204).end();
      } catch {
        delivery = { verified: false };
        response.writeHead(400).end();
      }
      const waiter = waiting.shift();
      if (waiter) waiter(delivery);
      else received.push(delivery);
    });
  });
  const receiver: Receiver = {
    url: "",
    secret: undefined,
    next(timeoutMs = 10_000) {
      const ready = received.shift();
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no webhook within ${timeoutMs} ms`)), timeoutMs);
        waiting.push((delivery) => {
          clearTimeout(timer);
          resolve(delivery);
        });
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/mediagen`;
  return receiver;
}
