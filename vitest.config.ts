import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import SummaryReporter from "./test/summary-reporter.js"

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url))

export default defineConfig({
  resolve: {
    alias: {
      "@erp/core": source("./packages/core/src/index.ts"),
      "@erp/http": source("./packages/http/src/index.ts"),
      "@erp/mcp": source("./packages/mcp/src/index.ts")
    }
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/test/**/*.test.ts"],
    globalSetup: ["./test/global-setup.ts"],
    // Each test file opens its own PGlite (about 0.5 GiB): two at a time fit 2 cores and 24 GiB with room to spare.
    pool: "forks",
    maxWorkers: 2,
    minWorkers: 1,
    // CI also reads a plain "N passed, N failed, N skipped" line printed from this summary by test/summary.mjs.
    reporters: ["default", new SummaryReporter(".erp-test-results.json")],
    testTimeout: 30_000,
    hookTimeout: 120_000
  }
})
