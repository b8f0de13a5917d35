import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.spec.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most suites wait on sockets and databases, not the CPU: on 2 cores the default (cores - 1)
    // would run the test files one at a time.
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
