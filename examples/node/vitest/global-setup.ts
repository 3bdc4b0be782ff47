import { setupMock } from "mediagen-mock/vitest-setup";

// A strict verdict: a test whose world ends with a violation of the service's
// rules for clients fails, with the findings listed.
export default setupMock({ verdict: "strict" });
