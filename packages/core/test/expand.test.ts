import { Effect, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import {
  applyExpansions,
  asOperator,
  customers,
  layerCore,
  parseExpand,
  products,
  type Principal,
  ResourceEngine,
  ResourceRepository,
  type Row,
  salesOrders,
  Tenancy
} from "../src/index.js"

/**
 * Expansions load their records for the whole page at once: one repository read per
 * expansion, whatever the number of records, so a page of 30 orders costs no more reads than one.
 */
describe.each(storeKinds)("expansions batch their reads on %s", (kind) => {
  const runtime = ManagedRuntime.make(layerCore(testStore(kind)))
  let principal: Principal
  let orders: ReadonlyArray<Row>

  beforeAll(async () => {
    const tenant = await runtime.runPromise(Effect.flatMap(Tenancy, (tenancy) => tenancy.createTenant({ name: "Expand", countryCode: "BR" })))
    principal = asOperator(tenant, "expand-test")
    orders = await runtime.runPromise(Effect.gen(function* () {
      const engine = yield* ResourceEngine
      const buyers = yield* Effect.forEach([1, 2, 3], (n) => engine.create(customers, principal, { legal_name: `Buyer ${n}` }))
      const goods = yield* Effect.forEach([1, 2], (n) => engine.create(products, principal, { name: `Good ${n}` }))
      yield* Effect.forEach(Array.from({ length: 30 }, (_, index) => index), (index) =>
        engine.create(salesOrders, principal, {
          customer_id: buyers[index % 3].id,
          items: [
            { product_id: goods[index % 2].id, item_description: "x", quantity: "1", unit_price: "1" },
            { item_description: "y", quantity: "1", unit_price: "1" }
          ]
        }))
      return (yield* engine.list(salesOrders, principal, [["limit", "100"]])).data as ReadonlyArray<Row>
    }))
  })
  afterAll(() => runtime.dispose())

  it("reads each expansion's records with one call for the whole page", async () => {
    const calls: Array<{ resource: string; ids: number }> = []
    const expanded = await runtime.runPromise(Effect.gen(function* () {
      const repo = yield* ResourceRepository
      const counting = { ...repo, findByIds: (resource: Parameters<typeof repo.findByIds>[0], tenantId: string, ids: ReadonlyArray<string>) => {
        calls.push({ resource: resource.name, ids: ids.length })
        return repo.findByIds(resource, tenantId, ids)
      } }
      const expansions = yield* parseExpand(salesOrders, [["expand[]", "customer"], ["expand[]", "items.product"]])
      return yield* applyExpansions(counting, principal, orders, expansions)
    }))
    expect(orders).toHaveLength(30)
    // Three distinct customers in one read, two distinct products (of 60 items) in one read.
    expect(calls).toEqual([{ resource: "customers", ids: 3 }, { resource: "products", ids: 2 }])
    const items = expanded.flatMap((order) => order.items as ReadonlyArray<Row>)
    expect(items.filter((item) => item.product !== null).map((item) => (item.product as Row).name).sort()).toEqual([...Array(15).fill("Good 1"), ...Array(15).fill("Good 2")])
    expect(new Set(expanded.map((order) => (order.customer as Row).legal_name))).toEqual(new Set(["Buyer 1", "Buyer 2", "Buyer 3"]))
    expect(Object.keys(expanded[0].customer as Row)).toContain("created_at")
  })
})
