/** Starts the run's mock and shares it through the environment; resolves to its teardown. */
export default function setup(): Promise<(() => Promise<void>) | undefined>;
