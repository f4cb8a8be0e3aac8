// Prints the plain closing line CI reads ("N passed, N failed, N skipped") from the run's summary
// (test/summary-reporter.ts). "failed" counts failed tests, errors outside tests (a file that cannot
// load, a failed beforeAll) and unhandled errors; given vitest's exit status, it never says 0 failed
// while vitest failed. Exits non-zero when anything failed.
import { readFileSync } from "node:fs"

const status = Number(process.argv[2] ?? 0)

try {
  const run = JSON.parse(readFileSync(".erp-test-results.json", "utf8"))
  console.log(`slowest files: ${(run.slowest ?? []).map(({ file, seconds }) => `${file} ${seconds} s`).join(", ")}`)
  for (const [note, count] of Object.entries(run.skipNotes)) console.log(`skipped ${count}: ${note}`)
  for (const error of run.suiteErrors) console.log(`failed outside a test: ${error}`)
  for (const error of run.unhandledErrors) console.log(`unhandled error: ${error}`)
  if (run.interrupted) console.log("the run was interrupted")
  let failed = run.failedTests + run.suiteErrors.length + run.unhandledErrors.length + (run.interrupted ? 1 : 0)
  if (status !== 0 && failed === 0) {
    console.log(`vitest exited with status ${status} for a reason outside the report`)
    failed = 1
  }
  const total = run.passed + run.skipped + run.failedTests
  if (total === 0) console.log("no tests ran")
  console.log(`${run.passed} passed, ${failed} failed, ${run.skipped} skipped`)
  process.exitCode = failed > 0 || total === 0 ? 1 : 0
} catch (error) {
  console.error(`No test report (${error.message}); vitest exited with status ${status}`)
  process.exitCode = 1
}
