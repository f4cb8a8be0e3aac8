import { type AnyResource, ResourceRepository, salesOrders } from "@erp/core"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { statementCounter } from "../../../test/support/statements.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/**
 * Round trips of a write of a record with children (a sales order and its items) once the key
 * is warm: the references checked in one query, then the number, the order, its items, its
 * event and deliveries and its answer in one statement, without BEGIN or COMMIT.
 */
describe.each(storeKinds)("round trips of a record with children on %s", (kind) => {
  const counter = statementCounter()
  let host: TestHost
  let tenant: TestTenant
  let customer: string
  let products: Array<string>

  /** The write's statements: the rate limiter's lease of a slice of the minute (once per 100 requests) left out. */
  /**
   * The write's own statements: not the rate limiter's lease, nor the key's authentication and its
   * last use, which come back whenever the key's few seconds in the credential cache run out (on a
   * slow machine, between any two requests).
   */
  const writeStatements = () =>
    counter.take().filter((text) => !/^WITH hit AS \( INSERT INTO credential_|FROM api_key_ids l JOIN api_keys k|^UPDATE api_keys SET last_used_at/.test(text))

  const call = (method: string, path: string, body?: unknown) => host.request(method, path, { token: tenant.token, ...(body !== undefined ? { body } : {}) })

  beforeAll(async () => {
    host = await startTestHost(testStore(kind), { tracer: counter.tracer })
    tenant = await host.createTenant("BR")
    customer = (await call("POST", "/customers", { legal_name: "Counted Ltda", tax_id: "11.222.333/0001-81" })).body.id
    products = []
    for (const name of ["Espresso", "Moedor"]) products.push((await call("POST", "/products", { name, sale_price: "10" })).body.id)
  })
  afterAll(() => host?.close())

  const items = () => [
    { product_id: products[0], item_description: "Espresso 1 kg", quantity: "3", unit_price: "19.99", discount_amount: "1.5" },
    { product_id: products[1], item_description: "Moedor", quantity: "2.5", unit_price: "7.333333" },
    { item_description: "Instalação", quantity: "1", unit_price: "100" }
  ]

  it("creates a sales order with three items in at most 3 round trips, answering what a read answers", async () => {
    // A first request warms the key; the counted one runs only the write's statements.
    expect((await call("GET", `/customers/${customer}`)).status).toBe(200)
    counter.take()
    const created = await call("POST", "/sales-orders", { customer_id: customer, order_date: "2026-01-10", items: items() })
    const statements = writeStatements()
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(statements.length, statements.map((text) => text.slice(0, 120)).join("\n")).toBeLessThanOrEqual(3)
    expect(statements).not.toContain("BEGIN")
    // Today's shape: the customer and the products checked in one query, then one statement writes it all.
    expect(statements).toHaveLength(2)
    expect(statements[0]).toMatch(/^SELECT 0 AS lookup, .* FROM customers r .* UNION ALL SELECT 1 AS lookup, .* FROM products r /)
    expect(statements[1]).toMatch(/^WITH number AS \(INSERT INTO record_sequences .*\),\s?written AS \(INSERT INTO sales_orders .* RETURNING \*\),\s?children_0 AS \(INSERT INTO sales_order_items .* RETURNING \*\),\s?event AS \(INSERT INTO events .*\),\s?deliveries AS \(INSERT INTO webhook_deliveries .*\) SELECT .* FROM written r$/)
    expect(created.body.items).toHaveLength(3)
    const read = await call("GET", `/sales-orders/${created.body.id}`)
    expect(created.body).toEqual(read.body)
    expect(created.headers.get("etag")).toBe(read.headers.get("etag"))
    const events = await call("GET", `/events?resource_id=${created.body.id}`)
    expect(events.body.data.map((event: { type: string }) => event.type)).toEqual(["sales-orders.create"])
  })

  it("numbers concurrent creates without gaps or duplicates", async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => call("POST", "/sales-orders", { customer_id: customer, items: items() })))
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201))
    const numbers = answers.map((answer) => Number(answer.body.record_number)).sort((a, b) => a - b)
    expect(numbers).toEqual(numbers.map((_, index) => numbers[0] + index))
  })

  it("refuses a missing product by item index and consumes no number", async () => {
    const before = await call("POST", "/sales-orders", { customer_id: customer, items: items() })
    const refused = await call("POST", "/sales-orders", {
      customer_id: customer,
      items: [...items(), { product_id: "00000000-0000-4000-8000-000000000001", item_description: "Ghost", quantity: "1", unit_price: "1" }]
    })
    expect(refused.status).toBe(422)
    expect(refused.body.details.fields).toEqual({ "items.3.product_id": ["does not match any product"] })
    const after = await call("POST", "/sales-orders", { customer_id: customer, items: items() })
    expect(after.body.record_number).toBe(before.body.record_number + 1)
  })

  it("updates a sales order's items (one changed, one removed, one kept, one added) in at most 3 round trips", async () => {
    const created = (await call("POST", "/sales-orders", { customer_id: customer, items: items() })).body
    const [first, , third] = created.items
    counter.take()
    const updated = await call("PATCH", `/sales-orders/${created.id}`, {
      notes: "Changed",
      items: [
        { id: first.id, product_id: first.product_id, item_description: first.item_description, quantity: "4", unit_price: first.unit_price, discount_amount: first.discount_amount },
        { id: third.id, item_description: third.item_description, quantity: third.quantity, unit_price: third.unit_price },
        { product_id: products[1], item_description: "Moedor extra", quantity: "1", unit_price: "5" }
      ]
    })
    const statements = writeStatements()
    expect(updated.status, JSON.stringify(updated.body)).toBe(200)
    expect(statements.length, statements.map((text) => text.slice(0, 120)).join("\n")).toBeLessThanOrEqual(3)
    expect(statements).not.toContain("BEGIN")
    expect(updated.body.items.map((item: Record<string, unknown>) => [item.item_description, item.quantity, item.position])).toEqual([
      ["Espresso 1 kg", "4.000000", 0],
      ["Instalação", "1.000000", 1],
      ["Moedor extra", "1.000000", 2]
    ])
    expect(updated.body.items[0].id).toBe(first.id)
    expect(updated.body.items[1].id).toBe(third.id)
    expect(updated.body.total).not.toBe(created.total)
    const read = await call("GET", `/sales-orders/${created.id}`)
    expect(updated.body).toEqual(read.body)
    expect(updated.headers.get("etag")).toBe(read.headers.get("etag"))
    const events = await call("GET", `/events?resource_id=${created.id}`)
    expect(events.body.data.map((event: { type: string }) => event.type)).toEqual(["sales-orders.create", "sales-orders.update"])
  })

  it("keeps racing item updates whole: each PATCH's list is the order's list after it, and each records its event", async () => {
    const created = (await call("POST", "/sales-orders", { customer_id: customer, items: items() })).body
    const answers = await Promise.all(Array.from({ length: 6 }, (_, index) =>
      call("PATCH", `/sales-orders/${created.id}`, { items: [{ item_description: `Writer ${index}`, quantity: String(index + 1), unit_price: "1" }] })))
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200))
    for (const answer of answers) expect(answer.body.items.map((item: { item_description: string }) => item.item_description)).toHaveLength(1)
    const read = await call("GET", `/sales-orders/${created.id}`)
    expect(read.body.items).toHaveLength(1)
    expect(answers.some((answer) => JSON.stringify(answer.body) === JSON.stringify(read.body))).toBe(true)
    const events = await call("GET", `/events?resource_id=${created.id}&action=update`)
    expect(events.body.data).toHaveLength(6)
  })

  it("a PATCH of an order's own fields only is a read and one statement; one that changes nothing writes nothing", async () => {
    const created = (await call("POST", "/sales-orders", { customer_id: customer, items: items() })).body
    counter.take()
    const updated = await call("PATCH", `/sales-orders/${created.id}`, { notes: "Only notes" })
    expect(updated.status).toBe(200)
    expect(writeStatements()).toHaveLength(2)
    expect(updated.body.items).toEqual(created.items)
    const same = await call("PATCH", `/sales-orders/${created.id}`, { notes: "Only notes" })
    expect(same.status).toBe(200)
    expect(writeStatements()).toHaveLength(1)
  })

  it("writes nothing, items included, when the order changed since it was read: the caller then runs again under the lock", async () => {
    const created = (await call("POST", "/sales-orders", { customer_id: customer, items: items() })).body
    const before = await call("GET", `/sales-orders/${created.id}`)
    const orders = salesOrders as unknown as AnyResource
    const collection = orders.children.find((candidate) => candidate.name === "items")!
    const outcome = await host.run(Effect.flatMap(ResourceRepository, (repo) =>
      repo.updateReturning(orders, tenant.id, created.id, { notes: "Late" }, {
        unchangedSince: "2000-01-01T00:00:00.000Z",
        children: [{ collection, plan: { insert: [{ item_description: "Late", quantity: "1", unit_price: "1", subtotal: "1", total: "1", position: 3 }], update: [{ id: created.items[0].id, values: { quantity: "9" } }], remove: [created.items[1].id] } }]
      })))
    expect(Option.isNone(outcome)).toBe(true)
    const after = await call("GET", `/sales-orders/${created.id}`)
    expect(after.body).toEqual(before.body)
  })

  it("creates a quote with items the same way: its number, items and event in one statement after the references", async () => {
    counter.take()
    const created = await call("POST", "/quotes", { customer_id: customer, valid_until: "2099-12-31", items: items() })
    const statements = writeStatements()
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(statements).toHaveLength(2)
    expect(statements[1]).toMatch(/^WITH number AS \(INSERT INTO record_sequences .*,\s?children_0 AS \(INSERT INTO quote_items /)
    const read = await call("GET", `/quotes/${created.body.id}`)
    expect(created.body).toEqual(read.body)
  })

  it("runs a create whose rules write (an invoice's tax snapshots) in a transaction, and the next ones start in one", async () => {
    const invoice = () => ({ customer_id: customer, invoice_date: "2024-01-15", items: [{ product_id: products[0], item_description: "E", quantity: "1", unit_price: "1", br_data: { cfop: "5102" } }] })
    const first = await call("POST", "/invoices", invoice())
    expect(first.status, JSON.stringify(first.body)).toBe(201)
    counter.take()
    const second = await call("POST", "/invoices", invoice())
    const statements = writeStatements()
    expect(second.status).toBe(201)
    // No one-statement attempt first: its reads would be thrown away when the rules write.
    expect(statements[0]).toBe("BEGIN")
    expect(statements.filter((text) => /^INSERT INTO tax_resolutions/.test(text))).toHaveLength(1)
    expect(second.body.taxes).toEqual((await call("GET", `/invoices/${second.body.id}`)).body.taxes)
  })

  it("names the child's field when the store refuses a child in the one statement, and writes nothing", async () => {
    const orders = salesOrders as unknown as AnyResource
    const collection = orders.children.find((candidate) => candidate.name === "items")!
    const before = (await call("POST", "/sales-orders", { customer_id: customer, items: items() })).body.record_number
    const refused = await host.run(Effect.flip(Effect.flatMap(ResourceRepository, (repo) =>
      repo.insertReturning(orders, tenant.id, { customer_id: customer, status: "draft", subtotal: "1", items_discount: "0", total_discount: "0", total: "1" }, {
        number: { field: "record_number", sequence: "sales-orders" },
        children: [{ collection, rows: [{ product_id: "00000000-0000-4000-8000-000000000001", item_description: "Ghost", quantity: "1", unit_price: "1", subtotal: "1", total: "1", position: 0 }] }]
      }))))
    expect(refused).toMatchObject({ _tag: "Unprocessable", code: "REFERENCE_NOT_FOUND" })
    expect(Object.keys((refused as { fields?: object }).fields ?? {})).toEqual(["product_id"])
    const next = await call("POST", "/sales-orders", { customer_id: customer, items: items() })
    expect(next.body.record_number).toBe(before + 1)
  })
})
