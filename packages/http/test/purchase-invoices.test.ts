import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

// A 44-digit NF-e access key with a right check digit, and the same with a wrong one.
const ACCESS_KEY = "35240112345678000195550010000123451000123459"
const WRONG_DIGIT = "35240112345678000195550010000123451000123458"

/** Purchase invoices over HTTP: items and totals, payables made with the invoice, and the snapshot rule (spec 422 case 2). */
describe.each(storeKinds)("purchase invoices on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let other: TestTenant
  let supplier: string

  const call = (method: string, path: string, body?: unknown, token = tenant.token) => host.request(method, path, { token, body })
  const ok = async (method: string, path: string, body?: unknown, token = tenant.token) => {
    const response = await call(method, path, body, token)
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300)
    return response.body
  }
  const invoice = (body: Record<string, unknown> = {}) =>
    ok("POST", "/purchase-invoices", {
      supplier_id: supplier,
      reference_code: randomUUID().slice(0, 6),
      issue_date: "2024-01-10",
      items: [{ item_description: "Café em grãos 1 kg", quantity: "10", unit_price: "52.50" }, { item_description: "Frete", quantity: "1", unit_price: "25", discount_amount: "5" }],
      ...body
    })
  const feed = async (id: string) => (await ok("GET", `/events?resource_id=${id}&limit=100`)).data.map((event: { type: string }) => event.type)

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    other = await host.createTenant("BR")
    supplier = (await ok("POST", "/suppliers", { legal_name: "Torrefação Serra Azul", tax_id: "04.252.011/0001-10" })).id
  })
  afterAll(() => host?.close())

  it("computes item and invoice totals, embeds the supplier, checks the access key, and makes its payables in the same request", async () => {
    const created = await invoice({
      access_key: "3524 0112 3456 7800 0195 5500 1000 0123 4510 0012 3459",
      entry_date: "2024-01-12",
      discount_amount: "10",
      freight_amount: "15",
      other_amount: "0.5",
      payables: [{ amount: "300", due_date: "2024-02-10" }, { amount: "250.5", due_date: "2024-03-10", description: "Segunda parcela" }]
    })
    expect(created).toMatchObject({
      supplier_id: supplier,
      supplier: { id: supplier, legal_name: "Torrefação Serra Azul", trade_name: null, tax_id: "04252011000110" },
      access_key: ACCESS_KEY,
      entry_date: "2024-01-12",
      items_total: "545.000000",
      total: "550.500000"
    })
    expect(created.items.map((item: Record<string, unknown>) => [item.position, item.subtotal, item.total])).toEqual([[0, "525.000000", "525.000000"], [1, "25.000000", "20.000000"]])
    expect(created.payables.map((payable: Record<string, unknown>) => [payable.amount, payable.due_date, payable.status])).toEqual([
      ["300.000000", "2024-02-10", "overdue"],
      ["250.500000", "2024-03-10", "overdue"]
    ])
    const payable = await ok("GET", `/payables/${created.payables[1].id}`)
    expect(payable).toMatchObject({ purchase_invoice_id: created.id, supplier_id: supplier, issue_date: "2024-01-10", description: "Segunda parcela" })
    expect(await feed(created.id)).toEqual(["purchase-invoices.create"])
    expect(await feed(payable.id)).toEqual(["payables.create"])

    const bad = await call("POST", "/purchase-invoices", { supplier_id: supplier, issue_date: "2024-01-10", access_key: WRONG_DIGIT, items: [{ description: "x", quantity: "1", unit_price: "1" }] })
    expect(bad.status).toBe(400)
    expect(bad.body.details.fields).toHaveProperty("access_key")
    expect((await call("POST", "/purchase-invoices", { supplier_id: supplier, issue_date: "2024-01-10", access_key: ACCESS_KEY, items: [{ description: "x", quantity: "1", unit_price: "1" }] })).status).toBe(409)
    expect((await call("POST", "/purchase-invoices", { supplier_id: supplier, issue_date: "2024-01-10", items: [] })).status).toBe(400)
  })

  it("names an item's text item_description as every document does, takes the product's name without one, and still takes description (deprecated)", async () => {
    const product = await ok("POST", "/products", { name: "Filtro de papel 103" })
    const created = await invoice({
      items: [
        { item_description: "Café em grãos 1 kg", quantity: "1", unit_price: "10" },
        { description: "Frete", quantity: "1", unit_price: "5" },
        { product_id: product.id, quantity: "2", unit_price: "3" }
      ]
    })
    expect(created.items.map((item: Record<string, unknown>) => item.item_description)).toEqual(["Café em grãos 1 kg", "Frete", "Filtro de papel 103"])
    expect(created.items[0]).not.toHaveProperty("description")
    const patched = await ok("PATCH", `/purchase-invoices/${created.id}`, { items: [{ id: created.items[0].id, description: "Café moído" }, { id: created.items[1].id }, { id: created.items[2].id }] })
    expect(patched.items[0].item_description).toBe("Café moído")
    const both = await call("POST", "/purchase-invoices", { supplier_id: supplier, issue_date: "2024-01-10", items: [{ item_description: "a", description: "b", quantity: "1", unit_price: "1" }] })
    expect(both.status).toBe(400)
    expect(both.body.details.fields).toHaveProperty(["items.0.description"])
    const neither = await call("POST", "/purchase-invoices", { supplier_id: supplier, issue_date: "2024-01-10", items: [{ quantity: "1", unit_price: "1" }] })
    expect(neither.status).toBe(400)
    expect(neither.body.details.fields).toHaveProperty(["items.0.item_description"])
  })

  it("refuses a payables plan that does not add up, and makes installments of the total", async () => {
    const refused = await call("POST", "/purchase-invoices", {
      supplier_id: supplier,
      issue_date: "2024-01-10",
      items: [{ description: "Máquina", quantity: "1", unit_price: "1000" }],
      payables: [{ amount: "999.99", due_date: "2024-02-10" }]
    })
    expect(refused.status).toBe(422)
    expect(refused.body).toMatchObject({ code: "PAYABLES_OUT_OF_STEP", details: { fields: { payables: [expect.stringContaining("1000.000000")] } } })
    const split = await invoice({ items: [{ description: "Máquina", quantity: "1", unit_price: "1000" }], installments: { count: 3, first_due_date: "2031-01-15", interval_months: 1 } })
    expect(split.payables.map((payable: Record<string, unknown>) => [payable.installment_number, payable.amount, payable.due_date])).toEqual([
      [1, "333.330000", "2031-01-15"],
      [2, "333.330000", "2031-02-15"],
      [3, "333.340000", "2031-03-15"]
    ])
    const both = await call("POST", "/purchase-invoices", {
      supplier_id: supplier,
      issue_date: "2024-01-10",
      items: [{ description: "x", quantity: "1", unit_price: "1" }],
      payables: [{ amount: "1", due_date: "2031-01-01" }],
      installments: { count: 1, first_due_date: "2031-01-01" }
    })
    expect(both.status).toBe(422)
  })

  it("the snapshot rule: a PATCH changing the total is refused (422 naming total) unless the same request brings payables that add up", async () => {
    const created = await invoice({ payables: [{ amount: "270", due_date: "2031-02-10" }, { amount: "275", due_date: "2031-03-10" }] })
    expect(created.total).toBe("545.000000")
    const [first, second] = created.payables

    const refused = await call("PATCH", `/purchase-invoices/${created.id}`, { freight_amount: "10" })
    expect(refused.status).toBe(422)
    expect(refused.body).toMatchObject({ status_code: 422, code: "PAYABLES_OUT_OF_STEP" })
    expect(Object.keys(refused.body.details.fields)).toEqual(["total"])
    expect((await call("PATCH", `/purchase-invoices/${created.id}`, { items: [{ description: "Só café", quantity: "1", unit_price: "1" }] })).status).toBe(422)
    expect((await ok("GET", `/purchase-invoices/${created.id}`)).total).toBe("545.000000")
    // A change that keeps the total is fine.
    expect((await ok("PATCH", `/purchase-invoices/${created.id}`, { notes: "conferida" })).notes).toBe("conferida")

    const replanned = await ok("PATCH", `/purchase-invoices/${created.id}`, { freight_amount: "10", payables: [{ amount: "555", due_date: "2031-04-10" }] })
    expect(replanned.total).toBe("555.000000")
    expect(replanned.payables.map((payable: Record<string, unknown>) => [payable.amount, payable.due_date])).toEqual([["555.000000", "2031-04-10"]])
    expect((await call("GET", `/payables/${first.id}`)).status).toBe(404)
    expect((await ok("GET", `/payables/${second.id}?with_deleted=true`)).deleted_at).toEqual(expect.any(String))
    expect(await feed(first.id)).toEqual(["payables.create", "payables.delete"])
    expect(await feed(created.id)).toEqual(["purchase-invoices.create", "purchase-invoices.update", "purchase-invoices.update"])

    // The payable's amount belongs to the invoice's plan.
    const lockedAmount = await call("PATCH", `/payables/${replanned.payables[0].id}`, { amount: "1" })
    expect(lockedAmount.status).toBe(422)
    expect(lockedAmount.body.details.fields).toHaveProperty("amount")
    expect((await call("POST", "/payables", { amount: "1", due_date: "2031-01-01", purchase_invoice_id: created.id })).status).toBe(400)

    // A settled payable cannot be replaced, and keeps the invoice from being deleted.
    const account = (await ok("POST", "/financial-accounts", { name: "Banco", type: "checking" })).id
    const money = await ok("POST", "/financial-transactions", { account_id: account, posted_at: "2024-02-01", amount: "-100" })
    await ok("POST", `/payables/${replanned.payables[0].id}/allocate`, { financial_transaction_id: money.id, allocated_amount: "100" })
    const settled = await call("PATCH", `/purchase-invoices/${created.id}`, { payables: [{ amount: "555", due_date: "2031-05-10" }] })
    expect(settled.status).toBe(422)
    expect(settled.body.code).toBe("PAYABLES_SETTLED")
    expect((await call("DELETE", `/purchase-invoices/${created.id}`)).status).toBe(422)
  })

  it("filters and sorts by issue_date descending, soft-deletes with its unsettled payables, keeps to the tenant", async () => {
    const tag = randomUUID().slice(0, 6)
    const older = await invoice({ issue_date: "2023-05-01", notes: tag })
    const newer = await invoice({ issue_date: "2023-06-01", notes: tag, payables: [{ amount: "545", due_date: "2031-01-01" }] })
    const ids = (body: { data: Array<{ id: string }> }) => body.data.map((record) => record.id)
    expect(ids(await ok("GET", `/purchase-invoices?search=${tag}`))).toEqual([newer.id, older.id])
    expect(ids(await ok("GET", `/purchase-invoices?search=${tag}&sort=issue_date:asc`))).toEqual([older.id, newer.id])
    expect(ids(await ok("GET", `/purchase-invoices?search=${tag}&issue_date[lt]=2023-06-01`))).toEqual([older.id])
    expect(ids(await ok("GET", `/purchase-invoices?reference_code=${newer.reference_code}`))).toEqual([newer.id])
    expect(ids(await ok("GET", `/purchase-invoices?search=${tag}&total[gte]=545&supplier_id=${supplier}`))).toEqual([newer.id, older.id])
    expect((await call("DELETE", `/purchase-invoices/${newer.id}`)).status).toBe(204)
    expect((await call("GET", `/payables/${newer.payables[0].id}`)).status).toBe(404)
    expect((await ok("GET", `/purchase-invoices/${newer.id}?with_deleted=true`)).deleted_at).toEqual(expect.any(String))

    const foreignSupplier = (await ok("POST", "/suppliers", { legal_name: "Alheio" }, other.token)).id
    const refused = await call("POST", "/purchase-invoices", { supplier_id: foreignSupplier, issue_date: "2024-01-10", items: [{ description: "x", quantity: "1", unit_price: "1" }] })
    expect(refused.status).toBe(422)
    expect(Object.keys(refused.body.details.fields)).toEqual(["supplier_id"])
    expect((await call("GET", `/purchase-invoices/${older.id}`, undefined, other.token)).status).toBe(404)
  })
})

