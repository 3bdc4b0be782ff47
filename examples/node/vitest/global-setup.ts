import { setupMock } from "mediagen-mock/vitest-setup";

export default setupMock();
