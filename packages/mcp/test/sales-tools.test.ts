import { ALL_PERMISSIONS, type AnyResource, fiscalRulesBr, layerCore, operatorPrincipal, ResourceEngine, Tenancy } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { connectClient, keyPrincipal, type TestClient } from "./support.js"

/** Quotes, sales orders and invoices as an agent uses them: their CRUD tools and the receivables and recalculate-taxes actions. */
describe.each(storeKinds)("MCP sales tools on %s", (kind) => {
  const runtime = ManagedRuntime.make(layerCore(testStore(kind)))
  let client: TestClient
  let tenantId: string

  beforeAll(async () => {
    const { token, tenant } = await runtime.runPromise(Effect.gen(function* () {
      const tenancy = yield* Tenancy
      const tenant = yield* tenancy.createTenant({ name: "Agent", countryCode: "BR" })
      const key = yield* tenancy.createApiKey({ tenantId: tenant.id, name: "agent", permissions: ALL_PERMISSIONS })
      return { token: key.token, tenant }
    }))
    tenantId = tenant.id
    client = await connectClient(runtime, keyPrincipal(token))
  })
  afterAll(async () => {
    await client?.close()
    await runtime.dispose()
  })

  it("quote → sales order → receivables and invoice → recalculated taxes, and no tool for fiscal rules", async () => {
    const { tools } = await client.client.listTools()
    const names = tools.map((tool) => tool.name)
    expect(names).toEqual(expect.arrayContaining(["create_quote", "list_quotes", "create_sales_order", "receivables_sales_order", "create_invoice", "recalculate_taxes_invoice"]))
    expect(names.filter((name) => name.includes("fiscal"))).toEqual([])

    await runtime.runPromise(Effect.gen(function* () {
      const engine = yield* ResourceEngine
      yield* engine.create(fiscalRulesBr as AnyResource, yield* operatorPrincipal(tenantId), { name: "Tudo", taxes: [{ tax_code: "ISS", rate: "2", is_withheld: true }] })
    }))
    const customer = await client.ok("create_customer", { legal_name: "Café Agente Ltda" })
    expect((await client.refused("create_quote", { customer_id: customer.id, items: [{ item_description: "x", quantity: "1", unit_price: "1" }], discount_amount: "1", discount_rate: "1" }, 422)).details.fields).toHaveProperty("discount_rate")
    const made = await client.ok("create_quote", { customer_id: customer.id, items: [{ item_description: "Consultoria", quantity: "2", unit_price: "50" }] })
    expect(Object.keys(made.customer).sort()).toEqual(["id", "legal_name", "tax_id", "trade_name"])
    const order = await client.ok("create_sales_order", { quote_id: made.id })
    expect(order).toMatchObject({ total: "100.000000", quote_id: made.id })
    expect((await client.refused("create_sales_order", { quote_id: made.id }, 409)).code).toBe("QUOTE_ALREADY_CONVERTED")
    const receivables = await client.ok("receivables_sales_order", { id: order.id, installments: { count: 2, first_due_date: "2031-01-10", interval_days: 30 } })
    expect(receivables.data.map((receivable: { amount: string }) => receivable.amount)).toEqual(["50.000000", "50.000000"])
    expect((await client.ok("list_sales_orders", { filters: { has_active_invoice: false, id: order.id } })).data).toHaveLength(1)
    const invoice = await client.ok("create_invoice", { sales_order_id: order.id, invoice_date: "2024-08-01", product_type: "service" })
    expect(invoice).toMatchObject({ total_tax: "2.000000", withheld_total: "2.000000", total: "102.000000", net_receivable_total: "100.000000" })
    expect((await client.ok("recalculate_taxes_invoice", { id: invoice.id })).warnings).toEqual([])
  })
})
