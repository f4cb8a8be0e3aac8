import { type AnyResource, decimal, fiscalRulesBr, formatDecimal, operatorPrincipal, ResourceEngine, TaxEngine } from "@erp/core"
import { Effect, Layer } from "effect"
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
      const late = await call("POST", "/sales-orders", { quote_id: past.id })
      expect([late.status, late.body.code, Object.keys(late.body.details.fields)]).toEqual([422, "QUOTE_NOT_CONVERTIBLE", ["quote_id"]])
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

  describe("sales orders", () => {
    it("copies a quote's customer and items, converts it once (409 the second time), and freezes a confirmed order's items", async () => {
      const quote = await ok("POST", "/quotes", { customer_id: customer, product_type: "goods", salesperson_name: "Ana", items: threeItems(), discount_amount: "10" })
      const order = await ok("POST", "/sales-orders", { quote_id: quote.id, operation_type: "sale", order_date: "2024-03-01" })
      expect(order).toMatchObject({
        status: "draft", quote_id: quote.id, customer_id: customer, product_type: "goods", salesperson_name: "Ana",
        subtotal: "178.303332", items_discount: "1.500000", discount_amount: "10.000000", total_discount: "11.500000", total: "166.803332",
        has_active_receivables: false, receivables: []
      })
      expect(Object.keys(order.customer).sort()).toEqual(["id", "legal_name", "tax_id", "trade_name"])
      expect(order.items.map((item: Record<string, unknown>) => [item.item_description, item.quantity, item.total])).toEqual(
        quote.items.map((item: Record<string, unknown>) => [item.item_description, item.quantity, item.total])
      )
      expect(Object.keys(order.items[0].product).sort()).toEqual(["br_data", "id", "name", "reference_code", "us_data"])
      expect((await ok("GET", `/quotes/${quote.id}`)).status).toBe("converted")
      expect(await feed(quote.id)).toEqual(["quotes.create", "quotes.update"])

      const again = await call("POST", "/sales-orders", { quote_id: quote.id })
      expect(again.status).toBe(409)
      expect(again.body.code).toBe("QUOTE_ALREADY_CONVERTED")
      expect((await call("POST", "/sales-orders", { quote_id: quote.id }, other.token)).status).toBe(422)
      expect((await call("POST", "/sales-orders", { items: threeItems() })).status).toBe(400)

      await ok("PATCH", `/sales-orders/${order.id}`, { status: "confirmed" })
      const frozen = await call("PATCH", `/sales-orders/${order.id}`, { items: [{ id: order.items[0].id }] })
      expect(frozen.status).toBe(422)
      expect(Object.keys(frozen.body.details.fields)).toEqual(["items"])
      expect((await ok("PATCH", `/sales-orders/${order.id}`, { notes: "Entregar pela manhã" })).notes).toBe("Entregar pela manhã")
      expect((await call("PATCH", `/sales-orders/${order.id}`, { status: "draft" })).body.code).toBe("INVALID_TRANSITION")
    })

    it.runIf(kind === "postgres")("converts a quote once when several orders race for it", async () => {
      const quote = await ok("POST", "/quotes", { customer_id: customer, items: threeItems().slice(2) })
      const answers = await Promise.all(Array.from({ length: 6 }, () => call("POST", "/sales-orders", { quote_id: quote.id })))
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409, 409, 409, 409, 409])
      expect((await ok("GET", `/sales-orders?quote_id=${quote.id}`)).data).toHaveLength(1)
      expect(await feed(quote.id)).toEqual(["quotes.create", "quotes.update"])
    })

    it("filters by each field of the contract's table and refuses others", async () => {
      const buyer = (await ok("POST", "/customers", { legal_name: "Empório Serra" })).id
      const quote = await ok("POST", "/quotes", { customer_id: buyer, items: threeItems().slice(2) })
      const a = await ok("POST", "/sales-orders", {
        customer_id: buyer, reference_code: "PV-FILTER-1", operation_type: "sale", product_type: "goods", salesperson_name: "Bruna Costa",
        order_date: "2024-05-10", delivery_date: "2024-05-20", items: threeItems().slice(2)
      })
      const b = await ok("POST", "/sales-orders", {
        quote_id: quote.id, reference_code: "PV-FILTER-2", operation_type: "return", product_type: "service", salesperson_name: "Carlos",
        order_date: "2024-06-10", delivery_date: "2024-06-30"
      })
      await ok("PATCH", `/sales-orders/${b.id}`, { status: "confirmed" })
      const found = async (query: string) => (await ok("GET", `/sales-orders?customer_id=${buyer}&${query}`)).data.map((order: { id: string }) => order.id)
      const cases: Array<[string, Array<string>]> = [
        ["reference_code=PV-FILTER-1", [a.id]],
        ["reference_code[neq]=PV-FILTER-1", [b.id]],
        ["reference_code[contains]=filter", [a.id, b.id]],
        ["reference_code[not_contains]=-2", [a.id]],
        ["operation_type=return", [b.id]],
        ["product_type[neq]=service", [a.id]],
        ["status=confirmed", [b.id]],
        ["salesperson_name[contains]=costa", [a.id]],
        ["order_date[gte]=2024-06-01", [b.id]],
        ["order_date[lt]=2024-06-01", [a.id]],
        ["delivery_date=2024-05-20", [a.id]],
        ["delivery_date[neq]=2024-05-20", [b.id]],
        [`quote_id=${quote.id}`, [b.id]],
        [`quote_id[neq]=${quote.id}`, [a.id]],
        [`created_at[lte]=${b.created_at}`, [a.id, b.id]],
        [`updated_at[gt]=${b.created_at}`, [b.id]],
        ["has_active_invoice=false", [a.id, b.id]],
        ["has_active_invoice[neq]=false", []]
      ]
      for (const [query, expected] of cases) expect(await found(query), query).toEqual(expected)
      expect((await ok("GET", `/sales-orders?customer_id[neq]=${buyer}&reference_code[contains]=PV-FILTER`)).data).toEqual([])
      expect(await found("total[gte]=100&total[lt]=100.000001")).toEqual([a.id, b.id])
      for (const query of ["no_such_field=1", "has_active_invoice[contains]=x", "order_date=yesterday", "total=lots"]) expect((await call("GET", `/sales-orders?${query}`)).status, query).toBe(400)
    })

    it("takes the product's name for an item sent without item_description, on quotes, orders and invoices; neither is a 400 naming the item", async () => {
      const items = [{ product_id: espresso, quantity: "1", unit_price: "10" }, { product_id: grinder, item_description: "Moedor revisado", quantity: "1", unit_price: "5" }]
      for (const path of ["/quotes", "/sales-orders", "/invoices"]) {
        const header = path === "/invoices" ? { invoice_date: "2024-05-10" } : {}
        const document = await ok("POST", path, { customer_id: customer, ...header, items })
        expect(document.items.map((item: { item_description: string }) => item.item_description), path).toEqual(["Espresso 1 kg", "Moedor revisado"])
        const refused = await call("POST", path, { customer_id: customer, ...header, items: [{ quantity: "1", unit_price: "1" }] })
        expect(refused.status, path).toBe(400)
        expect(refused.body.details.fields, path).toEqual({ "items.0.item_description": ["is required unless product_id is given"] })
        const unknown = await call("POST", path, { customer_id: customer, ...header, items: [{ product_id: "00000000-0000-4000-8000-000000000000", quantity: "1", unit_price: "1" }] })
        expect(unknown.status, path).toBe(422)
        expect(unknown.body.details.fields, path).toHaveProperty(["items.0.product_id"])
      }
    })

    it("generates receivables for the total; has_active_receivables flips as they appear and are deleted", async () => {
      const order = await ok("POST", "/sales-orders", { customer_id: customer, reference_code: "PV-REC", items: threeItems(), discount_rate: "7.5" })
      const created = await call("POST", `/sales-orders/${order.id}/receivables`, { installments: { count: 3, first_due_date: "2030-01-10", interval_months: 1 } })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      expect(created.body.data.map((receivable: Record<string, unknown>) => [receivable.amount, receivable.due_date, receivable.sales_order_id, receivable.customer_id])).toEqual([
        ["54.510000", "2030-01-10", order.id, customer],
        ["54.510000", "2030-02-10", order.id, customer],
        ["54.523082", "2030-03-10", order.id, customer]
      ])
      const read = await ok("GET", `/sales-orders/${order.id}`)
      expect(read.has_active_receivables).toBe(true)
      expect(read.receivables.map((receivable: Record<string, unknown>) => receivable.installment_number)).toEqual([1, 2, 3])
      expect(Object.keys(read.receivables[0]).sort()).toEqual([
        "amount", "description", "due_date", "financial_account_id", "id", "installment_count", "installment_number", "paid_at", "payment_method_id", "reference_code", "status"
      ])
      expect((await call("POST", `/sales-orders/${order.id}/receivables`, { installments: { count: 1, first_due_date: "2030-01-10" } })).body.code).toBe("RECEIVABLES_EXIST")
      expect((await call("DELETE", `/sales-orders/${order.id}`)).body.code).toBe("SALES_ORDER_IN_USE")
      for (const receivable of created.body.data) await ok("DELETE", `/receivables/${receivable.id}`)
      expect((await ok("GET", `/sales-orders/${order.id}`)).has_active_receivables).toBe(false)

      const foreign = await call("POST", "/receivables", { amount: "10", due_date: "2030-01-01", sales_order_id: order.id }, other.token)
      expect(foreign.status).toBe(422)
      expect(foreign.body.details.fields).toHaveProperty("sales_order_id")
    })
  })

  describe("invoices", () => {
    const addRule = (tenantId: string, body: Record<string, unknown>) =>
      host.run(Effect.gen(function* () {
        const engine = yield* ResourceEngine
        return yield* engine.create(fiscalRulesBr as AnyResource, yield* operatorPrincipal(tenantId), body)
      }))
    const taxes = (invoice: { taxes: Array<Record<string, unknown>> }) =>
      invoice.taxes.map((tax) => [tax.tax_code, tax.base_amount, tax.rate, tax.amount, tax.is_withheld, tax.is_included])

    it("from a sales order with BR fiscal rules: ICMS, PIS, COFINS and IPI per item, totals, stale snapshots and recalculation", async () => {
      await addRule(tenant.id, {
        name: "Café, SP → SP", ncm_prefix: "0901", origin_state_code: "SP", destination_state_code: "sp",
        taxes: [
          { tax_code: "ICMS", rate: "18", is_included: true },
          { tax_code: "pis", rate: "1.65", is_included: true },
          { tax_code: "COFINS", rate: "7.6", is_included: true },
          { tax_code: "IPI", rate: "5", base_reduction: "50" }
        ]
      })
      // A rule for another state never applies here.
      await addRule(tenant.id, { name: "Café, SP → RJ", ncm_prefix: "0901", destination_state_code: "RJ", taxes: [{ tax_code: "ICMS", rate: "12" }] })
      const coffee = (await ok("POST", "/products", { name: "Café torrado", type: "goods", br_data: { ncm_code: "09012100", cest_code: "1709600" } })).id
      const order = await ok("POST", "/sales-orders", {
        customer_id: customer,
        operation_type: "sale",
        product_type: "goods",
        items: [{ product_id: coffee, item_description: "Café torrado", quantity: "10", unit_price: "20" }, { product_id: grinder, item_description: "Moedor", quantity: "1", unit_price: "150", discount_amount: "10" }]
      })
      expect((await ok("GET", `/sales-orders?has_active_invoice=true&id=${order.id}`)).data).toEqual([])
      const invoice = await ok("POST", "/invoices", {
        sales_order_id: order.id, reference_code: "NF-1", invoice_date: "2024-07-01", origin_state_code: "São Paulo", destination_state_code: "SP", origin_country_code: "Brasil"
      })
      expect(invoice).toMatchObject({
        status: "draft", customer_id: customer, sales_order_id: order.id, operation_type: "sale", origin_state_code: "SP", origin_country_code: "BR", customer_tax_type: "company",
        tax_engine_provider: "erp-built-in", subtotal: "350.000000", items_discount: "10.000000", total_discount: "10.000000",
        total_tax: "59.500000", withheld_total: "0.000000", total: "345.000000", net_receivable_total: "345.000000", warnings: []
      })
      expect(Object.keys(invoice.customer).sort()).toEqual(["id", "legal_name", "tax_id", "trade_name"])
      expect(invoice.items.map((item: Record<string, unknown>) => item.sales_order_item_id)).toEqual(order.items.map((item: Record<string, unknown>) => item.id))
      expect(invoice.items[0].br_data).toMatchObject({ id: invoice.items[0].id, invoice_item_id: invoice.items[0].id, ncm_code: "09012100", cest_code: "1709600", cfop: null })
      expect(invoice.items[0].tax_resolution_id).toEqual(expect.any(String))
      // An item's taxes are answered in the invoice's taxes[], not on the item.
      expect(invoice.items[0]).not.toHaveProperty("taxes")
      expect(invoice.items[0]).not.toHaveProperty("product")
      expect(taxes(invoice)).toEqual([
        ["ICMS", "200.000000", "18.000000", "36.000000", false, true],
        ["PIS", "200.000000", "1.650000", "3.300000", false, true],
        ["COFINS", "200.000000", "7.600000", "15.200000", false, true],
        ["IPI", "100.000000", "5.000000", "5.000000", false, false]
      ])
      expect(invoice.taxes.map((tax: Record<string, unknown>) => [tax.invoice_id, tax.invoice_item_id, tax.position, tax.source])).toEqual(
        [0, 1, 2, 3].map((position) => [invoice.id, invoice.items[0].id, position, "fiscal_rule"])
      )
      // The receiver comes from the customer (São Paulo's IBGE code is its city id).
      expect(invoice.br_data).toMatchObject({ invoice_id: invoice.id, receiver_name: "Padaria Pão Quente Ltda", receiver_federal_tax_number: "11222333000181", receiver_city_ibge_code: "3550308", receiver_state_code: "SP" })
      expect(invoice.br_data.transmission_readiness).toEqual({ ready: false, blockers: ["missing_item_cfop"] })
      expect((await ok("GET", `/sales-orders?has_active_invoice=true&id=${order.id}`)).data).toHaveLength(1)

      await ok("PATCH", `/products/${coffee}`, { br_data: { ncm_code: "2101.11.10" } })
      const stale = await ok("GET", `/invoices/${invoice.id}`)
      expect(stale.warnings).toEqual([{
        item_id: invoice.items[0].id, item_index: 0, code: "stale_tax_resolution", message: expect.any(String), tax_resolution_id: invoice.items[0].tax_resolution_id,
        changed_fields: [{ entity: "product", field: "br_data.ncm_code", snapshot_value: "09012100", current_value: "21011110" }]
      }])
      const fresh = await ok("POST", `/invoices/${invoice.id}/recalculate-taxes`)
      expect(fresh.warnings).toEqual([])
      expect(fresh.items[0].tax_resolution_id).not.toBe(invoice.items[0].tax_resolution_id)
      expect(fresh.items[0].br_data.ncm_code).toBe("21011110")
      expect(fresh).toMatchObject({ total_tax: "0.000000", total: "340.000000", taxes: [] })
      expect(await feed(invoice.id)).toEqual(["invoices.create", "invoices.update"])

      await ok("PATCH", `/invoices/${invoice.id}`, { status: "issued" })
      const frozen = await call("PATCH", `/invoices/${invoice.id}`, { items: [{ id: invoice.items[0].id, quantity: "1" }], discount_amount: "1" })
      expect(frozen.status).toBe(422)
      expect(Object.keys(frozen.body.details.fields).sort()).toEqual(["discount_amount", "items"])
      expect((await call("POST", `/invoices/${invoice.id}/recalculate-taxes`)).status).toBe(422)
      expect((await ok("PATCH", `/invoices/${invoice.id}`, { br_data: { nfse_number: "123", transmission_status: "queued" } })).br_data).toMatchObject({ nfse_number: "123", transmission_status: "queued" })
      const removal = await call("DELETE", `/invoices/${invoice.id}`)
      expect(removal.status).toBe(422)
      expect(removal.body.code).toBe("INVOICE_NOT_DRAFT")

      // has_active_invoice: a cancelled or deleted invoice no longer counts.
      const active = async () => (await ok("GET", `/sales-orders?has_active_invoice=true&id=${order.id}`)).data.length
      await ok("PATCH", `/invoices/${invoice.id}`, { status: "cancelled" })
      expect(await active()).toBe(0)
      const draft = await ok("POST", "/invoices", { sales_order_id: order.id, invoice_date: "2024-07-05" })
      expect(await active()).toBe(1)
      await ok("DELETE", `/invoices/${draft.id}`)
      expect(await active()).toBe(0)
      expect((await ok("GET", `/invoices/${invoice.id}`)).br_data.transmission_readiness.blockers).toContain("invoice_cancelled")
    })

    it("a service invoice: withheld ISS, net receivable, NFS-e readiness with wrong_item_count", async () => {
      await addRule(tenant.id, {
        name: "Consultoria", operation_type: "service_sale", priority: 10,
        taxes: [{ tax_code: "ISS", rate: "5", is_withheld: true, is_included: true, jurisdiction: "3550308" }, { tax_code: "PIS", rate: "0.65", is_included: true }, { tax_code: "COFINS", rate: "3", is_included: true }]
      })
      const service = (await ok("POST", "/products", { name: "Consultoria", type: "service" })).id
      const item = { product_id: service, item_description: "Consultoria em torra", quantity: "10", unit_price: "100" }
      const invoice = await ok("POST", "/invoices", { customer_id: customer, product_type: "service", operation_type: "service_sale", invoice_date: "2024-07-02", items: [item, item] })
      expect(invoice).toMatchObject({ total_tax: "173.000000", withheld_total: "100.000000", total: "2000.000000", net_receivable_total: "1900.000000" })
      expect(invoice.taxes.filter((tax: Record<string, unknown>) => tax.tax_code === "ISS").map((tax: Record<string, unknown>) => [tax.amount, tax.is_withheld, tax.jurisdiction])).toEqual([
        ["50.000000", true, "3550308"], ["50.000000", true, "3550308"]
      ])
      expect(invoice.br_data.transmission_readiness).toEqual({
        ready: false, blockers: ["wrong_item_count", "missing_item_city_service_code", "missing_item_federal_service_code", "missing_item_nbs_code"]
      })
      const one = await ok("PATCH", `/invoices/${invoice.id}`, {
        items: [{ id: invoice.items[0].id, br_data: { city_service_code: "01.07", federal_service_code: "1.07", nbs_code: "115022000" } }]
      })
      expect(one.br_data.transmission_readiness).toEqual({ ready: true, blockers: [] })
      expect(one).toMatchObject({ withheld_total: "50.000000", net_receivable_total: "950.000000" })
      // A change that is not a tax input keeps the taxes and their snapshots as they were.
      const noted = await ok("PATCH", `/invoices/${invoice.id}`, { internal_notes: "Cliente pediu NFS-e" })
      expect(noted).toMatchObject({ total_tax: "86.500000", withheld_total: "50.000000", net_receivable_total: "950.000000", taxes: one.taxes })
      expect(noted.items[0].tax_resolution_id).toBe(one.items[0].tax_resolution_id)
    })

    it("fiscal rules: core only (no route), one fiscal-rules-br.update when one of its taxes changes", async () => {
      expect((await call("GET", "/fiscal-rules-br")).status).toBe(404)
      const rule = await addRule(tenant.id, { name: "Evento", ncm_prefix: "99", taxes: [{ tax_code: "ICMS", rate: "7" }, { tax_code: "IPI", rate: "1" }] })
      const taxes = rule.taxes as ReadonlyArray<{ id: string }>
      await host.run(Effect.gen(function* () {
        const engine = yield* ResourceEngine
        const operator = yield* operatorPrincipal(tenant.id)
        yield* engine.update(fiscalRulesBr as AnyResource, operator, String(rule.id), { taxes: [{ id: taxes[0].id, rate: "12" }, { id: taxes[1].id }] })
        yield* engine.update(fiscalRulesBr as AnyResource, operator, String(rule.id), { taxes: [{ id: taxes[0].id }] })
      }))
      expect(await feed(String(rule.id))).toEqual(["fiscal-rules-br.create", "fiscal-rules-br.update", "fiscal-rules-br.update"])
    })

    it("refuses geography it cannot match (spec 422 case 1), naming the fields", async () => {
      const refused = await call("POST", "/invoices", {
        customer_id: customer, invoice_date: "2024-07-03", destination_state_code: "Atlantis", origin_country_code: "Narnia",
        br_data: { receiver_city_ibge_code: "9999999" }, items: threeItems().slice(2)
      })
      expect(refused.status).toBe(422)
      expect(refused.body.code).toBe("GEOGRAPHY_UNRESOLVED")
      expect(Object.keys(refused.body.details.fields).sort()).toEqual(["br_data.receiver_city_ibge_code", "destination_state_code", "origin_country_code"])
      const wrongState = await call("POST", "/invoices", {
        customer_id: customer, invoice_date: "2024-07-03", br_data: { receiver_city_ibge_code: "3550308", receiver_state_code: "RJ" }, items: threeItems().slice(2)
      })
      expect(Object.keys(wrongState.body.details.fields)).toEqual(["br_data.receiver_city_ibge_code"])
    })

    it("a US tenant: the destination state's base sales-tax rate, overridden by the tenant's rule", async () => {
      const us = await host.createTenant("US")
      const buyer = (await ok("POST", "/customers", { legal_name: "Blue Bottle Inc" }, us.token)).id
      const body = { customer_id: buyer, invoice_date: "2024-07-04", destination_state_code: "California", items: [{ item_description: "Beans", quantity: "4", unit_price: "25" }] }
      const packaged = await ok("POST", "/invoices", body, us.token)
      expect(packaged.destination_state_code).toBe("CA")
      expect(packaged.taxes.map((tax: Record<string, unknown>) => [tax.tax_code, tax.tax_name, tax.rate, tax.amount, tax.jurisdiction, tax.source]))
        .toEqual([["SALES_TAX", "CA sales tax, state base rate (local taxes not included)", "7.250000", "7.250000", "US-CA", "us_state_rate"]])
      expect(packaged).toMatchObject({ total_tax: "7.250000", total: "107.250000" })
      // The rate in force on the invoice date: Louisiana's went from 4.45% to 5% on 2025-01-01.
      for (const [invoice_date, total_tax] of [["2024-12-31", "4.450000"], ["2025-01-01", "5.000000"]]) {
        expect(await ok("POST", "/invoices", { ...body, invoice_date, destination_state_code: "LA" }, us.token)).toMatchObject({ total_tax })
      }
      await addRule(us.id, { name: "California with district tax", destination_state_code: "CA", taxes: [{ tax_code: "SALES_TAX", rate: "9.5", jurisdiction: "US-CA" }] })
      const overridden = await ok("POST", "/invoices", body, us.token)
      expect(overridden).toMatchObject({ total_tax: "9.500000", total: "109.500000" })
    })
  })
})

