import type { StartOptions, VerdictMode } from "./index.js";

type GlobalSetup = () => Promise<(() => Promise<void>) | undefined>;

/**
 * A global setup that starts the mock with `options` and shares it through the
 * environment; `verdict: "strict"` makes `worldPerTest` fail a test whose world
 * ends with a violation in the mock's verdict, `verdict:
 * "strict:poll-rate,read-after-final"` also one whose world ends with a finding
 * of those rules of advice (`MEDIAGEN_MOCK_VERDICT` carries it to the workers).
 */
export declare function setupMock(options?: StartOptions & { verdict?: VerdictMode }): GlobalSetup;

/** The global setup with the mock's defaults. */
declare const setup: GlobalSetup;
export default setup;
