import * as SqlClient from "effect/sql/SqlClient"
import { ALL_PERMISSIONS, layerCore, Tenancy } from "@erp/core"
import { resourceTools } from "@erp/mcp"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FIXTURE_TABLES, testOrders } from "../../../test/support/fixture-orders.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { connectClient, keyPrincipal } from "./support.js"

/** A declared action becomes a tool like the CRUD operations do: arguments from its path and body, answers from its output. */
describe.each(storeKinds)("MCP action tools on %s", (kind) => {
  const runtime = ManagedRuntime.make(layerCore(testStore(kind)))

  beforeAll(() => runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(FIXTURE_TABLES))))
  afterAll(() => runtime.dispose())

  it("offers cancel_test_order with the id and the body's fields, and runs it", async () => {
    const tools = resourceTools(testOrders)
    const cancel = tools.find((tool) => tool.name === "cancel_test_order")!
    expect(cancel.inputSchema.required).toEqual(["id", "reason"])
    expect(Object.keys(cancel.inputSchema.properties).sort()).toEqual(["id", "reason"])
    const { token } = await runtime.runPromise(Effect.gen(function* () {
      const tenancy = yield* Tenancy
      const tenant = yield* tenancy.createTenant({ name: "Agent", countryCode: "BR" })
      return yield* tenancy.createApiKey({ tenantId: tenant.id, name: "agent", permissions: ALL_PERMISSIONS })
    }))
    // The server is built from the tools it is given: here only the fixture's.
    const client = await connectClient(runtime, keyPrincipal(token), tools)
    try {
      const order = await client.ok("create_test_order", { items: [{ description: "Widget", quantity: "1", unit_price: "2" }] })
      expect(await client.ok("cancel_test_order", { id: order.id, reason: "agent said so" })).toEqual({ id: order.id, status: "cancelled", notes: "agent said so" })
      expect((await client.refused("cancel_test_order", { id: order.id, reason: "twice" }, 422)).code).toBe("ALREADY_CANCELLED")
      expect((await client.refused("cancel_test_order", { id: order.id }, 400)).details.fields).toHaveProperty("reason")
    } finally {
      await client.close()
    }
  })
})