/** Integration entity mappings: the spec's fields and filters, uniqueness both ways, who wrote them, and no events. */
describe.each(storeKinds)("integration entity mappings on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant

  const call = (method: string, path: string, body?: unknown) => host.request(method, path, { token: tenant.token, body })
  const ok = async (method: string, path: string, body?: unknown) => {
    const response = await call(method, path, body)
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300)
    return response.body
  }

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
  })
  afterAll(() => host?.close())

  it("creates, filters, updates the four PATCH fields, refuses duplicates with 409, and records no events", async () => {
    const integration = randomUUID()
    const customer = randomUUID()
    const product = randomUUID()
    const first = await ok("POST", "/integration-entity-mappings", {
      tenant_integration_id: integration,
      entity_type: "customer",
      internal_entity_id: customer,
      external_entity_id: "shopify:7781",
      metadata: { store: "loja" }
    })
    expect(first).toEqual({
      id: expect.any(String),
      tenant_integration_id: integration,
      entity_type: "customer",
      internal_entity_id: customer,
      external_entity_id: "shopify:7781",
      mapping_origin: "manual",
      sync_status: "synced",
      metadata: { store: "loja" },
      last_synced_at: null,
      created_by_user_id: null,
      updated_by_user_id: null,
      deleted_by_user_id: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      deleted_at: null
    })
    const second = await ok("POST", "/integration-entity-mappings", {
      tenant_integration_id: integration,
      entity_type: "product",
      internal_entity_id: product,
      external_entity_id: "shopify:p-1",
      mapping_origin: "automatic",
      sync_status: "pending",
      last_synced_at: "2024-05-01T10:00:00-03:00"
    })
    expect(second.last_synced_at).toBe("2024-05-01T13:00:00.000Z")

    for (const duplicate of [{ internal_entity_id: customer, external_entity_id: "other" }, { internal_entity_id: randomUUID(), external_entity_id: "shopify:7781" }]) {
      const refused = await call("POST", "/integration-entity-mappings", { tenant_integration_id: integration, entity_type: "customer", ...duplicate })
      expect(refused.status).toBe(409)
      expect(refused.body.code).toBe("DUPLICATE")
    }
    // Another integration, or another entity type, may map the same records.
    await ok("POST", "/integration-entity-mappings", { tenant_integration_id: randomUUID(), entity_type: "customer", internal_entity_id: customer, external_entity_id: "shopify:7781" })

    const ids = (body: { data: Array<{ id: string }> }) => body.data.map((record) => record.id)
    const mine = `tenant_integration_id=${integration}`
    const cases: Array<[string, Array<string>]> = [
      ["", [first.id, second.id]],
      [`&internal_entity_id=${product}`, [second.id]],
      [`&internal_entity_id[neq]=${product}`, [first.id]],
      ["&entity_type=customer", [first.id]],
      ["&entity_type[contains]=prod", [second.id]],
      ["&sync_status=pending", [second.id]],
      ["&sync_status[not_contains]=pend", [first.id]],
      ["&mapping_origin=automatic", [second.id]],
      ["&external_entity_id[contains]=7781", [first.id]],
      ["&last_synced_at[gte]=2024-05-01", [second.id]],
      ["&last_synced_at=2024-05-01", [second.id]],
      ["&created_at[gte]=2020-01-01", [first.id, second.id]]
    ]
    for (const [query, expected] of cases) expect(ids(await ok("GET", `/integration-entity-mappings?${mine}${query}`)), query).toEqual(expected)

    const changed = await ok("PATCH", `/integration-entity-mappings/${first.id}`, {
      external_entity_id: "shopify:7782",
      sync_status: "error",
      metadata: { reason: "timeout" },
      last_synced_at: "2024-06-01T00:00:00Z"
    })
    expect(changed).toMatchObject({ external_entity_id: "shopify:7782", sync_status: "error", metadata: { store: "loja", reason: "timeout" } })
    for (const field of ["entity_type", "internal_entity_id", "tenant_integration_id", "mapping_origin", "created_by_user_id"]) {
      expect((await call("PATCH", `/integration-entity-mappings/${first.id}`, { [field]: "customer" })).status, field).toBe(400)
    }
    expect((await call("DELETE", `/integration-entity-mappings/${first.id}`)).status).toBe(204)
    // Deleted, it no longer holds its keys.
    await ok("POST", "/integration-entity-mappings", { tenant_integration_id: integration, entity_type: "customer", internal_entity_id: customer, external_entity_id: "shopify:7781" })
    expect((await ok("GET", "/events?resource=integration-entity-mappings")).data).toEqual([])
  })
})
