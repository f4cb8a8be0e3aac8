// Keeps each test file's seconds from the last full `npm test` (.erp-test-results.json) in
// test/file-seconds.json, which orders the files longest first on a machine with no cache (CI).
import * as fs from "node:fs"

const results = JSON.parse(fs.readFileSync(".erp-test-results.json", "utf8"))
if (!Array.isArray(results.durations) || results.durations.length < 50) {
  console.error("Run the whole suite first (npm test): .erp-test-results.json holds no full run")
  process.exit(1)
}
const seconds = Object.fromEntries(results.durations.map(({ file, seconds }) => [file, Math.round(seconds)]))
fs.writeFileSync("test/file-seconds.json", JSON.stringify(seconds, null, 2) + "\n")
console.log(`test/file-seconds.json: ${results.durations.length} files`)
