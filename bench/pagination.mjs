// Keyset pagination cost: page 1 versus a page deep in the walk, plus filtered and searched lists.
// Run after `npm run build`:  node bench/pagination.mjs [rows]   (DATABASE_URL and ERP_SECRET_KEY to use PostgreSQL)
import { ALL_PERMISSIONS, ensureDemoTenant, layerCore, products, ResourceEngine, resolveStoreLocation, Tenancy } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"

const rows = Number(process.argv[2] ?? 20000)
const location = process.env.DATABASE_URL ? resolveStoreLocation() : { kind: "pglite" }
const runtime = ManagedRuntime.make(layerCore(location))
const run = (effect) => runtime.runPromise(effect)

const time = async (label, effect, repeat = 20) => {
  await run(effect)
  const start = process.hrtime.bigint()
  for (let index = 0; index < repeat; index++) await run(effect)
  const ms = Number(process.hrtime.bigint() - start) / 1e6 / repeat
  console.log(`${label.padEnd(48)} ${ms.toFixed(2).padStart(8)} ms`)
  return ms
}

const setup = Effect.gen(function* () {
  const tenancy = yield* Tenancy
  const tenant = yield* tenancy.createTenant({ name: `Bench ${Date.now()}`, countryCode: "BR" })
  const { token } = yield* tenancy.createApiKey({ tenantId: tenant.id, name: "bench", permissions: ALL_PERMISSIONS })
  const sql = yield* SqlClient.SqlClient
  // Bulk insert straight into the table: the bench measures reads, not the create path.
  yield* sql`INSERT INTO products (tenant_id, name, sale_price, tags, metadata, created_at)
    SELECT ${tenant.id}::uuid, 'Product ' || g, (g % 1000)::numeric / 10, '["bench"]'::jsonb,
      jsonb_build_object('batch', 'b' || (g % 50)), now() - (g || ' seconds')::interval
    FROM generate_series(1, ${rows}) AS g`
  return yield* tenancy.authenticateApiKey(token)
})

console.log(`store: ${location.kind}, ${rows} products`)
const principal = await run(setup)
const list = (params) => Effect.flatMap(ResourceEngine, (engine) => engine.list(products, principal, params))

const first = await time("first page (limit 100)", list([["limit", "100"]]))
// Walk to the middle, then time the page there.
let cursor = null
for (let walked = 0; walked < rows / 2; walked += 100) {
  const page = await run(list([["limit", "100"], ...(cursor ? [["cursor", cursor]] : [])]))
  cursor = page.pagination.next_cursor
}
const deep = await time(`page at row ${rows / 2} (limit 100)`, list([["limit", "100"], ["cursor", cursor]]))
await time("filtered: sale_price[gte]=50 & name[contains]", list([["limit", "100"], ["sale_price[gte]", "50"], ["name[contains]", "99"]]))
await time("sorted: sort=sale_price:desc", list([["limit", "100"], ["sort", "sale_price:desc"]]))
await time("search=product", list([["limit", "100"], ["search", "product"]]))
await time("payload search=b7", list([["limit", "100"], ["search", "b7"], ["include_payload_search", "true"]]))
console.log(`deep page / first page: ${(deep / first).toFixed(2)}x`)
await runtime.dispose()
