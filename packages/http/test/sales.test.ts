import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/** Quotes, sales orders and invoices over HTTP on every store: items, totals, statuses, filters, taxes and events. */
describe.each(storeKinds)("sales documents on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let other: TestTenant
  let customer: string
  let espresso: string
  let grinder: string

  const call = (method: string, path: string, body?: unknown, token = tenant.token) => host.request(method, path, { token, body })
  const ok = async (method: string, path: string, body?: unknown, token = tenant.token) => {
    const response = await call(method, path, body, token)
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300)
    return response.body
  }
  const feed = async (id: string) => (await ok("GET", `/events?resource_id=${id}&limit=100`)).data.map((event: { type: string }) => event.type)
  const threeItems = () => [
    { product_id: espresso, item_description: "Espresso 1 kg", quantity: "3", unit_price: "19.99", discount_amount: "1.5" },
    { product_id: grinder, item_description: "Moedor", quantity: "2.5", unit_price: "7.333333" },
    { item_description: "Instalação", quantity: "1", unit_price: "100" }
  ]

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    other = await host.createTenant("BR")
    customer = (await ok("POST", "/customers", {
      legal_name: "Padaria Pão Quente Ltda", trade_name: "Pão Quente", tax_id: "11.222.333/0001-81", city_id: 3550308, website: "https://paoquente.example"
    })).id
    espresso = (await ok("POST", "/products", { name: "Espresso 1 kg", type: "goods", sale_price: "19.99", br_data: { ncm_code: "09012100", origin: "0" } })).id
    grinder = (await ok("POST", "/products", { name: "Moedor", type: "goods", br_data: { ncm_code: "85094050", origin: "0" } })).id
  })
  afterAll(() => host?.close())

  describe("quotes", () => {
    it("computes items and totals to the sixth decimal (one rounding rule), embeds four customer fields and the full product", async () => {
      const quote = await ok("POST", "/quotes", { customer_id: customer, product_type: "goods", valid_until: "2099-12-31", items: threeItems(), discount_rate: "7.5" })
      expect(quote.items.map((item: Record<string, unknown>) => [item.position, item.subtotal, item.total])).toEqual([
        [0, "59.970000", "58.470000"],
        // 2.5 × 7.333333 = 18.3333325: half to even keeps the 2.
        [1, "18.333332", "18.333332"],
        [2, "100.000000", "100.000000"]
      ])
      expect(quote).toMatchObject({
        status: "pending",
        subtotal: "178.303332",
        discount_rate: "7.500000",
        discount_amount: null,
        // 1.5 on the item plus 7.5 % of 176.803332 (13.2602499 → 13.260250).
        total_discount: "14.760250",
        total: "163.543082"
      })
      expect(Object.keys(quote.customer).sort()).toEqual(["id", "legal_name", "tax_id", "trade_name"])
      expect(quote.customer).toEqual({ id: customer, legal_name: "Padaria Pão Quente Ltda", trade_name: "Pão Quente", tax_id: "11222333000181" })
      expect(quote.items[0].product).toMatchObject({ id: espresso, name: "Espresso 1 kg", sale_price: "19.990000", br_data: { ncm_code: "09012100" }, unit_of_measurement: null })
      expect(quote.items[2].product).toBeNull()
      const listed = await ok("GET", `/quotes?id=${quote.id}`)
      expect(Object.keys(listed.data[0].customer).sort()).toEqual(["id", "legal_name", "tax_id", "trade_name"])
    })

    it("refuses discount_amount with discount_rate, and discounts above what they discount", async () => {
      const both = await call("POST", "/quotes", { customer_id: customer, items: threeItems(), discount_amount: "1", discount_rate: "1" })
      expect(both.status).toBe(422)
      expect(Object.keys(both.body.details.fields).sort()).toEqual(["discount_amount", "discount_rate"])
      const tooMuch = await call("POST", "/quotes", { customer_id: customer, items: [{ item_description: "x", quantity: "1", unit_price: "10", discount_amount: "11" }] })
      expect(tooMuch.status).toBe(422)
      expect(tooMuch.body.details.fields).toHaveProperty(["items.0.discount_amount"])
      const otherCustomer = await call("POST", "/quotes", { customer_id: customer, items: threeItems() }, other.token)
      expect(otherCustomer.status).toBe(422)
      expect(otherCustomer.body.details.fields).toHaveProperty("customer_id")
    })

    it("emits exactly one quotes.update per item added, changed or removed; expired is read from valid_until", async () => {
      const quote = await ok("POST", "/quotes", { customer_id: customer, items: threeItems().slice(0, 1) })
      const [first] = quote.items
      const added = await ok("PATCH", `/quotes/${quote.id}`, { items: [{ id: first.id }, { item_description: "Frete", quantity: "1", unit_price: "10" }] })
      expect(added.total).toBe("68.470000")
      await ok("PATCH", `/quotes/${quote.id}`, { items: [{ id: first.id, quantity: "4" }, { id: added.items[1].id }] })
      const removed = await ok("PATCH", `/quotes/${quote.id}`, { items: [{ id: added.items[1].id }] })
      expect(removed.total).toBe("10.000000")
      expect(await feed(quote.id)).toEqual(["quotes.create", "quotes.update", "quotes.update", "quotes.update"])

      const past = await ok("POST", "/quotes", { customer_id: customer, quote_date: "2024-01-01", valid_until: "2024-01-31", items: threeItems().slice(2) })
      expect(past.status).toBe("expired")
      expect((await ok("GET", `/quotes?status=expired&id=${past.id}`)).data).toHaveLength(1)
      const renewed = await ok("PATCH", `/quotes/${past.id}`, { valid_until: "2099-01-31" })
      expect(renewed.status).toBe("pending")
    })

    it("numbers 50 concurrent creations 1 to 50", async () => {
      const fresh = await host.createTenant("BR")
      const buyer = (await ok("POST", "/customers", { legal_name: "Café Central" }, fresh.token)).id
      const responses = await Promise.all(
        Array.from({ length: 50 }, () => call("POST", "/quotes", { customer_id: buyer, items: [{ item_description: "x", quantity: "1", unit_price: "1" }] }, fresh.token))
      )
      expect(responses.map((response) => response.status)).toEqual(Array(50).fill(201))
      expect(responses.map((response) => response.body.record_number).sort((a: number, b: number) => a - b)).toEqual(Array.from({ length: 50 }, (_, index) => index + 1))
      const page = await ok("GET", "/quotes?limit=3", undefined, fresh.token)
      expect(page.data.map((quote: { record_number: number }) => quote.record_number)).toEqual([1, 2, 3])
    })
  })
})
