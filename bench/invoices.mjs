// Invoice cost: creating invoices of 5 items through the tax engine (fiscal rules, snapshots), and
// reading pages of 100 whose taxes, stale-tax warnings and transmission readiness are computed by SQL
// on every read. Run after `npm run build`:  node bench/invoices.mjs [invoices]   (DATABASE_URL for PostgreSQL)
//
// Measured on the 2-core development machine (shared with other work), 300 invoices of 5 items, 30 fiscal rules:
//   PGlite      create 48 ms an invoice; a page of 100: 174 ms cold, 114 ms warm, 113 ms with 100 stale warnings;
//               recalculate-taxes 52 ms
//   PostgreSQL  create 32 ms an invoice; a page of 100: 85 ms, 83 ms, 101 ms with 100 stale warnings;
//               recalculate-taxes 32 ms
// A create reads the products (one query) and the tenant's active rules (one query), writes one
// snapshot per item, then the invoice, its items and its event. Reads compute taxes, warnings and
// readiness with correlated subqueries on invoice_items (keyed by tenant and invoice) per row.
import { ALL_PERMISSIONS, customers, fiscalRulesBr, invoices, layerCore, operatorPrincipal, products, ResourceEngine, resolveStoreLocation, Tenancy } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"

const count = Number(process.argv[2] ?? 300)
const location = process.env.DATABASE_URL ? resolveStoreLocation() : { kind: "pglite" }
const runtime = ManagedRuntime.make(layerCore(location))
const run = (effect) => runtime.runPromise(effect)
const time = async (label, work, per = 1, unit = "") => {
  const start = process.hrtime.bigint()
  const result = await work()
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  console.log(`${label.padEnd(44)} ${ms.toFixed(0).padStart(8)} ms${per > 1 ? `  ${(ms / per).toFixed(1)} ms/${unit}` : ""}`)
  return result
}

const { principal, items, productIds } = await run(Effect.gen(function* () {
  const tenancy = yield* Tenancy
  const tenant = yield* tenancy.createTenant({ name: `Bench ${Date.now()}`, countryCode: "BR" })
  const { token } = yield* tenancy.createApiKey({ tenantId: tenant.id, name: "bench", permissions: ALL_PERMISSIONS })
  const principal = yield* tenancy.authenticateApiKey(token)
  const operator = yield* operatorPrincipal(tenant.id)
  const engine = yield* ResourceEngine
  for (let index = 0; index < 30; index++) {
    yield* engine.create(fiscalRulesBr, operator, {
      name: `Rule ${index}`, ncm_prefix: String(1000 + index), origin_state_code: "SP",
      taxes: [{ tax_code: "ICMS", rate: "18", is_included: true }, { tax_code: "PIS", rate: "1.65", is_included: true }, { tax_code: "COFINS", rate: "7.6", is_included: true }, { tax_code: "IPI", rate: "5" }]
    })
  }
  const productIds = []
  for (let index = 0; index < 5; index++) {
    productIds.push((yield* engine.create(products, principal, { name: `Product ${index}`, br_data: { ncm_code: `${1000 + index * 5}0000` } })).id)
  }
  const customer = yield* engine.create(customers, principal, { legal_name: "Bench customer", tax_id: "11.222.333/0001-81", city_id: 3550308 })
  const items = productIds.map((product_id, index) => ({ product_id, item_description: `Item ${index}`, quantity: "3", unit_price: "19.99", br_data: { cfop: "5102" } }))
  return { principal, items: items.map((item) => ({ ...item, customer: customer.id })), productIds }
}))
const customerId = items[0].customer
const body = { customer_id: customerId, invoice_date: "2024-07-01", origin_state_code: "SP", destination_state_code: "SP", items: items.map(({ customer, ...item }) => item) }

console.log(`store: ${location.kind}, ${count} invoices of ${items.length} items, 30 fiscal rules`)
await time(`create ${count} invoices (one at a time)`, async () => {
  for (let index = 0; index < count; index++) await run(Effect.flatMap(ResourceEngine, (engine) => engine.create(invoices, principal, body)))
}, count, "invoice")
const page = () => run(Effect.flatMap(ResourceEngine, (engine) => engine.list(invoices, principal, [["limit", "100"]])))
await time("first page of 100 (taxes, warnings, readiness)", page)
await time("same page again", page)
await run(Effect.flatMap(ResourceEngine, (engine) => engine.update(products, principal, productIds[0], { br_data: { ncm_code: "99999999" } })))
const stale = await time("same page, every invoice with a stale item", page)
console.log(`warnings on the page: ${stale.data.reduce((sum, invoice) => sum + invoice.warnings.length, 0)}`)
const first = stale.data[0]
await time("recalculate-taxes of one invoice", () => run(Effect.flatMap(ResourceEngine, (engine) =>
  engine.action(invoices, invoices.actions[0], principal, first.id, {}, undefined))))
await runtime.dispose()
