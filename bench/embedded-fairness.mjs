// `node bench/embedded-fairness.mjs [--rows N] [--seconds S] [--hammers C] [--throughput S] [--erp <bin/erp.js>]`
// `erp serve` on the embedded store while one tenant sends C (default 10) concurrent costly lists
// without pause: another tenant's GET of one record and /health are timed meanwhile (one at a
// time, every 20 ms), and printed as p50/p95/p99/max beside the same probes on the idle host.
// With --throughput S, a GET of one product and a list page are then driven by autocannon
// (10 connections, S seconds each) on the idle host. The data folder is seeded in this process
// with the checkout's core (run `npm run build` first); --erp runs another checkout's CLI on it.
import autocannon from "autocannon"
import { ALL_PERMISSIONS, layerCore, Tenancy } from "@erp/core"
import { SqlClient } from "effect/sql"
import { Effect, ManagedRuntime } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const option = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`)
  return at > 0 ? process.argv[at + 1] : fallback
}
const rows = Number(option("rows", 10_000))
const seconds = Number(option("seconds", 15))
const hammers = Number(option("hammers", 10))
const throughputSeconds = Number(option("throughput", 0))
const erpBin = path.resolve(option("erp", path.join(root, "packages/cli/bin/erp.js")))

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "erp-fairness-"))
process.on("exit", () => fs.rmSync(dataDir, { recursive: true, force: true }))

// Seeded before the host starts: tenants and keys through the core, rows in bulk with SQL.
const seed = ManagedRuntime.make(layerCore({ kind: "pglite", dataDir }))
const { hammer, victim, productId } = await seed.runPromise(Effect.gen(function* () {
  const tenancy = yield* Tenancy
  const sql = yield* SqlClient.SqlClient
  const tenantWithKey = (name) => Effect.gen(function* () {
    const tenant = yield* tenancy.createTenant({ name, countryCode: "BR" })
    // The probes and autocannon go far past an integration's rate limit: the bench measures the store.
    yield* tenancy.setRateLimit(tenant.id, 1_000_000)
    const { token } = yield* tenancy.createApiKey({ tenantId: tenant.id, name: "bench", permissions: ALL_PERMISSIONS })
    return { id: tenant.id, token }
  })
  const hammer = yield* tenantWithKey("Hammer")
  const victim = yield* tenantWithKey("Victim")
  yield* sql`INSERT INTO products (tenant_id, name, description, sale_price, tags, metadata, created_at)
    SELECT ${hammer.id}::uuid, 'Product ' || g || ' ' || md5(g::text), repeat(md5(g::text), 8), (g % 1000)::numeric / 10,
      jsonb_build_array('tag-' || (g % 97), 'bench'), jsonb_build_object('batch', 'b' || (g % 50)), now() - (g || ' seconds')::interval
    FROM generate_series(1, ${rows}) AS g`
  yield* sql`INSERT INTO products (tenant_id, name, created_at)
    SELECT ${victim.id}::uuid, 'Victim product ' || g, now() - (g || ' seconds')::interval FROM generate_series(1, 100) AS g`
  const [product] = yield* sql`SELECT id FROM products WHERE tenant_id = ${victim.id}::uuid LIMIT 1`
  return { hammer, victim, productId: product.id }
}))
await seed.dispose()

/** A list no index helps: a substring no name holds (md5 is hex), so every row of the hammering tenant is read. */
const costlyList = "/products?limit=20&name[contains]=zz"

const host = spawn(process.execPath, [erpBin, "serve", "--port", "0", "--json", "--no-webhooks"], {
  env: Object.fromEntries(Object.entries({ ...process.env, ERP_DATA_DIR: dataDir }).filter(([name]) => name !== "DATABASE_URL")),
  stdio: ["ignore", "pipe", "inherit"]
})
process.on("exit", () => host.kill("SIGKILL"))
const url = await new Promise((resolve, reject) => {
  let out = ""
  host.stdout.on("data", (chunk) => {
    out += chunk
    const line = out.split("\n").find((candidate) => candidate.startsWith("{"))
    if (line) resolve(JSON.parse(line).url)
  })
  host.once("exit", (code) => reject(new Error(`erp serve exited with ${code}: ${out}`)))
})

const get = async (token, pathAndQuery) => {
  const started = performance.now()
  try {
    const response = await fetch(url + pathAndQuery, token ? { headers: { authorization: `Bearer ${token}` } } : {})
    await response.arrayBuffer()
    return { status: response.status, ms: performance.now() - started }
  } catch {
    return { status: "reset", ms: performance.now() - started }
  }
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}
const summary = (label, values) =>
  console.log(`${label.padEnd(40)} n=${String(values.length).padStart(5)}  p50 ${percentile(values, 50).toFixed(1).padStart(7)} ms  p95 ${percentile(values, 95).toFixed(1).padStart(7)} ms  p99 ${percentile(values, 99).toFixed(1).padStart(7)} ms  max ${Math.max(...values).toFixed(1).padStart(7)} ms`)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** The victim's GET of one record and /health, in turn, one at a time, every 20 ms, for `ms`. */
const probe = async (ms) => {
  const record = []
  const health = []
  const statuses = {}
  const until = performance.now() + ms
  while (performance.now() < until) {
    const read = await get(victim.token, `/products/${productId}`)
    statuses[read.status] = (statuses[read.status] ?? 0) + 1
    record.push(read.ms)
    await sleep(10)
    health.push((await get(undefined, "/health")).ms)
    await sleep(10)
  }
  return { record, health, statuses }
}

console.log(`erp: ${path.relative(process.cwd(), erpBin) || erpBin}; ${rows} products for the hammering tenant, ${hammers} concurrent costly lists for ${seconds} s`)
for (let index = 0; index < 3; index++) await get(hammer.token, costlyList)
const alone = []
for (let index = 0; index < 10; index++) alone.push((await get(hammer.token, costlyList)).ms)
summary("a costly list alone", alone)
const idle = await probe(3_000)
summary("victim's GET of one record, idle host", idle.record)
summary("/health, idle host", idle.health)

let hammering = true
const hammerStatuses = {}
const hammerLatencies = []
const loops = Array.from({ length: hammers }, async () => {
  while (hammering) {
    const { status, ms } = await get(hammer.token, costlyList)
    hammerStatuses[status] = (hammerStatuses[status] ?? 0) + 1
    hammerLatencies.push(ms)
  }
})
await sleep(1_000)
const loaded = await probe(seconds * 1_000)
hammering = false
await Promise.all(loops)
summary("victim's GET of one record, hammered", loaded.record)
summary("/health, hammered", loaded.health)
summary("hammer's costly lists", hammerLatencies)
console.log(`victim statuses ${JSON.stringify(loaded.statuses)}; hammer statuses ${JSON.stringify(hammerStatuses)}`)

if (throughputSeconds > 0) {
  const drive = (pathAndQuery) => autocannon({
    url: url + pathAndQuery,
    connections: 10,
    duration: throughputSeconds,
    headers: { authorization: `Bearer ${victim.token}` }
  })
  for (const [name, pathAndQuery] of [["GET of a product", `/products/${productId}`], ["list of 20 products", "/products?limit=20"]]) {
    await drive(pathAndQuery).then(() => undefined)
    const result = await drive(pathAndQuery)
    const failed = result.non2xx + result.errors
    console.log(`${name.padEnd(40)} ${result.requests.average.toFixed(0).padStart(6)} req/s  p50 ${result.latency.p50} ms  p97.5 ${result.latency.p97_5} ms${failed ? `  (${failed} failed)` : ""}`)
  }
}

const exited = new Promise((resolve) => host.once("exit", resolve))
host.kill("SIGTERM")
await exited