describe("an embedding app's tax engine", () => {
  let host: TestHost
  const acme = Layer.succeed(TaxEngine, TaxEngine.of({
    name: "acme-tax",
    resolve: (request) => Effect.succeed({
      items: request.items.map((item) => ({
        taxes: [{ tax_code: "VAT", tax_name: "VAT", base_amount: item.amount, rate: "10.000000", amount: formatDecimal(decimal(item.amount).times("0.1")), jurisdiction: "ACME", is_withheld: false, is_included: false, source: "acme" }],
        used: { quote: "acme-123" }
      }))
    })
  }))
  beforeAll(async () => {
    host = await startTestHost(testStore("pglite"), { taxEngine: acme })
  })
  afterAll(() => host?.close())

  it("computes the taxes and is recorded as tax_engine_provider", async () => {
    const tenant = await host.createTenant("BR")
    const customer = (await host.request("POST", "/customers", { token: tenant.token, body: { legal_name: "Cliente" } })).body.id
    const invoice = await host.request("POST", "/invoices", { token: tenant.token, body: { customer_id: customer, invoice_date: "2024-09-01", items: [{ item_description: "x", quantity: "3", unit_price: "10" }] } })
    expect(invoice.status).toBe(201)
    expect(invoice.body).toMatchObject({ tax_engine_provider: "acme-tax", total_tax: "3.000000", total: "33.000000" })
    expect(invoice.body.taxes.map((tax: Record<string, unknown>) => [tax.tax_code, tax.amount, tax.source])).toEqual([["VAT", "3.000000", "acme"]])
  })
})
