import * as SqlClient from "effect/sql/SqlClient"
import { Cause, Effect, Exit, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FIXTURE_TABLES, testOrders } from "../../../test/support/fixture-orders.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { events, layerCore, asOperator, type Principal, products, ResourceEngine, type Row, Tenancy } from "../src/index.js"

/** The SQL store under the engine: units of work, events, numbering, children and constraints, on both stores. */
describe.each(storeKinds)("SQL unit of work on %s", (kind) => {
  const runtime = ManagedRuntime.make(layerCore(testStore(kind)))
  let principal: Principal

  const newPrincipal = async () => {
    const tenant = await runtime.runPromise(Effect.flatMap(Tenancy, (tenancy) => tenancy.createTenant({ name: "Store test", countryCode: "BR" })))
    return asOperator(tenant, "store-test")
  }
  const attempt = <A, E>(use: (engine: ResourceEngine["Service"]) => Effect.Effect<A, E>) => runtime.runPromiseExit(Effect.flatMap(ResourceEngine, use))
  const ok = async <A, E>(use: (engine: ResourceEngine["Service"]) => Effect.Effect<A, E>): Promise<A> => {
    const exit = await attempt(use)
    if (Exit.isFailure(exit)) throw new Error(`expected success: ${JSON.stringify(exit.cause)}`)
    return exit.value
  }
  const refused = async <A, E>(use: (engine: ResourceEngine["Service"]) => Effect.Effect<A, E>) => {
    const exit = await attempt(use)
    const failure = Exit.isFailure(exit) && exit.cause.reasons.length === 1 ? exit.cause.reasons.find(Cause.isFailReason) : undefined
    if (failure === undefined) throw new Error(`expected a refusal: ${JSON.stringify(exit)}`)
    return failure.error as { _tag: string; code?: string; fields?: Record<string, ReadonlyArray<string>> }
  }
  const refused_ = refused
  const create = (body: unknown, as = principal) => ok((engine) => engine.create(testOrders, as, body)) as Promise<Row & { id: string; items: Array<Row & { id: string }> }>
  const eventRows = (as: Principal) =>
    runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ type: string; resource_id: string; actor_kind: string; actor_id: string }>`SELECT type, resource_id, actor_kind, actor_id FROM events
        WHERE tenant_id = ${as.tenantId}::uuid ORDER BY created_at, sequence`))
  const count = (table: string, as: Principal) =>
    runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.literal(table)} WHERE tenant_id = ${as.tenantId}::uuid`)).then((rows) => rows[0].n)

  beforeAll(async () => {
    await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(FIXTURE_TABLES)))
    principal = await newPrincipal()
  })
  afterAll(() => runtime.dispose())

  it("stores items in their own table and reads them back in order, decimals as six-digit strings", async () => {
    const order = await create({ items: [{ description: "A", quantity: "1.5", unit_price: "2" }, { description: "B", quantity: "3", unit_price: "0.1" }] })
    const read = await ok((engine) => engine.get(testOrders, principal, order.id, [])) as typeof order
    expect(read).toEqual(order)
    expect(read.items.map((item) => [item.description, item.position, item.quantity, item.subtotal])).toEqual([
      ["A", 0, "1.500000", "3.000000"],
      ["B", 1, "3.000000", "0.300000"]
    ])
    expect(read.total).toBe("3.300000")
  })

  it("checks item references before writing and embeds the referenced product on every item", async () => {
    const product = await ok((engine) => engine.create(products, principal, { name: "Widget", sale_price: "2.5" }))
    const missing = await refused((engine) => engine.create(testOrders, principal, { items: [{ description: "x", quantity: "1", unit_price: "1", product_id: "00000000-0000-4000-8000-000000000002" }] }))
    expect(missing).toMatchObject({ _tag: "Unprocessable", code: "REFERENCE_NOT_FOUND" })
    expect(Object.keys(missing.fields!)).toEqual(["items.0.product_id"])
    const order = await create({ items: [{ description: "x", quantity: "2", unit_price: "2.5", product_id: product.id }, { description: "y", quantity: "1", unit_price: "1" }] })
    expect(order.items.map((item) => item.product)).toEqual([{ id: product.id, name: "Widget", sale_price: "2.500000" }, null])
    expect(order.has_items).toBe(true)
    const empty = await create({ items: [] })
    const withItems = await ok((engine) => engine.list(testOrders, principal, [["has_items", "false"], ["limit", "100"]]))
    expect((withItems.data as Array<Row>).map((row) => row.id)).toContain(empty.id)
    expect((withItems.data as Array<Row>).map((row) => row.id)).not.toContain(order.id)
  })

  it("assembles the items of a whole page, each order with its own", async () => {
    const as = await newPrincipal()
    for (const n of [1, 2, 3]) await create({ items: Array.from({ length: n }, (_, i) => ({ description: `${n}.${i}`, quantity: "1", unit_price: "1" })) }, as)
    const page = await ok((engine) => engine.list(testOrders, as, [["limit", "10"]]))
    expect((page.data as Array<{ items: Array<Row> }>).map((order) => order.items.map((item) => item.description))).toEqual([["1.0"], ["2.0", "2.1"], ["3.0", "3.1", "3.2"]])
  })

  it("numbers fifty concurrent creates 1 to 50 with no gap and no duplicate", async () => {
    const as = await newPrincipal()
    const orders = await Promise.all(Array.from({ length: 50 }, () => create({ items: [{ description: "x", quantity: "1", unit_price: "1" }] }, as)))
    expect(orders.map((order) => order.record_number).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
  })

  it("records one event per operation with the actor, in the same transaction as the write", async () => {
    const as = await newPrincipal()
    const order = await create({ items: [{ description: "x", quantity: "1", unit_price: "1" }] }, as)
    await ok((engine) => engine.update(testOrders, as, order.id, { items: [{ id: order.items[0].id, quantity: "2" }, { description: "y", quantity: "1", unit_price: "1" }] }))
    await ok((engine) => engine.update(testOrders, as, order.id, { notes: null }))
    await ok((engine) => engine.action(testOrders, testOrders.actions![0], as, order.id, {}, { reason: "done" }))
    await ok((engine) => engine.remove(testOrders, as, order.id))
    await ok((engine) => engine.restore(testOrders, as, order.id))
    const rows = await eventRows(as)
    expect(rows.map((row) => row.type)).toEqual(["test-orders.create", "test-orders.update", "test-orders.update", "test-orders.delete", "test-orders.restore"])
    expect(new Set(rows.map((row) => `${row.resource_id} ${row.actor_kind}:${row.actor_id}`))).toEqual(new Set([`${order.id} operator:store-test`]))
    const feed = await ok((engine) => engine.list(events, as, [["resource_id", order.id], ["action", "update"]]))
    expect(feed.data).toHaveLength(2)
    expect(Object.keys(feed.data[0] as object).sort()).toEqual(["action", "created_at", "id", "resource", "resource_id", "tenant_id", "type"])
  })

  it("creates several records, and writes of other records, in one transaction: all with their events, or none", async () => {
    const as = await newPrincipal()
    const group = await ok((engine) => engine.create(testOrders, as, { copies: 2, follow_up: { reason: "later" }, items: [] })) as unknown as { data: Array<Row> }
    expect(group.data).toHaveLength(2)
    expect(await count("test_orders", as)).toBe(4)
    expect((await eventRows(as)).map((row) => row.type)).toEqual(Array.from({ length: 4 }, () => "test-orders.create"))
    const refused = await refused_((engine) => engine.create(testOrders, as, { copies: 2, follow_up: { reason: "fail" }, items: [] }))
    expect(refused.code).toBe("REFUSED")
    expect(await count("test_orders", as)).toBe(4)
    expect(await eventRows(as)).toHaveLength(4)
    // beforeRemove refuses inside the transaction: the record stays.
    await ok((engine) => engine.update(testOrders, as, String(group.data[0].id), { status: "confirmed" }))
    expect((await refused_((engine) => engine.remove(testOrders, as, String(group.data[0].id)))).code).toBe("CONFIRMED")
    expect((await ok((engine) => engine.get(testOrders, as, String(group.data[0].id), []))).deleted_at).toBeNull()
  })

  it("turns constraint violations into 422 or 409 naming the field, and a refused write leaves neither rows nor events", async () => {
    const as = await newPrincipal()
    const foreign = await refused((engine) => engine.create(testOrders, as, { product_ref: "00000000-0000-4000-8000-000000000001", items: [] }))
    expect(foreign).toMatchObject({ _tag: "Unprocessable", code: "REFERENCE_NOT_FOUND" })
    expect(Object.keys(foreign.fields!)).toEqual(["product_ref"])
    const negative = await refused((engine) => engine.create(testOrders, as, { discount: "5", items: [{ description: "x", quantity: "1", unit_price: "1" }] }))
    expect(negative).toMatchObject({ _tag: "Unprocessable" })
    expect(Object.keys(negative.fields!)).toEqual(["total"])
    await create({ code: "DUP", items: [] }, as)
    const duplicate = await refused((engine) => engine.create(testOrders, as, { code: "DUP", items: [] }))
    expect(duplicate).toMatchObject({ _tag: "Conflict", code: "DUPLICATE" })
    expect(await count("test_orders", as)).toBe(1)
    expect(await count("test_order_items", as)).toBe(0)
    expect((await eventRows(as)).map((row) => row.type)).toEqual(["test-orders.create"])
    // The refused numbers rolled back with their writes: the next order is number 2.
    expect((await create({ items: [] }, as)).record_number).toBe(2)
  })
})
