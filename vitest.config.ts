import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import LongestFirst from "./test/longest-first.js"
import SummaryReporter from "./test/summary-reporter.js"

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/**
 * The key that seals stored secrets in tests: fixed, so the template store made by the global
 * setup, every clone of it, the test PostgreSQL database and the CLI the tests spawn all open
 * with it. Set here, in the main process, so the global setup and every worker inherit it.
 */
const TEST_SECRET_KEY = "ZXJwIHRlc3Qgc2VjcmV0IGtleSwgMzIgYnl0ZXMgISE="
process.env.ERP_SECRET_KEY ??= TEST_SECRET_KEY

export default defineConfig({
  resolve: {
    alias: {
      "@erp/core": source("./packages/core/src/index.ts"),
      "@erp/http": source("./packages/http/src/index.ts"),
      "@erp/mcp": source("./packages/mcp/src/index.ts"),
      "@erp/client": source("./packages/client/src/index.ts")
    }
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/test/**/*.test.ts", "test/install/*.test.ts"],
    globalSetup: ["./test/global-setup.ts"],
    // Each test file opens its own PGlite (about 0.5 GiB): two at a time fit 2 cores and 24 GiB with room to spare.
    pool: "forks",
    maxWorkers: 2,
    // A worker runs its files one after another on the modules it has loaded, rather than loading
    // effect, the platform and every resource again for each file (seconds a file on 2 cores).
    // Each file still opens its own stores and hosts, and a file that changes the environment puts it back.
    isolate: false,
    // CI also reads a plain "N passed, N failed, N skipped" line printed from this summary by test/summary.mjs.
    reporters: ["default", new SummaryReporter(".erp-test-results.json")],
    sequence: { sequencer: LongestFirst },
    env: { ERP_SECRET_KEY: process.env.ERP_SECRET_KEY },
    // Tests that run erp as a process (a few seconds each command on 2 busy cores) take minutes.
    // Set here for every file: vi.setConfig in a file does not hold where files share a worker.
    testTimeout: 240_000,
    hookTimeout: 240_000
  }
})
