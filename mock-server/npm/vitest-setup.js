// Vitest's global setup: one mock for the run, shared with the test workers
// through the environment (MEDIAGEN_MOCK_URL, ...), stopped when the run
// ends. In the tests, `worldPerTest({ beforeAll, afterAll, beforeEach,
// afterEach })` gives each test a fresh world.
//
//   globalSetup: ["mediagen-mock/vitest-setup"]          (the mock's defaults)
//   // or a file of your own: export default setupMock({ allowPrivateWebhooks: true });
//   // setupMock({ verdict: "strict" }): worldPerTest fails a test whose world
//   // ends with a violation in the mock's verdict, listing the findings;
//   // setupMock({ verdict: "strict:poll-rate,read-after-final" }) also one
//   // that ends with a finding of those rules of advice.
import { ENV, startMock, verdictMode } from "./index.js";

/** A global setup that starts the mock with `options` (those of `startMock`, and `verdict`). */
export function setupMock({ verdict, ...options } = {}) {
  // A mode that is none of off, strict and strict:RULE,RULE stops the run here.
  if (verdict) verdictMode(verdict);
  return async function setup() {
    if (verdict) process.env[ENV.verdict] = verdict;
    if (process.env[ENV.url]) return undefined;
    const mock = await startMock(options);
    Object.assign(process.env, mock.env());
    return async () => {
      await mock.stop();
      for (const name of Object.keys(mock.env())) delete process.env[name];
    };
  };
}

export default setupMock();
