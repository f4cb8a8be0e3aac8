// One tenant's key hammers the slowest filters it may send; another tenant's `GET /products?limit=1`
// is timed meanwhile. Run after `npm run build`:
//   node bench/tenant-isolation.mjs [rows] [seconds] [hammer connections]   (DATABASE_URL to use PostgreSQL)
import { ALL_PERMISSIONS, layerCore, resolveStoreLocation, Tenancy } from "@erp/core"
import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { layerNodeServer } from "@erp/http"
import { Effect, Layer, ManagedRuntime } from "effect"

const rows = Number(process.argv[2] ?? 50_000)
const seconds = Number(process.argv[3] ?? 20)
const hammers = Number(process.argv[4] ?? 10)
const location = process.env.DATABASE_URL ? resolveStoreLocation() : { kind: "pglite" }
const runtime = ManagedRuntime.make(layerNodeServer({ port: 0 }).pipe(Layer.provideMerge(layerCore(location))))
const run = (effect) => runtime.runPromise(effect)

const address = await run(Effect.map(HttpServer.HttpServer, (server) => server.address))
const url = `http://127.0.0.1:${address.port}`

const tenantWithKey = (name) => Effect.gen(function* () {
  const tenancy = yield* Tenancy
  const tenant = yield* tenancy.createTenant({ name: `${name} ${Date.now()}`, countryCode: "BR" })
  const { token } = yield* tenancy.createApiKey({ tenantId: tenant.id, name: "bench", permissions: ALL_PERMISSIONS })
  return { id: tenant.id, token }
})

const hammer = await run(tenantWithKey("Hammer"))
const victim = await run(tenantWithKey("Victim"))
await run(Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Bulk insert straight into the tables: the bench measures reads, not the create path.
  yield* sql`INSERT INTO products (tenant_id, name, description, sale_price, tags, metadata, created_at)
    SELECT ${hammer.id}::uuid, 'Product ' || g || ' ' || md5(g::text), repeat(md5(g::text), 8), (g % 1000)::numeric / 10,
      jsonb_build_array('tag-' || (g % 97), 'bench'), jsonb_build_object('batch', 'b' || (g % 50)), now() - (g || ' seconds')::interval
    FROM generate_series(1, ${rows}) AS g`
  yield* sql`INSERT INTO products (tenant_id, name, created_at)
    SELECT ${victim.id}::uuid, 'Victim product ' || g, now() - (g || ' seconds')::interval FROM generate_series(1, 100) AS g`
}))

// The most a request may ask: 10 substring conditions (the cap) and 40 others (50 in all), no index helps.
const slowQuery = [
  "limit=100",
  ...Array.from({ length: 5 }, (_, index) => `name[not_contains]=zz${index}`),
  ...Array.from({ length: 5 }, (_, index) => `tags[contains]=ta${index}`),
  ...Array.from({ length: 40 }, (_, index) => `sale_price[neq]=${index + 0.5}`)
].join("&")

const get = async (token, pathAndQuery) => {
  const started = performance.now()
  try {
    const response = await fetch(url + pathAndQuery, { headers: { authorization: `Bearer ${token}` } })
    await response.arrayBuffer()
    return { status: response.status, ms: performance.now() - started }
  } catch {
    // A kept-alive socket the server closed while the client reused it (the event loop was busy): counted, not fatal.
    return { status: "reset", ms: performance.now() - started }
  }
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}
const summary = (label, values) =>
  console.log(`${label.padEnd(34)} n=${String(values.length).padStart(4)}  p50 ${percentile(values, 50).toFixed(1).padStart(7)} ms  p95 ${percentile(values, 95).toFixed(1).padStart(7)} ms  p99 ${percentile(values, 99).toFixed(1).padStart(7)} ms  max ${Math.max(...values).toFixed(1).padStart(7)} ms`)

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** The victim's requests, one every 100 ms, for `ms`. */
const probe = async (ms) => {
  const latencies = []
  const statuses = {}
  const until = performance.now() + ms
  while (performance.now() < until) {
    const { status, ms: took } = await get(victim.token, "/products?limit=1")
    statuses[status] = (statuses[status] ?? 0) + 1
    latencies.push(took)
    await sleep(100)
  }
  return { latencies, statuses }
}

console.log(`store: ${location.kind}, ${rows} products for the hammering tenant, ${hammers} connections for ${seconds} s`)
const one = await get(hammer.token, `/products?${slowQuery}`)
console.log(`one slow request alone: ${one.status} in ${one.ms.toFixed(0)} ms`)
const baseline = await probe(3_000)
summary("victim, idle server", baseline.latencies)

let running = true
const hammerStatuses = {}
const hammerLatencies = []
const loops = Array.from({ length: hammers }, async () => {
  while (running) {
    const { status, ms } = await get(hammer.token, `/products?${slowQuery}`)
    hammerStatuses[status] = (hammerStatuses[status] ?? 0) + 1
    hammerLatencies.push(ms)
  }
})
await sleep(500)
const loaded = await probe(seconds * 1_000)
running = false
await Promise.all(loops)
const health = await get(victim.token, "/health")
summary("victim, while hammered", loaded.latencies)
summary("hammer's slow requests", hammerLatencies)
console.log(`victim statuses ${JSON.stringify(loaded.statuses)}; hammer statuses ${JSON.stringify(hammerStatuses)}; /health ${health.status}`)
await runtime.dispose()
