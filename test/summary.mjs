// Prints the plain closing line CI reads ("N passed, N failed, N skipped") from vitest's JSON report.
import { readFileSync } from "node:fs"

try {
  const report = JSON.parse(readFileSync(".erp-test-results.json", "utf8"))
  const skipped = report.numPendingTests + report.numTodoTests
  console.log(`${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`)
  process.exitCode = report.numFailedTests > 0 || report.numTotalTests === 0 ? 1 : 0
} catch (error) {
  console.error(`No test report: ${error.message}`)
  process.exitCode = 1
}
