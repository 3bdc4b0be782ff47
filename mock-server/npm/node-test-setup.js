// The global setup of `node --import mediagen-mock/node-test-setup --test`:
// one mock for the whole run. Node loads this module in the runner and again
// in each test file's process; the runner starts the mock and shares it
// through the environment (MEDIAGEN_MOCK_URL, ...), which the test files
// inherit, so they only connect. The mock ends with the runner.
//
// The mock's options come from its own environment variables
// (MEDIAGEN_MOCK_ALLOW_PRIVATE_WEBHOOKS=true, MEDIAGEN_MOCK_RATE_LIMITS=off, ...);
// each world chooses its clock and response mode.
import { ENV, startMock } from "./index.js";

if (!process.env[ENV.url] && !process.env.NODE_TEST_CONTEXT) {
  const mock = await startMock();
  Object.assign(process.env, mock.env());
}
