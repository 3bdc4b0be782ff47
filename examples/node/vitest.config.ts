import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["vitest/**/*.test.ts"],
    // One mock for the run; each test gets a world of it (vitest/world.ts).
    globalSetup: ["vitest/global-setup.ts"],
  },
});
