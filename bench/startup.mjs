// `node bench/startup.mjs [--runs N] [--vs <other checkout>]`: how long the embedded store takes
// from `erp serve` to the first 200 on /health (a new folder, then the same folder again), and how
// long CLI commands that scan no data take on PostgreSQL (DATABASE_URL; skipped without it). Each
// figure is the median of N runs (default 5) of wall time and of the process's own CPU time (user
// + system: steadier than wall time on a shared machine). With --vs, the same runs of the CLI of
// another built checkout are interleaved with this one's (A B A B …), so a before/after comparison
// holds while the machine's load drifts. Run `npm run build` first (in both checkouts). Results
// also go to bench/results/startup-<time>.json with the machine's description and every sample.
// hot-path/run.mjs imports `measureOutside` for its own report.
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { cpuMs } from "./proc.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")


const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/** The environment with `changes` applied (`undefined` removes a variable). */
const withEnv = (changes) => Object.fromEntries(Object.entries({ ...process.env, ...changes }).filter(([, value]) => value !== undefined))

/** Wall and CPU ms from spawning `erp serve` on an embedded folder to the first 200 on /health. */
export const embeddedStart = async (erpBin, dataDir) => {
  const started = performance.now()
  const child = spawn(process.execPath, [erpBin, "serve", "--port", "0", "--json", "--no-webhooks"], {
    env: withEnv({ ERP_DATA_DIR: dataDir, DATABASE_URL: undefined }),
    stdio: ["ignore", "pipe", "inherit"]
  })
  try {
    const url = await new Promise((resolve, reject) => {
      let out = ""
      child.stdout.on("data", (chunk) => {
        out += chunk
        const line = out.split("\n").find((candidate) => candidate.startsWith("{"))
        if (line) resolve(JSON.parse(line).url)
      })
      child.once("exit", (code) => reject(new Error(`erp serve exited with ${code}: ${out}`)))
    })
    for (;;) {
      try {
        if ((await fetch(`${url}/health`)).status === 200) break
      } catch {}
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    return { wallMs: performance.now() - started, cpuMs: cpuMs(child.pid) }
  } finally {
    const exited = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGTERM")
    await exited
  }
}

/** Wall and CPU ms of one CLI command run to its end. */
export const cliRun = (erpBin, args, env) => {
  const cpuBefore = cpuMs(process.pid, "children")
  const started = performance.now()
  const result = spawnSync(process.execPath, [erpBin, ...args], { env: withEnv(env), stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" })
  const wallMs = performance.now() - started
  if (result.status !== 0) throw new Error(`erp ${args.join(" ")} exited with ${result.status}: ${result.stderr}`)
  return { wallMs, cpuMs: cpuMs(process.pid, "children") - cpuBefore }
}

/** The measurements: a name and a function of the CLI's path that runs one. */
const measurements = (tmp, databaseUrl, tenantId) => {
  const list = []
  // Each run of "new folder" gets a folder of its own; "existing folder" reuses the first.
  let fresh = 0
  const existing = new Map()
  list.push(["embedded start, new folder", (bin) => embeddedStart(bin, path.join(tmp, `fresh-${fresh++}`))])
  list.push(["embedded start, existing folder", async (bin) => {
    if (!existing.has(bin)) {
      existing.set(bin, path.join(tmp, `existing-${existing.size}`))
      await embeddedStart(bin, existing.get(bin))
    }
    return embeddedStart(bin, existing.get(bin))
  }])
  list.push(["erp --version", (bin) => cliRun(bin, ["--version"], { DATABASE_URL: undefined })])
  if (databaseUrl) {
    const env = { DATABASE_URL: databaseUrl }
    list.push(["erp migrate (up to date)", (bin) => cliRun(bin, ["migrate", "--json"], env)])
    list.push(["erp tenants list", (bin) => cliRun(bin, ["tenants", "list", "--json"], env)])
    list.push(["erp oauth-clients list", (bin) => cliRun(bin, ["oauth-clients", "list", "--json"], env)])
    if (tenantId) {
      list.push(["erp keys list", (bin) => cliRun(bin, ["keys", "list", "--tenant", tenantId, "--json"], env)])
      list.push(["erp webhooks list", (bin) => cliRun(bin, ["webhooks", "list", "--tenant", tenantId, "--json"], env)])
    }
  }
  return list
}

const firstTenant = (erpBin, databaseUrl) => {
  const result = spawnSync(process.execPath, [erpBin, "tenants", "list", "--json"], { env: withEnv({ DATABASE_URL: databaseUrl }), encoding: "utf8" })
  if (result.status !== 0) throw new Error(`erp tenants list failed: ${result.stderr}`)
  return JSON.parse(result.stdout)[0]?.id
}

/**
 * Runs every measurement `runs` times with each CLI in turn (the order alternating by round) and
 * returns, per measurement and CLI, the medians of wall and CPU ms.
 */
export const measureOutside = async ({ bins, runs = 5, databaseUrl = process.env.DATABASE_URL, tenantId, log = () => {} }) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "erp-startup-"))
  try {
    if (databaseUrl) spawnSync(process.execPath, [bins[0], "migrate"], { env: withEnv({ DATABASE_URL: databaseUrl }), stdio: "ignore" })
    const tenant = databaseUrl ? tenantId ?? firstTenant(bins[0], databaseUrl) : undefined
    const results = []
    for (const [name, measure] of measurements(tmp, databaseUrl, tenant)) {
      const samples = bins.map(() => [])
      for (let round = 0; round < runs; round++) {
        const order = round % 2 === 0 ? bins.map((_, index) => index) : bins.map((_, index) => index).reverse()
        for (const index of order) samples[index].push(await measure(bins[index]))
      }
      const row = { name, runs, results: samples.map((list) => ({ wallMs: median(list.map((sample) => sample.wallMs)), cpuMs: median(list.map((sample) => sample.cpuMs)), samples: list })) }
      log(`${name}: ${row.results.map((result) => `${result.wallMs.toFixed(0)} ms (CPU ${result.cpuMs.toFixed(0)} ms)`).join(" vs ")}`)
      results.push(row)
    }
    return results
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const option = (name) => {
    const index = process.argv.indexOf(name)
    return index === -1 ? undefined : process.argv[index + 1]
  }
  const other = option("--vs")
  const bins = [path.join(root, "packages/cli/bin/erp.js"), ...(other ? [path.join(path.resolve(other), "packages/cli/bin/erp.js")] : [])]
  const runs = Number(option("--runs") ?? 5)
  if (!process.env.DATABASE_URL) console.error("DATABASE_URL not set: the PostgreSQL CLI commands are skipped")
  const loadBefore = os.loadavg()
  const rows = await measureOutside({ bins, runs, log: (line) => console.error(line) })
  const resultsDir = path.join(root, "bench/results")
  fs.mkdirSync(resultsDir, { recursive: true })
  const file = path.join(resultsDir, `startup-${new Date().toISOString().replace(/[:.]/g, "-")}.json`)
  const machine = { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), loadAverage: { before: loadBefore, after: os.loadavg() }, node: process.version }
  fs.writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), bins, runs, machine, rows }, null, 2)}\n`)
  console.error(`Written ${path.relative(root, file)}`)
  const header = other
    ? ["| Measurement | this: wall ms | this: CPU ms | other: wall ms | other: CPU ms | wall this/other |", "|---|---|---|---|---|---|"]
    : ["| Measurement | wall ms | CPU ms |", "|---|---|---|"]
  console.log([
    `Medians of ${runs} runs; load average ${os.loadavg().map((load) => load.toFixed(1)).join(" ")}; ${os.cpus().length} CPUs; Node ${process.version}`,
    ...header,
    ...rows.map(({ name, results: [mine, theirs] }) =>
      theirs
        ? `| ${name} | ${mine.wallMs.toFixed(0)} | ${mine.cpuMs.toFixed(0)} | ${theirs.wallMs.toFixed(0)} | ${theirs.cpuMs.toFixed(0)} | ${(mine.wallMs / theirs.wallMs).toFixed(2)} |`
        : `| ${name} | ${mine.wallMs.toFixed(0)} | ${mine.cpuMs.toFixed(0)} |`)
  ].join("\n"))
}
