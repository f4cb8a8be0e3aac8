import * as SqlClient from "effect/sql/SqlClient"
import { type CoreServices, customers, layerCore, operatorPrincipal, type Principal, products, ResourceEngine, type Row, salesOrders, Tenancy } from "@erp/core"
import { base, en, en_US, Faker } from "@faker-js/faker"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testStore, storeKinds } from "../../../test/support/stores.js"
import { writeBulkOrders } from "../src/seed/bulk-orders.js"

/** What a record says apart from what only its write decides (ids, numbers, times). */
const comparable = (order: Row) => {
  const { id: _id, record_number: _number, created_at: _created, updated_at: _updated, items, ...rest } = order
  return {
    ...rest,
    items: (items as ReadonlyArray<Row>).map(({ id: _itemId, sales_order_id: _parent, created_at: _c, updated_at: _u, ...item }) => item)
  }
}

/**
 * `erp seed demo` at scale writes sales orders in batched SQL. They must be the rows a
 * create through the API writes: the same answer field for field, numbers from the same
 * gapless sequence, one `sales-orders.create` event each.
 */
describe.each(storeKinds)("bulk-written sales orders on %s", (kind) => {
  let runtime: ManagedRuntime.ManagedRuntime<CoreServices, unknown>
  let principal: Principal
  let bulk: Array<Row>
  const run = <A, E>(effect: Effect.Effect<A, E, CoreServices>) => runtime.runPromise(effect)

  beforeAll(async () => {
    runtime = ManagedRuntime.make(layerCore(testStore(kind)))
    bulk = await run(Effect.gen(function* () {
      const tenancy = yield* Tenancy
      const engine = yield* ResourceEngine
      const tenant = yield* tenancy.createTenant({ name: "Bulk Seeds Inc", countryCode: "US" })
      principal = yield* operatorPrincipal(tenant.id, "seed")
      const catalog = [] as Array<{ id: string; name: string; price: string }>
      for (const [name, price] of [["Widget", "12.50"], ["Gadget", "99.99"], ["Sprocket", "0.35"]] as const) {
        catalog.push({ id: String((yield* engine.create(products, principal, { name, sale_price: price })).id), name, price })
      }
      const buyer = yield* engine.create(customers, principal, { legal_name: "Buyer LLC" })
      // One order through the API first: bulk numbers must continue its sequence.
      yield* engine.create(salesOrders, principal, { customer_id: buyer.id, items: [{ product_id: catalog[0].id, item_description: "Widget", quantity: "1", unit_price: "12.50" }] })
      const faker = new Faker({ locale: [en_US, en, base] })
      faker.seed(7)
      yield* writeBulkOrders({
        tenantId: tenant.id,
        actor: principal.actor,
        faker,
        customers: [{ id: String(buyer.id) }],
        catalog,
        count: 12,
        date: () => "2026-03-14",
        onBatch: () => undefined
      })
      const page = yield* engine.list(salesOrders, principal, [["limit", "100"], ["sort", "record_number"]])
      return (page.data as Array<Row>).slice(1)
    }))
  }, 120_000)
  afterAll(() => runtime.dispose())

  it("numbers them after the orders made through the API, with no gap, one create event each", async () => {
    expect(bulk.map((order) => order.record_number)).toEqual(Array.from({ length: 12 }, (_, index) => index + 2))
    const events = await run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM events WHERE tenant_id = ${principal.tenantId}::uuid AND type = 'sales-orders.create'`))
    expect(events[0].n).toBe(13)
    const next = await run(Effect.flatMap(ResourceEngine, (engine) =>
      engine.create(salesOrders, principal, { customer_id: bulk[0].customer_id, items: [] })))
    expect(next.record_number).toBe(14)
  })

  it("writes each one as a create through the API writes it", async () => {
    for (const order of bulk.slice(0, 6)) {
      const items = (order.items as ReadonlyArray<Row>).map((item) => ({
        product_id: item.product_id,
        item_description: item.item_description,
        quantity: item.quantity,
        unit_price: item.unit_price
      }))
      const made = await run(Effect.gen(function* () {
        const engine = yield* ResourceEngine
        const created = yield* engine.create(salesOrders, principal, {
          customer_id: order.customer_id,
          order_date: order.order_date,
          operation_type: "sale",
          product_type: "goods",
          items
        })
        if (order.status !== "draft") yield* engine.update(salesOrders, principal, String(created.id), { status: order.status })
        return yield* engine.get(salesOrders, principal, String(created.id), [])
      }))
      expect(comparable(made)).toEqual(comparable(order))
    }
    expect(new Set(bulk.map((order) => order.status))).toContain("confirmed")
  })
})
