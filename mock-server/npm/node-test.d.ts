import type { MockWorlds, WorldPerTestOptions } from "./index.js";

/**
 * Registers node:test hooks in the current file: the mock (the run's, from
 * `mediagen-mock-test`, or one for this file) before the tests, a
 * fresh world before each and its end after it; a failing test gets the
 * world's verdict (when it has findings), request log and the mock's log as
 * diagnostics. `mockWorlds({ verdict: "strict:poll-rate,read-after-final" })`
 * (or `MEDIAGEN_MOCK_VERDICT`) fails a test whose world ends with a violation
 * or a finding of those rules of advice.
 */
export declare function mockWorlds(options?: WorldPerTestOptions): MockWorlds;
