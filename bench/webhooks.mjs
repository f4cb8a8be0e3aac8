// Webhook delivery throughput: N events for one endpoint on a loopback receiver answering 200 at once
// (or after --delay ms), sent by one in-process dispatcher (4 in flight per endpoint, the default).
// Then fairness: one tenant's endpoint with a backlog of due deliveries (default 10,000, written in one
// statement) on a receiver that takes requests and never answers, and how long another tenant's
// delivery to a healthy receiver takes from its write to its arrival.
// Run after `npm run build`:  node bench/webhooks.mjs [events] [delay-ms] [backlog]   (DATABASE_URL and ERP_SECRET_KEY to use PostgreSQL)
//
// Measured on the 2-core development machine (shared with other work), 300 events, one endpoint:
//   PGlite      writes 8-12 ms each with their deliveries; sent 38 a second (receiver at once), 34 (50 ms receiver)
//   PostgreSQL  writes 6 ms each; sent 132 a second (receiver at once), 54 (50 ms receiver: 4 in flight
//               per endpoint bound it at 80)
// Each delivery costs a claim transaction, an endpoint read and a recording transaction; PGlite runs
// them one at a time on its only session, so its rate does not grow with concurrency.
import { asOperator, layerCore, layerWebhookDispatcher, products, resolveStoreLocation, ResourceEngine, Tenancy, webhookEndpoints } from "@erp/core"
import { SqlClient } from "effect/sql"
import { Effect, Fiber, Layer, ManagedRuntime } from "effect"
import { createServer } from "node:http"

const events = Number(process.argv[2] ?? 500)
const delay = Number(process.argv[3] ?? 0)
const backlog = Number(process.argv[4] ?? 10_000)
const location = process.env.DATABASE_URL ? resolveStoreLocation() : { kind: "pglite" }
const runtime = ManagedRuntime.make(layerCore(location))
const run = (effect) => runtime.runPromise(effect)

let received = 0
const server = createServer((request, response) => {
  request.resume()
  request.on("end", () => setTimeout(() => { received += 1; response.writeHead(200).end() }, delay))
})
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
const url = `http://127.0.0.1:${server.address().port}/hooks`

const principal = await run(Effect.gen(function* () {
  const tenant = yield* (yield* Tenancy).createTenant({ name: `Bench ${Date.now()}`, countryCode: "BR" })
  return asOperator(tenant, "bench")
}))
process.env.ERP_WEBHOOKS_ALLOW_PRIVATE = "true"
await run(Effect.flatMap(ResourceEngine, (engine) => engine.create(webhookEndpoints, principal, { url, events: ["products.create"] })))

const writeStart = performance.now()
for (let index = 0; index < events; index += 1) {
  await run(Effect.flatMap(ResourceEngine, (engine) => engine.create(products, principal, { name: `Bench ${index}` })))
}
const writeMs = performance.now() - writeStart

const sendStart = performance.now()
const dispatcher = runtime.runFork(Layer.launch(layerWebhookDispatcher({ pollMs: 100 })))
while (received < events) await new Promise((resolve) => setTimeout(resolve, 20))
const sendMs = performance.now() - sendStart

console.log(`${location.kind}: ${events} writes with their deliveries recorded in ${(writeMs / 1000).toFixed(1)} s (${(writeMs / events).toFixed(1)} ms each)`)
console.log(`${location.kind}: ${events} deliveries sent (receiver delay ${delay} ms) in ${(sendMs / 1000).toFixed(1)} s, ${(events / (sendMs / 1000)).toFixed(0)} a second`)
await runtime.runPromise(Fiber.interrupt(dispatcher))

// A receiver that never answers, with the backlog of one tenant's endpoint due at once.
const silent = createServer((request) => request.resume())
await new Promise((resolve) => silent.listen(0, "127.0.0.1", resolve))
const silentUrl = `http://127.0.0.1:${silent.address().port}/hooks`
const stuck = await run(Effect.flatMap(ResourceEngine, (engine) => engine.create(webhookEndpoints, principal, { url: silentUrl, events: ["financial-categories.create"] })))
await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, event_type, resource, resource_id, action, event_created_at, next_attempt_at)
  SELECT ${principal.tenantId}::uuid, ${stuck.id}::uuid, gen_random_uuid(), 'financial-categories.create', 'financial-categories', gen_random_uuid()::text, 'create',
    now(), now() - interval '1 hour' + n * interval '1 ms'
  FROM generate_series(1, ${backlog}::int) AS n`))
const neighbour = await run(Effect.gen(function* () {
  const tenant = yield* (yield* Tenancy).createTenant({ name: `Bench neighbour ${Date.now()}`, countryCode: "BR" })
  return asOperator(tenant, "bench")
}))
await run(Effect.flatMap(ResourceEngine, (engine) => engine.create(webhookEndpoints, neighbour, { url, events: ["products.create"] })))
const fair = runtime.runFork(Layer.launch(layerWebhookDispatcher({ pollMs: 100, graceMs: 100 })))
// The backlog's first attempts are out (4, the endpoint's window) before the neighbour writes.
await new Promise((resolve) => setTimeout(resolve, 1000))
const before = received
const neighbourStart = performance.now()
await run(Effect.flatMap(ResourceEngine, (engine) => engine.create(products, neighbour, { name: "Neighbour" })))
while (received === before && performance.now() - neighbourStart < 600_000) await new Promise((resolve) => setTimeout(resolve, 5))
const neighbourMs = performance.now() - neighbourStart
console.log(`${location.kind}: another tenant's delivery arrived ${(neighbourMs / 1000).toFixed(2)} s after its write, behind ${backlog} due deliveries of one endpoint whose receiver never answers`)
await runtime.runPromise(Fiber.interrupt(fair))
silent.closeAllConnections()
silent.close()
server.close()
await runtime.dispose()
process.exit(0)
