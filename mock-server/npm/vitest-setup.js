// Vitest's global setup (`globalSetup: ["mediagen-mock/vitest-setup"]`): one
// mock for the run, shared with the test workers through the environment
// (MEDIAGEN_MOCK_URL, ...); stopped when the run ends. In the tests,
// `worldPerTest({ beforeAll, afterAll, beforeEach, afterEach })` gives each
// test a fresh world. Options: the mock's own environment variables, as for
// `mediagen-mock-test`.
import { ENV, startMock } from "./index.js";

export default async function setup() {
  if (process.env[ENV.url]) return undefined;
  const mock = await startMock();
  Object.assign(process.env, mock.env());
  return async () => {
    await mock.stop();
    for (const name of Object.keys(mock.env())) delete process.env[name];
  };
}
