// Webhook delivery throughput: N events for one endpoint on a loopback receiver answering 200 at once
// (or after --delay ms), sent by one in-process dispatcher (4 in flight per endpoint, the default).
// Run after `npm run build`:  node bench/webhooks.mjs [events] [delay-ms]   (DATABASE_URL and ERP_SECRET_KEY to use PostgreSQL)
//
// Measured on the 2-core development machine (shared with other work), 300 events, one endpoint:
//   PGlite      writes 8-12 ms each with their deliveries; sent 38 a second (receiver at once), 34 (50 ms receiver)
//   PostgreSQL  writes 6 ms each; sent 132 a second (receiver at once), 54 (50 ms receiver: 4 in flight
//               per endpoint bound it at 80)
// Each delivery costs a claim transaction, an endpoint read and a recording transaction; PGlite runs
// them one at a time on its only session, so its rate does not grow with concurrency.
import { asOperator, layerCore, layerWebhookDispatcher, products, resolveStoreLocation, ResourceEngine, Tenancy, webhookEndpoints } from "@erp/core"
import { Effect, Fiber, Layer, ManagedRuntime } from "effect"
import { createServer } from "node:http"

const events = Number(process.argv[2] ?? 500)
const delay = Number(process.argv[3] ?? 0)
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
server.close()
await runtime.dispose()
process.exit(0)
