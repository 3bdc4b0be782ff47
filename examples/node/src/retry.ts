// Retries as the service document advises (Limits, rule 5): exponential delay
// with jitter, 1 s, 2 s, 4 s, 8 s, stop after 5 attempts; for 429
// RATE_LIMIT_ERROR, SERVICE_UNAVAILABLE, GATEWAY_* and other 502/503s, and for
// a connection that failed before an answer. Only safe to use on a request
// that cannot act twice: a GET, or a create with an Idempotency-Key.

/** How the code waits between attempts: real time in production, the mock's clock in tests. */
export type Wait = (seconds: number) => Promise<unknown>;

export const sleep: Wait = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

export interface RetryOptions {
  attempts?: number;
  wait?: Wait;
  /** Called before each new attempt, with what went wrong. */
  onRetry?: (reason: string, attempt: number) => void;
}

const RETRYABLE_STATUS = new Set([429, 502, 503]);

/** The answer of the first attempt that is not a retryable failure, or the last one's. */
export async function withRetry<T extends { response: Response }>(
  send: () => Promise<T>,
  { attempts = 5, wait = sleep, onRetry }: RetryOptions = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let reason: string;
    let retryAfter: number | undefined;
    try {
      const result = await send();
      if (!RETRYABLE_STATUS.has(result.response.status) || attempt === attempts) return result;
      // The concurrency cap's 429 has no retry-after: waiting a fixed delay does not help it.
      const header = result.response.headers.get("retry-after");
      if (result.response.status === 429 && header === null) return result;
      reason = `answered ${result.response.status}`;
      retryAfter = header === null ? undefined : Number(header);
    } catch (error) {
      // fetch rejects with a TypeError when the connection closes before an answer.
      if (!(error instanceof TypeError) || attempt === attempts) throw error;
      reason = `connection failed: ${(error.cause as Error | undefined)?.message ?? error.message}`;
    }
    onRetry?.(reason, attempt);
    const backoff = 2 ** (attempt - 1) * (0.8 + Math.random() * 0.4);
    await wait(Math.max(backoff, retryAfter ?? 0));
  }
}
