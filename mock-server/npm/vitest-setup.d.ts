import type { StartOptions } from "./index.js";

type GlobalSetup = () => Promise<(() => Promise<void>) | undefined>;

/**
 * A global setup that starts the mock with `options` and shares it through the
 * environment; `verdict: "strict"` makes `worldPerTest` fail a test whose world
 * ends with a violation in the mock's verdict.
 */
export declare function setupMock(options?: StartOptions & { verdict?: "strict" | "off" }): GlobalSetup;

/** The global setup with the mock's defaults. */
declare const setup: GlobalSetup;
export default setup;
