// Vitest's global setup: one mock for the run, shared with the test workers
// through the environment (MEDIAGEN_MOCK_URL, ...), stopped when the run
// ends. In the tests, `worldPerTest({ beforeAll, afterAll, beforeEach,
// afterEach })` gives each test a fresh world.
//
//   globalSetup: ["mediagen-mock/vitest-setup"]          (the mock's defaults)
//   // or a file of your own: export default setupMock({ allowPrivateWebhooks: true });
import { ENV, startMock } from "./index.js";

/** A global setup that starts the mock with `options` (those of `startMock`). */
export function setupMock(options = {}) {
  return async function setup() {
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
