// Two builds of the host side by side on the same database, in interleaved rounds: what a change
// to the host itself is worth (run.mjs measures the host against the reference instead).
// Each directory is a built checkout (its packages/*/dist, and its node_modules or links to one).
// Usage: node bench/hot-path/compare-builds.mjs <before-dir> <after-dir> <token> <path> [<path>…]
// with DATABASE_URL (and ERP_SECRET_KEY) set; prints req/s, p50 and CPU ms per request of each.
import autocannon from "autocannon"
import { spawn } from "node:child_process"
import { cpuMs } from "../proc.mjs"

const [beforeDir, afterDir, token, ...paths] = process.argv.slice(2)
if (!token || paths.length === 0) {
  console.error("usage: node bench/hot-path/compare-builds.mjs <before-dir> <after-dir> <token> <path> [<path>…]")
  process.exit(2)
}
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const seconds = Number(process.env.BENCH_SECONDS ?? 4)
const start = (dir) => new Promise((resolve, reject) => {
  const child = spawn(process.execPath, [`${dir}/packages/cli/bin/erp.js`, "serve", "--port", "0", "--json", "--no-webhooks"], { stdio: ["ignore", "pipe", "inherit"] })
  child.stdout.once("data", (line) => resolve({ child, url: JSON.parse(String(line)).url }))
  child.once("exit", (code) => reject(new Error(`${dir}: exited with ${code}`)))
})
const hosts = { before: await start(beforeDir), after: await start(afterDir) }
const drive = async (host, path, duration) => {
  const before = cpuMs(host.child.pid)
  const result = await autocannon({ url: host.url + path, connections: 10, duration, headers: { authorization: `Bearer ${token}` } })
  return { rps: result.requests.total / duration, p50: result.latency.p50, cpu: (cpuMs(host.child.pid) - before) / result.requests.total, failed: result.non2xx + result.errors }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

console.log("| Request | before req/s | after req/s | after / before | p50 ms before / after | CPU ms/req before / after | non-2xx |")
console.log("|---|---|---|---|---|---|---|")
for (const path of paths) {
  for (const host of Object.values(hosts)) await drive(host, path, 1)
  const samples = { before: [], after: [] }
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 ? ["after", "before"] : ["before", "after"]) samples[side].push(await drive(hosts[side], path, seconds))
  }
  const m = (side, key) => median(samples[side].map((sample) => sample[key]))
  const failed = (side) => samples[side].reduce((sum, sample) => sum + sample.failed, 0)
  console.log(`| GET ${path} | ${m("before", "rps").toFixed(0)} | ${m("after", "rps").toFixed(0)} | ${(m("after", "rps") / m("before", "rps")).toFixed(2)} | ${m("before", "p50")} / ${m("after", "p50")} | ${m("before", "cpu").toFixed(2)} / ${m("after", "cpu").toFixed(2)} | ${failed("before")} / ${failed("after")} |`)
}
for (const host of Object.values(hosts)) host.child.kill()
process.exit(0)
