import { ALL_PERMISSIONS, layerCore, Tenancy } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { connectClient, keyPrincipal, type TestClient } from "./support.js"

/** `expand` on the get and list tools: the full record, valid against the tool's output schema (the SDK client checks it). */
describe.each(storeKinds)("MCP expand on %s", (kind) => {
  const runtime = ManagedRuntime.make(layerCore(testStore(kind)))
  let client: TestClient

  beforeAll(async () => {
    const token = await runtime.runPromise(Effect.gen(function* () {
      const tenancy = yield* Tenancy
      const tenant = yield* tenancy.createTenant({ name: "Agent", countryCode: "BR" })
      return (yield* tenancy.createApiKey({ tenantId: tenant.id, name: "agent", permissions: ALL_PERMISSIONS })).token
    }))
    client = await connectClient(runtime, keyPrincipal(token))
  })
  afterAll(async () => {
    await client?.close()
    await runtime.dispose()
  })

  it("answers the full customer on get and list, offers expand only where declared, and refuses an unknown path", async () => {
    const customer = await client.ok("create_customer", { legal_name: "Café Agente Ltda", website: "https://cafe.example" })
    const order = await client.ok("create_sales_order", { customer_id: customer.id, items: [{ item_description: "x", quantity: "1", unit_price: "1" }] })
    expect(Object.keys(order.customer)).toHaveLength(4)
    const full = await client.ok("get_customer", { id: customer.id })
    expect((await client.ok("get_sales_order", { id: order.id, expand: ["customer"] })).customer).toEqual(full)
    const page = await client.ok("list_sales_orders", { expand: ["customer"], filters: { id: order.id } })
    expect(page.data[0].customer).toEqual(full)
    expect((await client.refused("get_sales_order", { id: order.id, expand: ["supplier"] }, 400)).message).toContain('"supplier"')

    const { tools } = await client.client.listTools()
    const schemaOf = (name: string) => tools.find((tool) => tool.name === name)!.inputSchema.properties as Record<string, unknown>
    expect(schemaOf("get_sales_order")).toHaveProperty("expand")
    expect(schemaOf("list_sales_orders")).toHaveProperty("expand")
    expect(schemaOf("get_product")).not.toHaveProperty("expand")
    expect(schemaOf("list_products")).not.toHaveProperty("expand")
  })
})
