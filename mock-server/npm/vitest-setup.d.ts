import type { StartOptions } from "./index.js";

type GlobalSetup = () => Promise<(() => Promise<void>) | undefined>;

/** A global setup that starts the mock with `options` and shares it through the environment. */
export declare function setupMock(options?: StartOptions): GlobalSetup;

/** The global setup with the mock's defaults. */
declare const setup: GlobalSetup;
export default setup;
