import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/** `expand[]` over HTTP on every store: full records instead of embeds, only where declared. */
describe.each(storeKinds)("expand[] on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let customers: Array<Record<string, unknown>>
  let product: Record<string, unknown>
  let orders: Array<{ id: string }>

  const call = (method: string, path: string, body?: unknown, token = tenant.token) => host.request(method, path, { token, body })
  const ok = async (method: string, path: string, body?: unknown, token = tenant.token) => {
    const response = await call(method, path, body, token)
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300)
    return response.body
  }

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    customers = [
      await ok("POST", "/customers", { legal_name: "Padaria Pão Quente Ltda", trade_name: "Pão Quente", tax_id: "11.222.333/0001-81", website: "https://paoquente.example", metadata: { crm: "42" } }),
      await ok("POST", "/customers", { legal_name: "Café Central", city_id: 3550308 })
    ]
    product = await ok("POST", "/products", { name: "Espresso 1 kg", type: "goods", sale_price: "19.99", br_data: { ncm_code: "09012100", origin: "0" } })
    const item = { product_id: product.id, item_description: "Espresso 1 kg", quantity: "2", unit_price: "19.99" }
    const free = { item_description: "Instalação", quantity: "1", unit_price: "100" }
    orders = []
    for (const customer of [customers[0], customers[1], customers[0]]) {
      orders.push(await ok("POST", "/sales-orders", { customer_id: customer.id, items: [item, free] }))
    }
  })
  afterAll(() => host?.close())

  it("answers the full customer with expand[]=customer (and expand=customer), the four-field embed without", async () => {
    const full = await ok("GET", `/customers/${customers[0].id}`)
    const plain = await ok("GET", `/sales-orders/${orders[0].id}`)
    expect(Object.keys(plain.customer).sort()).toEqual(["id", "legal_name", "tax_id", "trade_name"])
    const expanded = await ok("GET", `/sales-orders/${orders[0].id}?expand[]=customer`)
    expect(expanded.customer).toEqual(full)
    expect(expanded.customer.website).toBe("https://paoquente.example")
    expect(expanded.customer.metadata).toEqual({ crm: "42" })
    expect({ ...expanded, customer: plain.customer }).toEqual(plain)
    expect((await ok("GET", `/sales-orders/${orders[0].id}?expand=customer`)).customer).toEqual(full)
    // Quotes keep the 2026-08 embed, and expand the same way.
    const quote = await ok("POST", "/quotes", { customer_id: customers[1].id, items: [{ item_description: "x", quantity: "1", unit_price: "1" }] })
    expect(Object.keys(quote.customer)).toHaveLength(4)
    expect((await ok("GET", `/quotes/${quote.id}?expand[]=customer`)).customer).toEqual(await ok("GET", `/customers/${customers[1].id}`))
  })

  it("answers each item's full product with expand[]=items.product, null where an item has none", async () => {
    const full = await ok("GET", `/products/${product.id}`)
    const order = await ok("GET", `/sales-orders/${orders[1].id}?expand[]=items.product`)
    expect(order.items[0].product).toEqual(full)
    expect(order.items[1].product).toBeNull()
    expect(Object.keys(order.customer)).toHaveLength(4)
  })

  it("expands a whole page, each order with its own customer, and combines expansions", async () => {
    const ids = orders.map((order) => order.id)
    const page = await ok("GET", `/sales-orders?expand[]=customer&expand[]=items.product&limit=100`)
    const mine = (page.data as Array<{ id: string; customer_id: string; customer: Record<string, unknown>; items: Array<{ product: unknown }> }>)
      .filter((order) => ids.includes(order.id))
    expect(mine).toHaveLength(3)
    const byId = new Map(await Promise.all(customers.map(async (customer) => [customer.id, await ok("GET", `/customers/${customer.id}`)] as const)))
    for (const order of mine) {
      expect(order.customer).toEqual(byId.get(order.customer_id))
      expect(order.items[0].product).toEqual(await ok("GET", `/products/${product.id}`))
    }
    // Filters and cursors still work beside expand.
    const filtered = await ok("GET", `/sales-orders?expand=customer&customer_id=${customers[1].id}`)
    expect(filtered.data.map((order: { id: string }) => order.id)).toEqual([orders[1].id])
    expect(filtered.data[0].customer.legal_name).toBe("Café Central")
  })

  it("refuses an expansion the resource does not declare with 400 naming it", async () => {
    const unknown = await call("GET", `/sales-orders/${orders[0].id}?expand[]=supplier`)
    expect(unknown.status).toBe(400)
    expect(unknown.body).toMatchObject({ status_code: 400, error: "Bad Request", code: "INVALID_PARAMETER" })
    expect(unknown.body.message).toContain('"supplier"')
    expect(unknown.body.message).toContain("customer, items.product")
    const nested = await call("GET", `/sales-orders?expand[]=customer.city`)
    expect(nested.status).toBe(400)
    expect(nested.body.message).toContain('"customer.city"')
    const none = await call("GET", `/products?expand[]=unit_of_measurement`)
    expect(none.status).toBe(400)
    expect(none.body.message).toContain("nothing to expand")
  })

  it("needs read permission on the expanded resource (403), not only on the record", async () => {
    const { token } = await host.createKey(tenant.id, [{ resource_code: "sales-orders", can_read: true, can_create: false, can_update: false, can_delete: false }])
    expect((await call("GET", `/sales-orders/${orders[0].id}`, undefined, token)).status).toBe(200)
    const denied = await call("GET", `/sales-orders/${orders[0].id}?expand[]=customer`, undefined, token)
    expect(denied.status).toBe(403)
    expect(denied.body.code).toBe("PERMISSION_DENIED")
  })

  it("documents expand[] in OpenAPI with the declared paths, and the widened embed", async () => {
    const document = (await fetch(`${host.url}/openapi.json`).then((response) => response.json())) as {
      paths: Record<string, Record<string, { parameters: Array<{ name: string; schema: { items?: { enum?: Array<string> } } }> }>>
      components: { schemas: Record<string, { properties: Record<string, { anyOf?: Array<{ $ref?: string }> }> }> }
    }
    const parameter = (path: string, method: string) => document.paths[path][method].parameters.find((candidate) => candidate.name === "expand[]")
    expect(parameter("/sales-orders/{id}", "get")?.schema.items?.enum).toEqual(["customer", "items.product"])
    expect(parameter("/sales-orders", "get")?.schema.items?.enum).toEqual(["customer", "items.product"])
    expect(parameter("/products", "get")).toBeUndefined()
    expect(document.components.schemas.SalesOrder.properties.customer.anyOf).toContainEqual({ $ref: "#/components/schemas/Customer" })
  })
})
