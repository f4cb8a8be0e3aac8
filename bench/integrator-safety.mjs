// What idempotency keys, ETags and per-credential rate limits cost a request, and how often the
// rate limiter goes to the store. Run after `npm run build`:
//   node bench/integrator-safety.mjs [requests=400]   (DATABASE_URL to use PostgreSQL)
import { ALL_PERMISSIONS, layerCore, resolveStoreLocation, Tenancy } from "@erp/core"
import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { layerNodeServer } from "@erp/http"
import { Effect, Layer, ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"

const requests = Number(process.argv[2] ?? 400)
const location = process.env.DATABASE_URL ? resolveStoreLocation() : { kind: "pglite" }
const runtime = ManagedRuntime.make(layerNodeServer({ port: 0 }).pipe(Layer.provideMerge(layerCore(location))))
const run = (effect) => runtime.runPromise(effect)
const address = await run(Effect.map(HttpServer.HttpServer, (server) => server.address))
const url = `http://127.0.0.1:${address.port}`

const { tenant, key } = await run(Effect.gen(function* () {
  const tenancy = yield* Tenancy
  const tenant = yield* tenancy.createTenant({ name: `Bench ${Date.now()}`, countryCode: "BR" })
  // The bench sends faster than the default burst of 100 a second allows: a key with room for it.
  const key = yield* tenancy.createApiKey({ tenantId: tenant.id, name: "bench", permissions: ALL_PERMISSIONS, rateLimitPerMinute: 1_000_000 })
  return { tenant, key }
}))

const call = async (method, path, { body, headers = {} } = {}) => {
  const started = performance.now()
  const response = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key.token}`, ...(body ? { "content-type": "application/json" } : {}), ...headers },
    ...(body ? { body: JSON.stringify(body) } : {})
  })
  const text = await response.text()
  return { status: response.status, ms: performance.now() - started, etag: response.headers.get("etag"), body: text ? JSON.parse(text) : undefined }
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}
const row = (label, results) => {
  const ms = results.map((result) => result.ms)
  const statuses = [...new Set(results.map((result) => result.status))].join(",")
  console.log(`| ${label} | ${results.length} | ${statuses} | ${percentile(ms, 50).toFixed(1)} ms | ${percentile(ms, 95).toFixed(1)} ms |`)
}
const series = async (count, make) => {
  const results = []
  for (let i = 0; i < count; i++) results.push(await make(i))
  return results
}

const leasedBefore = async () => (await run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`SELECT coalesce(sum(used), 0)::int AS used, count(*)::int AS windows FROM credential_rate_windows WHERE key = ${`cred:key:${key.key.id}`}`)))[0]

// Warm up (JIT, connections, the first lease).
await series(50, () => call("GET", "/products?limit=1"))

console.log(`store: ${location.kind}, ${requests} sequential requests per row\n`)
console.log("| Request | n | statuses | p50 | p95 |\n|---|---|---|---|---|")
const before = await leasedBefore()
const reads = await series(requests, () => call("GET", "/products?limit=1"))
const after = await leasedBefore()
row("GET /products?limit=1 (rate-limited)", reads)
const created = await series(requests, (i) => call("POST", "/products", { body: { name: `Plain ${i}` } }))
row("POST /products", created)
const keyed = await series(requests, (i) => call("POST", "/products", { body: { name: `Keyed ${i}` }, headers: { "idempotency-key": randomUUID() } }))
row("POST /products with Idempotency-Key", keyed)
const replayKey = randomUUID()
await call("POST", "/products", { body: { name: "Replayed" }, headers: { "idempotency-key": replayKey } })
row("POST /products, replayed", await series(requests, () => call("POST", "/products", { body: { name: "Replayed" }, headers: { "idempotency-key": replayKey } })))
const record = created[0].body
row("GET /products/{id}", await series(requests, () => call("GET", `/products/${record.id}`)))
row("GET /products/{id} with If-None-Match (304)", await series(requests, () => call("GET", `/products/${record.id}`, { headers: { "if-none-match": created[0].etag } })))
let etag = created[0].etag
row("PATCH /products/{id} with If-Match", await series(requests, async (i) => {
  const result = await call("PATCH", `/products/${record.id}`, { body: { description: `v${i}` }, headers: { "if-match": etag } })
  etag = result.etag
  return result
}))

// Requests a window may also count from the warm-up when the minute did not turn over; leases are 100 requests each.
const leased = after.used - before.used
console.log(`\nrate limiter: ${requests} reads leased ${leased} requests from the store in slices of 100: ` +
  `${Math.round(leased / 100)} lease statements, one per ${(requests / Math.max(1, leased / 100)).toFixed(0)} requests` +
  (after.windows > before.windows ? " (a minute window turned over during the run)" : ""))
await runtime.dispose()
